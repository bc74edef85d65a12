//! `fsbench io --filename PATH`: the user's own file or block device, which the plan's one
//! I/O job names itself. Nothing is made, formatted, discarded or removed: the runner works
//! in the directory holding the file and creates nothing there (the job lays out or writes
//! the file exactly as `fsbench io` always did).

use super::Target;
use crate::results::TargetInfo;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The file or device a job names, adopted as it is. Dropping it removes nothing.
#[derive(Debug)]
pub struct FileTarget {
    /// The path as the user gave it.
    path: PathBuf,
    /// The directory holding it (`.` for a bare name): where the runner's steps stand.
    parent: PathBuf,
    /// Whether `path` is a block device (then it may be preconditioned, never formatted).
    device: bool,
}

impl FileTarget {
    /// Adopt `path`: its directory must exist (the job creates the file itself when it is
    /// missing, as `fsbench io` does).
    pub fn acquire(path: &Path) -> Result<Self> {
        let parent = crate::engine::validate::directory_of(path);
        if !parent.is_dir() {
            return Err(Error::invalid(
                "--filename",
                format!("{} is not an existing directory", parent.display()),
            ));
        }
        Ok(FileTarget {
            device: is_block_device(path),
            path: path.to_path_buf(),
            parent,
        })
    }
}

/// Whether `path` is a block device (a missing path is not).
pub fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

impl Target for FileTarget {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            kind: if self.device { "device" } else { "file" }.into(),
            path: self.path.display().to_string(),
            ..Default::default()
        }
    }

    /// The device the job names, so that the runner can precondition it when the plan asks
    /// (`--precondition`); the kind never formats ([`super::TargetKind::formats`]).
    fn block_device(&self) -> Option<&Path> {
        self.device.then_some(self.path.as_path())
    }

    fn directory(&self) -> Option<&Path> {
        Some(&self.parent)
    }

    fn check_identity(&self) -> Result<()> {
        if self.device && !is_block_device(&self.path) {
            return Err(Error::Other(format!(
                "{} is no longer a block device",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Never: the file or device is the user's, kept as it is.
    fn discard(&self) -> Result<bool> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adopts_a_file_and_makes_or_removes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("data");
        let t = FileTarget::acquire(&f).unwrap();
        assert_eq!(t.directory(), Some(d.path()));
        assert_eq!(t.block_device(), None);
        assert_eq!(t.info().kind, "file");
        assert!(!t.discard().unwrap());
        drop(t);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);

        let e = FileTarget::acquire(&d.path().join("no/such/f")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let bare = FileTarget::acquire(Path::new("f")).unwrap();
        assert_eq!(bare.directory(), Some(Path::new(".")));
    }
}
