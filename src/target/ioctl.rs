//! Hand-rolled block and loop ioctls (from `<linux/loop.h>` and `<linux/fs.h>`).
//!
//! libc does not export the loop-device interface, and a bindgen crate would need libclang,
//! so the few numbers and the two structs are written out here. They are part of the kernel's
//! stable user ABI.

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
/// `BLKDISCARD` (`_IO(0x12, 119)`): discard a byte range.
pub const BLKDISCARD: libc::c_ulong = 0x1277;
/// `BLKSSZGET` (`_IO(0x12, 104)`): logical sector size.
pub const BLKSSZGET: libc::c_ulong = 0x1268;

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
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int.
    check(unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            BLKSSZGET as _,
            &mut size as *mut libc::c_int,
        )
    })?;
    Ok(size as u64)
}

/// Discard `[start, start+len)`.
pub fn discard(fd: BorrowedFd<'_>, start: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [start, len];
    // SAFETY: BLKDISCARD reads two u64 (start, length).
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) }).map(drop)
}
