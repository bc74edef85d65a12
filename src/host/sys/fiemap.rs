//! FS_IOC_FIEMAP: a file's extents as the filesystem maps them (the probes' reflink and
//! corruption checks). The request structs are `<linux/fiemap.h>`'s, which libc does not export.

use crate::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_matches_kernel() {
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(std::mem::size_of::<FiemapHeader>(), 32);
    }
}
