//! FIFREEZE / FITHAW, the one pair of ioctls behind [`super::cache::checkpoint`].

use std::os::fd::AsRawFd;

/// `_IOWR('X', 119, int)` from linux/fs.h.
const FIFREEZE: libc::c_ulong = 0xC004_5877;
/// `_IOWR('X', 120, int)` from linux/fs.h.
const FITHAW: libc::c_ulong = 0xC004_5878;

/// Freeze the filesystem of `f` and thaw it again; true when both calls succeeded.
///
/// The thaw is attempted whenever the freeze succeeded, even if a signal arrives in between
/// (the calls are back to back in one thread; no unwinding can happen between them).
pub fn freeze_thaw(f: &std::fs::File) -> bool {
    let fd = f.as_raw_fd();
    // SAFETY: plain ioctls on an open descriptor with an unused integer argument.
    let frozen = unsafe { libc::ioctl(fd, FIFREEZE as _, 0) } == 0;
    if !frozen {
        return false;
    }
    // Retry the thaw on EINTR: leaving the filesystem frozen would block every writer.
    loop {
        // SAFETY: as above.
        let r = unsafe { libc::ioctl(fd, FITHAW as _, 0) };
        if r == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}
