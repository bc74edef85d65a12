//! `FS_IOC_SHUTDOWN`: a filesystem's "power cut now" (ext4, XFS), for the crash quick path.

use std::path::Path;

/// `FS_IOC_SHUTDOWN`: `_IOR('X', 125, __u32)`.
const FS_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587D;
/// Shut down without flushing the log (`FSOP_FLAGS_NOLOGFLUSH`).
const FSOP_FLAGS_NOLOGFLUSH: u32 = 2;

/// Shut the filesystem mounted at `mnt` down without flushing its log: nothing more reaches
/// the device, as after a power cut (what `xfs_io -x -c shutdown` does).
pub fn shut_down_no_log_flush(mnt: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let root = std::fs::File::open(mnt)?;
    let mut flags = FSOP_FLAGS_NOLOGFLUSH;
    // SAFETY: a valid open descriptor and a pointer to a u32 the ioctl only reads.
    let rc = unsafe { libc::ioctl(root.as_raw_fd(), FS_IOC_SHUTDOWN as _, &mut flags) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
