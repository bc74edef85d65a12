//! BTRFS_IOC_TREE_SEARCH: read a subvolume's b-tree items (the compression workload's on-disk
//! size of a file, as `compsize` does). The argument is `struct btrfs_ioctl_search_args`:
//! a 104-byte key, then the result buffer, 4096 bytes in all; callers fill and read it as
//! bytes.

use std::io;
use std::os::fd::AsRawFd;

/// `_IOWR(0x94, 17, struct btrfs_ioctl_search_args)` (4096 bytes).
const BTRFS_IOC_TREE_SEARCH: libc::c_ulong = 0xD000_9411;

/// `struct btrfs_ioctl_search_args` as bytes, aligned like its `u64` fields.
#[repr(C, align(8))]
pub struct SearchArgs(pub [u8; 4096]);

impl Default for SearchArgs {
    fn default() -> Self {
        SearchArgs([0; 4096])
    }
}

/// Run one tree search on the subvolume holding `f`; the kernel rewrites `args` in place.
pub fn tree_search(f: &std::fs::File, args: &mut SearchArgs) -> io::Result<()> {
    // SAFETY: `args` is the 4096 bytes BTRFS_IOC_TREE_SEARCH reads and writes, 8-aligned.
    let rc = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            BTRFS_IOC_TREE_SEARCH as _,
            args.0.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
