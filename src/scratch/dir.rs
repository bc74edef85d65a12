//! `--dir PATH`: an existing mounted directory. No mkfs; fsbench works only inside its own
//! subdirectory `PATH/fsbench-<pid>` and removes it afterwards.

use super::Target;
use crate::results::TargetInfo;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// fsbench's private subdirectory of the user's directory. Dropping it removes it.
#[derive(Debug)]
pub struct DirTarget {
    parent: PathBuf,
    work: PathBuf,
}

impl DirTarget {
    /// Check `path` and create `path/fsbench-<pid>` in it.
    pub fn acquire(path: &Path) -> Result<Self> {
        let md = std::fs::metadata(path).map_err(|e| {
            Error::invalid(
                "--dir",
                format!(
                    "{} cannot be used: {e}; pass an existing directory on the filesystem to test",
                    path.display()
                ),
            )
        })?;
        if !md.is_dir() {
            return Err(Error::invalid(
                "--dir",
                format!(
                    "{} is not a directory; pass a directory on the filesystem to test \
                     (use --device for a block device)",
                    path.display()
                ),
            ));
        }
        let parent =
            std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
        let pid = std::process::id();
        let mut n = 0u32;
        let work = loop {
            let name = if n == 0 {
                format!("fsbench-{pid}")
            } else {
                format!("fsbench-{pid}-{n}")
            };
            let w = parent.join(name);
            match std::fs::create_dir(&w) {
                Ok(()) => break w,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => {
                    return Err(Error::invalid(
                        "--dir",
                        format!(
                            "cannot create fsbench's work directory {}: {e}; pass a directory \
                             you can write to",
                            w.display()
                        ),
                    ));
                }
            }
        };
        Ok(DirTarget { parent, work })
    }
}

impl Target for DirTarget {
    fn info(&self) -> TargetInfo {
        let mut info = TargetInfo {
            kind: "dir".into(),
            path: self.parent.display().to_string(),
            ..Default::default()
        };
        if let Ok(sv) = rustix::fs::statvfs(&self.parent) {
            info.size_bytes = sv.f_blocks * sv.f_frsize;
            info.extra.insert(
                "available_bytes".into(),
                (sv.f_bavail * sv.f_frsize).to_string(),
            );
        }
        info.extra
            .insert("work_dir".into(), self.work.display().to_string());
        if let Some(m) = crate::host::mountinfo::read()
            .ok()
            .and_then(|m| crate::host::mountinfo::containing(&m, &self.parent))
        {
            info.extra.insert("fs_type".into(), m.fs_type.clone());
            info.extra.insert("mount_source".into(), m.source.clone());
            info.extra.insert("mount_options".into(), m.all_options());
            if m.dev.major != 0
                && let Some(f) = crate::host::sysfs::queue_facts(m.dev)
            {
                info.extra.insert("kernel_name".into(), f.name);
                info.extra.insert("device_number".into(), m.dev.to_string());
                info.model = f.model;
                info.rotational = f.rotational;
                info.scheduler = f.scheduler;
                info.logical_block_size = f.logical_block_size;
            }
        }
        info
    }

    fn block_device(&self) -> Option<&Path> {
        None
    }

    fn directory(&self) -> Option<&Path> {
        Some(&self.work)
    }

    fn check_identity(&self) -> Result<()> {
        if self.work.is_dir() {
            Ok(())
        } else {
            Err(Error::Other(format!(
                "fsbench's work directory {} disappeared",
                self.work.display()
            )))
        }
    }

    fn discard(&self) -> Result<bool> {
        Ok(false)
    }
}

impl Drop for DirTarget {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.work)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!(
                "fsbench: warning: cannot remove {}: {e}",
                self.work.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn works_in_own_subdir_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("user-file"), b"keep").unwrap();
        let t = DirTarget::acquire(d.path()).unwrap();
        let w = t.directory().unwrap().to_path_buf();
        assert!(w.starts_with(std::fs::canonicalize(d.path()).unwrap()));
        std::fs::write(w.join("x"), b"data").unwrap();
        assert_eq!(t.info().kind, "dir");
        drop(t);
        assert!(!w.exists());
        assert_eq!(std::fs::read(d.path().join("user-file")).unwrap(), b"keep");

        let e = DirTarget::acquire(&d.path().join("user-file")).unwrap_err();
        assert!(e.to_string().starts_with("--dir: "), "{e}");
        assert!(e.to_string().contains("is not a directory"), "{e}");
        let e = DirTarget::acquire(&d.path().join("missing")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
