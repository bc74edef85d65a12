//! Block-device counters from `/sys/block/<dev>/stat`: what the device really read and wrote.
//!
//! The device under a file is found through `st_dev` → `/sys/dev/block/MAJ:MIN`; a partition
//! has its own `stat` file, which is the one used (it counts exactly that partition's I/O).
//! Filesystems with an anonymous `st_dev` are traced through mountinfo: Btrfs through sysfs,
//! ZFS (and zfs-fuse) through the pool's vdevs (its driver's [`super::backing::PoolOps`]).

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

/// A block device whose counters can be sampled: one device, or every device of a
/// multi-device filesystem (Btrfs), whose counters are summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// Kernel name (`loop3`, `zram0`, `sda1`; `loop3+loop4` for several).
    pub name: String,
    /// The members' `stat` files in sysfs (at least one).
    pub stat_paths: Vec<PathBuf>,
}

impl DeviceCounters {
    /// The counters of several devices added up (a multi-device filesystem's total).
    pub fn sum(members: &[DeviceCounters]) -> DeviceCounters {
        let mut sum = DeviceCounters::default();
        for c in members {
            sum.reads += c.reads;
            sum.read_bytes += c.read_bytes;
            sum.writes += c.writes;
            sum.write_bytes += c.write_bytes;
            sum.discards += c.discards;
            sum.flushes += c.flushes;
        }
        sum
    }
}

impl BlockDevice {
    /// Read the counters now (summed over the members).
    pub fn counters(&self) -> Result<DeviceCounters> {
        Ok(DeviceCounters::sum(&self.member_counters()?))
    }

    /// Read each member's counters now, in the order of [`BlockDevice::member_names`].
    pub fn member_counters(&self) -> Result<Vec<DeviceCounters>> {
        self.stat_paths.iter().map(|p| read_counters(p)).collect()
    }

    /// The members' kernel names (`loop3`), one per `stat` file.
    pub fn member_names(&self) -> Vec<String> {
        self.stat_paths
            .iter()
            .map(|p| {
                p.parent()
                    .and_then(Path::file_name)
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect()
    }

    /// What each member read and wrote from `before` to `after` (both from
    /// [`BlockDevice::member_counters`]); empty for a single device, where the total says it.
    pub fn per_member(&self, before: &[DeviceCounters], after: &[DeviceCounters]) -> Vec<MemberIo> {
        if self.stat_paths.len() < 2 || before.len() != after.len() {
            return Vec::new();
        }
        self.member_names()
            .into_iter()
            .zip(before.iter().zip(after))
            .map(|(name, (b, a))| {
                let d = b.delta(a);
                MemberIo {
                    name,
                    read_bytes: d.read_bytes,
                    write_bytes: d.write_bytes,
                }
            })
            .collect()
    }

    /// One device from its sysfs directory.
    fn from_sysfs(dir: &Path) -> Option<BlockDevice> {
        BlockDevice::from_members(&[dir.to_path_buf()])
    }

    /// A device set from the members' sysfs directories (each must have a `stat` file).
    fn from_members(dirs: &[PathBuf]) -> Option<BlockDevice> {
        let mut names = Vec::new();
        let mut stat_paths = Vec::new();
        for d in dirs {
            let stat = d.join("stat");
            if !stat.exists() {
                return None;
            }
            names.push(d.file_name()?.to_string_lossy().into_owned());
            stat_paths.push(stat);
        }
        (!stat_paths.is_empty()).then(|| BlockDevice {
            name: names.join("+"),
            stat_paths,
        })
    }
}

/// What one device of a multi-device filesystem read and wrote over a window.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemberIo {
    /// Kernel name (`loop3`).
    pub name: String,
    /// Bytes it read.
    pub read_bytes: u64,
    /// Bytes it wrote.
    pub write_bytes: u64,
}

/// `per device: loop3 read 1.0 MiB, wrote 32.0 MiB; loop4 …`, the note a workload on a
/// multi-device filesystem gets beside its summed device figures (`None` for one device).
pub fn per_member_note(members: &[MemberIo]) -> Option<String> {
    if members.len() < 2 {
        return None;
    }
    let size = crate::units::format_size;
    let parts: Vec<String> = members
        .iter()
        .map(|m| {
            format!(
                "{} read {}, wrote {}",
                m.name,
                size(m.read_bytes),
                size(m.write_bytes)
            )
        })
        .collect();
    Some(format!("per device: {}", parts.join("; ")))
}

/// The device nodes `nodes` counted together, like a multi-device filesystem's members
/// (what an array operation reads and writes on the target's devices); `None` when one of
/// them is not a block device with counters.
pub fn of_nodes(nodes: &[PathBuf]) -> Option<BlockDevice> {
    let dirs = nodes
        .iter()
        .map(|n| {
            let md = std::fs::metadata(n).ok()?;
            md.file_type()
                .is_block_device()
                .then(|| sysfs_dir(md.rdev()))
                .flatten()
        })
        .collect::<Option<Vec<PathBuf>>>()?;
    BlockDevice::from_members(&dirs)
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
/// file or directory lives on. `None` when there is none (tmpfs, FUSE, overlay…);
/// [`locate`] says why.
pub fn resolve(path: &Path) -> Option<BlockDevice> {
    locate(path).ok()
}

/// Like [`resolve`], but `Err` says why no device with counters was found.
///
/// A file whose `st_dev` is anonymous (`0:N`: every Btrfs filesystem, FUSE, ZFS) is traced
/// through the mount that holds it: for Btrfs, the devices sysfs lists under
/// `/sys/fs/btrfs/<uuid>/devices` for the mount's source device; for ZFS, the leaf vdevs
/// `zpool status` lists for the pool of the mount's source dataset.
pub fn locate(path: &Path) -> std::result::Result<BlockDevice, String> {
    let meta = std::fs::metadata(path)
        .ok()
        .or_else(|| path.parent().and_then(|p| std::fs::metadata(p).ok()))
        .ok_or_else(|| format!("{}: cannot stat it or its directory", path.display()))?;
    if meta.file_type().is_block_device() {
        let dev = meta.rdev();
        return sysfs_dir(dev)
            .and_then(|d| BlockDevice::from_sysfs(&d))
            .ok_or_else(|| {
                format!(
                    "{}: device {}:{} has no counters in /sys/dev/block",
                    path.display(),
                    libc::major(dev),
                    libc::minor(dev)
                )
            });
    }
    if let Some(d) = sysfs_dir(meta.dev()).and_then(|d| BlockDevice::from_sysfs(&d)) {
        return Ok(d);
    }
    under_mount(path)
}

/// The device(s) under the mount holding `path`, for filesystems with an anonymous `st_dev`.
fn under_mount(path: &Path) -> std::result::Result<BlockDevice, String> {
    let real = std::fs::canonicalize(path)
        .or_else(|_| std::fs::canonicalize(path.parent().unwrap_or(Path::new("/"))))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let entries = crate::host::mountinfo::read().map_err(|e| e.to_string())?;
    let m = crate::host::mountinfo::containing(&entries, &real)
        .ok_or_else(|| format!("{}: no mount holds it", path.display()))?;
    let on = format!(
        "{} is on {} ({} at {})",
        path.display(),
        m.fs_type,
        m.source,
        m.mount_point.display()
    );
    match super::backing::of(&m.fs_type) {
        Some(super::backing::Backing::Members) => {
            let name = std::fs::canonicalize(&m.source)
                .ok()
                .and_then(|s| s.file_name().map(|n| n.to_string_lossy().into_owned()))
                .ok_or_else(|| format!("{on}, whose source is not a device node"))?;
            let sys = Path::new("/sys/fs").join(&m.fs_type);
            let members = fs_members(&sys, &name).ok_or_else(|| {
                format!(
                    "{on}, but {} lists no filesystem with {name}",
                    sys.display()
                )
            })?;
            BlockDevice::from_members(&members)
                .ok_or_else(|| format!("{on}, but its devices have no counters in sysfs"))
        }
        Some(super::backing::Backing::Pool) => {
            let ops = super::backing::pool_ops(&m.fs_type).ok_or_else(|| {
                format!("{on}, a pool whose driver did not say how to list its devices")
            })?;
            let vdevs = (ops.vdevs)(&m.source).map_err(|e| format!("{on}, but {e}"))?;
            let dirs = vdevs
                .iter()
                .map(|v| {
                    let rdev = std::fs::metadata(v).map(|md| md.rdev()).unwrap_or(0);
                    sysfs_dir(rdev).ok_or_else(|| {
                        format!(
                            "{on}, but its vdev {} has no counters in sysfs",
                            v.display()
                        )
                    })
                })
                .collect::<std::result::Result<Vec<_>, String>>()?;
            BlockDevice::from_members(&dirs)
                .ok_or_else(|| format!("{on}, but its vdevs have no counters in sysfs"))
        }
        _ => Err(format!("{on}, which has no block device under it")),
    }
}

/// The sysfs directories of every device of the multi-device filesystem that has `member` (a
/// kernel device name) among its devices, found under `sys_fs` (`/sys/fs/btrfs`).
fn fs_members(sys_fs: &Path, member: &str) -> Option<Vec<PathBuf>> {
    for fs in std::fs::read_dir(sys_fs).ok()?.flatten() {
        let devices = fs.path().join("devices");
        if !devices.join(member).exists() {
            continue;
        }
        let mut members: Vec<PathBuf> = std::fs::read_dir(&devices)
            .ok()?
            .flatten()
            .map(|e| std::fs::canonicalize(e.path()).unwrap_or_else(|_| e.path()))
            .collect();
        members.sort();
        return Some(members);
    }
    None
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
    let dir = dev.stat_paths.first()?.parent()?;
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
    wait_quiet_on(&device, window, threshold_bytes, timeout)
}

/// [`wait_quiet`] on a device already resolved.
pub fn wait_quiet_on(
    device: &BlockDevice,
    window: Duration,
    threshold_bytes: u64,
    timeout: Duration,
) -> Result<QuietOutcome> {
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
    fn btrfs_members_are_every_device_of_the_filesystem_holding_one() {
        let sys = tempfile::tempdir().unwrap();
        let a = sys.path().join("0f5e-uuid/devices");
        let b = sys.path().join("77aa-uuid/devices");
        std::fs::create_dir_all(sys.path().join("features")).unwrap();
        for (d, names) in [(&a, &["loop3", "loop4"][..]), (&b, &["sdb"][..])] {
            for n in names {
                std::fs::create_dir_all(d.join(n)).unwrap();
            }
        }
        let m = fs_members(sys.path(), "loop4").unwrap();
        let names: Vec<_> = m
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["loop3", "loop4"]);
        assert_eq!(fs_members(sys.path(), "sdb").unwrap().len(), 1);
        assert!(fs_members(sys.path(), "loop9").is_none());
    }

    #[test]
    fn a_device_set_sums_its_members() {
        let d = tempfile::tempdir().unwrap();
        for (n, w) in [("loop3", 8), ("loop4", 2)] {
            std::fs::create_dir(d.path().join(n)).unwrap();
            std::fs::write(
                d.path().join(n).join("stat"),
                format!("1 0 2 0 1 0 {w} 0 0 0 0"),
            )
            .unwrap();
        }
        let set =
            BlockDevice::from_members(&[d.path().join("loop3"), d.path().join("loop4")]).unwrap();
        assert_eq!(set.name, "loop3+loop4");
        assert_eq!(set.counters().unwrap().write_bytes, 10 * 512);
        assert_eq!(set.member_names(), ["loop3", "loop4"]);
        // Each member's window, and the note that lists them (a raid1 writes both copies).
        let before = set.member_counters().unwrap();
        for (n, w) in [("loop3", 2056), ("loop4", 2050)] {
            std::fs::write(
                d.path().join(n).join("stat"),
                format!("1 0 2 0 9 0 {w} 0 0 0 0"),
            )
            .unwrap();
        }
        let after = set.member_counters().unwrap();
        assert_eq!(
            DeviceCounters::sum(&after).write_bytes - DeviceCounters::sum(&before).write_bytes,
            4096 * 512
        );
        let per = set.per_member(&before, &after);
        assert_eq!(per.len(), 2);
        assert_eq!(
            (per[0].write_bytes, per[1].write_bytes),
            (2048 * 512, 2048 * 512)
        );
        assert_eq!(
            per_member_note(&per).unwrap(),
            "per device: loop3 read 0 B, wrote 1 MiB; loop4 read 0 B, wrote 1 MiB"
        );
        assert!(per_member_note(&per[..1]).is_none());
        let one = BlockDevice::from_members(&[d.path().join("loop3")]).unwrap();
        assert!(one.per_member(&before[..1], &after[..1]).is_empty());
        assert!(BlockDevice::from_members(&[d.path().join("nope")]).is_none());
    }

    #[test]
    fn tmpfs_has_no_device() {
        if Path::new("/dev/shm").exists() {
            assert!(resolve(Path::new("/dev/shm")).is_none());
            let why = locate(Path::new("/dev/shm")).unwrap_err();
            assert!(why.contains("no block device"), "{why}");
        }
    }
}
