//! What lies under a mount, by its type name in /proc/self/mountinfo: the fact device
//! accounting and write-back need from a filesystem.
//!
//! `measure` sits below `fs` (the layering), so it cannot ask the drivers; each driver declares
//! its [`Backing`] (`fs::caps::Caps::backing`) and `fs::register` installs them here before a
//! command runs. A type nobody registered is looked at as a plain block-device filesystem.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{PoisonError, RwLock};

/// Where a filesystem's data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// The block device its `st_dev` names (ext4, XFS).
    Device,
    /// Every device listed under `/sys/fs/TYPE/<fsid>/devices` of the filesystem holding the
    /// mount's source (Btrfs: the `st_dev` is anonymous).
    Members,
    /// A pool's devices ([`PoolOps::vdevs`]); syncfs does not reach it, its driver's forced
    /// commit does ([`PoolOps::sync`]: ZFS, zfs-fuse).
    Pool,
    /// No device at all (tmpfs).
    None,
}

static TABLE: RwLock<BTreeMap<String, Backing>> = RwLock::new(BTreeMap::new());

/// What the measuring layer asks of a pool ([`Backing::Pool`]), installed by its driver.
#[derive(Clone, Copy)]
pub struct PoolOps {
    /// The block devices under the pool of a mount source (a dataset, `tank/home`); `Err`
    /// says why not.
    pub vdevs: fn(&str) -> Result<Vec<PathBuf>, String>,
    /// Make the pool holding a dataset commit now and wait until it is on disk; returns the
    /// command that did it.
    pub sync: fn(&str) -> crate::Result<String>,
}

static POOLS: RwLock<BTreeMap<String, PoolOps>> = RwLock::new(BTreeMap::new());

/// Record how the pools behind mounts of type `mount_type` are asked.
pub fn register_pool(mount_type: &str, ops: PoolOps) {
    POOLS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(mount_type.to_string(), ops);
}

/// How the pool behind mounts of type `mount_type` is asked, if its driver said.
pub fn pool_ops(mount_type: &str) -> Option<PoolOps> {
    POOLS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(mount_type)
        .copied()
}

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
