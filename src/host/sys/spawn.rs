//! What a child does between fork and exec (`CommandExt::pre_exec`, whose closure may only make
//! async-signal-safe calls): each hook is fixed code here, so the callers stay safe.

use std::ffi::{CStr, CString};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Make the child spawned from `cmd` write "0" to `procs` (a cgroup's `cgroup.procs`, which
/// moves the writing process itself; v1 and v2 both accept it) before it execs.
pub fn join_cgroup_before_exec(cmd: &mut Command, procs: CString) {
    // SAFETY: the closure runs between fork and exec and only calls open/write/close, which
    // are async-signal-safe; the path was allocated before fork.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let rc = libc::write(fd, b"0".as_ptr().cast(), 1);
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if rc != 1 {
                return Err(err);
            }
            Ok(())
        });
    }
}

/// Make the child spawned from `cmd` get SIGINT when fsbench dies (`PR_SET_PDEATHSIG`), set
/// after any uid change `cmd` makes (setuid would clear it) and before exec.
pub fn interrupt_when_parent_dies(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe; the closure runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Make the child spawned from `cmd` run in a mount namespace of its own (what it mounts
/// stays there; the host's mounts reach it as slaves) in which `hidden` is unmounted before
/// it execs: for a program that must not see one mount (crun, which refuses a cgroup2
/// hierarchy with controllers beside cgroup v1, `workload::container::podman`).
pub fn private_mounts_without(cmd: &mut Command, hidden: CString) {
    // SAFETY: the closure runs between fork and exec and only calls unshare, mount and
    // umount2, which are plain system calls; the path was allocated before fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let rc = libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            );
            if rc != 0 || libc::umount2(hidden.as_ptr(), libc::MNT_DETACH) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Make the child spawned from `cmd` run in a mount namespace of its own (made private first,
/// so nothing it mounts propagates back to the host's) with a filesystem of type `fstype`
/// mounted on `target` before it execs: the mount is seen by no other process and is gone
/// when the child exits, even after a SIGKILL (bpftrace's tracefs when the host has none,
/// `workload::replay::ebpf`).
pub fn private_mount_before_exec(cmd: &mut Command, fstype: &'static CStr, target: &'static CStr) {
    // SAFETY: the closure runs between fork and exec and only calls unshare and mount, plain
    // system calls; its strings are static, so it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let none = std::ptr::null();
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    none,
                    c"/".as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    none.cast(),
                ) != 0
                || libc::mount(
                    c"nodev".as_ptr(),
                    target.as_ptr(),
                    fstype.as_ptr(),
                    0,
                    none.cast(),
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Make the child spawned from `cmd` write its pid (4 bytes, native order) to `pid_fd`, then
/// wait before exec until a byte arrives on `gate_fd` (end of file: it fails with ECANCELED
/// and never runs the program). `gate_writer` is the gate's other end, closed in the child so
/// that only the parent's copy keeps the pipe open. `fsbench record --capture ebpf` starts
/// the command this way, its environment untouched, once the capture's probes are attached.
/// All three descriptors are close-on-exec.
pub fn announce_then_wait(cmd: &mut Command, pid_fd: i32, gate_fd: i32, gate_writer: i32) {
    // SAFETY: getpid, write, read and close are async-signal-safe; the closure runs in the
    // child before exec and allocates nothing (the error is a raw OS error).
    unsafe {
        cmd.pre_exec(move || {
            libc::close(gate_writer);
            let pid = libc::getpid().to_ne_bytes();
            if libc::write(pid_fd, pid.as_ptr().cast(), pid.len()) != pid.len() as isize {
                return Err(std::io::Error::last_os_error());
            }
            let mut b = 0u8;
            loop {
                match libc::read(gate_fd, (&raw mut b).cast(), 1) {
                    1 => return Ok(()),
                    0 => return Err(std::io::Error::from_raw_os_error(libc::ECANCELED)),
                    _ if *libc::__errno_location() == libc::EINTR => continue,
                    _ => return Err(std::io::Error::last_os_error()),
                }
            }
        });
    }
}
