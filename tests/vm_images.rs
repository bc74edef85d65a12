//! VM disk images end to end through the real binary (`--profile vm`, docs/vm-images.md):
//! qcow2 and raw images made by qemu-img on ext4, Btrfs and Btrfs with nodatacow, served by
//! qemu-storage-daemon's FUSE export and driven by the engine; then a SIGKILL in the middle
//! of a step, whose daemon and FUSE mount `fsbench doctor --cleanup` releases.
//!
//! Privileged: root, loop devices, mkfs.ext4, mkfs.btrfs, qemu-img, qemu-storage-daemon and
//! /dev/fuse; `skipped: …` without them, a failure under `FSBENCH_REQUIRE_PRIVILEGED=1`.
//! Each test has its own scratch directory in /var/tmp and its own ledger directory, so it
//! releases and checks only what is its own.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{load_results, serial, stderr, stdout};

const TOOLS: &[&str] = &["mkfs.ext4", "mkfs.btrfs", "qemu-img", "qemu-storage-daemon"];

#[track_caller]
fn privileged(name: &str) -> bool {
    common::privileged(name)
        .loop_devices()
        .tools(TOOLS)
        .need("/dev/fuse", Path::new("/dev/fuse").exists())
        .ok()
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("fsbench-vm-test")
                .tempdir_in("/var/tmp")
                .unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn out(&self) -> PathBuf {
        self.path().join("out")
    }
    fn cmd(&self) -> Command {
        let mut c = common::bin();
        c.env("FSBENCH_LEDGER_DIR", self.path().join("ledger"));
        c.env("FSBENCH_STORE", "off");
        c
    }
    /// `fsbench run --profile vm` at test sizes.
    fn run(&self, fs: &str, file_size: &str, extra: &[&str]) -> Command {
        let mut c = self.cmd();
        c.args([
            "run",
            "--yes",
            "--profile",
            "vm",
            "--fs",
            fs,
            "--image-size",
            "1G",
            "--file-size",
            file_size,
            "--runtime",
            "1s",
            "--ramp",
            "0s",
            "--rounds",
            "1",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "10s",
            "--seed",
            "7",
        ])
        .args(extra)
        .arg("--scratch-dir")
        .arg(self.path())
        .arg("--out")
        .arg(self.out());
        c
    }
}

/// qemu-storage-daemon processes whose command line names `scratch` (ours alone).
fn daemons(pid: u32) -> Vec<String> {
    common::run_processes(pid, |c| c.starts_with("qemu-storage-daemon"))
}

fn assert_nothing_left(s: &Scratch, pid: u32) {
    let left = common::leftovers(s.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
    let d = daemons(pid);
    assert!(d.is_empty(), "qemu-storage-daemon left running: {d:?}");
}

fn metric(r: &serde_json::Value, setup: &str, workload: &str, metric: &str) -> Option<f64> {
    r["samples"].as_array()?.iter().find_map(|x| {
        (x["setup"] == setup && x["workload"] == workload && x["metric"] == metric)
            .then(|| x["value"].as_f64())
            .flatten()
    })
}

/// The whole vm profile on ext4, btrfs and btrfs nodatacow: every workload has its metrics on
/// every setup, the CoW image fragments where the nodatacow one does not, the verdict has its
/// VM images line, and no loop, mount or daemon of the run is left.
#[test]
fn vm_profile_on_ext4_btrfs_and_nocow_measures_through_qemu_and_cleans_up() {
    let _g = serial();
    if !privileged("vm_profile_on_ext4_btrfs_and_nocow") {
        return;
    }
    let s = Scratch::new();
    let child = s
        .run("ext4,btrfs,btrfs-nocow=btrfs:nocow=true", "32M", &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    assert_nothing_left(&s, pid);
    let r = load_results(&s.out());
    assert_eq!(
        r["failures"].as_array().map_or(0, Vec::len),
        0,
        "{}",
        r["failures"]
    );
    // One value per metric, step and round (the engine and the runner both counting the
    // device would record two).
    let mut seen = std::collections::BTreeSet::new();
    for x in r["samples"].as_array().unwrap() {
        let key = format!(
            "{} {} {} {}",
            x["setup"], x["workload"], x["metric"], x["round"]
        );
        assert!(seen.insert(key.clone()), "recorded twice: {key}");
    }
    let setups = ["ext4", "btrfs", "btrfs-nocow"];
    let wanted = [
        ("vm-qcow2-randwrite", "iops"),
        ("vm-raw-randwrite", "iops"),
        ("vm-qcow2-randread", "iops"),
        ("vm-qcow2-mixed", "bw_mib_s"),
        ("vm-qcow2-seqread", "bw_mib_s"),
        ("vm-qcow2-aging", "vm_extents_before"),
        ("vm-qcow2-aging", "vm_extents_after"),
        ("vm-qcow2-aging", "vm_seqread_before_mib_s"),
        ("vm-qcow2-aging", "vm_seqread_after_mib_s"),
        ("vm-snapshot", "vm_overlay_seconds"),
        ("vm-snapshot", "vm_overlay_bytes"),
        ("vm-snapshot", "vm_clone_seconds"),
        ("vm-snapshot", "vm_clone_reflink"),
    ];
    for setup in setups {
        for (w, m) in wanted {
            let v = metric(&r, setup, w, m).unwrap_or_else(|| panic!("{setup}/{w}: no {m}"));
            assert!(v >= 0.0 && v.is_finite(), "{setup}/{w}/{m} = {v}");
        }
        // The guest's flushes reached the exported file.
        assert!(metric(&r, setup, "vm-qcow2-randwrite", "fsyncs").unwrap_or(0.0) > 0.0);
    }
    // Btrfs clones by reflink, ext4 copies.
    assert_eq!(
        metric(&r, "btrfs", "vm-snapshot", "vm_clone_reflink"),
        Some(1.0)
    );
    assert_eq!(
        metric(&r, "ext4", "vm-snapshot", "vm_clone_reflink"),
        Some(0.0)
    );
    // 8,192 random 4K overwrites of a 32 MiB image: CoW scatters them, nodatacow does not.
    let cow = metric(&r, "btrfs", "vm-qcow2-aging", "vm_extents_after").unwrap();
    let nocow = metric(&r, "btrfs-nocow", "vm-qcow2-aging", "vm_extents_after").unwrap();
    assert!(
        cow > 4.0 * nocow,
        "btrfs {cow} extents after aging vs nodatacow {nocow}"
    );
    assert!(
        r["notes"].to_string().contains("nodatacow")
            || err.contains("nodatacow")
            || out.contains("nodatacow"),
        "the nocow setup's image is not said to be nodatacow"
    );
    // The verdict names the class.
    assert!(
        out.contains("VM images"),
        "no VM images verdict line:\n{out}"
    );
}

/// SIGKILL while a qemu-storage-daemon serves an image: the daemon (its own process group)
/// and its FUSE mount outlive the run; `fsbench doctor --cleanup` stops the one, unmounts
/// the other and releases the filesystem and loop device under them.
#[test]
fn sigkill_during_a_vm_step_then_cleanup_stops_the_daemon_and_unmounts() {
    let _g = serial();
    if !privileged("sigkill_during_a_vm_step") {
        return;
    }
    let s = Scratch::new();
    // A larger image and several passes keep the aging step busy for seconds.
    let mut child = s
        .run("ext4", "256M", &["--only", "vm-qcow2-aging"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while daemons(pid).is_empty() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the run ended ({st}) before a daemon started");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "no daemon in 180 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the export come up, then kill the run where it stands.
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = daemons(pid);
    assert!(
        !before.is_empty(),
        "the daemon died with the run: the test proves nothing"
    );
    let o = s.cmd().args(["doctor", "--cleanup"]).output().unwrap();
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        text.contains("qemu-storage-daemon"),
        "cleanup did not name the daemon:\n{text}"
    );
    assert_nothing_left(&s, pid);
}
