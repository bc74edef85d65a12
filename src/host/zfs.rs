//! The one host fact about ZFS: which implementation this machine runs, if any. Every
//! caller (the driver's availability, the package table, the doctor, the daemon hold, the
//! report's zfs-fuse labels) asks here, so the answer cannot differ between them.

use std::path::Path;

/// Which ZFS this machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zfs {
    /// The OpenZFS kernel module is loaded (`/sys/module/zfs`).
    Kernel,
    /// No module, but the zfs-fuse daemon is installed (a user-space ZFS; its figures are
    /// not comparable with OpenZFS's).
    Fuse,
    /// Neither.
    None,
}

/// Whether the OpenZFS kernel module is loaded.
pub fn kernel() -> bool {
    Path::new("/sys/module/zfs").exists()
}

/// This machine's ZFS.
pub fn implementation() -> Zfs {
    if kernel() {
        Zfs::Kernel
    } else if crate::host::command::available("zfs-fuse") {
        Zfs::Fuse
    } else {
        Zfs::None
    }
}
