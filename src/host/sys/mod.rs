//! The low level in one place: block and loop ioctls, the statfs/statvfs and RAM queries
//! (this file), and one small file per further topic: FIEMAP (`fiemap.rs`), the btrfs tree
//! search (`btrfs.rs`), O_DIRECT buffers (`aligned.rs`), what a child does before exec
//! (`spawn.rs`), user accounts (`user.rs`), a BPF program on a tracepoint (`perf.rs`).
//!
//! rustix is used where it covers the call (statfs, statvfs, sysinfo, BLKSSZGET); what it does
//! not cover is hand-rolled here (BLKGETSIZE64, BLKDISCARD, the loop interface from
//! `<linux/loop.h>`, whose numbers and two structs are the kernel's stable user ABI: libc does
//! not export them and a bindgen crate would need libclang). Outside the engine's hot path
//! and the exceptions docs/ARCHITECTURE.md lists, `unsafe` belongs here
//! (`tests/layering.rs` checks it).

pub mod aligned;
pub mod btrfs;
pub mod fiemap;
pub mod perf;
pub mod shutdown;
pub mod spawn;
pub mod user;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `LOOP_SET_FD`: attach a backing file (legacy path).
pub const LOOP_SET_FD: libc::c_ulong = 0x4C00;
/// `LOOP_CLR_FD`: detach (deferred while the device is open elsewhere).
pub const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
/// `LOOP_SET_STATUS64`: set flags on a legacy-attached device.
pub const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
/// `LOOP_GET_STATUS64`: read back device/inode of the backing file and flags.
pub const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
/// `LOOP_SET_CAPACITY`: re-read the backing file's size.
pub const LOOP_SET_CAPACITY: libc::c_ulong = 0x4C07;
/// `LOOP_SET_DIRECT_IO`: switch direct I/O on a legacy-attached device.
pub const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
/// `LOOP_SET_BLOCK_SIZE`: logical block size of a legacy-attached device.
pub const LOOP_SET_BLOCK_SIZE: libc::c_ulong = 0x4C09;
/// `LOOP_CONFIGURE`: attach and configure atomically (Linux 5.8+).
pub const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
/// `LOOP_CTL_GET_FREE` on /dev/loop-control: index of a free (or new) loop device.
pub const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;

/// Detach automatically when the last opener closes, so a crash cannot leak the device.
pub const LO_FLAGS_AUTOCLEAR: u32 = 4;
/// Bypass the host page cache for the backing file.
pub const LO_FLAGS_DIRECT_IO: u32 = 16;

/// `BLKGETSIZE64` (`_IOR(0x12, 114, size_t)`): device size in bytes.
pub const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
/// `BLKFLSBUF` (`_IO(0x12, 97)`): flush and invalidate a block device's buffer cache.
pub const BLKFLSBUF: libc::c_ulong = 0x1261;
/// `BLKDISCARD` (`_IO(0x12, 119)`): discard a byte range.
pub const BLKDISCARD: libc::c_ulong = 0x1277;

/// `struct loop_info64`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoopInfo64 {
    /// st_dev of the backing file.
    pub lo_device: u64,
    /// st_ino of the backing file.
    pub lo_inode: u64,
    /// Unused here.
    pub lo_rdevice: u64,
    /// Offset into the backing file.
    pub lo_offset: u64,
    /// Size limit (0 = whole file).
    pub lo_sizelimit: u64,
    /// Device index.
    pub lo_number: u32,
    /// Obsolete encryption fields.
    pub lo_encrypt_type: u32,
    /// Obsolete encryption fields.
    pub lo_encrypt_key_size: u32,
    /// `LO_FLAGS_*`.
    pub lo_flags: u32,
    /// Backing file name (informational, truncated).
    pub lo_file_name: [u8; 64],
    /// Obsolete.
    pub lo_crypt_name: [u8; 64],
    /// Obsolete.
    pub lo_encrypt_key: [u8; 32],
    /// Obsolete.
    pub lo_init: [u64; 2],
}

impl Default for LoopInfo64 {
    fn default() -> Self {
        // SAFETY: plain-old-data struct; all-zero is its documented "unset" value.
        unsafe { std::mem::zeroed() }
    }
}

/// `struct loop_config`, the argument of `LOOP_CONFIGURE`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct LoopConfig {
    /// Backing file descriptor.
    pub fd: u32,
    /// Logical block size (0 = kernel default).
    pub block_size: u32,
    /// Flags, offset, size limit.
    pub info: LoopInfo64,
    /// Must be zero.
    pub reserved: [u64; 8],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);
const _: () = assert!(std::mem::size_of::<LoopConfig>() == 304);

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// An ioctl whose argument is a plain integer.
pub fn ioctl_int(fd: BorrowedFd<'_>, req: libc::c_ulong, arg: libc::c_ulong) -> io::Result<i32> {
    // SAFETY: the requests used with this helper take an integer argument by value.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) })
}

/// `LOOP_CONFIGURE`.
pub fn loop_configure(fd: BorrowedFd<'_>, cfg: &LoopConfig) -> io::Result<()> {
    // SAFETY: cfg points to a live, correctly laid out struct loop_config.
    check(unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_CONFIGURE as _,
            cfg as *const LoopConfig,
        )
    })
    .map(drop)
}

/// `LOOP_SET_STATUS64`.
pub fn loop_set_status(fd: BorrowedFd<'_>, info: &LoopInfo64) -> io::Result<()> {
    // SAFETY: info points to a live struct loop_info64.
    check(unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_SET_STATUS64 as _,
            info as *const LoopInfo64,
        )
    })
    .map(drop)
}

/// `LOOP_GET_STATUS64`.
pub fn loop_get_status(fd: BorrowedFd<'_>) -> io::Result<LoopInfo64> {
    let mut info = LoopInfo64::default();
    // SAFETY: the kernel fills a struct loop_info64 we own.
    check(unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    })?;
    Ok(info)
}

/// Size of a block device in bytes.
pub fn device_size(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) })?;
    Ok(size)
}

/// Logical sector size of a block device.
pub fn logical_block_size(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(u64::from(rustix::fs::ioctl_blksszget(fd)?))
}

/// Discard `[start, start+len)`.
pub fn discard(fd: BorrowedFd<'_>, start: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [start, len];
    // SAFETY: BLKDISCARD reads two u64 (start, length).
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) }).map(drop)
}

/// Size of the block device at `path`, bytes (opened read-only; `BLKGETSIZE64`).
pub fn device_size_at(path: &std::path::Path) -> io::Result<u64> {
    let f = std::fs::File::open(path)?;
    device_size(std::os::fd::AsFd::as_fd(&f))
}

/// Size of a block device from sysfs (read-only; nothing is opened on the device itself).
pub fn block_size_from_sysfs(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    let real = std::fs::canonicalize(path).ok()?;
    if !std::fs::metadata(&real).ok()?.file_type().is_block_device() {
        return None;
    }
    let name = real.file_name()?.to_str()?;
    let sectors: u64 = std::fs::read_to_string(format!("/sys/class/block/{name}/size"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(sectors * 512)
}

/// Total RAM, bytes (sysinfo); 4 GiB when the kernel says 0.
pub fn ram_bytes() -> u64 {
    let info = rustix::system::sysinfo();
    let b = (info.totalram as u64).saturating_mul(u64::from(info.mem_unit.max(1)));
    if b == 0 { 4 << 30 } else { b }
}

/// `statfs` magic of the filesystem holding `path`.
pub fn fs_magic(path: &std::path::Path) -> io::Result<i64> {
    Ok(rustix::fs::statfs(path)?.f_type as i64)
}

/// tmpfs's `statfs` magic.
pub const TMPFS_MAGIC: i64 = 0x0102_1994;
/// ramfs's `statfs` magic.
pub const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Whether a `statfs` magic is a filesystem held in RAM (tmpfs, ramfs).
pub fn is_ram_fs(magic: i64) -> bool {
    magic == TMPFS_MAGIC || magic == RAMFS_MAGIC
}

/// The one tmpfs check: `Some("tmpfs")` or `Some("ramfs")` when the filesystem holding `path`
/// lives in RAM, `None` when it does not.
pub fn ram_fs_name(path: &std::path::Path) -> io::Result<Option<&'static str>> {
    Ok(match fs_magic(path)? {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    })
}

/// Bytes an unprivileged writer may still use on the filesystem holding `path` (statvfs).
pub fn available_bytes(path: &std::path::Path) -> Option<u64> {
    rustix::fs::statvfs(path)
        .ok()
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
}

/// A fresh 64-bit seed for runs without `--seed` (the one seed source: run seeds, the
/// engine's and fio's `randrepeat=0`): getrandom, else clock ⊕ pid when the kernel refuses.
pub fn fresh_seed() -> u64 {
    let mut buf = [0u8; 8];
    if let Ok(8) = rustix::rand::getrandom(&mut buf, rustix::rand::GetRandomFlags::empty()) {
        return u64::from_ne_bytes(buf);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32)
}

// ---- FIFREEZE / FITHAW: the one pair of ioctls behind `host::cache::checkpoint` ----

/// `_IOWR('X', 119, int)` from linux/fs.h.
const FIFREEZE: libc::c_ulong = 0xC004_5877;
/// `_IOWR('X', 120, int)` from linux/fs.h.
const FITHAW: libc::c_ulong = 0xC004_5878;

/// Freeze the filesystem of `f` and thaw it again; true when both calls succeeded.
///
/// The thaw is attempted whenever the freeze succeeded, even if a signal arrives in between
/// (the calls are back to back in one thread; no unwinding can happen between them).
pub fn freeze_thaw(f: &std::fs::File) -> bool {
    let fd = std::os::fd::AsRawFd::as_raw_fd(f);
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

/// Send `sig` to process `pid` (negative: its process group), ignoring "no such process":
/// every caller has just matched the pid to something it owns (an unreaped child, a ledger
/// entry whose start time matched, a cgroup member).
pub fn signal(pid: i32, sig: rustix::process::Signal) {
    let Some(p) = rustix::process::Pid::from_raw(pid.saturating_abs()) else {
        return;
    };
    let _ = if pid < 0 {
        rustix::process::kill_process_group(p, sig)
    } else {
        rustix::process::kill_process(p, sig)
    };
}

/// `getrusage(who)`: `libc::RUSAGE_SELF` (every thread of fsbench) or
/// `libc::RUSAGE_CHILDREN` (reaped children). rustix has no wrapper for it.
pub fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct we pass and reads nothing else.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    }
}

/// Processors online (`sysconf(_SC_NPROCESSORS_ONLN)`), `None` when the kernel does not say.
pub fn online_cpus() -> Option<u32> {
    // SAFETY: sysconf only reads a system value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    (n > 0).then_some(n as u32)
}

/// `FIDEDUPERANGE`: `_IOWR(0x94, 54, struct file_dedupe_range)` (24-byte header).
const FIDEDUPERANGE: libc::c_ulong = 0xC018_9436;

/// `struct file_dedupe_range` with one `struct file_dedupe_range_info` after it.
#[repr(C)]
struct DedupeRange {
    src_offset: u64,
    src_length: u64,
    dest_count: u16,
    reserved1: u16,
    reserved2: u32,
    dest_fd: i64,
    dest_offset: u64,
    bytes_deduped: u64,
    status: i32,
    reserved: u32,
}

const _: () = assert!(std::mem::size_of::<DedupeRange>() == 24 + 32);

/// What one `FIDEDUPERANGE` call did to its one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deduped {
    /// The ranges held the same bytes: this many now share the source's extents.
    Same(u64),
    /// The ranges differ: nothing was shared.
    Differs,
}

/// Share `len` bytes of `src` at `src_off` with `dst` at `dst_off` when their contents are
/// equal (`FIDEDUPERANGE`, one destination). A filesystem may dedupe less than asked per call
/// (Btrfs: 16 MiB); the caller loops on the returned count.
pub fn fideduperange(
    src: BorrowedFd<'_>,
    src_off: u64,
    len: u64,
    dst: BorrowedFd<'_>,
    dst_off: u64,
) -> io::Result<Deduped> {
    let mut arg = DedupeRange {
        src_offset: src_off,
        src_length: len,
        dest_count: 1,
        reserved1: 0,
        reserved2: 0,
        dest_fd: i64::from(dst.as_raw_fd()),
        dest_offset: dst_off,
        bytes_deduped: 0,
        status: 0,
        reserved: 0,
    };
    // SAFETY: `arg` is a `struct file_dedupe_range` followed by exactly `dest_count` (1)
    // `struct file_dedupe_range_info`, which the kernel reads and updates in place.
    check(unsafe {
        libc::ioctl(
            src.as_raw_fd(),
            FIDEDUPERANGE as _,
            &mut arg as *mut DedupeRange,
        )
    })?;
    match arg.status {
        0 => Ok(Deduped::Same(arg.bytes_deduped)),
        1 => Ok(Deduped::Differs),
        e => Err(io::Error::from_raw_os_error(-e)),
    }
}
