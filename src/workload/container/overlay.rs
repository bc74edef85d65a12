//! One container's root: an overlayfs mount of the image's layers (read-only lowers), its own
//! upper (diff) and work directories, as overlay2 mounts it — `mount(2)` directly, as
//! containerd and Docker do, so a container start costs what it costs them.
//!
//! The mount is recorded in the ledger before it is made (source [`SOURCE`], so recovery
//! after a SIGKILL unmounts only what still shows that source at that mountpoint) and the
//! guard unmounts it on drop, so an error or Ctrl-C in the middle of a step leaves nothing.

use crate::host::ledger::{self, Held, Item};
use crate::{Error, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The mount source fsbench's overlays show in mountinfo (Docker's show `overlay`).
pub const SOURCE: &str = "fsbench-overlay";

/// The directories of one container.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// Its writable layer (overlay2's `diff`).
    pub upper: PathBuf,
    /// overlayfs's work directory (same filesystem as upper).
    pub work: PathBuf,
    /// Where its root is mounted.
    pub merged: PathBuf,
}

impl Dirs {
    /// The directories of the container `name` under `root` (not created).
    pub fn of(root: &Path, name: &str) -> Dirs {
        let c = root.join(name);
        Dirs {
            upper: c.join("diff"),
            work: c.join("work"),
            merged: c.join("merged"),
        }
    }

    /// The container's own directory (holding the three).
    pub fn home(&self) -> &Path {
        self.upper
            .parent()
            .expect("a container's dirs have a parent")
    }

    /// Create the three directories.
    pub fn create(&self) -> Result<()> {
        for d in [&self.upper, &self.work, &self.merged] {
            std::fs::create_dir_all(d).map_err(|e| Error::io("cannot create", d, e))?;
        }
        Ok(())
    }
}

/// A mounted container root; dropping it unmounts it.
#[derive(Debug)]
pub struct Overlay {
    merged: PathBuf,
    held: Option<Held>,
}

/// The `-o` data of an overlay mount: lowers top first, then upper and work. Docker turns
/// the redirect and index features off (`index=off`) so layers stay portable; so does this.
pub fn options(lowers_top_first: &[PathBuf], dirs: &Dirs) -> Result<String> {
    let mut parts = Vec::new();
    for p in lowers_top_first.iter().chain([&dirs.upper, &dirs.work]) {
        let s = p.to_str().filter(|s| !s.contains([',', ':', '\\']));
        let Some(s) = s else {
            return Err(Error::refused(
                p.clone(),
                "overlayfs options cannot carry this path (',', ':' or '\\' in it, or not \
                 UTF-8); use a scratch directory without them",
            ));
        };
        parts.push(s.to_string());
    }
    let work = parts.pop().unwrap_or_default();
    let upper = parts.pop().unwrap_or_default();
    let data = format!(
        "lowerdir={},upperdir={upper},workdir={work},index=off",
        parts.join(":")
    );
    // The kernel takes at most a page of mount data.
    if data.len() >= 4000 {
        return Err(Error::refused(
            dirs.merged.clone(),
            format!(
                "the overlay's lowerdir list is {} bytes, over the kernel's page; use fewer \
                 layers or a shorter scratch path",
                data.len()
            ),
        ));
    }
    Ok(data)
}

impl Overlay {
    /// Mount the overlay of `lowers_top_first` with `dirs`' upper and work at `dirs.merged`.
    pub fn mount(lowers_top_first: &[PathBuf], dirs: &Dirs) -> Result<Overlay> {
        let data = options(lowers_top_first, dirs)?;
        let c = CString::new(data).map_err(|e| Error::Other(format!("overlay options: {e}")))?;
        let held = ledger::hold(Item::Mount {
            target: dirs.merged.clone(),
            source: SOURCE.to_string(),
        })?;
        rustix::mount::mount(
            SOURCE,
            &dirs.merged,
            "overlay",
            rustix::mount::MountFlags::empty(),
            c.as_c_str(),
        )
        .map_err(|e| {
            Error::io(
                "cannot mount the container's overlay (needs root and overlayfs) at",
                &dirs.merged,
                e.into(),
            )
        })?;
        Ok(Overlay {
            merged: dirs.merged.clone(),
            held: Some(held),
        })
    }

    /// The container's root.
    pub fn root(&self) -> &Path {
        &self.merged
    }

    /// Unmount now (a stopped container).
    pub fn unmount(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        match crate::host::mountinfo::unmount(&self.merged) {
            Ok(()) => Ok(()),
            Err(e) => {
                // Still mounted: the entry stays for the next run's recovery.
                held.keep();
                Err(e)
            }
        }
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            crate::host::stdio::note(&format!("fsbench: warning: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_put_the_top_layer_first_and_refuse_separators() {
        let d = Dirs::of(Path::new("/s/c"), "c0");
        let lowers = [PathBuf::from("/s/l/1"), PathBuf::from("/s/l/0")];
        assert_eq!(
            options(&lowers, &d).unwrap(),
            "lowerdir=/s/l/1:/s/l/0,upperdir=/s/c/c0/diff,workdir=/s/c/c0/work,index=off"
        );
        let bad = Dirs::of(Path::new("/s/a:b"), "c0");
        assert!(options(&lowers, &bad).is_err());
    }
}
