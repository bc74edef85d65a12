//! Thin, checked wrappers over the kernel interfaces the probes need: FICLONE, FIEMAP,
//! LOOP_SET_CAPACITY, BLKFLSBUF, BLKGETSIZE64, statvfs and aligned O_DIRECT buffers.
//!
//! They live apart from the probes so every `unsafe` block sits in one small, reviewed file.

use crate::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Re-read the backing file's size after it grew.
const LOOP_SET_CAPACITY: libc::c_ulong = 0x4C07;
/// Flush and invalidate the block device's buffer cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;
/// Device size in bytes.
/// Flush dirty data before mapping, so delayed allocation has placed the blocks.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// The extent's data is compressed (or otherwise encoded) on disk.
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x8;
/// The extent is not block aligned or lives inside metadata (inline/tail data).
pub const FIEMAP_EXTENT_NOT_ALIGNED: u32 = 0x100;
/// The data lives inside a metadata block.
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x200;
/// The extent is shared with another file (reflink, snapshot).
pub const FIEMAP_EXTENT_SHARED: u32 = 0x2000;
/// The physical location is not known (delalloc or a virtual mapping).
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x2;

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

/// One extent as FIEMAP reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file, bytes.
    pub logical: u64,
    /// Offset on the filesystem's device as the filesystem sees it (btrfs: its logical address).
    pub physical: u64,
    /// Length, bytes.
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// Map a file's extents with FS_IOC_FIEMAP (synced first). `Ok(None)` when unsupported.
pub fn fiemap(file: &File, path: &Path) -> Result<Option<Vec<Extent>>> {
    const BATCH: usize = 256;
    #[repr(C)]
    struct Request {
        head: FiemapHeader,
        extents: [FiemapExtent; BATCH],
    }
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        let mut req = Request {
            head: FiemapHeader {
                fm_start: start,
                fm_length: u64::MAX - start,
                fm_flags: FIEMAP_FLAG_SYNC,
                fm_mapped_extents: 0,
                fm_extent_count: BATCH as u32,
                fm_reserved: 0,
            },
            extents: [FiemapExtent::default(); BATCH],
        };
        // SAFETY: `req` is a correctly laid out struct fiemap with room for BATCH extents.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, &mut req) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::ENOSYS | libc::EINVAL) => Ok(None),
                _ => Err(Error::io("FIEMAP on", path, err)),
            };
        }
        let n = req.head.fm_mapped_extents as usize;
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &req.extents[..n.min(BATCH)] {
            out.push(Extent {
                logical: e.fe_logical,
                physical: e.fe_physical,
                length: e.fe_length,
                flags: e.fe_flags,
            });
            last |= e.fe_flags & 0x1 != 0;
            start = e.fe_logical + e.fe_length;
        }
        if last || n < BATCH {
            break;
        }
    }
    Ok(Some(out))
}

/// Tell a loop device that its backing file changed size.
pub fn loop_set_capacity(dev: &Path) -> Result<()> {
    let f = File::open(dev).map_err(|e| Error::io("cannot open", dev, e))?;
    // SAFETY: LOOP_SET_CAPACITY takes no argument.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_SET_CAPACITY as _, 0) };
    if rc != 0 {
        return Err(Error::io(
            "LOOP_SET_CAPACITY on",
            dev,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Flush and drop a block device's buffer cache so later reads see the medium.
pub fn blkflsbuf(dev: &File, path: &Path) -> Result<()> {
    // SAFETY: BLKFLSBUF takes no argument.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), BLKFLSBUF as _, 0) };
    if rc != 0 {
        return Err(Error::io(
            "BLKFLSBUF on",
            path,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
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

/// A heap buffer aligned for O_DIRECT.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: the buffer is uniquely owned heap memory.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes aligned to 4096.
    pub fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(4096), 4096).expect("layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len, layout }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
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
    fn struct_layout_matches_kernel() {
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(std::mem::size_of::<FiemapHeader>(), 32);
    }

    #[test]
    fn aligned_buffer_is_aligned() {
        let b = AlignedBuf::new(8192);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        assert_eq!(b.len(), 8192);
    }
}
