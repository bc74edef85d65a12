//! Mounting and unmounting, and the guard that unmounts kernel filesystems on drop.

use super::Mounted;
use crate::host::command;
use crate::host::ledger::{self, Held, Item};
use crate::host::mountinfo;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Create `mnt` (and parents) if missing; returns its ledger entry when this call created it
/// (`Some` = created), so the guard removes only directories it made.
pub fn ensure_mountpoint(mnt: &Path) -> Result<Option<Held>> {
    if mnt.is_dir() {
        return Ok(None);
    }
    let held = ledger::hold(Item::Dir {
        path: mnt.to_path_buf(),
    })?;
    // Another fsbench may remove the shared, empty mount root between our two mkdirs.
    let mut tries = 0;
    loop {
        match std::fs::create_dir_all(mnt) {
            Ok(()) => return Ok(Some(held)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 5 => tries += 1,
            Err(e) => return Err(Error::io("cannot create the mountpoint", mnt, e)),
        }
    }
}

/// `mount -t FSTYPE [-o OPTS] SOURCE MNT` under a timeout, recorded in the ledger first; the
/// returned entry goes once the mount is gone (keep it in the mount's guard).
pub fn mount(
    fstype: &str,
    source: &str,
    opts: Option<&str>,
    mnt: &Path,
    timeout: Duration,
) -> Result<Held> {
    let held = ledger::hold(Item::Mount {
        target: mnt.to_path_buf(),
        source: source.to_string(),
    })?;
    let mut argv = command::argv(&["mount", "-t", fstype]);
    if let Some(o) = opts {
        argv.push("-o".into());
        argv.push(o.to_string());
    }
    argv.push(source.to_string());
    argv.push(mnt.display().to_string());
    // The source is the target (a device, or `tmpfs`); no other device may appear.
    super::setup::argv_guard::check(&argv, Path::new(source))?;
    if let Err(e) = command::run_device_tool(&argv, timeout) {
        // A timed-out mount may still have happened: then the entry stays for recovery.
        if is_mounted(mnt) {
            held.keep();
        }
        return Err(e);
    }
    Ok(held)
}

/// The options of the mount at `mnt`, as mountinfo shows them (per-mount + superblock).
pub fn options_at(mnt: &Path) -> Option<String> {
    let m = mountinfo::read().ok()?;
    mountinfo::find_mount_point(&m, mnt).map(|e| e.all_options())
}

// Unmounting is the host's (the ledger's recovery uses it too).
pub use crate::host::mountinfo::{is_mounted, unmount};

/// Remove a mountpoint directory fsbench created (and its parent under the mount root if
/// that is now empty).
pub fn remove_mountpoint(mnt: &Path) {
    if let Err(e) = std::fs::remove_dir(mnt)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!(
            "fsbench: warning: cannot remove the mountpoint {}: {e}",
            mnt.display()
        );
    }
    if let Some(parent) = mnt.parent()
        && parent == super::mount_root()
    {
        let _ = std::fs::remove_dir(parent);
    }
}

/// Describes a mounted kernel filesystem (tune2fs, xfs_info…).
pub type Describe = fn(device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String>;

/// A mounted kernel filesystem (ext4, XFS, Btrfs, tmpfs). Drop unmounts it.
pub struct KernelMount {
    /// Device it was mounted from (None for tmpfs).
    pub device: Option<PathBuf>,
    /// Mount point.
    pub path: PathBuf,
    /// Whether fsbench created the mountpoint directory.
    pub created_dir: bool,
    /// Property collector.
    pub describe: Describe,
    /// Extra properties known at mount time (tmpfs size…).
    pub extra: BTreeMap<String, String>,
    /// Ledger entries of the mount and its directory, removed once both are gone.
    pub held: Vec<Held>,
    done: bool,
}

impl KernelMount {
    /// Wrap an existing mount.
    pub fn new(
        device: Option<PathBuf>,
        path: PathBuf,
        created_dir: bool,
        describe: Describe,
    ) -> Self {
        KernelMount {
            device,
            path,
            created_dir,
            describe,
            extra: BTreeMap::new(),
            held: Vec::new(),
            done: false,
        }
    }

    fn teardown(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        let r = unmount(&self.path);
        if r.is_ok() {
            if self.created_dir {
                remove_mountpoint(&self.path);
            }
            self.held.clear();
        } else {
            // Still mounted: the entries stay, so the next fsbench finishes the job.
            self.held.drain(..).for_each(Held::keep);
        }
        r
    }
}

impl Mounted for KernelMount {
    fn path(&self) -> &Path {
        &self.path
    }

    fn mount_options(&self) -> String {
        options_at(&self.path).unwrap_or_default()
    }

    fn properties(&self) -> BTreeMap<String, String> {
        let mut m = (self.describe)(self.device.as_deref(), &self.path);
        m.extend(self.extra.clone());
        m
    }

    fn implementation(&self) -> String {
        "linux".into()
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.teardown()
    }
}

impl Drop for KernelMount {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            crate::host::stdio::note(&format!("fsbench: warning: {e}"));
        }
    }
}
