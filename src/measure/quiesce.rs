//! After a job that wrote: `syncfs` on the filesystem under test (on ZFS also a transaction-group
//! sync, its driver's [`super::backing::PoolOps::sync`]), then wait until its device
//! is quiet, counting what the device wrote meanwhile. Copy-on-write filesystems (Btrfs, ZFS)
//! defer extent, checksum and tree updates to a later commit; a window that closes with the
//! job misses them, so write amplification is reported over both windows.

use super::device::{self, BlockDevice, DeviceCounters};
use crate::{Error, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// When the device counts as quiet after a job: the rule used after mkfs (less than
/// `threshold` written over `window`), with a shorter window and a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleRule {
    /// Observation window.
    pub window: Duration,
    /// Quiet when fewer bytes than this were written over one window.
    pub threshold: u64,
    /// Stop waiting after this long (the total then counts what was written until then).
    pub cap: Duration,
}

impl SettleRule {
    /// Window after a job: at most 1 s (a sync has just pushed out what was pending).
    pub const MAX_WINDOW: Duration = Duration::from_secs(1);
    /// Cap after a job: at most 30 s (one Btrfs commit interval).
    pub const MAX_CAP: Duration = Duration::from_secs(30);

    /// The post-job rule derived from the post-mkfs one: same threshold, short window, cap.
    pub fn after_job(window: Duration, threshold: u64, timeout: Duration) -> Self {
        SettleRule {
            window: window.min(Self::MAX_WINDOW),
            threshold,
            cap: timeout.min(Self::MAX_CAP),
        }
    }
}

impl Default for SettleRule {
    /// The rule `fsbench io` uses: 1 s window, 1 MiB, 30 s cap.
    fn default() -> Self {
        SettleRule::after_job(Self::MAX_WINDOW, 1 << 20, Self::MAX_CAP)
    }
}

/// What happened after the job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    /// Counters from the end of the job to the end of the wait.
    pub after: DeviceCounters,
    /// Time spent in syncfs and the wait.
    pub seconds: f64,
    /// False when the device was still writing at the cap.
    pub quiet: bool,
}

/// `syncfs` the filesystem holding `fs_path`, wait for `device` to go quiet under `rule`, and
/// count what the device wrote since `job_end` (counters taken when the job ended).
pub fn settle(
    device: &BlockDevice,
    fs_path: &Path,
    job_end: DeviceCounters,
    rule: SettleRule,
) -> Result<Settled> {
    let start = Instant::now();
    syncfs(fs_path)?;
    let q = device::wait_quiet_on(device, rule.window, rule.threshold, rule.cap)?;
    let end = device.counters()?;
    Ok(Settled {
        after: job_end.delta(&end),
        seconds: start.elapsed().as_secs_f64(),
        quiet: q.quiet,
    })
}

/// Flush the filesystem that holds `path` (a file, directory or its missing child), or the
/// device itself when `path` is a block device.
pub fn syncfs(path: &Path) -> Result<()> {
    let target = if path.exists() {
        path
    } else {
        path.parent().unwrap_or(Path::new("/"))
    };
    let f = std::fs::File::open(target).map_err(|e| Error::io("cannot open", target, e))?;
    let is_device = f
        .metadata()
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if is_device {
        // A raw device has no filesystem of its own to sync: flush its page cache.
        return f
            .sync_all()
            .map_err(|e| Error::io("cannot flush", target, e));
    }
    if let Err(e) = rustix::fs::syncfs(&f) {
        return Err(Error::io(
            "syncfs failed on",
            target,
            std::io::Error::from(e),
        ));
    }
    // syncfs does not reach zfs-fuse, and ZFS commits on its own timer: force the txg.
    if let Some((ops, dataset)) = pool_dataset(target) {
        (ops.sync)(&dataset)?;
    }
    Ok(())
}

/// The dataset holding `path` and how its pool is synced, if it is on a pool
/// ([`super::backing::Backing::Pool`]: ZFS, kernel or zfs-fuse).
fn pool_dataset(path: &Path) -> Option<(super::backing::PoolOps, String)> {
    let real = std::fs::canonicalize(path).ok()?;
    let entries = crate::host::mountinfo::read().ok()?;
    let m = crate::host::mountinfo::containing(&entries, &real)
        .filter(|m| super::backing::of(&m.fs_type) == Some(super::backing::Backing::Pool))?;
    Some((super::backing::pool_ops(&m.fs_type)?, m.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_after_a_job_is_short_and_capped() {
        let r = SettleRule::after_job(Duration::from_secs(10), 1 << 20, Duration::from_secs(120));
        assert_eq!(r.window, Duration::from_secs(1));
        assert_eq!(r.cap, Duration::from_secs(30));
        assert_eq!(r.threshold, 1 << 20);
        let r = SettleRule::after_job(Duration::from_millis(200), 4096, Duration::from_secs(5));
        assert_eq!(r.window, Duration::from_millis(200));
        assert_eq!(r.cap, Duration::from_secs(5));
    }

    #[test]
    fn syncfs_works_on_a_missing_child() {
        let d = tempfile::tempdir().unwrap();
        syncfs(&d.path().join("not-yet")).unwrap();
        assert!(syncfs(Path::new("/nonexistent-dir/x")).is_err());
    }
}
