//! Capability probes on real filesystems: each is built on its own loop image with shell tools
//! (so these tests do not depend on fsbench's drivers) and must give the answer the filesystem
//! is known to give. Root and the tools are required; otherwise each test prints `skipped:`,
//! or fails under `FSBENCH_REQUIRE_PRIVILEGED=1` ([`common`]).

mod common;

use fsbench::engine::{JobSpec, RwMode};
use fsbench::fs::{Filesystem, MkfsRecord, Mounted};
use fsbench::host::cgroup;
use fsbench::metrics::MetricId;
use fsbench::metrics::registry::{
    BW_MIB_S, CHECKED_BYTES, CLEAN, COMPRESS_RATIO, DETECTED, GROW_SECONDS, GROW_SUPPORTED, INTACT,
    IOPS, LAT_P99_MS, MEMORY_CAP_BYTES, PEAK_MEMORY_BYTES, SECONDS, SECONDS_PER_GIB, SHRINK_ONLINE,
    SHRINK_SUPPORTED, SHRINK_TAIL_SUPPORTED, SUPPORTED,
};
use fsbench::plan::SetupSpec;
use fsbench::workload::WorkloadOutput;
use fsbench::workload::probe::{self, ProbeFs, ProbeKind, ProbeOptions};
use fsbench::workload::{compress, memcap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

// `argv`'s stdout, or an error naming it with what it printed.
use common::sh_result as sh;

use common::is_root;
use common::loopdev::LoopImage;
use fsbench::fs::drivers::zfs::daemon::{self as zfs_daemon, DaemonHold};

/// Tools each filesystem needs in these tests.
fn tools(fs: &str) -> &'static [&'static str] {
    match fs {
        "ext4" => &["mkfs.ext4", "e2fsck", "resize2fs"],
        "xfs" => &["mkfs.xfs", "xfs_repair", "xfs_growfs", "xfs_info"],
        "btrfs" => &["mkfs.btrfs", "btrfs"],
        "zfs" => &["zpool", "zfs"],
        _ => &[],
    }
}

/// Whether `fs` can be tested here; otherwise skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1)
/// naming what is missing. `case` names the test and filesystem.
fn can_test(case: &str, fs: &str) -> bool {
    let mut needs = common::privileged(case)
        .loop_devices()
        .tools(&["mount", "umount"])
        .tools(tools(fs));
    if fs == "zfs" {
        needs = needs.zfs();
    }
    needs.case_ok()
}

/// For ZFS, the daemon (zfs-fuse) kept up while the hold lives; fsbench starts it when none
/// runs and stops it when the last hold is dropped.
fn zfs_hold(fs: &str) -> Option<DaemonHold> {
    (fs == "zfs").then(|| {
        zfs_daemon::ensure()
            .unwrap_or_else(|e| panic!("zfs: {e}"))
            .0
    })
}

/// A filesystem on a loop image in a temp dir; everything is released on drop.
struct ShellFs {
    fs: String,
    /// The mountpoint and zpool import's link directory.
    dir: tempfile::TempDir,
    device: PathBuf,
    mnt: PathBuf,
    pool: Option<String>,
    mounted: bool,
    mount_opts: Option<String>,
    /// Dropped after `Drop` destroyed the pool.
    _zfs: Option<DaemonHold>,
    /// Detached after `Drop` unmounted or destroyed what is on it (fields drop after it).
    _lo: LoopImage,
}

impl ShellFs {
    fn new(fs: &str, size: u64) -> ShellFs {
        ShellFs::with_options(fs, size, None, &[], &[])
    }

    /// `mount_opts` for `mount -o`; `zfs_props` as `-O key=value` for `zpool create`.
    fn with_options(
        fs: &str,
        size: u64,
        mount_opts: Option<&str>,
        zfs_props: &[&str],
        mkfs_extra: &[&str],
    ) -> ShellFs {
        let dir = tempfile::Builder::new()
            .prefix("fsbench-probe-test-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let lo = LoopImage::spec(size)
            .prefix("fsbench-probe-test-")
            .file_name("image")
            .attach()
            .unwrap_or_else(|e| panic!("a loop device: {e}"));
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let mut me = ShellFs {
            fs: fs.into(),
            device: lo.path().to_path_buf(),
            _lo: lo,
            dir,
            mnt,
            pool: None,
            mounted: false,
            mount_opts: mount_opts.map(str::to_string),
            _zfs: zfs_hold(fs),
        };
        let d = me.device.to_str().unwrap().to_string();
        let m = me.mnt.to_str().unwrap().to_string();
        match fs {
            "ext4" => sh(&["mkfs.ext4", "-q", "-F", &d]).unwrap(),
            "xfs" => sh(&["mkfs.xfs", "-q", "-f", &d]).unwrap(),
            "btrfs" => {
                let mut args = vec!["mkfs.btrfs", "-q", "-f"];
                args.extend(mkfs_extra);
                args.push(&d);
                sh(&args).unwrap()
            }
            "zfs" => {
                let pool = format!(
                    "fsbtest{}{}",
                    std::process::id(),
                    me.dir
                        .path()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .replace(['-', '.'], "")
                );
                let mut args = vec!["zpool", "create", "-m", &m];
                for p in zfs_props {
                    args.extend(["-O", p]);
                }
                args.extend([pool.as_str(), d.as_str()]);
                sh(&args).unwrap();
                me.pool = Some(pool);
                me.mounted = true;
                return me;
            }
            other => panic!("no mkfs for {other}"),
        };
        me.mount().unwrap();
        me
    }
}

impl ProbeFs for ShellFs {
    fn fs(&self) -> &str {
        &self.fs
    }
    fn device(&self) -> &Path {
        &self.device
    }
    fn mountpoint(&self) -> &Path {
        &self.mnt
    }
    fn unmount(&mut self) -> fsbench::Result<()> {
        match &self.pool {
            Some(p) => sh(&["zpool", "export", p]),
            None => sh(&["umount", self.mnt.to_str().unwrap()]),
        }
        .map_err(fsbench::Error::Other)?;
        self.mounted = false;
        Ok(())
    }
    fn mount(&mut self) -> fsbench::Result<()> {
        match &self.pool {
            Some(p) => {
                let zdev = self.dir.path().join("zdev");
                probe::zpool_import(p, &self.device, &zdev, Duration::from_secs(60))?;
                probe::wait_mounted(&self.mnt, Duration::from_secs(10))?;
            }
            None => {
                let mut args = vec!["mount"];
                if let Some(o) = &self.mount_opts {
                    args.extend(["-o", o.as_str()]);
                }
                args.extend([self.device.to_str().unwrap(), self.mnt.to_str().unwrap()]);
                sh(&args).map_err(fsbench::Error::Other)?;
            }
        }
        self.mounted = true;
        Ok(())
    }
}

impl Drop for ShellFs {
    fn drop(&mut self) {
        if let Some(p) = self.pool.clone() {
            if !self.mounted {
                let zdev = self.dir.path().join("zdev");
                let _ = probe::zpool_import(&p, &self.device, &zdev, Duration::from_secs(60));
            }
            // zfs-fuse sometimes answers "pool is busy" right after heavy I/O: retry briefly.
            let mut last = Ok(String::new());
            for _ in 0..20 {
                last = sh(&["zpool", "destroy", "-f", &p]);
                if last.is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            if let Err(e) = last {
                // A pool left imported outlives its loop device as a FAULTED pool that later
                // runs' safety checks trip over: export it at least.
                eprintln!("cleanup: {e}; exporting it");
                let _ = sh(&["zpool", "export", "-f", &p]);
            }
        } else if self.mounted || sh(&["mountpoint", "-q", self.mnt.to_str().unwrap()]).is_ok() {
            // A parallel test's blkid or sync can hold the filesystem for a moment (seen as a
            // mount left behind): retry, then detach it lazily so the loop device goes.
            let m = self.mnt.to_str().unwrap();
            let mut last = Ok(String::new());
            for _ in 0..20 {
                last = sh(&["umount", m]);
                if last.is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            if let Err(e) = last {
                eprintln!("cleanup: {e}; unmounting lazily");
                let _ = sh(&["umount", "-l", m]);
            }
        }
    }
}

fn small_opts() -> ProbeOptions {
    ProbeOptions {
        reflink_bytes: 64 << 20,
        corruption_bytes: 1 << 20,
        fsck_files: 2000,
        fsck_data_bytes: 16 << 20,
        inode_cap: 20_000,
        metadata_cap: 20_000,
        resize_step: 256 << 20,
        resize_shrink: 32 << 20,
        seed: 42,
        timeout: Duration::from_secs(120),
    }
}

fn metric(out: &WorkloadOutput, name: MetricId) -> f64 {
    out.metrics
        .iter()
        .find(|m| m.metric == name)
        .unwrap_or_else(|| panic!("no metric {name} in {out:?}"))
        .value
}

/// Run `kind` on each filesystem that can be tested here; returns (fs, output) pairs.
fn run_probe(kind: ProbeKind, filesystems: &[&str]) -> Vec<(String, WorkloadOutput)> {
    let opts = small_opts();
    let mut results = Vec::new();
    let test = format!("probes::{}", kind.id());
    for fs in filesystems {
        if !can_test(&format!("{test} on {fs}"), fs) {
            continue;
        }
        let mut sfs = ShellFs::new(fs, 768 << 20);
        let out = probe::run_on(kind, &opts, &mut sfs)
            .unwrap_or_else(|e| panic!("{} on {fs}: {e}", kind.id()));
        println!("{} on {fs}: {:?} {:?}", kind.id(), out.metrics, out.notes);
        // The probe must leave the filesystem mounted and usable.
        assert!(sfs.mnt.join(".").exists());
        std::fs::write(sfs.mnt.join("after-probe"), b"ok").unwrap();
        drop(sfs);
        results.push((fs.to_string(), out));
    }
    common::ran_cases(&test, results.len(), filesystems.len());
    results
}

#[test]
fn reflink_answers() {
    for (fs, out) in run_probe(ProbeKind::Reflink, &["ext4", "xfs", "btrfs", "zfs"]) {
        let want = match fs.as_str() {
            "xfs" | "btrfs" => 1.0,
            _ => 0.0,
        };
        assert_eq!(metric(&out, SUPPORTED), want, "{fs}: {out:?}");
        if want == 1.0 {
            assert!(metric(&out, SECONDS) >= 0.0);
        }
    }
}

#[test]
fn snapshot_answers() {
    for (fs, out) in run_probe(ProbeKind::Snapshot, &["ext4", "xfs", "btrfs", "zfs"]) {
        let want = match fs.as_str() {
            "btrfs" | "zfs" => 1.0,
            _ => 0.0,
        };
        assert_eq!(metric(&out, SUPPORTED), want, "{fs}: {out:?}");
    }
}

#[test]
fn resize_answers() {
    for (fs, out) in run_probe(ProbeKind::Resize, &["ext4", "xfs", "btrfs", "zfs"]) {
        assert_eq!(metric(&out, GROW_SUPPORTED), 1.0, "{fs}: {out:?}");
        assert!(metric(&out, GROW_SECONDS) >= 0.0);
        // Giving back what the grow added: ext4 and btrfs can; XFS cannot remove an
        // allocation group (kernel ≥ 5.12 shrinks only unused space at the end of the last
        // one, "experimental"), and a ZFS pool cannot shrink its only vdev.
        let shrink = if fs == "ext4" || fs == "btrfs" {
            1.0
        } else {
            0.0
        };
        assert_eq!(metric(&out, SHRINK_SUPPORTED), shrink, "{fs}: {out:?}");
        // resize2fs shrinks only unmounted; btrfs shrinks mounted.
        if shrink == 1.0 {
            let online = if fs == "ext4" { 0.0 } else { 1.0 };
            assert_eq!(metric(&out, SHRINK_ONLINE), online, "{fs}: {out:?}");
        }
        // XFS's tail shrink inside its last group works on this fresh, empty filesystem.
        let tail = out
            .metrics
            .iter()
            .find(|m| m.metric == SHRINK_TAIL_SUPPORTED);
        assert_eq!(
            tail.map(|m| m.value),
            (fs == "xfs").then_some(1.0),
            "{fs}: {out:?}"
        );
        println!(
            "{fs}: {}",
            probe::verdict(ProbeKind::Resize, |n| out
                .metrics
                .iter()
                .find(|m| m.metric == n)
                .map(|m| m.value))
        );
    }
}

#[test]
fn corruption_answers() {
    for (fs, out) in run_probe(ProbeKind::Corruption, &["ext4", "xfs", "btrfs", "zfs"]) {
        let want = match fs.as_str() {
            "btrfs" | "zfs" => 1.0,
            _ => 0.0,
        };
        assert_eq!(metric(&out, DETECTED), want, "{fs}: {out:?}");
        assert_eq!(metric(&out, INTACT), 0.0);
    }
}

/// Redundant copies must not hide the damage: the probe alters every copy it finds.
#[test]
fn corruption_with_redundant_copies() {
    let opts = small_opts();
    let test = "probes::corruption_with_redundant_copies";
    let mut ran = 0;
    for (fs, props, mkfs) in [
        ("btrfs", &[][..], &["-d", "dup"][..]),
        ("zfs", &["copies=2"][..], &[][..]),
    ] {
        if !can_test(&format!("{test} on {fs}"), fs) {
            continue;
        }
        ran += 1;
        let mut sfs = ShellFs::with_options(fs, 768 << 20, None, props, mkfs);
        let out = probe::run_on(ProbeKind::Corruption, &opts, &mut sfs)
            .unwrap_or_else(|e| panic!("{fs}: {e}"));
        println!("redundant {fs}: {:?} {:?}", out.metrics, out.notes);
        assert_eq!(metric(&out, DETECTED), 1.0, "{fs}: {out:?}");
        assert!(out.notes[0].contains("2 copies"), "{fs}: {:?}", out.notes);
    }
    common::ran_cases(test, ran, 2);
}

#[test]
fn fsck_answers() {
    for (fs, out) in run_probe(ProbeKind::Fsck, &["ext4", "xfs", "btrfs", "zfs"]) {
        assert_eq!(metric(&out, CLEAN), 1.0, "{fs}: {out:?}");
        assert!(metric(&out, SECONDS) > 0.0);
        // The 16 MiB of data written for the per-GiB rate, beside the small files.
        assert!(metric(&out, CHECKED_BYTES) > (16u64 << 20) as f64, "{fs}");
        assert!(metric(&out, SECONDS_PER_GIB) > 0.0, "{fs}");
    }
}

// ---------------------------------------------------------------------------------------------
// Compression ratio as the filesystem reports it.

fn compress_on(fs: &str, mount_opts: Option<&str>, zfs_props: &[&str]) -> Option<WorkloadOutput> {
    if !can_test(&format!("probes::compress_ratio_as_reported on {fs}"), fs) {
        return None;
    }
    let sfs = ShellFs::with_options(fs, 768 << 20, mount_opts, zfs_props, &[]);
    let spec = compress::CompressSpec {
        bytes: 48 << 20,
        bs: 1 << 20,
        seed: 9,
    };
    let driver = fsbench::fs::driver(fs).unwrap();
    let out = compress::run(&sfs.mnt, driver, &spec).unwrap();
    println!(
        "compress on {fs} {mount_opts:?} {zfs_props:?}: {:?} {:?}",
        out.metrics, out.notes
    );
    assert!(metric(&out, BW_MIB_S) > 0.0);
    Some(out)
}

#[test]
fn compress_ratio_as_reported() {
    let mut ran = 0;
    // Seed 003: text-like data compresses about 2.4:1 with zstd:3 on btrfs.
    if let Some(out) = compress_on("btrfs", Some("compress=zstd:3"), &[]) {
        ran += 1;
        let r = metric(&out, COMPRESS_RATIO);
        assert!((2.0..3.0).contains(&r), "btrfs zstd:3 ratio {r}");
    }
    if let Some(out) = compress_on("btrfs", None, &[]) {
        ran += 1;
        let r = metric(&out, COMPRESS_RATIO);
        assert!((0.99..1.01).contains(&r), "uncompressed btrfs ratio {r}");
    }
    // zfs-fuse has no zstd or lz4; gzip is its strongest codec.
    if let Some(out) = compress_on("zfs", None, &["compression=gzip"]) {
        ran += 1;
        let r = metric(&out, COMPRESS_RATIO);
        assert!(r > 1.8, "zfs gzip ratio {r}");
    }
    if let Some(out) = compress_on("zfs", None, &["compression=off"]) {
        ran += 1;
        let r = metric(&out, COMPRESS_RATIO);
        assert!((0.99..1.01).contains(&r), "zfs uncompressed ratio {r}");
    }
    if let Some(out) = compress_on("ext4", None, &[]) {
        ran += 1;
        assert!(out.metrics.iter().all(|m| m.metric != COMPRESS_RATIO));
    }
    common::ran_cases("probes::compress_ratio_as_reported", ran, 5);
}

// ---------------------------------------------------------------------------------------------
// Memory-capped cgroups.

/// Root and a usable cgroup hierarchy, or skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1).
fn cgroup_test(name: &str) -> bool {
    let root = is_root();
    let detected = if root {
        cgroup::detect().err().map(|e| e.to_string())
    } else {
        None
    };
    common::privileged(name)
        .need("root (to create cgroups)", root)
        .need(
            &format!("a memory cgroup ({})", detected.as_deref().unwrap_or("")),
            detected.is_none(),
        )
        .ok()
}

#[test]
fn cgroup_caps_a_child_and_cleans_up() {
    if !cgroup_test("probes::cgroup_caps_a_child_and_cleans_up") {
        return;
    }
    let cg = cgroup::MemoryCgroup::create(64 << 20).unwrap();
    let dir = cg.path().to_path_buf();
    assert!(dir.is_dir());
    println!("cgroup {} (v2: {})", dir.display(), cg.is_v2());

    // The child sees itself in the group.
    let mut cmd = Command::new("cat");
    cmd.arg("/proc/self/cgroup");
    cg.configure(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&name),
        "child not in {name}: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Within the cap: dd's 16 MiB buffer fits, and the peak shows it was charged here.
    let mut cmd = Command::new("dd");
    cmd.args(["if=/dev/zero", "of=/dev/null", "bs=16M", "count=4"]);
    cg.configure(&mut cmd);
    assert!(cmd.output().unwrap().status.success());
    let peak = cg.peak_bytes().expect("peak memory is reported");
    assert!((16 << 20..=64 << 20).contains(&peak), "peak {peak}");

    // Beyond the cap (no swap allowed): a 256 MiB buffer gets the child OOM-killed.
    let mut cmd = Command::new("dd");
    cmd.args(["if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"]);
    cg.configure(&mut cmd);
    let st = cmd.output().unwrap().status;
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        st.signal(),
        Some(9),
        "expected SIGKILL from the OOM killer, got {st}"
    );
    assert!(cg.oom_kills().unwrap_or(0) >= 1);

    // Buffered writes far beyond the cap are throttled (page cache reclaimed), not killed.
    let cg2 = cgroup::MemoryCgroup::create(64 << 20).unwrap();
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let of = format!("of={}", scratch.path().join("big").display());
    let mut cmd = Command::new("dd");
    cmd.args(["if=/dev/zero", &of, "bs=1M", "count=256"]);
    cg2.configure(&mut cmd);
    let st = cmd.output().unwrap().status;
    assert!(st.success(), "buffered dd in a 64 MiB cgroup: {st}");
    let peak = cg2.peak_bytes().unwrap();
    assert!(peak <= 64 << 20, "peak {peak} above the cap");
    assert_eq!(
        std::fs::metadata(scratch.path().join("big")).unwrap().len(),
        256 << 20
    );
    let dir2 = cg2.path().to_path_buf();

    drop(cg);
    drop(cg2);
    assert!(!dir.exists(), "{} was not removed", dir.display());
    assert!(!dir2.exists(), "{} was not removed", dir2.display());
}

/// A stand-in for `fsbench io --json`: records its argv and cgroup, prints a report.
const FAKE_IO: &str = r#"#!/bin/sh
echo "$@" > "$(dirname "$0")/args"
cat /proc/self/cgroup > "$(dirname "$0")/cgroup"
echo 'fsbench io: starting'
echo '{"read":{"ios":0,"bytes":0,"iops":0,"bw_bytes":0,"lat_ns":{"min":0,"mean":0,"max":0,"p50":0,"p90":0,"p99":0,"p99_9":0,"p99_99":0}},"write":{"ios":2000,"bytes":8192000,"iops":1000.0,"bw_bytes":4096000.0,"lat_ns":{"min":1000,"mean":2000.0,"max":9000000,"p50":1500000,"p90":2000000,"p99":4000000,"p99_9":8000000,"p99_99":9000000}},"cpu":{"user_s":0.1,"sys_s":0.2},"runtime_s":2.0}'
"#;

#[test]
fn memcap_runs_the_job_inside_the_cap() {
    if !cgroup_test("probes::memcap_runs_the_job_inside_the_cap") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("fake-fsbench");
    std::fs::write(&exe, FAKE_IO).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let job = JobSpec {
        filename: dir.path().join("c.bin"),
        rw: RwMode::Randwrite,
        bs: 4096,
        iodepth: 16,
        size: Some(64 << 20),
        runtime: Some(Duration::from_secs(2)),
        ..Default::default()
    };
    let out = memcap::run_with_exe(&exe, &job, 512 << 20).unwrap();
    println!("{:?} {:?}", out.metrics, out.notes);
    assert_eq!(metric(&out, IOPS), 1000.0);
    assert_eq!(metric(&out, LAT_P99_MS), 4.0);
    assert_eq!(metric(&out, MEMORY_CAP_BYTES), (512u64 << 20) as f64);
    assert!(metric(&out, PEAK_MEMORY_BYTES) > 0.0);
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert!(
        args.starts_with("io --filename")
            && args.contains("--rw randwrite")
            && args.trim_end().ends_with("--json"),
        "{args}"
    );
    let cg = std::fs::read_to_string(dir.path().join("cgroup")).unwrap();
    assert!(
        cg.contains("fsbench-"),
        "the job did not run in fsbench's cgroup: {cg}"
    );
}

#[test]
fn memcap_with_the_real_engine() {
    if !cgroup_test("probes::memcap_with_the_real_engine") {
        return;
    }
    let exe = Path::new(common::BIN);
    let help = Command::new(exe).args(["io", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--filename"));
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = JobSpec {
        filename: dir.path().join("c.bin"),
        rw: RwMode::Randwrite,
        bs: 4096,
        iodepth: 16,
        size: Some(256 << 20),
        runtime: Some(Duration::from_secs(2)),
        seed: Some(1),
        ..Default::default()
    };
    match memcap::run_with_exe(exe, &job, 64 << 20) {
        Ok(out) => {
            println!("{:?} {:?}", out.metrics, out.notes);
            assert!(metric(&out, IOPS) > 0.0);
            let peak = metric(&out, PEAK_MEMORY_BYTES);
            assert!(peak <= (64u64 << 20) as f64, "peak {peak} above the cap");
        }
        Err(e) => panic!("{e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The runner's entry point, through the `Filesystem` trait. fsbench's real drivers belong to
// another module, so a minimal shell-based driver stands in for them here.

struct ShellDriver(&'static str);

struct ShellMounted {
    path: PathBuf,
    pool: Option<String>,
}

impl Mounted for ShellMounted {
    fn path(&self) -> &Path {
        &self.path
    }
    fn mount_options(&self) -> String {
        String::new()
    }
    fn properties(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    fn implementation(&self) -> String {
        "test shell driver".into()
    }
    fn release(self: Box<Self>) -> fsbench::Result<()> {
        let r = match &self.pool {
            // zfs-fuse answers "pool is busy" for a moment after an export/import cycle; a
            // real driver must retry too (reported to the zfs driver's owner).
            Some(p) => (0..20)
                .map(|i| {
                    if i > 0 {
                        std::thread::sleep(Duration::from_millis(250));
                    }
                    sh(&["zpool", "destroy", "-f", p])
                })
                .find(Result::is_ok)
                .unwrap_or_else(|| sh(&["zpool", "destroy", "-f", p])),
            None => sh(&["umount", self.path.to_str().unwrap()]),
        };
        r.map(|_| ()).map_err(fsbench::Error::Other)
    }
}

impl Filesystem for ShellDriver {
    fn name(&self) -> &'static str {
        self.0
    }
    fn caps(&self) -> &fsbench::fs::Caps {
        // It stands in for the real driver of that name: the same capabilities.
        Box::leak(Box::new(fsbench::fs::caps::of(self.0)))
    }
    fn required_tools(&self) -> &'static [&'static str] {
        tools(self.0)
    }
    fn min_device_size(&self) -> u64 {
        300 << 20
    }
    fn validate(&self, _: &SetupSpec) -> fsbench::Result<()> {
        Ok(())
    }
    fn accepts(&self) -> &fsbench::fs::setup::variant_keys::Accepts {
        // The probes' own setups carry no variant keys.
        const NONE: fsbench::fs::setup::variant_keys::Accepts =
            fsbench::fs::setup::variant_keys::Accepts {
                mkfs: false,
                mount: false,
                props: &[],
                dir_attrs: &[],
                args: fsbench::fs::setup::variant_args::ArgRules::NONE,
                hints: &[],
            };
        &NONE
    }
    fn mount(
        &self,
        device: &Path,
        _: &SetupSpec,
        mnt: &Path,
        _: Duration,
    ) -> fsbench::Result<Box<dyn Mounted>> {
        assert_ne!(self.0, "zfs", "the probe must import ZFS pools itself");
        sh(&["mount", device.to_str().unwrap(), mnt.to_str().unwrap()])
            .map_err(fsbench::Error::Other)?;
        Ok(Box::new(ShellMounted {
            path: mnt.to_path_buf(),
            pool: None,
        }))
    }
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mnt: &Path,
        t: Duration,
    ) -> fsbench::Result<(MkfsRecord, Box<dyn Mounted>)> {
        let d = device.to_str().unwrap();
        let mkfs = match self.0 {
            "ext4" => sh(&["mkfs.ext4", "-q", "-F", d]),
            "xfs" => sh(&["mkfs.xfs", "-q", "-f", d]),
            "btrfs" => sh(&["mkfs.btrfs", "-q", "-f", d]),
            "zfs" => {
                let pool = format!(
                    "fsbdrv{}{}",
                    std::process::id(),
                    d.replace("/dev/loop", "l")
                );
                sh(&["zpool", "create", "-m", mnt.to_str().unwrap(), &pool, d])
                    .map_err(fsbench::Error::Other)?;
                return Ok((
                    MkfsRecord::default(),
                    Box::new(ShellMounted {
                        path: mnt.to_path_buf(),
                        pool: Some(pool),
                    }),
                ));
            }
            other => panic!("no mkfs for {other}"),
        };
        mkfs.map_err(fsbench::Error::Other)?;
        Ok((MkfsRecord::default(), self.mount(device, setup, mnt, t)?))
    }
}

#[test]
fn entry_point_through_a_driver() {
    let opts = small_opts();
    let test = "probes::entry_point_through_a_driver";
    let all = ["ext4", "xfs", "btrfs", "zfs"];
    let mut ran = 0;
    for fs in all {
        if !can_test(&format!("{test} on {fs}"), fs) {
            continue;
        }
        ran += 1;
        let _zfs = zfs_hold(fs);
        let driver = ShellDriver(fs);
        let setup = SetupSpec::plain(fs);
        let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
        for kind in [ProbeKind::Corruption, ProbeKind::Resize] {
            let img = LoopImage::spec(opts.image_size(kind, &driver))
                .prefix("fsbench-probe-img-")
                .file_name("image")
                .attach()
                .unwrap_or_else(|e| panic!("a loop device: {e}"));
            let out =
                probe::run_on_device(kind, &opts, &driver, &setup, img.path(), scratch.path())
                    .unwrap_or_else(|e| panic!("{} on {fs}: {e}", kind.id()));
            println!("driver {} on {fs}: {:?}", kind.id(), out.metrics);
            let (name, want) = match kind {
                ProbeKind::Corruption => (DETECTED, matches!(fs, "btrfs" | "zfs")),
                _ => (GROW_SUPPORTED, true),
            };
            assert_eq!(
                metric(&out, name),
                f64::from(u8::from(want)),
                "{fs}: {out:?}"
            );
        }
    }
    common::ran_cases(test, ran, all.len());
}
