//! Capability probes on real filesystems: each is built on its own loop image with shell tools
//! (so these tests do not depend on fsbench's drivers) and must give the answer the filesystem
//! is known to give. Root and the tools are required; otherwise each test prints `skipped:`.

use fsbench::workload::WorkloadOutput;
use fsbench::workload::probe::{self, ProbeFs, ProbeKind, ProbeOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn sh(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn have(prog: &str) -> bool {
    fsbench::host::command::available(prog)
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

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

/// Why `fs` cannot be tested here, if it cannot.
fn skip_reason(fs: &str) -> Option<String> {
    if !is_root() {
        return Some("needs root (loop devices, mkfs, mount)".into());
    }
    for t in ["losetup", "mount", "umount"].iter().chain(tools(fs)) {
        if !have(t) {
            return Some(format!("{t} is not installed"));
        }
    }
    if fs == "zfs" && !zfs_daemon() {
        return Some("zfs-fuse is not running and could not be started".into());
    }
    None
}

/// zfs-fuse needs its daemon; start it when none runs (it stays up for other users).
fn zfs_daemon() -> bool {
    let running = || {
        Command::new("pgrep")
            .args(["-x", "zfs-fuse"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if running() {
        return true;
    }
    if !have("zfs-fuse") || Command::new("zfs-fuse").status().is_err() {
        return false;
    }
    std::thread::sleep(Duration::from_secs(1));
    running()
}

/// A filesystem on a loop image in a temp dir; everything is released on drop.
struct ShellFs {
    fs: String,
    dir: tempfile::TempDir,
    device: PathBuf,
    mnt: PathBuf,
    pool: Option<String>,
    mounted: bool,
}

impl ShellFs {
    fn new(fs: &str, size: u64) -> ShellFs {
        let dir = tempfile::Builder::new()
            .prefix("fsbench-probe-test-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let image = dir.path().join("image");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size)
            .unwrap();
        let dev = sh(&["losetup", "-f", "--show", image.to_str().unwrap()]).unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let mut me = ShellFs {
            fs: fs.into(),
            device: PathBuf::from(dev.trim()),
            dir,
            mnt,
            pool: None,
            mounted: false,
        };
        let d = me.device.to_str().unwrap().to_string();
        let m = me.mnt.to_str().unwrap().to_string();
        match fs {
            "ext4" => sh(&["mkfs.ext4", "-q", "-F", &d]).unwrap(),
            "xfs" => sh(&["mkfs.xfs", "-q", "-f", &d]).unwrap(),
            "btrfs" => sh(&["mkfs.btrfs", "-q", "-f", &d]).unwrap(),
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
                sh(&["zpool", "create", "-m", &m, &pool, &d]).unwrap();
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
            Some(p) => probe::zpool_import(
                p,
                &self.device,
                &self.dir.path().join("zdev"),
                Duration::from_secs(60),
            )?,
            None => {
                sh(&[
                    "mount",
                    self.device.to_str().unwrap(),
                    self.mnt.to_str().unwrap(),
                ])
                .map_err(fsbench::Error::Other)?;
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
                eprintln!("cleanup: {e}");
            }
        } else if self.mounted {
            if let Err(e) = sh(&["umount", self.mnt.to_str().unwrap()]) {
                eprintln!("cleanup: {e}");
            }
        }
        if let Err(e) = sh(&["losetup", "-d", self.device.to_str().unwrap()]) {
            eprintln!("cleanup: {e}");
        }
    }
}

fn small_opts() -> ProbeOptions {
    ProbeOptions {
        reflink_bytes: 64 << 20,
        corruption_bytes: 1 << 20,
        fsck_files: 2000,
        resize_step: 256 << 20,
        resize_shrink: 32 << 20,
        seed: 42,
        timeout: Duration::from_secs(120),
    }
}

fn metric(out: &WorkloadOutput, name: &str) -> f64 {
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
    for fs in filesystems {
        if let Some(why) = skip_reason(fs) {
            println!("skipped: {} on {fs}: {why}", kind.id());
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
    results
}

#[test]
fn reflink_answers() {
    for (fs, out) in run_probe(ProbeKind::Reflink, &["ext4", "xfs", "btrfs", "zfs"]) {
        let want = match fs.as_str() {
            "xfs" | "btrfs" => 1.0,
            _ => 0.0,
        };
        assert_eq!(metric(&out, "supported"), want, "{fs}: {out:?}");
        if want == 1.0 {
            assert!(metric(&out, "seconds") >= 0.0);
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
        assert_eq!(metric(&out, "supported"), want, "{fs}: {out:?}");
    }
}

#[test]
fn resize_answers() {
    for (fs, out) in run_probe(ProbeKind::Resize, &["ext4", "xfs", "btrfs", "zfs"]) {
        assert_eq!(metric(&out, "grow_supported"), 1.0, "{fs}: {out:?}");
        assert!(metric(&out, "grow_seconds") >= 0.0);
        // XFS can shrink only unused space at the end of its last allocation group (kernel
        // ≥ 5.12, "experimental"); the probe's 32 MiB step stays inside it, so XFS says 1 here.
        // A ZFS pool cannot shrink its only vdev.
        let shrink = if fs == "zfs" { 0.0 } else { 1.0 };
        assert_eq!(metric(&out, "shrink_supported"), shrink, "{fs}: {out:?}");
    }
}

#[test]
fn corruption_answers() {
    for (fs, out) in run_probe(ProbeKind::Corruption, &["ext4", "xfs", "btrfs", "zfs"]) {
        let want = match fs.as_str() {
            "btrfs" | "zfs" => 1.0,
            _ => 0.0,
        };
        assert_eq!(metric(&out, "detected"), want, "{fs}: {out:?}");
        assert_eq!(metric(&out, "intact"), 0.0);
    }
}

#[test]
fn fsck_answers() {
    for (fs, out) in run_probe(ProbeKind::Fsck, &["ext4", "xfs", "btrfs", "zfs"]) {
        assert_eq!(metric(&out, "clean"), 1.0, "{fs}: {out:?}");
        assert!(metric(&out, "seconds") > 0.0);
    }
}
