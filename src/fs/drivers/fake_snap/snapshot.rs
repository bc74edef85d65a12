//! The recipe fake's own snapshot mechanism: a copy of the tree into a sibling directory
//! (what a real driver does with its tool, e.g. a subvolume or dataset snapshot).

use crate::fs::ops::SnapshotJob;
use crate::fs::snapshot_ops::{Copier, Snap, Tree};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Copy every regular file of `from` (flat) into the new directory `to`; the seconds taken.
fn copy_tree(from: &Path, to: &Path) -> Result<f64> {
    let start = Instant::now();
    std::fs::create_dir_all(to).map_err(|e| Error::io("cannot create", to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| Error::io("cannot list", from, e))? {
        let p = e.map_err(|e| Error::io("cannot list", from, e))?.path();
        if p.is_file() {
            let dst = to.join(p.file_name().unwrap_or_default());
            std::fs::copy(&p, &dst).map_err(|e| Error::io("cannot copy", &p, e))?;
        }
    }
    Ok(start.elapsed().as_secs_f64())
}

/// The capability probe's snapshot: fill a data directory, copy it, verify, clean up.
pub fn probe(mountpoint: &Path, job: SnapshotJob<'_>) -> Result<f64> {
    let data = mountpoint.join("fake-data");
    let snap = mountpoint.join("fake-snap");
    std::fs::create_dir_all(&data).map_err(|e| Error::io("cannot create", &data, e))?;
    (job.fill)(&data)?;
    let seconds = copy_tree(&data, &snap)?;
    (job.verify)(&data, &snap)?;
    for d in [&snap, &data] {
        std::fs::remove_dir_all(d).map_err(|e| Error::io("cannot remove", d, e))?;
    }
    Ok(seconds)
}

/// Its backup copies (`Copies::Own`).
pub struct Copies;

/// The instance its capabilities name.
pub static COPIES: Copies = Copies;

impl Copier for Copies {
    fn create(&self, dir: &Path, _: &Path, _: Duration) -> Result<Box<dyn Tree>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
        Ok(Box::new(CopiedTree(dir.to_path_buf())))
    }
}

/// A tree whose copies are plain copies.
struct CopiedTree(PathBuf);

impl Tree for CopiedTree {
    fn snapshot(&self, _name: &str, path: &Path) -> Result<f64> {
        copy_tree(&self.0, path)
    }
    /// The copy's own bytes: it shares nothing with the tree.
    fn space(&self, snap: &Snap) -> Result<u64> {
        let mut n = 0;
        for e in
            std::fs::read_dir(&snap.path).map_err(|e| Error::io("cannot list", &snap.path, e))?
        {
            let e = e.map_err(|e| Error::io("cannot list", &snap.path, e))?;
            n += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
        Ok(n)
    }
    fn send(&self, _: &Snap, _: Option<&Snap>, _: &Path, _: &Path) -> Result<(f64, f64)> {
        Err(Error::Other("the recipe's fake has no send stream".into()))
    }
    fn delete(&self, snap: &Snap) -> Result<()> {
        std::fs::remove_dir_all(&snap.path).map_err(|e| Error::io("cannot remove", &snap.path, e))
    }
    fn remove(self: Box<Self>) -> Result<()> {
        std::fs::remove_dir_all(&self.0).map_err(|e| Error::io("cannot remove", &self.0, e))
    }
}
