//! What a filesystem offers beyond create and mount, as data its driver declares: how it is
//! checked, grown, shrunk and snapshotted, whether and how it compresses, how the device
//! counters of a path on it are found, what its steps cost in a plan's estimate.
//!
//! Workloads (the probes, compression, crash states), device accounting and the planner read
//! these fields instead of matching filesystem names, so a new filesystem is its driver folder
//! (with a [`Caps`]) and one line in [`super::DRIVERS`]. No variant names a filesystem: the
//! mechanisms shared by several (an offline checker and subvolumes in [`super::ops`], the
//! offline and online resizes in [`super::resize`]) are the defaults of the driver's methods,
//! chosen here by the words of its tools; a mechanism of one filesystem only (a pool's scrub,
//! expand and dataset snapshots, XFS's tail shrink, a compression ratio) is `Own` here and
//! lives in its driver's folder, reached through its `Filesystem` method. A driver that has
//! neither says [`Check::None`] and friends, and the probes report "not supported".

use crate::measure::backing::Backing;

/// A read-only consistency check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// No checker is known: the fsck probe reports unsupported.
    None,
    /// A program run on the unmounted device: these words, then the device; exit 0 = clean.
    Offline(&'static [&'static str]),
    /// Its driver checks the live filesystem itself (a pool's scrub), through its own
    /// `Filesystem::check`; nothing is run on the unmounted device.
    Own,
}

/// An offline resize in three programs: a forced repair, a geometry read, the resize itself
/// (ext4: `e2fsck -f -p`, `dumpe2fs -h`, `resize2fs DEV [SIZE]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfflineResize {
    /// The forced check the resizer insists on first (exit 0 or 1 = fine), device appended.
    pub fsck: &'static [&'static str],
    /// Prints `Block count:` and `Block size:` lines, device appended.
    pub geometry: &'static [&'static str],
    /// The resizer, device appended, then the new size in KiB (`NK`) when shrinking.
    pub resize: &'static [&'static str],
}

/// Growing the filesystem after its device grew.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Grow {
    /// Unsupported.
    None,
    /// Online, these words then the device (`resize2fs DEV`); with `offline`, when the online
    /// grow is refused (no CAP_SYS_RESOURCE in a container) it grows offline instead.
    Device {
        /// The grow command before the device.
        argv: &'static [&'static str],
        /// How to grow it unmounted when the online grow is refused.
        offline: Option<OfflineResize>,
    },
    /// Online, these words then the mountpoint (`xfs_growfs MNT`).
    Mountpoint(&'static [&'static str]),
    /// Its driver grows it itself (a pool's expand), through its own `Filesystem::grow`.
    Own,
}

/// Shrinking the filesystem by a number of bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shrink {
    /// Unsupported, and why (shown in the probe's note).
    None(&'static str),
    /// Unmounted, through an [`OfflineResize`].
    Offline(OfflineResize),
    /// Online: these words, then `-NK` (the bytes to give back in KiB), then the mountpoint
    /// (`btrfs filesystem resize -NK MNT`).
    OnlineBy(&'static [&'static str]),
    /// Its driver shrinks it itself, through its own `Filesystem::shrink` (XFS: only the free
    /// tail of the last allocation group can go).
    Own,
}

/// Native snapshots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Snapshot {
    /// None of its own (supported 0).
    None,
    /// Subvolumes: `subvolume create DIR`, `subvolume snapshot SRC DST`, `subvolume delete
    /// DIR`, each these words first.
    Subvolume(&'static [&'static str]),
    /// Its driver snapshots itself (a pool's dataset snapshot), through its own
    /// `Filesystem::snapshot`.
    Own,
}

/// Crash states (`crash` workload): whether a clone of a recorded image can be checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Crash {
    /// Not built for it; the reason ends the workload's error message.
    Unsupported(&'static str),
    /// Clones are mounted with `mount_extra` options added (XFS: `nouuid`, every clone has
    /// the recording's UUID), and `forget` (then the device) makes the kernel forget a clone
    /// with the same fsid (Btrfs: `btrfs device scan --forget`).
    Clones {
        /// Mount options every clone needs.
        mount_extra: &'static [&'static str],
        /// Run after a clone is released, device appended.
        forget: Option<&'static [&'static str]>,
    },
}

/// The plan's time estimate for this filesystem, relative to ext4 (see `plan/eta.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eta {
    /// Seconds of mkfs plus the device's busy time after it, beyond the quiet window.
    pub mkfs_s: f64,
    /// Metadata time relative to ext4: untar, cold find, rm -rf.
    pub meta: [f64; 3],
    /// A redundant `raid=` layout's scrub, failed device and rebuild.
    pub array: ArrayEta,
    /// Aging's write rate by profile (`age=`).
    pub aging: AgingEta,
}

/// Aging's rate on one filesystem, MiB/s of data written, per profile (`fs::setup::age`): measured
/// on the project's 2-core VM with nothing else running (docs/aging.md, "What aging costs").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgingEta {
    /// `churn`.
    pub churn: f64,
    /// `overwrite`.
    pub overwrite: f64,
    /// `punch`.
    pub punch: f64,
    /// `git`.
    pub git: f64,
}

impl AgingEta {
    /// A filesystem not measured: the rates the plan assumed before they were measured
    /// per filesystem (below every kernel filesystem's but Btrfs's `git`).
    pub const GUESS: AgingEta = AgingEta {
        churn: 150.0,
        overwrite: 150.0,
        punch: 150.0,
        git: 75.0,
    };
}

/// What a redundant layout's round-1 phase costs (runner/redundancy.rs): each operation a
/// fixed part (the tools, the polling, a mount) and a part per GiB of data in use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrayEta {
    /// Seconds of a scrub beyond its per-GiB part.
    pub scrub_s: f64,
    /// Scrub seconds per GiB of data.
    pub scrub_s_per_gib: f64,
    /// Seconds to fail a device (ZFS `zpool offline`; Btrfs unmount, wipe, forget, mount).
    pub fail_s: f64,
    /// Seconds of a rebuild beyond its per-GiB part.
    pub rebuild_s: f64,
    /// Rebuild seconds per GiB of data.
    pub rebuild_s_per_gib: f64,
}

impl ArrayEta {
    /// A filesystem whose layouts fsbench does not rebuild here (md, untested): a guess
    /// in the kernel filesystems' range, so a plan still adds something.
    pub const GUESS: ArrayEta = ArrayEta {
        scrub_s: 1.0,
        scrub_s_per_gib: 2.0,
        fail_s: 1.0,
        rebuild_s: 1.0,
        rebuild_s_per_gib: 2.0,
    };
}

/// Everything a driver declares beyond create and mount.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Caps {
    /// The type names its mounts have in /proc/self/mountinfo (`zfs`, `fuse.zfs`).
    pub mount_types: &'static [&'static str],
    /// What lies under a mount of it, for device counters and write-back (`measure`).
    pub backing: Backing,
    /// Read-only check.
    pub check: Check,
    /// Grow.
    pub grow: Grow,
    /// Shrink.
    pub shrink: Shrink,
    /// Snapshots.
    pub snapshot: Snapshot,
    /// Crash states.
    pub crash: Crash,
    /// The `raid=` layouts it builds over several devices (`fs/layout.rs`); none by default.
    pub layouts: &'static [super::layout::Layout],
    /// Whether the capability probes build their own image of it (`probe-*`).
    pub probes: bool,
    /// Size of a probe's own image before what the probe adds (sparse, mostly free).
    pub probe_image: u64,
    /// Its journal's default commit interval, seconds (what `commit=` is compared with).
    pub commit_s: u32,
    /// The time estimate's constants.
    pub eta: Eta,
    /// Without a kernel module, this program serves it from user space (`zfs-fuse`); the
    /// doctor lists it as a needed tool then.
    pub userspace_daemon: Option<&'static str>,
    /// Capacity and maintenance facts (inodes, metadata space, scrub) the capacity probes read.
    pub maintenance: super::maintenance::Maintenance,
    /// Snapshots or reflink copies, send/receive, trim and balance (the `backup` workload).
    pub backup: super::snapshot_ops::Backup,
    /// Its own options that make a setup less durable than its default, and why
    /// (`fs/durability.rs`; barriers and `commit=` are every driver's).
    pub weakens: &'static [super::durability::Weakening],
    /// The programs its setups depend on and how each says its version (provenance).
    pub versions: &'static [super::provenance::ToolVersion],
    /// The package of each program it runs, per distribution (`mkfs.ext4` → e2fsprogs):
    /// what the doctor reports missing, `--install-missing` and `fsbench plan` install and a
    /// "skipping setup" note names, through [`super::Filesystem::package_of`]. Without its
    /// kernel module, a driver with a [`Caps::userspace_daemon`] gets them all from the
    /// daemon's package (zfs-fuse brings its own `zpool` and `zfs`). `mount`, which every
    /// kernel filesystem runs, is the host's (`host::packages::TOOLS`).
    pub packages: &'static [crate::host::packages::Tool],
}

impl Caps {
    /// A filesystem that offers nothing beyond create and mount, estimated like ext4.
    pub const NONE: Caps = Caps {
        mount_types: &[],
        backing: Backing::Device,
        check: Check::None,
        grow: Grow::None,
        shrink: Shrink::None("no shrink command is known for it"),
        snapshot: Snapshot::None,
        crash: Crash::Unsupported(""),
        layouts: &[],
        probes: false,
        probe_image: 640 << 20,
        commit_s: 5,
        eta: Eta {
            mkfs_s: 0.3,
            meta: [1.0, 1.0, 1.0],
            array: ArrayEta::GUESS,
            aging: AgingEta::GUESS,
        },
        userspace_daemon: None,
        maintenance: super::maintenance::Maintenance::NONE,
        backup: super::snapshot_ops::Backup::NONE,
        weakens: &[],
        versions: &[],
        packages: &[],
    };
}

/// The capabilities of the filesystem named `fs`; [`Caps::NONE`] for a name no driver has.
pub fn of(fs: &str) -> Caps {
    super::driver(fs).map_or(Caps::NONE, |d| *d.caps())
}

/// The capabilities of the filesystem whose mounts show as `mount_type` in mountinfo.
pub fn by_mount_type(mount_type: &str) -> Option<Caps> {
    super::KNOWN
        .iter()
        .map(|n| of(n))
        .find(|c| c.mount_types.contains(&mount_type))
}

/// Tell the measuring layer what lies under each filesystem's mounts (it sits below `fs` and
/// cannot ask the drivers); done once by `commands::dispatch` (through [`super::register`]).
pub fn register_backings() {
    for name in super::KNOWN {
        let c = of(name);
        for t in c.mount_types {
            crate::measure::backing::register(t, c.backing);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registration_makes_the_driver_it_names() {
        for r in &super::super::DRIVERS {
            assert_eq!(r.driver.name(), r.name);
        }
        assert_eq!(super::super::KNOWN.len(), super::super::DRIVERS.len());
    }

    #[test]
    fn every_driver_declares_its_mount_types_and_unknown_names_get_nothing() {
        for name in super::super::KNOWN {
            let c = of(name);
            assert!(
                c.mount_types.contains(name),
                "{name}: its mounts show as {:?}",
                c.mount_types
            );
        }
        assert_eq!(of("no-such-fs"), Caps::NONE);
        register_backings();
        assert_eq!(crate::measure::backing::of("fuse.zfs"), Some(Backing::Pool));
        assert_eq!(crate::measure::backing::of("tmpfs"), Some(Backing::None));
    }
}
