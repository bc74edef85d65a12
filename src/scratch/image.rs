//! The default target: a sparse image file on a loop device with direct I/O.
//!
//! Direct I/O keeps the host page cache from flattering the numbers (every guest write would
//! otherwise land in RAM first). Autoclear means a crash of fsbench still frees the loop device
//! once the last user closes it; the guard detaches explicitly and deletes the image.

use super::block::{device_info, discard_whole};
use super::{DiscardState, Target};
use crate::host::ledger::{self, Held, Item};
use crate::host::sys::{self as ioctl, LO_FLAGS_AUTOCLEAR, LO_FLAGS_DIRECT_IO, LoopConfig};
use crate::host::sysfs::{self, DevNum};
use crate::results::TargetInfo;
use crate::{Error, Result};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A loop-attached image. Dropping it detaches the loop device and deletes the image
/// (unless `keep`).
#[derive(Debug)]
pub struct ImageTarget {
    image: PathBuf,
    image_id: (u64, u64),
    keep: bool,
    size: u64,
    loop_path: PathBuf,
    loop_file: Option<File>,
    dev: DevNum,
    direct_io: bool,
    block_size: u32,
    method: &'static str,
    backing_fs: String,
    warning: Option<String>,
    discard: DiscardState,
    /// Ledger entries, dropped after the loop device is detached / the image deleted.
    held_loop: Option<Held>,
    held_image: Option<Held>,
}

/// Deletes a freshly created image if anything fails before the target is complete.
struct ImageFileGuard(Option<PathBuf>);

impl Drop for ImageFileGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Whether the scratch directory lives in RAM (its filesystem's name), and its free bytes.
fn scratch_fs(dir: &Path) -> io::Result<(Option<&'static str>, u64)> {
    let in_ram = crate::host::sys::ram_fs_name(dir)?;
    let free = crate::host::sys::available_bytes(dir).ok_or_else(io::Error::last_os_error)?;
    Ok((in_ram, free))
}

impl ImageTarget {
    /// Create the image in `scratch_dir` and attach it.
    pub fn acquire(scratch_dir: &Path, size: u64, keep: bool) -> Result<Self> {
        let md = std::fs::metadata(scratch_dir).map_err(|e| {
            Error::invalid(
                "--scratch-dir",
                format!(
                    "{} cannot be used: {e}; create it or pick another directory",
                    scratch_dir.display()
                ),
            )
        })?;
        if !md.is_dir() {
            return Err(Error::invalid(
                "--scratch-dir",
                format!("{} is not a directory", scratch_dir.display()),
            ));
        }
        // Loop devices need whole 4 KiB blocks for a 4096-byte logical block size.
        let size = size.div_ceil(4096) * 4096;
        if size < 1 << 20 {
            return Err(Error::invalid(
                "--image-size",
                format!(
                    "{} is too small for any filesystem; use at least 64M",
                    crate::units::format_size(size)
                ),
            ));
        }
        let (in_ram, free) = scratch_fs(scratch_dir)
            .map_err(|e| Error::io("cannot statfs --scratch-dir", scratch_dir, e))?;
        if size > free {
            return Err(Error::invalid(
                "--image-size",
                format!(
                    "a {} image does not fit in --scratch-dir {} ({} free); use a smaller \
                     --image-size or another --scratch-dir",
                    crate::units::format_size(size),
                    scratch_dir.display(),
                    crate::units::format_size(free)
                ),
            ));
        }
        let backing_fs = crate::host::mountinfo::read()
            .ok()
            .and_then(|m| crate::host::mountinfo::containing(&m, scratch_dir))
            .map(|e| e.fs_type)
            .unwrap_or_default();
        let warning = in_ram.map(|fs| {
            format!(
                "--scratch-dir {} is on {fs}: the image lives in RAM, so the numbers measure \
                 memory, not a disk; use --scratch-dir on a real disk (default /var/tmp)",
                scratch_dir.display(),
            )
        });
        if let Some(w) = &warning {
            eprintln!("fsbench: warning: {w}");
        }

        let (image, file, held_image) = create_image(scratch_dir, size, !keep)?;
        let mut guard = ImageFileGuard(Some(image.clone()));
        let fmd = file
            .metadata()
            .map_err(|e| Error::io("cannot stat", &image, e))?;
        let image_id = (fmd.dev(), fmd.ino());
        // Recorded before attaching; which device the kernel hands out is filled in after.
        let loop_item = |device: Option<PathBuf>| Item::Loop {
            device,
            image: image.clone(),
            image_id,
        };
        let held_loop = ledger::hold(loop_item(None))?;
        let att = attach(&file).map_err(|e| match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => Error::refused(
                "/dev/loop-control",
                "attaching the image to a loop device needs root; run fsbench as root, or use \
                 --dir PATH to test an existing directory",
            ),
            _ => Error::io("cannot attach a loop device to", &image, e),
        })?;
        drop(file);
        held_loop.set(loop_item(Some(att.path.clone())))?;
        let dev = {
            let md =
                std::fs::metadata(&att.path).map_err(|e| Error::io("cannot stat", &att.path, e))?;
            DevNum::from_dev(md.rdev())
        };
        let sys = dev.sysfs_dir();
        let direct_io = sys
            .as_deref()
            .and_then(|s| sysfs::read_attr(s, "loop/dio"))
            .map(|v| v == "1")
            .unwrap_or(false);
        if !direct_io {
            eprintln!(
                "fsbench: warning: direct I/O could not be enabled on {} (the filesystem of \
                 --scratch-dir {} refused it); the host page cache will flatter the results",
                att.path.display(),
                scratch_dir.display()
            );
        }
        guard.0 = None;
        Ok(ImageTarget {
            image,
            image_id,
            keep,
            size,
            loop_path: att.path,
            loop_file: Some(att.file),
            dev,
            direct_io,
            block_size: att.block_size,
            method: att.method,
            backing_fs,
            warning,
            discard: DiscardState::default(),
            held_loop: Some(held_loop),
            held_image,
        })
    }

    /// The image file.
    pub fn image_path(&self) -> &Path {
        &self.image
    }

    /// Whether the loop device does direct I/O on the image.
    pub fn direct_io(&self) -> bool {
        self.direct_io
    }
}

static IMAGE_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Create a sparse image; with `record`, it is in the ledger (name first, then its inode) so
/// recovery deletes it after a crash. A kept image (`--keep-image`) is not recorded.
fn create_image(dir: &Path, size: u64, record: bool) -> Result<(PathBuf, File, Option<Held>)> {
    loop {
        let n = IMAGE_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("fsbench-{}-{n}.img", std::process::id()));
        let held = if record {
            Some(ledger::hold(Item::Image {
                path: path.clone(),
                id: None,
            })?)
        } else {
            None
        };
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => {
                if let (Some(h), Ok(md)) = (&held, f.metadata()) {
                    let item = Item::Image {
                        path: path.clone(),
                        id: Some((md.dev(), md.ino())),
                    };
                    if let Err(e) = h.set(item) {
                        let _ = std::fs::remove_file(&path);
                        return Err(e);
                    }
                }
                if let Err(e) = f.set_len(size) {
                    let _ = std::fs::remove_file(&path);
                    return Err(Error::io("cannot size the image", &path, e));
                }
                return Ok((path, f, held));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("cannot create the image", &path, e)),
        }
    }
}

/// An attached loop device.
pub(super) struct Attached {
    pub(super) path: PathBuf,
    pub(super) file: File,
    block_size: u32,
    method: &'static str,
}

fn open_loop(path: &Path) -> io::Result<File> {
    // devtmpfs creates the node when GET_FREE adds a device; give udev-less hosts a moment.
    let mut tries = 0;
    loop {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
        {
            Err(e) if e.kind() == io::ErrorKind::NotFound && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// Find a free loop device and bind `backing` to it. Another process may grab the same free
/// device between GET_FREE and configure (EBUSY): then ask again.
pub(super) fn attach(backing: &File) -> io::Result<Attached> {
    attach_with(backing, false)
}

fn attach_with(backing: &File, legacy_only: bool) -> io::Result<Attached> {
    let ctl = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open("/dev/loop-control")?;
    let mut last = io::Error::from_raw_os_error(libc::EBUSY);
    for _ in 0..64 {
        let n = ioctl::ioctl_int(ctl.as_fd(), ioctl::LOOP_CTL_GET_FREE, 0)?;
        let path = PathBuf::from(format!("/dev/loop{n}"));
        let dev = match open_loop(&path) {
            Ok(f) => f,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let r = if legacy_only {
            legacy_configure(&dev, backing)
        } else {
            configure(&dev, backing)
        };
        match r {
            Ok((block_size, method)) => {
                return Ok(Attached {
                    path,
                    file: dev,
                    block_size,
                    method,
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                last = e;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

fn configure(dev: &File, backing: &File) -> io::Result<(u32, &'static str)> {
    // Preferred first: 4 KiB blocks with direct I/O; each EINVAL drops one wish.
    let tries = [
        (4096, LO_FLAGS_DIRECT_IO),
        (0, LO_FLAGS_DIRECT_IO),
        (4096, 0),
        (0, 0),
    ];
    for (bs, dio) in tries {
        let mut cfg = LoopConfig {
            fd: backing.as_raw_fd() as u32,
            block_size: bs,
            ..Default::default()
        };
        cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | dio;
        match ioctl::loop_configure(dev.as_fd(), &cfg) {
            Ok(()) => {
                let bs = if bs == 0 { 512 } else { bs };
                return Ok((bs, "LOOP_CONFIGURE"));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => break,
            Err(e) => return Err(e),
        }
    }
    legacy_configure(dev, backing)
}

/// Kernels before 5.8 (or ones refusing LOOP_CONFIGURE): attach, then set flags one by one.
fn legacy_configure(dev: &File, backing: &File) -> io::Result<(u32, &'static str)> {
    ioctl::ioctl_int(
        dev.as_fd(),
        ioctl::LOOP_SET_FD,
        backing.as_raw_fd() as libc::c_ulong,
    )?;
    let info = ioctl::LoopInfo64 {
        lo_flags: LO_FLAGS_AUTOCLEAR,
        ..Default::default()
    };
    if let Err(e) = ioctl::loop_set_status(dev.as_fd(), &info) {
        let _ = ioctl::ioctl_int(dev.as_fd(), ioctl::LOOP_CLR_FD, 0);
        return Err(e);
    }
    let bs = match ioctl::ioctl_int(dev.as_fd(), ioctl::LOOP_SET_BLOCK_SIZE, 4096) {
        Ok(_) => 4096,
        Err(_) => 512,
    };
    let _ = ioctl::ioctl_int(dev.as_fd(), ioctl::LOOP_SET_DIRECT_IO, 1);
    Ok((bs, "LOOP_SET_FD"))
}

impl Target for ImageTarget {
    fn info(&self) -> TargetInfo {
        let mut info = device_info("image", &self.image, self.dev, self.size);
        if info.model.is_empty() {
            info.model = format!("loop device on an image file ({})", self.backing_fs);
        }
        if let Some(d) = self.discard.get() {
            info.discard_supported = Some(d);
        }
        let x = &mut info.extra;
        x.insert("loop_device".into(), self.loop_path.display().to_string());
        x.insert("direct_io".into(), self.direct_io.to_string());
        x.insert("loop_block_size".into(), self.block_size.to_string());
        x.insert("attach".into(), self.method.to_string());
        x.insert("backing_fs".into(), self.backing_fs.clone());
        if let Some(w) = &self.warning {
            x.insert("warning".into(), w.clone());
        }
        info
    }

    fn block_device(&self) -> Option<&Path> {
        Some(&self.loop_path)
    }

    fn directory(&self) -> Option<&Path> {
        None
    }

    fn check_identity(&self) -> Result<()> {
        super::block::verify_identity(&self.loop_path, self.dev, self.size)?;
        let f = self.loop_file.as_ref().expect("loop fd held until drop");
        let st = ioctl::loop_get_status(f.as_fd())
            .map_err(|e| Error::io("cannot query", &self.loop_path, e))?;
        if (st.lo_device, st.lo_inode) != self.image_id {
            return Err(Error::refused(
                &self.loop_path,
                format!(
                    "it is no longer backed by {}; stopping before anything is written",
                    self.image.display()
                ),
            ));
        }
        Ok(())
    }

    fn discard(&self) -> Result<bool> {
        self.check_identity()?;
        // On a loop device this punches holes in the image, keeping it sparse between rounds.
        let ok = discard_whole(&self.loop_path, self.size)?;
        self.discard.set(ok);
        Ok(ok)
    }

    fn resize(&mut self, new_size: u64) -> Result<()> {
        self.check_identity()?;
        let new_size = new_size.div_ceil(4096) * 4096;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.image)
            .map_err(|e| Error::io("cannot open", &self.image, e))?;
        f.set_len(new_size)
            .map_err(|e| Error::io("cannot resize", &self.image, e))?;
        let lf = self.loop_file.as_ref().expect("loop fd held until drop");
        ioctl::ioctl_int(lf.as_fd(), ioctl::LOOP_SET_CAPACITY, 0)
            .map_err(|e| Error::io("LOOP_SET_CAPACITY failed on", &self.loop_path, e))?;
        let now = ioctl::device_size(lf.as_fd())
            .map_err(|e| Error::io("cannot size", &self.loop_path, e))?;
        self.size = now;
        if now != new_size {
            return Err(Error::Other(format!(
                "{} is {now} bytes after resizing its image to {new_size}",
                self.loop_path.display()
            )));
        }
        Ok(())
    }
}

impl Drop for ImageTarget {
    fn drop(&mut self) {
        if let Some(f) = self.loop_file.take() {
            // With other openers left (a mount that failed to go away), the kernel turns
            // this into autoclear-on-last-close instead of failing.
            if let Err(e) = ioctl::ioctl_int(f.as_fd(), ioctl::LOOP_CLR_FD, 0)
                && e.raw_os_error() != Some(libc::ENXIO)
            {
                crate::host::stdio::note(&format!(
                    "fsbench: warning: cannot detach {}: {e}",
                    self.loop_path.display()
                ));
                // Left in the ledger: the next fsbench detaches it if it still backs the image.
                if let Some(h) = self.held_loop.take() {
                    h.keep();
                }
            }
        }
        drop(self.held_loop.take());
        if self.keep {
            crate::host::stdio::note(&format!("fsbench: kept the image {}", self.image.display()));
        } else if let Err(e) = std::fs::remove_file(&self.image) {
            crate::host::stdio::note(&format!(
                "fsbench: warning: cannot delete the image {}: {e}",
                self.image.display()
            ));
            if let Some(h) = self.held_image.take() {
                h.keep();
            }
        }
        drop(self.held_image.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LOOP_SET_FD fallback still gives autoclear, 4 KiB blocks and direct I/O.
    #[test]
    fn legacy_attach_path() {
        if !rustix::process::geteuid().is_root() || !Path::new("/dev/loop-control").exists() {
            println!("skipped: legacy loop attach needs root and loop devices");
            return;
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let (path, file, _held) = create_image(dir.path(), 16 << 20, false).unwrap();
        let att = attach_with(&file, true).unwrap();
        drop(file);
        assert_eq!(att.method, "LOOP_SET_FD");
        let name = att.path.file_name().unwrap().to_str().unwrap().to_string();
        let sys = PathBuf::from("/sys/block").join(&name);
        let st = ioctl::loop_get_status(att.file.as_fd()).unwrap();
        assert_ne!(st.lo_flags & LO_FLAGS_AUTOCLEAR, 0);
        assert_eq!(
            sysfs::read_attr(&sys, "queue/logical_block_size").unwrap(),
            "4096"
        );
        assert_eq!(sysfs::read_attr(&sys, "loop/dio").unwrap(), "1");
        assert_eq!(att.block_size, 4096);
        // Autoclear: closing the last descriptor detaches the device.
        drop(att);
        std::thread::sleep(Duration::from_millis(100));
        assert!(sysfs::read_attr(&sys, "loop/backing_file").is_none());
        std::fs::remove_file(path).unwrap();
    }
}
