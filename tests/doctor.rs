//! `fsbench doctor` through the real binary: what it must find on a loop device here, that it
//! never writes to the device it inspects, its refusals, `--install-missing --dry-run` on a
//! PATH that looks like a fresh Debian, and that `fsbench run` records the findings.
//!
//! Privileged tests print `skipped: <reason>` when root or loop devices are missing, and fail
//! instead when `FSBENCH_REQUIRE_PRIVILEGED=1` (CI).

mod common;

use common::{LoopImage, bin, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
                f["finding"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn doctor_on_a_loop_device_finds_rotational_no_direct_io_and_a_file_above_ram() {
    if !common::privileged_loop("doctor --device", &["losetup"]) {
        return;
    }
    let lp = LoopImage::spec(64 << 20)
        .file_name("doctor.img")
        .attach()
        .unwrap_or_else(|e| panic!("losetup: {e}"));
    // Field 5 of stat counts completed writes: the doctor must not add any.
    let writes = |lp: &LoopImage| {
        lp.sys("stat")
            .split_whitespace()
            .nth(4)
            .unwrap()
            .to_string()
    };
    let before = writes(&lp);
    let o = bin()
        .args([
            "doctor",
            "--device",
            &lp.dev,
            "--file-size",
            "64G",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let f = findings(&v);
    let has = |code: &str, subject: &str| f.iter().any(|(c, s, _)| c == code && s == subject);
    // Loop devices report what the disk under their file reports; here that is rotational.
    if lp.sys("queue/rotational") == "1" {
        assert!(has("rotational-virtual", lp.name()), "{f:#?}");
    } else {
        println!("note: {} is non-rotational on this host", lp.dev);
        assert!(!has("rotational-virtual", lp.name()), "{f:#?}");
    }
    assert!(has("loop-direct-io", lp.name()), "{f:#?}");
    let page = f
        .iter()
        .find(|(c, _, _)| c == "page-cache")
        .expect("page-cache finding");
    assert!(
        page.2.starts_with("data file 64 GiB is larger than RAM"),
        "{page:?}"
    );
    // The facts name the device and its backing file.
    let dev = &v["facts"]["devices"][0];
    assert_eq!(dev["path"], lp.dev.as_str());
    assert!(
        dev["loop_backing"]
            .as_str()
            .unwrap()
            .ends_with("doctor.img")
    );
    assert!(dev["activity"]["seconds"].as_f64().unwrap() > 0.5, "{dev}");
    assert_eq!(writes(&lp), before, "the doctor wrote to the device");

    // The table has the same findings, fitted to the width asked for.
    let o = bin()
        .env("COLUMNS", "90")
        .args([
            "doctor",
            "--device",
            &lp.dev,
            "--file-size",
            "64G",
            "--sample",
            "100ms",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("loop-direct-io") && text.contains("page-cache"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 90), "{text}");
}

#[test]
fn doctor_refuses_bad_input() {
    for (args, needle) in [
        (&["--device", "/etc/hostname"][..], "is not a block device"),
        (&["--device", "/nonexistent/dev"][..], "cannot stat"),
        (&["--dir", "/nonexistent/dir"][..], "is not a directory"),
        (&["--file-size", "lots"][..], "--file-size"),
        (&["--fs", "ext5"][..], "ext5"),
        (&["--dry-run"][..], "--install-missing"),
    ] {
        let o = bin().arg("doctor").args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn install_missing_dry_run_on_a_fresh_debian_path() {
    let Some(apt) = which("apt-get") else {
        println!("skipped: apt-get is not installed (the fake PATH needs it)");
        return;
    };
    // A PATH holding only what a fresh Debian has: apt-get, mount and ext4's tools.
    let path = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&apt, path.path().join("apt-get")).unwrap();
    for t in ["mount", "mkfs.ext4"] {
        std::fs::write(path.path().join(t), "").unwrap();
    }
    let o = bin()
        .env("PATH", path.path())
        .args([
            "doctor",
            "--install-missing",
            "--dry-run",
            "--sample",
            "100ms",
            "--json",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // The default set holds ZFS only where it is in the kernel: zfs-fuse is never installed
    // for it.
    let kernel_zfs = Path::new("/sys/module/zfs").exists();
    let pkgs = if kernel_zfs {
        "xfsprogs btrfs-progs zfsutils-linux"
    } else {
        "xfsprogs btrfs-progs"
    };
    assert!(
        err.contains(&format!(
            "apt-get install -y --no-install-recommends {pkgs}"
        )),
        "{err}"
    );
    assert!(!err.contains("zfs-fuse"), "{err}");
    assert!(err.contains("dry run: nothing was installed"), "{err}");
    // The diagnosis that follows still sees the tools missing, per setup.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let missing: Vec<String> = findings(&v)
        .into_iter()
        .filter(|(c, _, _)| c == "missing-tools")
        .map(|(_, s, _)| s)
        .collect();
    let expected: &[&str] = if kernel_zfs {
        &["xfs", "btrfs", "zfs"]
    } else {
        &["xfs", "btrfs"]
    };
    assert_eq!(missing, expected);

    // `fsbench plan --install-missing` says what `run --install-missing` would install.
    let o = bin()
        .env("PATH", path.path())
        .args(["plan", "--install-missing", "--fs", "ext4,xfs"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("will install 1 package(s) with apt-get")
            && err.contains("xfsprogs             mkfs.xfs for xfs")
            && err.contains("dry run: nothing was installed"),
        "{err}"
    );
}

#[test]
fn install_missing_needs_root_unless_nothing_is_missing() {
    if rustix::process::geteuid().is_root() {
        println!("skipped: the refusal is for users without root");
        return;
    }
    let path = tempfile::tempdir().unwrap();
    let Some(apt) = which("apt-get") else {
        println!("skipped: apt-get is not installed");
        return;
    };
    std::os::unix::fs::symlink(&apt, path.path().join("apt-get")).unwrap();
    let o = bin()
        .env("PATH", path.path())
        .args(["doctor", "--install-missing", "--fs", "xfs"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
}

#[test]
fn run_records_the_doctors_findings_in_results() {
    if !common::privileged_loop("run with doctor findings", &["losetup", "mkfs.ext4"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = scratch.path().join("out");
    let o = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4",
            "--only",
            "seqread",
            "--image-size",
            "256M",
            "--file-size",
            "16M",
            "--rounds",
            "1",
        ])
        .args(common::QUICK)
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let hf = r["host_findings"].as_array().expect("host_findings");
    let codes: Vec<&str> = hf.iter().map(|f| f["code"].as_str().unwrap()).collect();
    // The loop device fsbench attached has direct I/O: that check must pass.
    assert!(!codes.contains(&"loop-direct-io"), "{codes:?}");
    // Every finding is in the warnings or the notes as text, by severity.
    for f in hf {
        let list = if f["severity"] == "warn" {
            &r["warnings"]
        } else {
            &r["notes"]
        };
        let code = f["code"].as_str().unwrap();
        assert!(
            list.as_array().unwrap().iter().any(|w| w["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("doctor {code} "))),
            "{code} missing from {list}"
        );
    }
    // The reports show the warnings too.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for f in hf.iter().filter(|f| f["severity"] == "warn") {
        let code = f["code"].as_str().unwrap();
        assert!(
            md.contains(&format!("doctor {code} ")),
            "{code} not in report.md"
        );
    }
    // The loop device is virtual: when it says it spins, the run must have said so.
    if r["target"]["rotational"].as_bool() == Some(true) {
        assert!(codes.contains(&"rotational-virtual"), "{codes:?}");
    }
}

#[test]
fn restore_puts_back_a_setting_a_killed_run_left_and_doctor_reports_it_first() {
    if !common::privileged_loop("doctor --restore", &[]) {
        return;
    }
    // A ledger of a dead process (a child that has exited) that changed a "setting": a file of
    // our own stands in for /proc/sys/..., so the test changes nothing on the host.
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    std::fs::create_dir(&ledger).unwrap();
    let setting = dir.path().join("dirty_ratio");
    std::fs::write(&setting, "10\n").unwrap();
    // And a mountpoint directory it made, which only --cleanup removes.
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let file = serde_json::json!({
        "pid": dead, "start_time": 12345, "argv": ["fsbench", "run"],
        "entries": [{"id": 1, "item": {"kind": "dir", "path": mnt}},
                    {"id": 2, "item": {"kind": "setting", "path": setting,
                     "original": "20", "applied": "10"}}]
    });
    std::fs::write(
        ledger.join(format!("{dead}-12345.json")),
        serde_json::to_vec(&file).unwrap(),
    )
    .unwrap();
    let doctor = |args: &[&str]| {
        bin()
            .env("FSBENCH_LEDGER_DIR", &ledger)
            .arg("doctor")
            .args(["--sample", "100ms", "--json"])
            .args(args)
            .output()
            .unwrap()
    };
    // Plain doctor only reports it.
    let o = doctor(&[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = findings(&v);
    assert!(
        f.iter().any(|(c, s, t)| c == "unrestored-tunings"
            && *s == format!("pid {dead}")
            && t.contains("dirty_ratio")),
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|(c, _, t)| c == "stale-resources" && t.contains("directory")),
        "{f:#?}"
    );
    assert_eq!(std::fs::read_to_string(&setting).unwrap(), "10\n");
    // --dry-run says what it would do and does nothing.
    let o = doctor(&["--restore", "--dry-run"]);
    assert!(
        stderr(&o).contains("would release setting"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&setting).unwrap(), "10\n");
    // --restore puts the setting back (one line for it), the finding is gone, the directory
    // stays for --cleanup.
    let o = doctor(&["--restore"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("recovery (pid {dead}): released setting")),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&setting).unwrap().trim(), "20");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !findings(&v)
            .iter()
            .any(|(c, _, _)| c == "unrestored-tunings"),
        "{v}"
    );
    assert!(!stderr(&o).contains("directory"), "{}", stderr(&o));
    assert!(mnt.is_dir());
    let o = doctor(&["--cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("released directory"), "{}", stderr(&o));
    assert!(!mnt.exists());
    // Nothing left.
    let o = doctor(&["--cleanup"]);
    assert!(
        stderr(&o).contains("nothing to restore or release"),
        "{}",
        stderr(&o)
    );
}
