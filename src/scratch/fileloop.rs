//! A loop device in direct-I/O mode over a file fsbench does not own as an image (the crash
//! recorder's FUSE-served file): detached on drop, the file left alone.

use super::image::attach;
use crate::host::ledger::{self, Held, Item};
use crate::host::sys as ioctl;
use crate::{Error, Result};
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// An attached loop device over a file.
#[derive(Debug)]
pub struct FileLoop {
    path: PathBuf,
    file: Option<File>,
    held: Option<Held>,
}

impl FileLoop {
    /// Attach `backing` to a free loop device; with `require_direct_io`, a device the kernel
    /// would not give direct I/O is detached again and refused (buffered, it would reorder
    /// writes through the host page cache).
    pub fn attach(backing: &Path, require_direct_io: bool) -> Result<FileLoop> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(backing)
            .map_err(|e| Error::io("cannot open", backing, e))?;
        let md = file
            .metadata()
            .map_err(|e| Error::io("cannot stat", backing, e))?;
        let item = |device: Option<PathBuf>| Item::Loop {
            device,
            image: backing.to_path_buf(),
            image_id: (md.dev(), md.ino()),
        };
        let held = ledger::hold(item(None))?;
        let att =
            attach(&file).map_err(|e| Error::io("cannot attach a loop device to", backing, e))?;
        drop(file);
        let mut me = FileLoop {
            path: att.path.clone(),
            file: Some(att.file),
            held: Some(held),
        };
        me.held
            .as_ref()
            .expect("just set")
            .set(item(Some(me.path.clone())))?;
        let name = me
            .path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let dio = crate::host::sysfs::read_attr(&Path::new("/sys/block").join(name), "loop/dio")
            .is_some_and(|v| v == "1");
        if require_direct_io && !dio {
            let dev = std::mem::take(&mut me.path);
            drop(me);
            return Err(Error::Other(format!(
                "the kernel would not enable direct I/O on {} over {}; without it the write log \
                 records the host page cache's order, not the device's",
                dev.display(),
                backing.display()
            )));
        }
        Ok(me)
    }

    /// The loop device (`/dev/loopN`).
    pub fn device(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLoop {
    fn drop(&mut self) {
        if let Some(f) = self.file.take()
            && let Err(e) = ioctl::ioctl_int(f.as_fd(), ioctl::LOOP_CLR_FD, 0)
            && e.raw_os_error() != Some(libc::ENXIO)
        {
            crate::host::stdio::note(&format!(
                "fsbench: warning: cannot detach {}: {e}",
                self.path.display()
            ));
            if let Some(h) = self.held.take() {
                h.keep();
            }
        }
        drop(self.held.take());
    }
}
