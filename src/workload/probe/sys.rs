//! Thin, checked wrappers over the kernel interfaces the probes need: FICLONE, FIEMAP,
//! LOOP_SET_CAPACITY, BLKFLSBUF, BLKGETSIZE64, statvfs and aligned O_DIRECT buffers.
//!
//! The raw calls are in [`crate::host::sys`] (FIEMAP in `fiemap.rs`, the aligned buffer in
//! `aligned.rs`, the plain ioctls in `mod.rs`); this file maps their errors to the probes'
//! words and re-exports them, so the probes have no `unsafe`.

use crate::host::sys;
use crate::{Error, Result};
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

pub use crate::host::sys::aligned::AlignedBuf;
pub use crate::host::sys::fiemap::{
    Extent, FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_ENCODED, FIEMAP_EXTENT_NOT_ALIGNED,
    FIEMAP_EXTENT_SHARED, FIEMAP_EXTENT_UNKNOWN, fiemap,
};

/// Result of a FICLONE attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloneOutcome {
    /// The destination now shares the source's extents.
    Cloned,
    /// The filesystem does not implement reflinks (EOPNOTSUPP, EINVAL, EXDEV, ENOTTY).
    Unsupported(i32),
}

/// Clone `src` into `dst` (both open; `dst` writable and empty) with FICLONE.
pub fn ficlone(src: &File, dst: &File, dst_path: &Path) -> Result<CloneOutcome> {
    let err = match rustix::fs::ioctl_ficlone(dst, src) {
        Ok(()) => return Ok(CloneOutcome::Cloned),
        Err(e) => std::io::Error::from(e),
    };
    match err.raw_os_error() {
        Some(
            code @ (libc::EOPNOTSUPP | libc::EINVAL | libc::EXDEV | libc::ENOTTY | libc::ENOSYS),
        ) => Ok(CloneOutcome::Unsupported(code)),
        _ => Err(Error::io("FICLONE into", dst_path, err)),
    }
}

/// Tell a loop device that its backing file changed size.
pub fn loop_set_capacity(dev: &Path) -> Result<()> {
    let f = File::open(dev).map_err(|e| Error::io("cannot open", dev, e))?;
    sys::ioctl_int(f.as_fd(), sys::LOOP_SET_CAPACITY, 0)
        .map(drop)
        .map_err(|e| Error::io("LOOP_SET_CAPACITY on", dev, e))
}

/// Flush and drop a block device's buffer cache so later reads see the medium.
pub fn blkflsbuf(dev: &File, path: &Path) -> Result<()> {
    sys::ioctl_int(dev.as_fd(), sys::BLKFLSBUF, 0)
        .map(drop)
        .map_err(|e| Error::io("BLKFLSBUF on", path, e))
}

/// Size of a block device in bytes.
pub fn device_size(dev: &Path) -> Result<u64> {
    crate::host::sys::device_size_at(dev).map_err(|e| Error::io("BLKGETSIZE64 on", dev, e))
}

/// Total size of the filesystem mounted at `path` (statvfs blocks × fragment size).
pub fn fs_size(path: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(path)
        .map_err(|e| Error::io("cannot statvfs", path, std::io::Error::from(e)))?;
    Ok(st.f_blocks * st.f_frsize)
}

/// The backing file of a loop device (from /sys/block/loopN/loop/backing_file).
pub fn loop_backing_file(dev: &Path) -> Result<PathBuf> {
    let canon = std::fs::canonicalize(dev).map_err(|e| Error::io("cannot resolve", dev, e))?;
    let name = canon
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let sys = PathBuf::from(format!("/sys/block/{name}/loop/backing_file"));
    let text = std::fs::read_to_string(&sys).map_err(|e| {
        Error::io(
            "not a loop device (resize needs an image file behind a loop device); cannot read",
            &sys,
            e,
        )
    })?;
    let path = text.trim_end_matches('\n');
    if path.ends_with(" (deleted)") {
        return Err(Error::refused(
            dev,
            format!(
                "its backing file {path} was unlinked, so it cannot be enlarged; keep the image file while the probe runs"
            ),
        ));
    }
    Ok(PathBuf::from(path))
}

/// Deterministic pseudo-random bytes (splitmix64): unique, incompressible test patterns.
pub fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut state = seed;
    for chunk in buf.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let bytes = z.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_deterministic_and_seed_dependent() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_pattern(&mut a, 7);
        fill_pattern(&mut b, 7);
        assert_eq!(a, b);
        fill_pattern(&mut b, 8);
        assert_ne!(a, b);
    }

    #[test]
    fn aligned_buffer_is_aligned() {
        let b = AlignedBuf::new(8192);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        assert_eq!(b.len(), 8192);
    }
}
