//! The filesystem drivers, each in a folder of its own with its mechanisms (snapshot,
//! send/receive, compression ratio, check, resize, layouts, daemon, pool, option space), and
//! the one table that registers them.

pub mod btrfs;
pub mod ext4;
#[cfg(test)]
pub mod fake;
#[cfg(test)]
pub mod fake_snap;
pub mod simple;
pub mod tmpfs;
pub mod xfs;
pub mod zfs;

/// One filesystem fsbench can set up: its `--fs` name and its driver.
pub struct Registration {
    /// The `--fs` name (`ext4`).
    pub name: &'static str,
    /// The driver.
    pub driver: &'static dyn crate::fs::Filesystem,
}

/// The one table of drivers: adding a filesystem is one line here (and its folder
/// `fs/drivers/<name>/`).
pub const DRIVERS: [Registration; 5] = [
    Registration {
        name: "ext4",
        driver: &ext4::EXT4,
    },
    Registration {
        name: "xfs",
        driver: &xfs::XFS,
    },
    Registration {
        name: "btrfs",
        driver: &btrfs::BTRFS,
    },
    Registration {
        name: "zfs",
        driver: &zfs::Zfs,
    },
    Registration {
        name: "tmpfs",
        driver: &tmpfs::Tmpfs,
    },
];
