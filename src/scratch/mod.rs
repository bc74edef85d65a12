//! Where the filesystems live: an image on a loop device, a scratch block device, or a directory.
//!
//! Each target is an RAII guard: dropping it detaches the loop device and deletes the image,
//! or removes fsbench's subdirectory, so an error or Ctrl-C leaves nothing behind.

pub mod block;
pub mod consent;
pub mod dir;
pub mod file;
pub mod fileloop;
pub mod image;
pub mod multi;
pub mod parse;
pub mod safety;

use crate::results::TargetInfo;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

/// How the user chose the target. Serializable because `OUT/plan.json` keeps it for `--resume`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A sparse image file on a loop device with direct I/O (the default).
    Image {
        /// Directory holding the image.
        scratch_dir: PathBuf,
        /// Image size in bytes.
        size: u64,
        /// Keep the image file afterwards.
        keep: bool,
    },
    /// A real scratch block device, wiped.
    Device {
        /// The device path.
        path: PathBuf,
        /// Wipe even when it carries a signature.
        force_wipe: bool,
    },
    /// An existing mounted directory: no mkfs.
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// An existing file or block device that the plan's one I/O job names itself
    /// (`fsbench io`): no mkfs, and nothing of fsbench's is made beside it.
    File {
        /// The file or device.
        path: PathBuf,
    },
}

impl TargetKind {
    /// Whether filesystems are created (image/device) or the directory is used as it is.
    pub fn formats(&self) -> bool {
        !matches!(self, TargetKind::Dir { .. } | TargetKind::File { .. })
    }

    /// Whether the runner works beside the user's own file, as `fsbench io` always ran its
    /// job: nothing of fsbench's made there (no data directory), no doctor diagnosis or tool
    /// versions before it (a [`TargetKind::File`]).
    pub fn in_place(&self) -> bool {
        matches!(self, TargetKind::File { .. })
    }

    /// One line for the plan printout.
    pub fn describe(&self) -> String {
        match self {
            TargetKind::Image {
                scratch_dir, size, ..
            } => format!(
                "{} sparse image in {} on a loop device (direct I/O)",
                crate::units::format_size(*size),
                scratch_dir.display()
            ),
            TargetKind::Device { path, .. } => format!("block device {} (wiped)", path.display()),
            TargetKind::Dir { path } => format!("directory {} (no mkfs)", path.display()),
            TargetKind::File { path } => format!("{} as it is (no mkfs)", path.display()),
        }
    }
}

/// An acquired target. Dropping it releases everything it holds (loop device, image).
pub trait Target: Send {
    /// Provenance.
    fn info(&self) -> TargetInfo;
    /// The block device to format, if this target has one.
    fn block_device(&self) -> Option<&Path>;
    /// Every block device of the target, the first being [`Target::block_device`]: one for
    /// a single image or device, several for `--images N` or repeated `--device`.
    fn block_devices(&self) -> Vec<PathBuf> {
        self.block_device()
            .map(Path::to_path_buf)
            .into_iter()
            .collect()
    }
    /// The directory to work in, for `dir` targets.
    fn directory(&self) -> Option<&Path>;
    /// Re-check that the device is still the one we checked (device number, size).
    fn check_identity(&self) -> crate::Result<()>;
    /// Discard the whole device; `Ok(false)` when discard is unsupported.
    fn discard(&self) -> crate::Result<bool>;
    /// Change the device's size (the resize probe grows a filesystem into new space).
    /// Only image targets can; the new size becomes the one `check_identity` expects.
    fn resize(&mut self, new_size: u64) -> crate::Result<()> {
        let _ = new_size;
        Err(crate::Error::Other(format!(
            "a {} target cannot be resized",
            self.info().kind
        )))
    }
}

/// Acquire a target. For devices, `yes` is the consent to wipe; without it the device name
/// must be typed on the terminal ([`consent::confirm`]).
///
/// For a device every safety check runs here, before anything is written; the returned
/// target re-checks its identity before each destructive step (`check_identity`).
pub fn acquire(kind: &TargetKind, yes: bool) -> crate::Result<Box<dyn Target>> {
    Ok(match kind {
        TargetKind::Image {
            scratch_dir,
            size,
            keep,
        } => Box::new(image::ImageTarget::acquire(scratch_dir, *size, *keep)?),
        TargetKind::Device { path, force_wipe } => {
            Box::new(block::BlockTarget::acquire(path, *force_wipe, yes)?)
        }
        TargetKind::Dir { path } => Box::new(dir::DirTarget::acquire(path)?),
        TargetKind::File { path } => Box::new(file::FileTarget::acquire(path)?),
    })
}

/// Size in bytes of a block device or regular file (what a filesystem on it can use).
pub fn size_of(path: &Path) -> crate::Result<u64> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(path).map_err(|e| crate::Error::io("cannot stat", path, e))?;
    if md.file_type().is_block_device() {
        let f = std::fs::File::open(path).map_err(|e| crate::Error::io("cannot open", path, e))?;
        crate::host::sys::device_size(f.as_fd())
            .map_err(|e| crate::Error::io("cannot size", path, e))
    } else {
        Ok(md.len())
    }
}

/// Whether BLKDISCARD worked, once tried (shared by image and device targets).
#[derive(Debug, Default)]
pub(crate) struct DiscardState(AtomicU8);

impl DiscardState {
    fn set(&self, ok: bool) {
        self.0.store(if ok { 2 } else { 1 }, Ordering::Relaxed);
    }

    fn get(&self) -> Option<bool> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            v => Some(v == 2),
        }
    }
}
