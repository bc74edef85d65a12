//! What lies under a mount, by its type name in /proc/self/mountinfo: the fact device
//! accounting and write-back need from a filesystem.
//!
//! `measure` sits below `fs` (the layering), so it cannot ask the drivers; each driver declares
//! its [`Backing`] (`fs::caps::Caps::backing`) and `fs::register` installs them here before a
//! command runs. A type nobody registered is looked at as a plain block-device filesystem.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

/// Where a filesystem's data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// The block device its `st_dev` names (ext4, XFS).
    Device,
    /// Every device listed under `/sys/fs/TYPE/<fsid>/devices` of the filesystem holding the
    /// mount's source (Btrfs: the `st_dev` is anonymous).
    Members,
    /// A pool's leaf vdevs in `zpool status`; syncfs does not reach it, a transaction-group
    /// sync does (ZFS, zfs-fuse).
    Pool,
    /// No device at all (tmpfs).
    None,
}

static TABLE: RwLock<BTreeMap<String, Backing>> = RwLock::new(BTreeMap::new());

/// Record what lies under mounts of type `mount_type`.
pub fn register(mount_type: &str, backing: Backing) {
    TABLE
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(mount_type.to_string(), backing);
}

/// What lies under mounts of type `mount_type`, if a driver said.
pub fn of(mount_type: &str) -> Option<Backing> {
    TABLE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(mount_type)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_types_are_found_and_others_are_not() {
        register("test-backing-fs", Backing::Members);
        assert_eq!(of("test-backing-fs"), Some(Backing::Members));
        assert_eq!(of("test-backing-unregistered"), None);
    }
}
