//! End-to-end tests of `fsbench run` / `fsbench plan` through the real binary.
//!
//! Privileged tests (loop devices, mkfs, mounts) run as root when the tools exist; otherwise
//! they print `skipped: <reason>`, or fail under `FSBENCH_REQUIRE_PRIVILEGED=1` ([`common`]).
//! Every test uses its own scratch directory, so checking for
//! leftovers (loop devices backed by it, mounts under it or under fsbench's mount root for the
//! child's pid, new fsbench pools) never confuses our resources with anyone else's.

mod common;

use common::have;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The privileged tests check that nothing of theirs is left (loops, mounts, pools); run them
/// one at a time so one test's live pool is never taken for another's leftover.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsbench"))
}

/// Root, loop devices and `tools`, or skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1).
fn privileged(name: &str, tools: &[&str]) -> bool {
    common::privileged(&format!("run::{name}"))
        .loop_devices()
        .tools(tools)
        .ok()
}

fn sh(argv: &[&str]) -> Output {
    Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

fn sh_ok(argv: &[&str]) -> String {
    let o = sh(argv);
    assert!(
        o.status.success(),
        "{argv:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Refusal: exit code 2 and a message containing every `needles`.
fn assert_refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2, stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks '{n}':\n{err}");
    }
}

fn zfs_pools() -> Vec<String> {
    if !have("zpool") {
        return vec![];
    }
    let o = sh(&["zpool", "list", "-H", "-o", "name"]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Loop devices backed by files under `scratch`, mounts of ours, new fsbench pools.
fn leftovers(scratch: &Path, child_pid: u32, pools_before: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let scratch = scratch.to_string_lossy().into_owned();
    let loops = String::from_utf8_lossy(&sh(&["losetup", "-a"]).stdout).into_owned();
    found.extend(
        loops
            .lines()
            .filter(|l| l.contains(&scratch))
            .map(|l| format!("loop: {l}")),
    );
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let ours = format!("/run/fsbench/{child_pid}-");
    found.extend(
        mountinfo
            .lines()
            .filter(|l| l.contains(&ours) || l.contains(&scratch))
            .map(|l| format!("mount: {l}")),
    );
    found.extend(
        zfs_pools()
            .into_iter()
            .filter(|p| p.contains("fsbench") && !pools_before.contains(p))
            .map(|p| format!("pool: {p}")),
    );
    found
}

fn load_results(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text).expect("results.json is JSON")
}

/// Every (setup, workload, round) of the standard suite has at least one sample.
fn assert_complete(r: &serde_json::Value, setups: &[&str], rounds: u32) {
    let ids = [
        "mkfs",
        "usable-space",
        "layout",
        "seqread",
        "seqwrite",
        "randread",
        "randwrite",
        "randrw70",
        "fsync-write",
        "untar",
        "find-cold",
        "rm-tree",
    ];
    let samples = r["samples"].as_array().expect("samples");
    let mut missing = Vec::new();
    for s in setups {
        for w in ids {
            for round in 1..=rounds {
                let hit = samples.iter().any(|x| {
                    x["setup"] == *s && x["workload"] == w && x["round"] == u64::from(round)
                });
                if !hit {
                    missing.push(format!("{s}/{w}/round {round}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing samples: {missing:?}\nfailures: {}",
        r["failures"]
    );
}

#[test]
fn refuses_bad_input_before_touching_anything() {
    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let mut c = bin();
        c.args(["run", "--yes", "--scratch-dir", s]).args(args);
        c.output().unwrap()
    };
    assert_refused(
        &run(&["--fs", "ext4,nosuchfs"]),
        &["unknown filesystem 'nosuchfs'"],
    );
    assert_refused(
        &run(&["--fs", "e=ext4:recordsize=16K"]),
        &[
            "ext4 does not understand \"recordsize\"",
            "valid keys for ext4: mkfs, mount;",
        ],
    );
    assert_refused(&run(&["--rounds", "0"]), &["--rounds"]);
    assert_refused(&run(&["--only", "randred"]), &["--only", "randred"]);
    assert_refused(
        &run(&["--fs", "xfs", "--image-size", "100M"]),
        &["--image-size", "too small for xfs"],
    );
    assert_refused(
        &run(&["--fs", "zfs", "--image-size", "32M", "--file-size", "8M"]),
        &["too small for zfs"],
    );
    assert_refused(
        &run(&["--corpus-from", "/nonexistent/tree"]),
        &["--corpus-from", "/nonexistent/tree", "not a directory"],
    );
    assert_refused(&run(&["--corpus-scale", "0"]), &["--corpus-scale"]);
    // Nothing was created in the scratch directory.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    // The same validation serves `fsbench plan`.
    let o = bin()
        .args(["plan", "--fs", "btrfs:bogus=1"])
        .output()
        .unwrap();
    assert_refused(&o, &["btrfs does not understand \"bogus\""]);
}

#[test]
fn plan_refuses_run_only_flags_and_run_refuses_emit_fio() {
    // Flags that act on a run mean nothing to `plan`: clap refuses them (exit 2).
    for flags in [
        &["--yes"][..],
        &["--keep-image"],
        &["--yes", "--keep-image"],
        &["--json"],
    ] {
        let o = bin().arg("plan").args(flags).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "plan {flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("unexpected argument"), "{}", stderr(&o));
    }
    // `run --emit-fio` used to be ignored silently; now it is refused before anything runs.
    let scratch = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["run", "--emit-fio", "--fs", "ext4", "--scratch-dir"])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_refused(&o, &["--emit-fio", "fsbench plan --emit-fio"]);
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    // Each profile's help says what it runs, without the articles' jargon.
    let help = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("standard  the full suite at full size"),
        "{help}"
    );
    assert!(!help.to_lowercase().contains("seed 00"), "{help}");
}

#[test]
fn plan_prints_steps_eta_and_fio_commands() {
    let o = bin()
        .args([
            "plan",
            "--fs",
            "ext4,zfs-16k=zfs:recordsize=16K",
            "--rounds",
            "2",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Estimated time:"), "{text}");
    assert!(text.contains("-O recordsize=16K"), "{text}");
    // Rounds interleave: round 1 of zfs-16k comes before round 2 of ext4.
    let z1 = text.find("1      zfs-16k").expect("round 1 zfs-16k");
    let e2 = text.find("2      ext4").expect("round 2 ext4");
    assert!(z1 < e2);
    let randread = text
        .lines()
        .find(|l| l.starts_with("fio --name=randread "))
        .unwrap_or_else(|| panic!("no fio line for randread:\n{text}"));
    for part in [
        "--rw=randread",
        "--iodepth=8",
        "--numjobs=4",
        "--direct=1",
        "--bs=4k",
    ] {
        assert!(randread.contains(part), "{part} missing: {randread}");
    }
    let o = bin()
        .args(["plan", "--emit-fio", "--profile", "nvme"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fio --name=randread-qd128 ") && text.contains("--iodepth=128"),
        "{text}"
    );
    let help = bin().args(["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Examples:"));
}

#[test]
fn refuses_a_regular_file_as_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("not-a-disk.img");
    std::fs::write(&f, vec![0xabu8; 1 << 20]).unwrap();
    let o = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4",
            "--device",
            f.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_refused(&o, &["not-a-disk.img"]);
    assert!(
        std::fs::read(&f).unwrap().iter().all(|b| *b == 0xab),
        "file changed"
    );
}

/// A loop device of the test's own, with an ext4 filesystem holding a marker file.
struct TestLoop {
    image: PathBuf,
    dev: String,
    mnt: PathBuf,
    mounted: bool,
    _dir: tempfile::TempDir,
}

impl TestLoop {
    fn new() -> TestLoop {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.img");
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(64 << 20).unwrap();
        drop(f);
        let dev = sh_ok(&["losetup", "--find", "--show", image.to_str().unwrap()]);
        sh_ok(&["mkfs.ext4", "-F", "-q", &dev]);
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let mut l = TestLoop {
            image,
            dev,
            mnt,
            mounted: false,
            _dir: dir,
        };
        l.mount();
        std::fs::write(l.mnt.join("marker"), b"precious data").unwrap();
        sh_ok(&["sync"]);
        l
    }

    fn mount(&mut self) {
        sh_ok(&["mount", &self.dev, self.mnt.to_str().unwrap()]);
        self.mounted = true;
    }

    fn umount(&mut self) {
        sh_ok(&["umount", self.mnt.to_str().unwrap()]);
        self.mounted = false;
    }

    fn marker_intact(&mut self) -> bool {
        let was = self.mounted;
        if !was {
            self.mount();
        }
        let ok = std::fs::read(self.mnt.join("marker")).is_ok_and(|d| d == b"precious data");
        if !was {
            self.umount();
        }
        ok
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        if self.mounted {
            let _ = sh(&["umount", self.mnt.to_str().unwrap()]);
        }
        let _ = sh(&["losetup", "-d", &self.dev]);
        let _ = std::fs::remove_file(&self.image);
    }
}

#[test]
fn refuses_mounted_and_signed_devices() {
    let _serial = serial();
    if !privileged(
        "refuses_mounted_and_signed_devices",
        &["mkfs.ext4", "mount"],
    ) {
        return;
    }
    let mut l = TestLoop::new();
    // Mounted: refused even with --force-wipe.
    let o = bin()
        .args([
            "run",
            "--yes",
            "--force-wipe",
            "--fs",
            "ext4",
            "--device",
            &l.dev,
        ])
        .output()
        .unwrap();
    assert_refused(&o, &["mounted"]);
    assert!(l.marker_intact());
    // Unmounted but carrying ext4: refused without --force-wipe.
    l.umount();
    let o = bin()
        .args(["run", "--yes", "--fs", "ext4", "--device", &l.dev])
        .output()
        .unwrap();
    assert_refused(&o, &["--force-wipe"]);
    assert!(l.marker_intact(), "the data on the device changed");
}

#[test]
fn full_run_on_a_loop_image_over_four_filesystems() {
    let _serial = serial();
    // ZFS in the kernel or zfs-fuse, whichever is installed.
    if !common::privileged("run::full_run_on_a_loop_image_over_four_filesystems")
        .loop_devices()
        .tools(&["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs"])
        .zfs()
        .ok()
    {
        return;
    }
    let daemons_before = zfs_fuse_pids();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let pools = zfs_pools();
    let child = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,xfs,btrfs,zfs",
            "--image-size",
            "1G",
            "--file-size",
            "64M",
            "--runtime",
            "1s",
            "--ramp",
            "0s",
            "--rounds",
            "2",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            // The quick profile's full corpus is sized for a real run; a tenth keeps CI short.
            "--corpus-scale",
            "0.1",
            "--seed",
            "42",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(
        o.status.success(),
        "exit {:?}\n{err}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout)
    );
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    assert_complete(&r, &["ext4", "xfs", "btrfs", "zfs"], 2);
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md beside results");
    assert!(md.contains("| Test |") && md.contains("zfs"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("<svg"), "the HTML report has its charts");
    let setups = r["setups"].as_array().unwrap();
    assert_eq!(setups.len(), 4);
    for s in setups {
        assert!(!s["mkfs_args"].as_array().unwrap().is_empty(), "{s}");
        assert!(!s["mount_opts"].as_str().unwrap().is_empty(), "{s}");
    }
    assert!(r["summary"].as_array().is_some_and(|s| !s.is_empty()));
    assert!(
        r["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["fio_command"].is_string())
    );
    assert!(out.join("journal.jsonl").exists() && out.join("plan.json").exists());
    // The table is printed.
    assert!(String::from_utf8_lossy(&o.stdout).contains("ext4"));
    let left = leftovers(scratch.path(), pid, &pools);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        1,
        "image not deleted"
    );
    // A zfs-fuse daemon the run started is gone with it; one that ran before is untouched.
    let after = zfs_fuse_pids();
    assert_eq!(
        after, daemons_before,
        "zfs-fuse daemons before the run {daemons_before:?}, after {after:?}"
    );
    if daemons_before.is_empty() && zfs_is_fuse() {
        assert!(
            err.contains("stopped the zfs-fuse daemon it started"),
            "{err}"
        );
    }
}

/// PIDs of running zfs-fuse daemons.
fn zfs_fuse_pids() -> Vec<String> {
    let o = sh(&["pgrep", "-x", "zfs-fuse"]);
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn zfs_is_fuse() -> bool {
    !Path::new("/sys/module/zfs").exists()
}

#[test]
fn sigint_releases_everything_and_resume_completes() {
    let _serial = serial();
    if !privileged(
        "sigint_releases_everything_and_resume_completes",
        &["mkfs.ext4", "mkfs.xfs"],
    ) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let child = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,xfs",
            "--image-size",
            "1G",
            "--file-size",
            "64M",
            "--runtime",
            "2s",
            "--ramp",
            "0s",
            "--rounds",
            "2",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            // The quick profile's full corpus is sized for a real run; a tenth keeps CI short.
            "--corpus-scale",
            "0.1",
            "--seed",
            "7",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until one setup-round is done and the next is under way, then interrupt.
    let journal = out.join("journal.jsonl");
    let t0 = Instant::now();
    loop {
        let j = std::fs::read_to_string(&journal).unwrap_or_default();
        let done = j.matches("\"round_done\"").count();
        if done >= 1
            && j.lines().count() > j.lines().position(|l| l.contains("round_done")).unwrap() + 2
        {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "run made no progress:\n{j}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
    let left = leftovers(scratch.path(), pid, &[]);
    assert!(left.is_empty(), "left behind after SIGINT: {left:?}");
    assert!(journal.exists());
    let partial = load_results(&out);
    assert_eq!(partial["partial"], true);
    // Only the output directory remains in the scratch dir: the image is gone.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 1);

    let o = bin().arg("run").arg("--resume").arg(&out).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "resume failed:\n{err}");
    assert!(err.contains("already done"), "{err}");
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    assert_complete(&r, &["ext4", "xfs"], 2);
    let left = leftovers(scratch.path(), pid, &[]);
    assert!(left.is_empty(), "left behind after resume: {left:?}");
}

#[test]
fn vps_and_nvme_profiles_run_end_to_end_at_tiny_sizes() {
    let _serial = serial();
    if !privileged(
        "vps_and_nvme_profiles_run_end_to_end_at_tiny_sizes",
        &["mkfs.ext4", "mkfs.btrfs"],
    ) {
        return;
    }
    for (profile, fs, setups) in [
        (
            "vps",
            "ext4,btrfs-zstd=btrfs:mount=compress=zstd:3",
            vec!["ext4", "btrfs-zstd"],
        ),
        ("nvme", "ext4", vec!["ext4"]),
    ] {
        let scratch = tempfile::tempdir().unwrap();
        let out = scratch.path().join("out");
        let o = bin()
            .args([
                "run",
                "--yes",
                "--profile",
                profile,
                "--fs",
                fs,
                "--image-size",
                "1G",
                "--file-size",
                "64M",
                "--runtime",
                "1s",
                "--ramp",
                "0s",
                "--rounds",
                "1",
                "--quiet-window",
                "1s",
                "--quiet-timeout",
                "20s",
                "--corpus-scale",
                "0.1",
            ])
            .arg("--scratch-dir")
            .arg(scratch.path())
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{profile}: exit {:?}\n{}",
            o.status.code(),
            stderr(&o)
        );
        let r = load_results(&out);
        let samples = r["samples"].as_array().unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
        for w in plan["plan"]["workloads"].as_array().unwrap() {
            if w["record"] != true {
                continue;
            }
            for s in &setups {
                assert!(
                    samples
                        .iter()
                        .any(|x| x["setup"] == *s && x["workload"] == w["id"]),
                    "{profile}: no sample for {s}/{}",
                    w["id"]
                );
            }
        }
        if profile == "vps" {
            // The 8-writer job reports its factor over the single writer.
            assert!(
                samples
                    .iter()
                    .any(|x| x["workload"] == "par8-write" && x["metric"] == "scaling_factor")
            );
        }
        let left = leftovers(scratch.path(), 0, &[]);
        assert!(left.is_empty(), "{profile}: left behind: {left:?}");
    }
}

#[test]
fn enospc_is_a_failed_step_and_the_run_goes_on() {
    let _serial = serial();
    if !privileged(
        "enospc_is_a_failed_step_and_the_run_goes_on",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    // The standard corpus (three 35,000-entry copies, ~560 MB) cannot fit in 128 MiB.
    let o = bin()
        .args(["run", "--yes", "--profile", "standard", "--fs", "ext4"])
        .args(["--image-size", "128M", "--file-size", "8M", "--rounds", "1"])
        .args(["--runtime", "1s", "--ramp", "0s", "--quiet-window", "1s"])
        .args(["--only", "untar,find-cold,rm-tree,randread"])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = load_results(&out);
    let failures = r["failures"].as_array().unwrap();
    let failed = |w: &str| {
        failures
            .iter()
            .find(|f| f["workload"] == w)
            .map(|f| f["error"].as_str().unwrap().to_string())
    };
    assert!(
        failed("untar").unwrap().contains("No space left on device"),
        "{failures:?}"
    );
    assert!(failed("find-cold").unwrap().contains("untar failed"));
    // The other workloads of the setup-round still ran and were recorded.
    let samples = r["samples"].as_array().unwrap();
    assert!(samples.iter().any(|s| s["workload"] == "randread"));
    assert!(!samples.iter().any(|s| s["workload"] == "untar"));
    let left = leftovers(scratch.path(), 0, &[]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

// ---------------------------------------------------------------------------------------------
// Consent: `--device` wipes only after the device name was typed on the terminal, or `--yes`.

/// A blank loop device of the test's own (no signature, like a new disk), detached on drop.
struct BlankLoop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl BlankLoop {
    fn new() -> BlankLoop {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let image = dir.path().join("blank.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(256 << 20)
            .unwrap();
        let dev = sh_ok(&["losetup", "--find", "--show", image.to_str().unwrap()]);
        BlankLoop { dev, _dir: dir }
    }

    /// The kernel name (`loop7`), which is what the prompt asks for.
    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// Checksum of every byte of the device.
    fn checksum(&self) -> String {
        sh_ok(&["cksum", &self.dev])
    }
}

impl Drop for BlankLoop {
    fn drop(&mut self) {
        let _ = sh(&["losetup", "-d", &self.dev]);
    }
}

/// A small, quick run on `dev` writing to `out`.
fn device_run_args(dev: &str, out: &Path) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--device",
        dev,
        "--fs",
        "ext4",
        "--only",
        "seqread",
        "--file-size",
        "16M",
        "--runtime",
        "1s",
        "--ramp",
        "0s",
        "--rounds",
        "1",
        "--quiet-window",
        "1s",
        "--quiet-timeout",
        "20s",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(out.display().to_string());
    a
}

/// How a run on a pseudo-terminal ended and everything it printed there.
struct PtyRun {
    code: Option<i32>,
    screen: String,
}

/// Run fsbench with a fresh pseudo-terminal as its controlling terminal (stdout and stderr
/// on it, as for a user at a console) while `stdin` arrives through a pipe; once the prompt
/// shows, `typed` is typed on the terminal (`\x04` at the start of a line is Ctrl-D: EOF).
fn run_on_pty(args: &[String], stdin: &[u8], typed: &[u8]) -> PtyRun {
    use std::ffi::CStr;
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: plain libc pty calls on a descriptor we own; ptsname_r writes into `buf`.
    let (master, slave_path) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = std::fs::File::from(OwnedFd::from_raw_fd(m));
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()), 0);
        let path = CStr::from_ptr(buf.as_ptr()).to_str().unwrap().to_string();
        (master, path)
    };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .unwrap();
    let mut cmd = bin();
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    // SAFETY: setsid and ioctl are async-signal-safe; fd 2 is the pty slave by now.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(2, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // Only the child may hold the slave, so reading the master ends (EIO) when it exits.
    drop(cmd);
    drop(slave);
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin).unwrap();
    drop(pipe);
    let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let screen = screen.clone();
        let mut m = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = m.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let shown = || String::from_utf8_lossy(&screen.lock().unwrap()).into_owned();
    let t0 = Instant::now();
    while !shown().contains("to continue: ") {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no prompt:\n{}",
            shown()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = (&master).write_all(typed);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fsbench did not finish:\n{}", shown());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    PtyRun {
        code: status.code(),
        screen: shown(),
    }
}

#[test]
fn a_script_without_yes_is_refused_before_anything_is_written() {
    let _serial = serial();
    if !privileged(
        "a_script_without_yes_is_refused_before_anything_is_written",
        &["cksum"],
    ) {
        return;
    }
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let lo = BlankLoop::new();
    let before = lo.checksum();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    for extra in [&[][..], &["--force-wipe"][..]] {
        // `echo loopN | fsbench run --device /dev/loopN` without a controlling terminal.
        let mut cmd = bin();
        cmd.args(device_run_args(&lo.dev, &out))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe; the child then has no controlling terminal.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", lo.name()).unwrap();
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        println!("{extra:?}: exit {:?}: {err}", o.status.code());
        assert_refused(&o, &[&lo.dev, "pass --yes"]);
        assert_eq!(err.trim_end().lines().count(), 1, "one line:\n{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "fsbench: error: refusing to use {}: wiping it needs confirmation and there is \
                 no terminal to ask on; pass --yes to confirm non-interactively",
                lo.dev
            )
        );
        assert_eq!(lo.checksum(), before, "the device was written");
        assert!(!out.exists(), "{} was created", out.display());
    }
}

#[test]
fn typed_confirmation_on_a_terminal() {
    let _serial = serial();
    if !privileged("typed_confirmation_on_a_terminal", &["mkfs.ext4", "cksum"]) {
        return;
    }
    let lo = BlankLoop::new();
    let before = lo.checksum();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let args = device_run_args(&lo.dev, &out);
    // stdin carries the right name each time: only what is typed on the terminal counts.
    let right = format!("{}\n", lo.name());
    for (case, typed, says) in [
        (
            "wrong name",
            &b"loop999\n"[..],
            "the confirmation did not match (typed \"loop999\"",
        ),
        (
            "empty line",
            &b"\n"[..],
            "the confirmation did not match (an empty line was typed",
        ),
        (
            "end of input",
            &b"\x04"[..],
            "no confirmation was typed (end of input)",
        ),
    ] {
        let r = run_on_pty(&args, right.as_bytes(), typed);
        println!("--- {case}: exit {:?}\n{}", r.code, r.screen.trim_end());
        assert_eq!(r.code, Some(2), "{case}:\n{}", r.screen);
        assert!(
            r.screen.contains(&format!(
                "Type the device name ({}) to continue: ",
                lo.name()
            )),
            "{case}: no prompt:\n{}",
            r.screen
        );
        assert!(
            r.screen
                .contains(&format!("refusing to use {}: {says}", lo.dev)),
            "{case}:\n{}",
            r.screen
        );
        assert_eq!(lo.checksum(), before, "{case}: the device was written");
        assert!(!out.exists(), "{case}: {} was created", out.display());
    }
    // The right name typed (and a wrong one on stdin): the run proceeds and wipes.
    let r = run_on_pty(&args, b"loop999\n", right.as_bytes());
    let tail: Vec<&str> = r.screen.trim_end().lines().rev().take(3).collect();
    println!(
        "--- right name: exit {:?}\n{}\n[…]\n{}",
        r.code,
        r.screen
            .lines()
            .find(|l| l.contains("to continue: "))
            .unwrap_or(""),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(r.code, Some(0), "{}", r.screen);
    assert!(out.join("results.json").exists(), "{}", r.screen);
    assert_ne!(
        lo.checksum(),
        before,
        "the accepted run did not format the device"
    );
}

#[test]
fn precondition_and_steady_state_on_a_device() {
    // Refused before anything is touched where there is no device to condition.
    let o = bin()
        .args(["plan", "--fs", "ext4", "--precondition"])
        .output()
        .unwrap();
    assert_refused(&o, &["--precondition", "--device"]);
    let _serial = serial();
    if !privileged("precondition_and_steady_state_on_a_device", &["mkfs.ext4"]) {
        return;
    }
    let lo = BlankLoop::new();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let mut args = device_run_args(&lo.dev, &out);
    // Loose criteria (3 rounds of 2 s within 50 %) so reads settle well before the limit.
    args.extend(
        [
            "--yes",
            "--precondition",
            "--steady-state",
            "3,50,50",
            "--steady-round",
            "2s",
            "--steady-max",
            "30s",
        ]
        .map(String::from),
    );
    let o = bin().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect();
    // SNIA's workload-independent part: the whole 256 MiB device twice, before the first mkfs.
    assert!(
        notes.iter().any(|n| n.starts_with(&format!(
            "preconditioned {} (256 MiB): 2 × its capacity in 128 KiB sequential writes",
            lo.dev
        )) && n.contains("pass 2 of 2")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(
            |n| n.starts_with("layout: preconditioned the 16 MiB data file")
                && n.contains("sequential fill 2 of 2")
                && n.contains("random overwrite")
        ),
        "{notes:?}"
    );
    let job = &r["workloads"][0]["params"]["job"];
    assert_eq!(job["steady"]["criteria"]["windows"], 3, "{job}");
    assert_eq!(job["steady"]["conditioning"], "preconditioned", "{job}");
    let metric = |name: &str| {
        r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["metric"] == name)
            .map(|s| s["value"].as_f64().unwrap())
    };
    // Either it became steady (a note names the window) or a warning says it did not.
    let reached = metric("steady_reached").expect("steady_reached recorded");
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .unwrap()
            .contains("steady state not reached")
    });
    if reached == 1.0 {
        assert!(metric("steady_at_s").is_some());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("IOPS, MiB/s and latency are over seconds"))
        );
    } else {
        assert!(warned, "a missed steady state is a warning");
    }
}
