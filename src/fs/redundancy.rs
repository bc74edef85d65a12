//! What a redundant layout is bought for: scrub, one device failed, rebuild — the shared
//! part of the drivers' [`super::Filesystem::scrub_layout`], [`super::Filesystem::degrade_layout`]
//! and [`super::Filesystem::rebuild_layout`].
//!
//! The runner's redundancy phase (`runner/redundancy.rs`) keeps only the sequence: on a layout
//! with `redundancy ≥ 1`, after the round's workloads, it hands the live layout
//! ([`LiveArray`]) to its driver to scrub, to fail the last member, then (after the read
//! workloads again) to rebuild onto the wiped device or the spare. What each step does is the
//! driver's: ZFS (`fs/drivers/zfs/pool.rs`: `zpool scrub`, `zpool offline`, `zpool replace`), Btrfs
//! (`fs/drivers/btrfs/mod.rs`, through [`ArrayOps`] on its [`super::KernelFs`]: `scrub start -B`; unmount,
//! wipe, `device scan --forget`, mount `-o degraded`; `replace start -B`); a driver without
//! layouts that survive a failed device says "unsupported here" ([`unsupported`]). Shared here:
//! the bytes in use, the wipe, a blocking command polled for its tool's percent done
//! (`run_polled`, [`percent_done`]). Every command that names a device goes through
//! [`super::setup::argv_guard::check_devices`] with exactly the target's devices it names.
//!
//! No ledger entry of its own is needed: a degraded pool is still the pool the ledger
//! destroys, a degraded Btrfs mount is a mount entry, and the wiped member is a target device.

use super::{Mounted, SetupSpec};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes in use on the filesystem at `mnt` (statvfs: blocks minus free blocks).
pub fn used_bytes(mnt: &Path) -> Result<u64> {
    let s = rustix::fs::statvfs(mnt).map_err(|e| Error::io("cannot statvfs", mnt, e.into()))?;
    Ok(s.f_blocks.saturating_sub(s.f_bfree) * s.f_frsize)
}

/// A redundant layout's live filesystem, as the runner's redundancy phase hands it to its
/// driver.
pub struct LiveArray<'a> {
    /// The setup it was made from (a driver that mounts again takes its options).
    pub setup: &'a SetupSpec,
    /// The layout's devices, in the order it was built on ([`super::layout::members`]).
    pub members: &'a [PathBuf],
    /// The target's device the layout left out as the spare (`spare=yes`), if any.
    pub spare: Option<&'a Path>,
    /// Where it is mounted (the round's work root).
    pub mountpoint: &'a Path,
    /// The mount the round releases: a driver that must mount again to run degraded
    /// (Btrfs `-o degraded`) replaces it, and reads its pool from it (ZFS).
    pub mounted: &'a mut Option<Box<dyn Mounted>>,
    /// Longest one command may take.
    pub timeout: Duration,
}

impl LiveArray<'_> {
    /// The member the phase fails: the layout's last device.
    pub fn failed(&self) -> Result<&Path> {
        self.members
            .last()
            .map(PathBuf::as_path)
            .ok_or_else(|| Error::Other("the layout has no device".into()))
    }

    /// Where the rebuild writes: the spare, else the failed device, wiped.
    pub fn rebuild_onto(&self) -> Result<&Path> {
        match self.spare {
            Some(s) => Ok(s),
            None => self.failed(),
        }
    }

    /// The pool behind the layout's mount (a pool's driver), or why there is none.
    pub fn pool(&self) -> Result<String> {
        self.mounted
            .as_ref()
            .and_then(|m| m.pool())
            .map(str::to_string)
            .ok_or_else(|| Error::Other("no pool behind the layout's mount".into()))
    }
}

/// A kernel filesystem's own redundant layouts (Btrfs's; md's lifecycle is not written), as
/// its [`super::KernelFs`] names them: the hooks behind the driver's `*_layout` methods.
#[derive(Clone, Copy)]
pub struct ArrayOps {
    /// Scrub the healthy layout until done; seconds (`tick`: the tool's percent done).
    pub scrub: fn(&LiveArray<'_>, &dyn Fn(f64)) -> Result<f64>,
    /// Fail the last member; the layout runs degraded.
    pub degrade: fn(&mut LiveArray<'_>) -> Result<()>,
    /// Rebuild onto [`LiveArray::rebuild_onto`]; seconds.
    pub rebuild: fn(&LiveArray<'_>, &dyn Fn(f64)) -> Result<f64>,
}

/// The error of a layout step a driver does not offer: `what` (`"a scrub"`) of a `raid=`
/// layout is unsupported for `fs` here.
pub fn unsupported(fs: &str, what: &str) -> Error {
    Error::Other(format!(
        "{fs}: {what} of a raid= layout is unsupported here (its driver has no redundancy \
         steps)"
    ))
}

/// Run a command whose only device words are `devices`, starting at word `at`.
pub(super) fn run_on(
    a: &[String],
    devices: &[PathBuf],
    at: usize,
    timeout: Duration,
) -> Result<f64> {
    if devices.is_empty() {
        super::setup::argv_guard::check(a, Path::new("/nonexistent"))?;
    } else {
        super::setup::argv_guard::check_devices(a, devices, at)?;
    }
    Ok(command::run(a, timeout)?.seconds)
}

/// How far a running scrub or rebuild is, in percent, as its tool's status output says:
/// `zpool status` (`25.06% done` in zfs-fuse's `scrub:` line and OpenZFS's `scan:` block),
/// `btrfs replace status -1` (`12.3% done, 0 write errs…`), `btrfs scrub status`
/// (`Bytes scrubbed:   3.50TiB  (18.59%)`, or without the percent in older btrfs-progs:
/// `Bytes scrubbed` over `Total to scrub`). `None` when the text carries no progress.
pub fn percent_done(text: &str) -> Option<f64> {
    let number_before = |line: &str, at: usize| {
        line[..at]
            .rsplit(|c: char| c.is_whitespace() || c == '(' || c == ',')
            .next()
            .and_then(|n| n.parse::<f64>().ok())
    };
    for line in text.lines() {
        if let Some(at) = line.find("% done") {
            return number_before(line, at);
        }
    }
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(name))
            .map(str::trim)
    };
    let scrubbed = field("Bytes scrubbed:")?;
    if let Some(at) = scrubbed.find("%)") {
        return number_before(scrubbed, at);
    }
    let total = size_of_text(field("Total to scrub:")?)?;
    let done = size_of_text(scrubbed)?;
    (total > 0.0).then(|| 100.0 * done / total)
}

/// `982.05GiB` (btrfs-progs' sizes) in bytes.
fn size_of_text(text: &str) -> Option<f64> {
    let word = text.split_whitespace().next()?;
    let split = word.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = word.split_at(split);
    let shift = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        .iter()
        .position(|u| *u == unit)?;
    Some(n.parse::<f64>().ok()? * (1u64 << (10 * shift)) as f64)
}

/// Run `a` (checked like [`run_on`]) to its end, and meanwhile poll `status` once a second,
/// giving `tick` the percent [`percent_done`] reads in it; seconds `a` took. For the Btrfs
/// commands that block until done (`scrub start -B`, `replace start -B`): their own status
/// command reads the kernel's progress counters, a cheap ioctl beside the operation.
pub(super) fn run_polled(
    a: &[String],
    devices: &[PathBuf],
    at: usize,
    timeout: Duration,
    status: &[String],
    tick: &dyn Fn(f64),
) -> Result<f64> {
    if devices.is_empty() {
        super::setup::argv_guard::check(a, Path::new("/nonexistent"))?;
    } else {
        super::setup::argv_guard::check_devices(a, devices, at)?;
    }
    super::setup::argv_guard::check(status, Path::new("/nonexistent"))?;
    std::thread::scope(|scope| {
        let running = scope.spawn(|| command::run(a, timeout));
        let mut last_poll = Instant::now();
        while !running.is_finished() {
            std::thread::sleep(Duration::from_millis(100));
            if last_poll.elapsed() >= Duration::from_secs(1) {
                last_poll = Instant::now();
                if let Ok(o) = command::run_unchecked(status, Duration::from_secs(30))
                    && let Some(p) = percent_done(&o.stdout)
                {
                    tick(p);
                }
            }
        }
        let out = running
            .join()
            .map_err(|_| Error::Other(format!("{} panicked", command::display(a))))??;
        Ok(out.seconds)
    })
}

/// Zero the first and last MiB of a target device (its labels and superblock copies there),
/// so the rebuild writes onto a blank device. Btrfs's further superblock copies (64 MiB)
/// are what `wipefs -a` clears, run too where the device is a Btrfs member.
pub fn wipe(dev: &Path, size: u64, timeout: Duration) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .map_err(|e| Error::io("cannot open for wiping", dev, e))?;
    let zero = vec![0u8; 1 << 20];
    f.write_all_at(&zero, 0)
        .and_then(|()| f.write_all_at(&zero, size.saturating_sub(1 << 20)))
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io("cannot wipe", dev, e))?;
    let d = dev.display().to_string();
    run_on(
        &argv(&["wipefs", "-a", "-q", &d]),
        &[dev.to_path_buf()],
        3,
        timeout,
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::Filesystem;

    #[test]
    fn a_driver_without_redundant_layouts_says_unsupported_and_holds_nothing() {
        let setup = SetupSpec::plain("ext4");
        let members = [PathBuf::from("/dev/loop1"), PathBuf::from("/dev/loop2")];
        let spare = PathBuf::from("/dev/loop3");
        let mut mounted = None;
        let mut array = LiveArray {
            setup: &setup,
            members: &members,
            spare: None,
            mountpoint: Path::new("/nonexistent"),
            mounted: &mut mounted,
            timeout: Duration::from_secs(1),
        };
        let drivers: [&dyn Filesystem; 3] = [&crate::fs::EXT4, &crate::fs::XFS, &crate::fs::Tmpfs];
        for fs in drivers {
            let why = |e: Error| e.to_string();
            let scrub = why(fs.scrub_layout(&array, &|_| {}).unwrap_err());
            let degrade = why(fs.degrade_layout(&mut array).unwrap_err());
            let rebuild = why(fs.rebuild_layout(&array, &|_| {}).unwrap_err());
            for e in [scrub, degrade, rebuild] {
                assert!(
                    e.contains("unsupported here") && e.contains(fs.name()),
                    "{e}"
                );
            }
            assert!(fs.hold_services().is_none(), "{}", fs.name());
        }
        // The phase fails the last member and rebuilds onto it, or onto the spare.
        assert_eq!(array.failed().unwrap(), Path::new("/dev/loop2"));
        assert_eq!(array.rebuild_onto().unwrap(), Path::new("/dev/loop2"));
        array.spare = Some(&spare);
        assert_eq!(array.rebuild_onto().unwrap(), Path::new("/dev/loop3"));
        assert!(array.pool().is_err(), "nothing mounted, no pool");
        // ZFS holds its daemon for a run (nothing is started by holding).
        assert!(crate::fs::Zfs.hold_services().is_some());
    }

    #[test]
    fn progress_is_read_from_each_tools_status() {
        // zfs-fuse 0.7's `zpool status` during a scrub and a resilver.
        let fuse = "  pool: fsbench_1\n state: ONLINE\n scrub: scrub in progress for 0h0m, \
                    25.06% done, 0h0m to go\nconfig:\n";
        assert_eq!(percent_done(fuse), Some(25.06));
        let resilver = " scrub: resilver in progress for 0h0m, 7.50% done, 0h1m to go";
        assert_eq!(percent_done(resilver), Some(7.5));
        // OpenZFS 2.x's scan block.
        let openzfs = "  scan: scrub in progress since Wed Dec  2 04:00:00 2026\n\t1.2G scanned \
                       at 100M/s, 500M issued at 50M/s, 2G total\n\t0B repaired, 25.00% done, \
                       00:00:10 to go\n";
        assert_eq!(percent_done(openzfs), Some(25.0));
        assert_eq!(
            percent_done("0.0% done, 0 write errs, 0 uncorr. read errs\n"),
            Some(0.0)
        );
        assert_eq!(
            percent_done("Started on  2.Dec 04:00:00, finished on  2.Dec 04:00:03, 0 write errs"),
            None
        );
        // btrfs-progs 6.x while running, and a version without the percent.
        let scrub = "UUID:             x\nStatus:           running\nTotal to scrub:   18.84TiB\n\
                     Bytes scrubbed:   3.50TiB  (18.59%)\nRate:             38.92MiB/s\n";
        assert_eq!(percent_done(scrub), Some(18.59));
        let old = "Total to scrub:   1.00GiB\nBytes scrubbed:   256.00MiB\n";
        assert_eq!(percent_done(old), Some(25.0));
        assert_eq!(percent_done("Status: finished\n"), None);
        assert_eq!(
            size_of_text("982.05GiB"),
            Some(982.05 * (1u64 << 30) as f64)
        );
        assert_eq!(size_of_text("12"), None);
    }
}
