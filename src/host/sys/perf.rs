//! A BPF program attached to a kernel tracepoint through a perf event, the way the kernel
//! has allowed since 4.7, without tracefs mounted in fsbench's own namespace: the caller
//! gives the tracepoint's id (read from tracefs wherever it is mounted).

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

const PERF_TYPE_TRACEPOINT: u64 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// Open a perf event on tracepoint `id` (CPU 0: a tracepoint's program runs on every CPU),
/// attach `prog` to it and enable it. The program stays attached while the returned
/// descriptor is open. On failure: which step, and the system's error.
pub fn attach_to_tracepoint(
    prog: BorrowedFd<'_>,
    id: u32,
) -> Result<OwnedFd, (&'static str, std::io::Error)> {
    // struct perf_event_attr of PERF_ATTR_SIZE_VER5 (112 bytes): its type, its size, the
    // tracepoint's id as config; the rest zero (counting, not sampling).
    let mut attr = [0u64; 14];
    attr[0] = PERF_TYPE_TRACEPOINT | ((std::mem::size_of_val(&attr) as u64) << 32);
    attr[1] = u64::from(id);
    // SAFETY: attr is a zero-initialised perf_event_attr of the size it states and outlives
    // the call; the result is a new descriptor nobody else owns.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            -1 as libc::pid_t,
            0 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(("perf_event_open", std::io::Error::last_os_error()));
    }
    // SAFETY: fd was just returned by the kernel and is owned here alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: ioctls on a perf event descriptor we own; SET_BPF takes a program descriptor.
    if unsafe { libc::ioctl(fd.as_raw_fd(), PERF_EVENT_IOC_SET_BPF, prog.as_raw_fd()) } != 0 {
        return Err(("attaching the program", std::io::Error::last_os_error()));
    }
    // SAFETY: as above; ENABLE takes no argument.
    if unsafe { libc::ioctl(fd.as_raw_fd(), PERF_EVENT_IOC_ENABLE, 0) } != 0 {
        return Err(("enabling the event", std::io::Error::last_os_error()));
    }
    Ok(fd)
}
