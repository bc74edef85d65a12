//! Where the filesystems live: an image on a loop device, a scratch block device, or a directory.

use crate::results::TargetInfo;
use std::path::{Path, PathBuf};

/// How the user chose the target.
#[derive(Debug, Clone, PartialEq)]
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
    Dir(PathBuf),
}

/// An acquired target. Dropping it releases everything it holds (loop device, image).
pub trait Target: Send {
    /// Provenance.
    fn info(&self) -> TargetInfo;
    /// The block device to format, if this target has one.
    fn block_device(&self) -> Option<&Path>;
    /// The directory to work in, for `dir` targets.
    fn directory(&self) -> Option<&Path>;
    /// Re-check that the device is still the one we checked (device number, size).
    fn check_identity(&self) -> crate::Result<()>;
    /// Discard the whole device; `Ok(false)` when discard is unsupported.
    fn discard(&self) -> crate::Result<bool>;
}

/// Acquire a target. `yes` skips the interactive confirmation for devices.
pub fn acquire(kind: &TargetKind, yes: bool) -> crate::Result<Box<dyn Target>> {
    let _ = (kind, yes);
    todo!("target::acquire")
}
