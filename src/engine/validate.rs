//! Checks a [`JobSpec`] against the real file or device *before* anything is created, and
//! works out what the run needs (regions, layout, alignment).

use super::job::JobSpec;
use super::verify::HEADER_LEN;
use crate::units::{fio_size, format_size};
use crate::{Error, Result};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Largest block size accepted (io_uring lengths are 32-bit; larger blocks are not a
/// benchmark anyone means).
pub const MAX_BS: u64 = 64 << 20;

/// What validation learned about the target.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The file or device.
    pub path: PathBuf,
    /// True for a block device.
    pub block_device: bool,
    /// Whether the file exists now.
    pub exists: bool,
    /// Current length (file size or device size).
    pub current_len: u64,
    /// Logical block size that O_DIRECT offsets and lengths must respect.
    pub logical_block: u64,
    /// Each job's region: (start offset, length in bytes, a multiple of bs).
    pub regions: Vec<(u64, u64)>,
    /// Length the file must have before the run (end of the furthest region).
    pub needed_len: u64,
}

impl Resolved {
    /// Whether the file must be written sequentially first.
    pub fn needs_layout(&self) -> bool {
        !self.block_device && self.current_len < self.needed_len
    }
}

fn block_size_of_device(file: &std::fs::File) -> Option<u64> {
    use std::os::fd::AsFd;
    crate::host::sys::logical_block_size(file.as_fd())
        .ok()
        .filter(|v| *v > 0)
}

/// O_DIRECT offset alignment of a file, from statx(STATX_DIOALIGN) when the filesystem tells.
fn dio_align(path: &Path) -> Option<u64> {
    use rustix::fs::{AtFlags, CWD, StatxFlags};
    let stx = rustix::fs::statx(CWD, path, AtFlags::empty(), StatxFlags::DIOALIGN).ok()?;
    (stx.stx_mask & StatxFlags::DIOALIGN.bits() != 0 && stx.stx_dio_offset_align > 0)
        .then_some(stx.stx_dio_offset_align as u64)
}

fn os_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Check `spec`; `Err` names the flag at fault and what to do. Creates nothing.
pub fn resolve(spec: &JobSpec) -> Result<Resolved> {
    check_numbers(spec)?;
    let path = &spec.filename;
    if path.as_os_str().is_empty() {
        return Err(Error::invalid(
            "--filename",
            "is required (a file or block device)",
        ));
    }
    let shown = path.display();
    let bs_text = fio_size(spec.bs);

    let (block_device, exists, current_len, logical_block) = what_is_there(spec)?;

    if spec.direct {
        check_direct_alignment(spec, logical_block)?;
    }

    let spread = spec
        .offset_increment
        .checked_mul(spec.numjobs as u64 - 1)
        .filter(|s| s.checked_add(spec.size.unwrap_or(0)).is_some())
        .ok_or_else(|| {
            Error::invalid(
                "--offset-increment",
                "times the number of jobs runs past the largest possible offset (16 EiB); use \
                 a smaller --offset-increment",
            )
        })?;
    let size = match spec.size {
        Some(0) => {
            return Err(Error::invalid(
                "--size",
                "0 bytes is nothing to do; give e.g. --size 1G",
            ));
        }
        Some(s) => s,
        None => {
            if current_len == 0 {
                return Err(Error::invalid(
                    "--size",
                    format!("{shown} is empty; give --size so it can be laid out"),
                ));
            }
            if current_len <= spread {
                return Err(Error::invalid(
                    "--offset-increment",
                    format!(
                        "job {} would start past the end of {shown} ({}); use a smaller \
                         --offset-increment or give --size",
                        spec.numjobs - 1,
                        format_size(current_len)
                    ),
                ));
            }
            current_len - spread
        }
    };
    let region_len = size / spec.bs * spec.bs;
    if region_len == 0 {
        return Err(Error::invalid(
            "--size",
            format!(
                "{} is smaller than --bs {bs_text}; give a larger --size",
                format_size(size)
            ),
        ));
    }
    let needed_len = spread + region_len;
    if block_device && needed_len > current_len {
        let fits = current_len.saturating_sub(spread) / spec.bs * spec.bs;
        return Err(Error::invalid(
            "--size",
            format!(
                "{} per job ends at byte {needed_len}, beyond the end of {shown} ({}); use \
                 --size {} or less",
                format_size(size),
                format_size(current_len),
                fio_size(fits)
            ),
        ));
    }
    if spec.verify && spec.rw.writes() && spec.numjobs > 1 && spec.offset_increment < region_len {
        return Err(Error::invalid(
            "--verify",
            format!(
                "with {} jobs writing, their regions overlap (--offset-increment {} < --size \
                 {}), so one job's writes would fail another's checks; use \
                 --offset-increment {} or more",
                spec.numjobs,
                fio_size(spec.offset_increment),
                fio_size(region_len),
                fio_size(region_len)
            ),
        ));
    }
    if !block_device && needed_len > current_len {
        check_free_space(path, needed_len - current_len)?;
    }
    let regions = (0..spec.numjobs as u64)
        .map(|k| (k * spec.offset_increment, region_len))
        .collect();
    Ok(Resolved {
        path: path.clone(),
        block_device,
        exists,
        current_len,
        logical_block,
        regions,
        needed_len,
    })
}

/// Block device or not, whether the file exists, its length and its logical block size, as
/// the job's `--filename` is found (or can be created).
fn what_is_there(spec: &JobSpec) -> Result<(bool, bool, u64, u64)> {
    let path = &spec.filename;
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(Error::invalid(
            "--filename",
            format!(
                "cannot use {shown}: it is a directory; name a file inside it, e.g. \
                     {}",
                path.join("fsbench.dat").display()
            ),
        )),
        Ok(meta) if meta.file_type().is_block_device() || meta.is_file() => {
            open_existing(spec, &meta)
        }
        Ok(_) => Err(Error::invalid(
            "--filename",
            format!("{shown} is neither a regular file nor a block device"),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => to_create(spec),
        Err(e) => Err(Error::invalid(
            "--filename",
            format!("cannot access {shown}: {}", os_reason(&e)),
        )),
    }
}

/// An existing file or block device, opened as the job will (so a refusal comes now).
fn open_existing(spec: &JobSpec, meta: &std::fs::Metadata) -> Result<(bool, bool, u64, u64)> {
    let path = &spec.filename;
    let shown = path.display();
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(spec.rw.writes());
    if spec.direct {
        opts.custom_flags(libc::O_DIRECT);
    }
    let file = opts.open(path).map_err(|e| {
        if spec.direct && e.raw_os_error() == Some(libc::EINVAL) {
            return Error::invalid(
                "--direct",
                format!(
                    "the filesystem holding {shown} does not support O_DIRECT; drop \
                     --direct"
                ),
            );
        }
        Error::invalid(
            "--filename",
            format!(
                "cannot open {shown} for {}: {}; check its permissions or choose \
                 another path",
                if spec.rw.writes() {
                    "writing"
                } else {
                    "reading"
                },
                os_reason(&e)
            ),
        )
    })?;
    if meta.file_type().is_block_device() {
        let size = crate::host::sys::device_size(std::os::fd::AsFd::as_fd(&file)).unwrap_or(0);
        if size == 0 {
            // A device cannot be laid out or grown by fsbench: no --size helps.
            return Err(Error::invalid(
                "--filename",
                format!(
                    "{shown} is a block device of size 0 (e.g. a loop device without a \
                     backing size, or zram before its disksize is set); give the device \
                     a size first, or choose another device"
                ),
            ));
        }
        let lbs = block_size_of_device(&file).unwrap_or(512);
        Ok((true, true, size, lbs))
    } else {
        let lbs = dio_align(path)
            .or_else(|| crate::measure::device::logical_block_size(path))
            .unwrap_or(512);
        Ok((false, true, meta.len(), lbs))
    }
}

/// The directory a job's file is in (`.` for a bare name), where it is created.
pub fn directory_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file the layout will create: its directory exists and is writable, and `--size` says
/// how large.
fn to_create(spec: &JobSpec) -> Result<(bool, bool, u64, u64)> {
    let path = &spec.filename;
    let shown = path.display();
    let parent = directory_of(path);
    if !parent.is_dir() {
        return Err(Error::invalid(
            "--filename",
            format!(
                "cannot create {shown}: directory {} does not exist",
                parent.display()
            ),
        ));
    }
    if parent.as_os_str().as_bytes().contains(&0) {
        return Err(Error::invalid("--filename", "contains a NUL byte"));
    }
    let can_create = rustix::fs::access(
        &parent,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    );
    if let Err(e) = can_create {
        let e = std::io::Error::from(e);
        return Err(Error::invalid(
            "--filename",
            format!(
                "cannot create {shown} in {}: {}; choose a writable directory",
                parent.display(),
                os_reason(&e)
            ),
        ));
    }
    if spec.size.is_none() {
        let what = if spec.rw.writes() {
            "a write job"
        } else {
            "a read job"
        };
        return Err(Error::invalid(
            "--size",
            format!(
                "{shown} does not exist and {what} needs --size to lay it out first \
                 (e.g. --size 1G), or point --filename at an existing file"
            ),
        ));
    }
    let lbs = crate::measure::device::logical_block_size(&parent).unwrap_or(512);
    Ok((false, false, 0, lbs))
}

/// The numbers of `spec` within their ranges (before anything is looked at).
fn check_numbers(spec: &JobSpec) -> Result<()> {
    if spec.iodepth == 0 {
        return Err(Error::invalid(
            "--iodepth",
            "0 is not a queue depth; use 1 or more (e.g. --iodepth 32 with io_uring)",
        ));
    }
    if spec.numjobs == 0 {
        return Err(Error::invalid(
            "--numjobs",
            "0 jobs would do nothing; use 1 or more",
        ));
    }
    if spec.iodepth > 4096 {
        return Err(Error::invalid("--iodepth", "at most 4096 is supported"));
    }
    if spec.bs == 0 || spec.bs > MAX_BS {
        return Err(Error::invalid(
            "--bs",
            format!(
                "{} is out of range; use 512 bytes to 64M (e.g. --bs 4k)",
                spec.bs
            ),
        ));
    }
    if let Some(st) = &spec.steady {
        st.check()?;
    }
    if spec.rwmixread > 100 {
        return Err(Error::invalid(
            "--rwmixread",
            "is a percentage; use 0 to 100",
        ));
    }
    if spec.buffer_compress_percentage > 100 {
        return Err(Error::invalid(
            "--buffer-compress-percentage",
            "is a percentage; use 0 to 100",
        ));
    }
    if spec.verify && spec.bs < HEADER_LEN as u64 {
        return Err(Error::invalid(
            "--bs",
            format!("--verify needs blocks of at least {HEADER_LEN} bytes for its header"),
        ));
    }
    Ok(())
}

/// With `--direct`, the block size and the offset increment are multiples of the logical
/// block size.
fn check_direct_alignment(spec: &JobSpec, logical_block: u64) -> Result<()> {
    let shown = spec.filename.display();
    let bs_text = fio_size(spec.bs);
    if !spec.bs.is_multiple_of(logical_block) {
        let suggest = fio_size(spec.bs.div_ceil(logical_block) * logical_block);
        return Err(Error::invalid(
            "--bs",
            format!(
                "{bs_text} is not a multiple of the {logical_block}-byte logical block size \
                 of {shown}, which --direct requires; use --bs {} or drop --direct",
                suggest
            ),
        ));
    }
    if !spec.offset_increment.is_multiple_of(logical_block) {
        return Err(Error::invalid(
            "--offset-increment",
            format!(
                "must be a multiple of the {logical_block}-byte logical block size with \
                 --direct"
            ),
        ));
    }
    Ok(())
}

/// Refuse a layout that cannot fit, before writing gigabytes and failing with ENOSPC.
fn check_free_space(path: &Path, extra: u64) -> Result<()> {
    let Ok(st) = rustix::fs::statvfs(directory_of(path)) else {
        return Ok(());
    };
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if extra > free {
        return Err(Error::invalid(
            "--size",
            format!(
                "laying out {} needs {} more, but only {} is free there; use a smaller --size",
                path.display(),
                format_size(extra),
                format_size(free)
            ),
        ));
    }
    Ok(())
}
