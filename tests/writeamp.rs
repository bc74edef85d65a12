//! Write amplification over two windows: the job's own, and until the filesystem has written
//! back what the job caused (syncfs + a quiet device). Issue 23.
//!
//! Privileged tests (root, loop devices, mkfs) print `skipped: <reason>` when a prerequisite
//! is missing, and fail instead when `FSBENCH_REQUIRE_PRIVILEGED=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{LoopImage, assert_ok as ok, bin};

/// `true` when the test can run: root, loop devices and `tools`; otherwise `tests/common`
/// prints `skipped: …`, or fails under `FSBENCH_REQUIRE_PRIVILEGED=1`.
#[track_caller]
fn privileged(tools: &[&str]) -> bool {
    common::privileged_loop(module_path!(), tools)
}

/// The median-free single value of `metric` for (setup, workload) in a results file.
fn sample(r: &serde_json::Value, setup: &str, workload: &str, metric: &str) -> Option<f64> {
    r["samples"].as_array()?.iter().find_map(|s| {
        (s["setup"] == setup && s["workload"] == workload && s["metric"] == metric)
            .then(|| s["value"].as_f64())
            .flatten()
    })
}

/// A sparse image `img` of `size` bytes in `dir` on a free loop device, with direct I/O
/// when `direct`; detached on drop.
fn attach(dir: &Path, size: u64, direct: bool) -> LoopImage {
    LoopImage::spec(size)
        .in_dir(dir)
        .file_name("img")
        .direct_io(direct)
        .attach()
        .unwrap_or_else(|e| panic!("losetup: {e}"))
}

/// A formatted, mounted loop image; unmounted, detached and removed on drop.
struct Mounted {
    dev: String,
    mnt: PathBuf,
    _img: LoopImage,
    _dir: tempfile::TempDir,
}

impl Mounted {
    fn new(mkfs: &[&str]) -> Mounted {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let img = attach(dir.path(), 1 << 30, true);
        let dev = img.dev.clone();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        // The guard exists before mkfs, so a failing mkfs still detaches the loop.
        let m = Mounted {
            dev: dev.clone(),
            mnt,
            _img: img,
            _dir: dir,
        };
        ok(&Command::new(mkfs[0])
            .args(&mkfs[1..])
            .arg(&dev)
            .output()
            .unwrap());
        ok(&Command::new("mount")
            .arg(&dev)
            .arg(&m.mnt)
            .output()
            .unwrap());
        m
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

#[test]
fn io_on_btrfs_finds_the_device_and_counts_what_is_written_back() {
    if !privileged(&["losetup", "mkfs.btrfs", "mount"]) {
        return;
    }
    let m = Mounted::new(&["mkfs.btrfs", "-q", "-f"]);
    let file = m.mnt.join("f");
    let o = bin()
        .args(["io", "--rw", "randwrite", "--bs", "4k", "--direct"])
        .args(["--iodepth", "8", "--numjobs", "4", "--size", "64M"])
        .args(["--runtime", "3s", "--json", "--filename"])
        .arg(&file)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    let d = &v["device"];
    // st_dev of a Btrfs file is anonymous (0:N); the device comes from mountinfo + sysfs.
    let loop_name = Path::new(&m.dev).file_name().unwrap().to_str().unwrap();
    assert_eq!(d["name"], loop_name, "{v}");
    let in_job = d["write_amplification"].as_f64().unwrap();
    let total = d["write_amplification_total"].as_f64().unwrap();
    let (b, bt) = (
        d["write_bytes"].as_u64().unwrap(),
        d["write_bytes_total"].as_u64().unwrap(),
    );
    assert!(
        total > in_job && bt >= b + (64 << 10),
        "Btrfs commits tree updates after the job: in-job {in_job} ({b} B), total {total} ({bt} B)"
    );
    assert!(
        v["runtime_s"].as_f64().unwrap() < 3.5,
        "the wait is not runtime"
    );
}

#[test]
fn run_records_both_windows_btrfs_above_ext4_close() {
    if !privileged(&["losetup", "mkfs.ext4", "mkfs.btrfs"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = scratch.path().join("out");
    let o = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,btrfs",
            "--only",
            "randwrite,untar",
        ])
        .args([
            "--image-size",
            "1G",
            "--file-size",
            "128M",
            "--runtime",
            "3s",
        ])
        .args(["--ramp", "0s", "--rounds", "1", "--quiet-window", "1s"])
        .args([
            "--quiet-timeout",
            "20s",
            "--seed",
            "7",
            "--corpus-scale",
            "0.1",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let get = |setup: &str, w: &str, m: &str| {
        sample(&r, setup, w, m).unwrap_or_else(|| panic!("{setup}/{w}/{m} missing"))
    };
    let (b_job, b_total) = (
        get("btrfs", "randwrite", "write_amplification"),
        get("btrfs", "randwrite", "write_amplification_total"),
    );
    assert!(b_total > b_job, "btrfs: in-job {b_job}, total {b_total}");
    let (e_job, e_total) = (
        get("ext4", "randwrite", "write_amplification"),
        get("ext4", "randwrite", "write_amplification_total"),
    );
    assert!(
        e_total >= e_job && (e_total / e_job - 1.0) < 0.05,
        "ext4 overwrites in place: in-job {e_job}, total {e_total}"
    );
    // Metadata workloads get both windows from the runner, per byte and per file.
    for setup in ["ext4", "btrfs"] {
        let job = get(setup, "untar", "device_write_bytes");
        let total = get(setup, "untar", "device_write_bytes_total");
        assert!(total >= job && total > 0.0, "{setup}: {job} / {total}");
        assert!(get(setup, "untar", "device_bytes_per_file_total") > 0.0);
        assert!(get(setup, "untar", "write_amplification_total") > 0.0);
    }
}

#[test]
fn io_says_why_there_are_no_device_counters() {
    // tmpfs has no block device; /dev/shm is tmpfs on every systemd machine.
    let shm = Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "));
    if !is_tmpfs {
        println!("skipped: /dev/shm is not a tmpfs mount");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let o = bin()
        .args([
            "io",
            "--rw",
            "write",
            "--size",
            "1M",
            "--json",
            "--filename",
        ])
        .arg(dir.path().join("f"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    assert!(v["device"].is_null(), "{v}");
    let note = v["device_note"].as_str().unwrap();
    assert!(
        note.contains("tmpfs") && note.contains("no block device"),
        "{note}"
    );
    let o = bin()
        .args(["io", "--rw", "write", "--size", "1M", "--filename"])
        .arg(dir.path().join("g"))
        .output()
        .unwrap();
    assert!(ok(&o).contains("device: no device counters"));
}

/// A zfs-fuse (or kernel ZFS) pool on a loop image; destroyed, detached and removed on drop,
/// and the daemon fsbench's library started for it stopped with the hold.
struct Pool {
    name: String,
    dev: String,
    mnt: PathBuf,
    _img: LoopImage,
    _daemon: fsbench::fs::drivers::zfs::daemon::DaemonHold,
    _dir: tempfile::TempDir,
}

impl Pool {
    fn new() -> Pool {
        let (daemon, _) = fsbench::fs::drivers::zfs::daemon::ensure().expect("zfs-fuse daemon");
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let img = attach(dir.path(), 512 << 20, false);
        let p = Pool {
            name: format!("fsbtest_wa_{}", std::process::id()),
            dev: img.dev.clone(),
            mnt: dir.path().join("mnt"),
            _img: img,
            _daemon: daemon,
            _dir: dir,
        };
        // cachefile=none: a pool of a killed test is not imported again by the next daemon.
        ok(&Command::new("zpool")
            .args(["create", "-f", "-o", "cachefile=none", "-m"])
            .arg(&p.mnt)
            .args([&p.name, &p.dev])
            .output()
            .unwrap());
        p
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // zfs-fuse answers "pool is busy" for a moment after heavy I/O.
        for _ in 0..20 {
            let o = Command::new("zpool")
                .args(["destroy", "-f", &self.name])
                .output();
            if o.is_ok_and(|o| o.status.success()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

/// `fsbench io` on a file on a ZFS dataset: the device is the pool's vdev (the loop device,
/// found through `zpool status`, since mountinfo names only the dataset), and the total
/// window forces ZFS's transaction group to disk, so everything the job wrote is counted even
/// where zfs-fuse would have kept it in memory for another 20–30 s.
#[test]
fn io_on_zfs_finds_the_pool_vdev_and_counts_the_forced_txg() {
    if !common::privileged(module_path!())
        .loop_devices()
        .zfs()
        .tools(&["zpool", "zfs"])
        .ok()
    {
        return;
    }
    let pool = Pool::new();
    let o = bin()
        .args([
            "io", "--rw", "write", "--bs", "1M", "--size", "32M", "--json",
        ])
        .arg("--filename")
        .arg(pool.mnt.join("f"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    let d = &v["device"];
    let loop_name = Path::new(&pool.dev).file_name().unwrap().to_str().unwrap();
    assert_eq!(d["name"], loop_name, "{v}");
    let (job, total) = (
        d["write_amplification"].as_f64().unwrap(),
        d["write_amplification_total"].as_f64().unwrap(),
    );
    println!("zfs 1M sequential write, 32 MiB buffered: in-job {job:.2}, total {total:.2}");
    // Incompressible data (compression is off): every byte reaches the device once it is
    // written back, plus ZFS's metadata.
    assert!(
        total >= 1.0 && total >= job,
        "in-job {job}, total {total}: {v}"
    );
}
