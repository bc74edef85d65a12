//! Issue 34: several devices, one filesystem (`--images N`, `--device` repeated, `raid=`).
//!
//! Plan-time refusals run anywhere; the rest needs root and loop devices (the gate of
//! `tests/common`: skipped without them, failed under `FSBENCH_REQUIRE_PRIVILEGED=1`).
//! Sizes are small and each run is one round of `usable-space` and a 1 s `randread`.

use fsbench::plan::SetupSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

mod common;

use common::{bin, sh, sh_ok, stderr};

/// `fsbench run --yes`, one round, tiny sizes, in `scratch`.
fn run(scratch: &Path, extra: &[&str]) -> Output {
    bin()
        .args(["run", "--yes", "--no-history", "--rounds", "1"])
        .args(["--file-size", "32M", "--runtime", "1s", "--ramp", "0s"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .args(["--only", "usable-space,randread"])
        .arg("--scratch-dir")
        .arg(scratch)
        .arg("--out")
        .arg(scratch.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

fn results(scratch: &Path) -> Value {
    let text = std::fs::read_to_string(scratch.join("out/results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The samples of `setup`/`workload`/`metric`.
fn values(r: &Value, setup: &str, workload: &str, metric: &str) -> Vec<f64> {
    r["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["setup"] == setup && s["workload"] == workload && s["metric"] == metric)
        .map(|s| s["value"].as_f64().unwrap())
        .collect()
}

fn mkfs_args(r: &Value, setup: &str) -> Vec<String> {
    r["setups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == setup)
        .map(|s| {
            s["mkfs_args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Loop devices backed by images in `dir` (what a run there attached).
fn attached_in(dir: &Path) -> String {
    let all = sh_ok(&["losetup", "-a"]);
    let d = dir.display().to_string();
    all.lines()
        .filter(|l| l.contains(&d))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fsbench_pools() -> String {
    if !common::have("zpool") {
        return String::new();
    }
    let o = sh(&["zpool", "list", "-H", "-o", "name"]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("fsbench_"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn layouts_that_need_more_devices_or_md_are_refused_at_plan_time() {
    let plan = |args: &[&str]| {
        bin()
            .args(["plan", "--image-size", "4G"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = plan(&["--fs", "b=btrfs:raid=raid1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("raid=raid1 needs at least 2 devices and the target has 1"),
        "{}",
        stderr(&o)
    );
    let o = plan(&["--images", "2", "--fs", "z=zfs:raid=raidz2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("use --images 3"), "{}", stderr(&o));
    let o = plan(&[
        "--images",
        "2",
        "--fs",
        "b=btrfs:raid=raid1,z=zfs:raid=mirror",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
    assert!(out.contains("2 × 4 GiB sparse image"), "{out}");
    let o = plan(&["--images", "3", "--fs", "x=xfs:raid=raid5"]);
    if Path::new("/proc/mdstat").exists() {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    } else {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("no /proc/mdstat"), "{}", stderr(&o));
    }
    let o = plan(&["--images", "2", "--dir", "/var/tmp", "--fs", "ext4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// The final argv check of a layout: a device outside the target in the mkfs words is
/// refused before mkfs runs, on the command line (plan time) and in the driver itself (a
/// plan that got past the plan-time check, e.g. an edited plan.json).
#[test]
fn a_layouts_mkfs_argument_naming_another_device_is_refused_and_it_stays_intact() {
    if !common::privileged_loop(module_path!(), &["mkfs.ext4", "mkfs.btrfs", "cksum"]) {
        return;
    }
    let victim = common::LoopImage::new(64 << 20);
    sh_ok(&["mkfs.ext4", "-q", "-F", "-L", "victim", &victim.dev]);
    let before = sh_ok(&["cksum", &victim.dev]);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let o = run(
        s,
        &[
            "--images",
            "2",
            "--image-size",
            "256M",
            "--fs",
            &format!("b=btrfs:raid=raid1;mkfs=-L x {}", victim.dev),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&victim.dev), "{}", stderr(&o));
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));

    let a = common::LoopImage::new(256 << 20);
    let b = common::LoopImage::new(256 << 20);
    let devices = [PathBuf::from(&a.dev), PathBuf::from(&b.dev)];
    let mut setup = SetupSpec::plain("btrfs");
    setup.name = "b".into();
    setup.raid = Some("raid1".into());
    let mnt = s.join("mnt");
    for words in [
        vec![victim.dev.clone()],
        vec!["--label".into(), "x".into(), victim.dev.clone()],
        vec!["-m".into(), "raid1".into(), a.dev.clone()],
    ] {
        setup.mkfs = words.clone();
        let driver = fsbench::fs::driver("btrfs").unwrap();
        let e = match driver.create_and_mount_on(&devices, &setup, &mnt, Duration::from_secs(60)) {
            Ok(_) => panic!("{words:?} was let through"),
            Err(e) => e,
        };
        assert_eq!(e.exit_code(), 2, "{words:?}: {e}");
        assert!(e.to_string().contains("refused to run: mkfs.btrfs"), "{e}");
    }
    assert_eq!(sh_ok(&["cksum", &victim.dev]), before, "the victim changed");
    assert!(!sh(&["findmnt", "-n", "-S", &victim.dev]).status.success());
    // Untouched by the refused commands: no Btrfs signature on the would-be members.
    for d in [&a.dev, &b.dev] {
        assert!(sh(&["blkid", "-p", d]).stdout.is_empty(), "{d} was written");
    }
}

/// `--device` twice: each device checked, one consent (`--yes`), one Btrfs raid1 over both.
#[test]
fn two_devices_make_one_btrfs_raid1() {
    if !common::privileged_loop(module_path!(), &["mkfs.btrfs", "btrfs", "findmnt"]) {
        return;
    }
    let a = common::LoopImage::new(320 << 20);
    let b = common::LoopImage::new(320 << 20);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    // The same device twice is refused, nothing written.
    let o = run(
        s,
        &[
            "--device",
            &a.dev,
            "--device",
            &a.dev,
            "--fs",
            "b=btrfs:raid=raid1",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("same device"), "{}", stderr(&o));
    let o = run(
        s,
        &[
            "--device",
            &a.dev,
            "--device",
            &b.dev,
            "--fs",
            "b=btrfs:raid=raid1",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = results(s);
    let args = mkfs_args(&r, "b");
    assert!(
        args.ends_with(&[a.dev.clone(), b.dev.clone()])
            && args.windows(2).any(|w| w == ["-d", "raid1"]),
        "{args:?}"
    );
    assert_eq!(r["target"]["extra"]["device_count"], "2");
    let avail = values(&r, "b", "usable-space", "avail_bytes");
    // raid1 keeps two copies: less than one device's size is usable.
    assert!(
        avail.len() == 1 && avail[0] > 0.0 && avail[0] < (320 << 20) as f64,
        "{avail:?}"
    );
    assert_eq!(values(&r, "b", "randread", "iops").len(), 1);
    for d in [&a.dev, &b.dev] {
        assert!(
            !sh(&["findmnt", "-n", "-S", d]).status.success(),
            "{d} left mounted"
        );
    }
}

/// The run on three images: a Btrfs raid1 and a ZFS mirror, usable space and
/// randread per layout, nothing left attached or imported.
#[test]
fn three_images_btrfs_raid1_and_zfs_mirror() {
    if !common::privileged(module_path!())
        .loop_devices()
        .tools(&["mkfs.btrfs", "btrfs"])
        .zfs()
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let o = run(
        s,
        &[
            "--images",
            "3",
            "--image-size",
            "320M",
            "--fs",
            "b1=btrfs:raid=raid1,z1=zfs:raid=mirror",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = results(s);
    assert_eq!(r["target"]["extra"]["device_count"], "3");
    let devs: Vec<String> = r["target"]["extra"]["devices"]
        .as_str()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    assert_eq!(devs.len(), 3);
    let b = mkfs_args(&r, "b1");
    assert!(b.ends_with(&devs), "{b:?}");
    let z = mkfs_args(&r, "z1");
    let tail: Vec<String> = std::iter::once("mirror".to_string())
        .chain(devs.iter().cloned())
        .collect();
    assert!(z.ends_with(&tail), "{z:?}");
    for setup in ["b1", "z1"] {
        let avail = values(&r, setup, "usable-space", "avail_bytes");
        assert!(avail.len() == 1 && avail[0] > 0.0, "{setup}: {avail:?}");
        // Every layout here keeps a copy on each of two or more devices.
        assert!(avail[0] < (320 << 20) as f64, "{setup}: {avail:?}");
        assert_eq!(values(&r, setup, "randread", "iops").len(), 1, "{setup}");
        // One device failed: the reads again, as samples of their own.
        let degraded = values(&r, setup, "randread-degraded", "iops");
        assert!(
            degraded.len() == 1 && degraded[0] > 0.0,
            "{setup}: {degraded:?}"
        );
        for step in ["scrub", "rebuild"] {
            let per_gib = values(&r, setup, step, "seconds_per_gib");
            let data = values(&r, setup, step, "bytes");
            assert!(
                per_gib.len() == 1 && per_gib[0] > 0.0,
                "{setup} {step}: {per_gib:?}"
            );
            // The data file (32 MiB) is there to scrub and rebuild.
            assert!(
                data.len() == 1 && data[0] >= (32 << 20) as f64,
                "{setup} {step}: {data:?}"
            );
        }
    }
    assert!(
        r["failures"].as_array().is_none_or(|f| f.is_empty()),
        "{}",
        r["failures"]
    );
    let err = stderr(&o);
    assert!(
        err.contains("scrub") && err.contains("rebuild onto"),
        "{err}"
    );
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));
    assert!(fsbench_pools().is_empty(), "{}", fsbench_pools());
}

/// kill -9 in the middle of a run on three images: the next `fsbench doctor --cleanup`
/// releases the mount, the three loop devices and the images (the ledger).
#[test]
fn a_killed_multi_device_run_leaves_nothing_after_cleanup() {
    if !common::privileged_loop(module_path!(), &["mkfs.btrfs", "btrfs", "findmnt"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let mut child = bin()
        .args(["run", "--yes", "--no-history", "--rounds", "1"])
        .args(["--images", "3", "--image-size", "320M"])
        .args(["--fs", "b=btrfs:raid=raid1", "--only", "randread"])
        .args(["--file-size", "32M", "--runtime", "60s", "--ramp", "0s"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .arg("--scratch-dir")
        .arg(s)
        .arg("--out")
        .arg(s.join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mounted = |pid: u32| {
        String::from_utf8_lossy(&sh(&["findmnt", "-rn", "-o", "TARGET"]).stdout)
            .lines()
            .any(|l| l.starts_with(&format!("/run/fsbench/{pid}-")))
    };
    let t0 = std::time::Instant::now();
    while !(mounted(child.id()) && attached_in(s).lines().count() == 3) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never got going"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Into the randread: the array is mounted over all three.
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id();
    sh_ok(&["kill", "-9", &pid.to_string()]);
    child.wait().unwrap();
    assert_eq!(
        attached_in(s).lines().count(),
        3,
        "autoclear did it, not the ledger"
    );
    let o = bin().args(["doctor", "--cleanup"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t0 = std::time::Instant::now();
    while !attached_in(s).is_empty() && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));
    assert!(!mounted(pid));
    let left: Vec<_> = std::fs::read_dir(s)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".img"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
