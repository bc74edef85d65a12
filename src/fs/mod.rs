//! Filesystem drivers behind one trait: create (mkfs / zpool create), mount, describe, release.

use crate::plan::SetupSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What mkfs (or zpool create) did.
#[derive(Debug, Clone, Default)]
pub struct MkfsRecord {
    /// The full command line.
    pub args: Vec<String>,
    /// Its stdout + stderr.
    pub output: String,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// A mounted filesystem. Dropping it unmounts (or destroys the pool); errors are printed.
pub trait Mounted: Send {
    /// Where it is mounted.
    fn path(&self) -> &Path;
    /// Mount options as /proc/self/mountinfo shows them.
    fn mount_options(&self) -> String;
    /// Properties worth recording (zfs get all, tune2fs -l excerpt, xfs_info…).
    fn properties(&self) -> BTreeMap<String, String>;
    /// Implementation label (`zfs-fuse`, `OpenZFS 2.2`, `linux`).
    fn implementation(&self) -> String;
    /// Unmount / destroy now, reporting errors (Drop does the same silently).
    fn release(self: Box<Self>) -> crate::Result<()>;
}

/// A filesystem driver.
pub trait Filesystem: Send + Sync {
    /// Driver name (`ext4`).
    fn name(&self) -> &'static str;
    /// Programs that must be on PATH; a missing one skips the setup with a note.
    fn required_tools(&self) -> &'static [&'static str];
    /// Smallest device this filesystem can be created on, bytes.
    fn min_device_size(&self) -> u64;
    /// Reject variant options this driver does not understand.
    fn validate(&self, setup: &SetupSpec) -> crate::Result<()>;
    /// Mount an existing filesystem of this type (no mkfs; ZFS: `zpool import`).
    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<Box<dyn Mounted>>;
    /// Create the filesystem on `device` (timed) and mount it at `mountpoint`.
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<(MkfsRecord, Box<dyn Mounted>)>;
}

/// Look up a driver by name.
pub fn driver(name: &str) -> Option<Box<dyn Filesystem>> {
    let _ = name;
    None
}

/// Names of every driver fsbench knows.
pub const KNOWN: &[&str] = &["ext4", "xfs", "btrfs", "zfs", "tmpfs"];

/// Directory in which fsbench creates mountpoints.
pub fn mount_root() -> PathBuf {
    PathBuf::from("/run/fsbench")
}
