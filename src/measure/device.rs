//! Block-device counters from `/sys/block/<dev>/stat`: what the device really read and wrote.
//!
//! The device under a file is found through `st_dev` → `/sys/dev/block/MAJ:MIN`; a partition
//! has its own `stat` file, which is the one used (it counts exactly that partition's I/O).

use crate::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Counters of one block device at one instant (sectors are always 512 bytes in this file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// Completed reads.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Completed writes.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Completed discards (0 on old kernels).
    pub discards: u64,
    /// Completed flushes (0 on old kernels).
    pub flushes: u64,
}

impl DeviceCounters {
    /// Parse the contents of a `stat` file.
    pub fn parse(text: &str) -> Option<Self> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        if f.len() < 7 {
            return None;
        }
        Some(DeviceCounters {
            reads: f[0],
            read_bytes: f[2] * 512,
            writes: f[4],
            write_bytes: f[6] * 512,
            discards: f.get(11).copied().unwrap_or(0),
            flushes: f.get(15).copied().unwrap_or(0),
        })
    }

    /// Counters accumulated from `self` (earlier) to `later`.
    pub fn delta(&self, later: &DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            reads: later.reads.saturating_sub(self.reads),
            read_bytes: later.read_bytes.saturating_sub(self.read_bytes),
            writes: later.writes.saturating_sub(self.writes),
            write_bytes: later.write_bytes.saturating_sub(self.write_bytes),
            discards: later.discards.saturating_sub(self.discards),
            flushes: later.flushes.saturating_sub(self.flushes),
        }
    }
}

/// A block device whose counters can be sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// Kernel name (`loop3`, `zram0`, `sda1`).
    pub name: String,
    /// Its `stat` file in sysfs.
    pub stat_path: PathBuf,
}

impl BlockDevice {
    /// Read the counters now.
    pub fn counters(&self) -> Result<DeviceCounters> {
        read_counters(&self.stat_path)
    }
}

/// Read a sysfs `stat` file.
pub fn read_counters(stat_path: &Path) -> Result<DeviceCounters> {
    let text =
        std::fs::read_to_string(stat_path).map_err(|e| Error::io("cannot read", stat_path, e))?;
    DeviceCounters::parse(&text)
        .ok_or_else(|| Error::Other(format!("{}: unexpected format", stat_path.display())))
}

/// The sysfs directory of device number `dev`, if it is a block device the kernel lists.
fn sysfs_dir(dev: u64) -> Option<PathBuf> {
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    if maj == 0 {
        // Anonymous devices (tmpfs, overlay, FUSE, btrfs subvolumes) have no stat file.
        return None;
    }
    std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()
}

/// The block device at `path`: the device itself for a device node, otherwise the device the
/// file or directory lives on. `None` when there is none (tmpfs, FUSE, overlay…).
pub fn resolve(path: &Path) -> Option<BlockDevice> {
    let meta = std::fs::metadata(path)
        .ok()
        .or_else(|| path.parent().and_then(|p| std::fs::metadata(p).ok()))?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let dir = sysfs_dir(dev)?;
    let stat_path = dir.join("stat");
    if !stat_path.exists() {
        return None;
    }
    let name = dir.file_name()?.to_string_lossy().into_owned();
    Some(BlockDevice { name, stat_path })
}

/// Public reader: counters of the device at `path` (a device node, or any path on it).
pub fn counters(path: &Path) -> Result<DeviceCounters> {
    resolve(path)
        .ok_or_else(|| {
            Error::Other(format!(
                "{}: no block device with counters found",
                path.display()
            ))
        })?
        .counters()
}

/// Logical block size of the device at `path` (a device node or a path on it), if known.
pub fn logical_block_size(path: &Path) -> Option<u64> {
    let dev = resolve(path)?;
    let dir = dev.stat_path.parent()?;
    // Partitions have no queue/ of their own: ask the parent disk.
    let q = dir.join("queue/logical_block_size");
    let q = if q.exists() {
        q
    } else {
        dir.parent()?.join("queue/logical_block_size")
    };
    std::fs::read_to_string(q).ok()?.trim().parse().ok()
}

/// How a wait for a quiet device ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuietOutcome {
    /// True when a window with less than the threshold written was seen.
    pub quiet: bool,
    /// Time spent waiting.
    pub waited: Duration,
    /// Bytes written during the last window observed.
    pub last_window_bytes: u64,
}

/// Wait until `dev` writes fewer than `threshold_bytes` over `window`, checking every window;
/// give up after `timeout` with `quiet: false` (not an error: the caller records it).
/// Stops early with [`Error::Interrupted`] when the user asks to stop.
pub fn wait_quiet(
    dev: &Path,
    window: Duration,
    threshold_bytes: u64,
    timeout: Duration,
) -> Result<QuietOutcome> {
    let device = resolve(dev).ok_or_else(|| {
        Error::Other(format!(
            "{}: no block device with counters found",
            dev.display()
        ))
    })?;
    let start = Instant::now();
    let tick = Duration::from_millis(100).min(window);
    loop {
        let before = device.counters()?;
        let w0 = Instant::now();
        while w0.elapsed() < window {
            crate::cancel::check()?;
            std::thread::sleep(tick);
        }
        let written = before.delta(&device.counters()?).write_bytes;
        if written < threshold_bytes {
            return Ok(QuietOutcome {
                quiet: true,
                waited: start.elapsed(),
                last_window_bytes: written,
            });
        }
        if start.elapsed() >= timeout {
            return Ok(QuietOutcome {
                quiet: false,
                waited: start.elapsed(),
                last_window_bytes: written,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines() {
        let line = "  100 0 2048 5 200 0 4096 7 0 10 12 3 0 80 1 2 9\n";
        let c = DeviceCounters::parse(line).unwrap();
        assert_eq!(c.reads, 100);
        assert_eq!(c.read_bytes, 2048 * 512);
        assert_eq!(c.writes, 200);
        assert_eq!(c.write_bytes, 4096 * 512);
        assert_eq!(c.discards, 3);
        assert_eq!(c.flushes, 2);
        let later = DeviceCounters {
            write_bytes: c.write_bytes + 512,
            ..c
        };
        assert_eq!(c.delta(&later).write_bytes, 512);
        assert!(DeviceCounters::parse("1 2").is_none());
    }

    #[test]
    fn tmpfs_has_no_device() {
        if Path::new("/dev/shm").exists() {
            assert!(resolve(Path::new("/dev/shm")).is_none());
        }
    }
}
