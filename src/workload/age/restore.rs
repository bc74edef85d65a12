//! `replicate=restore`: an aged filesystem's image kept once, then written back to the
//! device for each later round, instead of aging again.
//!
//! Keeping reads the unmounted filesystem's device. On an image target the loop device's
//! backing file is cloned (FICLONE, when the image directory's filesystem shares extents)
//! or copied sparsely (`SEEK_DATA`/`SEEK_HOLE` and `copy_file_range`); on a `--device` the
//! device is read and its all-zero MiBs left as holes. Writing back goes through the block
//! device the round formats: every data run written, every hole zeroed
//! (`fallocate(PUNCH_HOLE)` on the device: a discard that reads back zeros, or zeros
//! written), so the device ends byte for byte as the kept image. The kept image is a ledger
//! entry (removed when it is dropped: the run's end, an error, Ctrl-C; after a SIGKILL by
//! the next run's recovery).

use crate::host::ledger::{Held, Item, hold};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The copy unit.
const CHUNK: usize = 1 << 20;
/// The write-back unit (direct writes to the device).
const WRITE_BACK_CHUNK: usize = 4 << 20;

/// How a kept image was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptBy {
    /// FICLONE of the loop device's backing file: no data copied.
    Reflink,
    /// The backing file's data runs copied (`copy_file_range`), its holes left holes.
    SparseCopy,
    /// The device read, its all-zero MiBs left as holes.
    DeviceRead,
}

impl KeptBy {
    /// For messages (`reflink`).
    pub fn name(self) -> &'static str {
        match self {
            KeptBy::Reflink => "reflink",
            KeptBy::SparseCopy => "sparse copy",
            KeptBy::DeviceRead => "device read",
        }
    }
}

/// An aged filesystem's image, kept in a file of its own until dropped.
#[derive(Debug)]
pub struct KeptImage {
    path: PathBuf,
    /// The device's size: the image's length.
    size: u64,
    /// Bytes of data the image holds (its allocated blocks).
    data_bytes: u64,
    by: KeptBy,
    seconds: f64,
    _held: Held,
}

/// What writing an image back did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrittenBack {
    /// Data bytes written to the device.
    pub bytes: u64,
    /// Bytes zeroed (the image's holes).
    pub zeroed: u64,
    /// Wall time, flush included.
    pub seconds: f64,
}

impl KeptImage {
    /// Keep the unmounted filesystem on `device` as a file in `dir` named after `tag`.
    /// `backing` is the loop device's backing file on an image target (cloned or copied
    /// from there), `None` on a `--device` (read from the device). Refused when `dir` has
    /// too little room for the data.
    pub fn keep(device: &Path, backing: Option<&Path>, dir: &Path, tag: &str) -> Result<KeptImage> {
        let t0 = Instant::now();
        let size = crate::host::sys::device_size_at(device)
            .map_err(|e| Error::io("BLKGETSIZE64 on", device, e))?;
        flush_device(device)?;
        let path = dir.join(format!("fsbench-aged-{}-{tag}.img", std::process::id()));
        let held = hold(Item::Image {
            path: path.clone(),
            id: None,
        })?;
        let out = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| Error::io("cannot create the aged image", &path, e))?;
        // From here on the file exists: a failure below removes it (the guard's Drop).
        let mut kept = KeptImage {
            path,
            size,
            data_bytes: 0,
            by: KeptBy::DeviceRead,
            seconds: 0.0,
            _held: held,
        };
        let md = out
            .metadata()
            .map_err(|e| Error::io("cannot stat", &kept.path, e))?;
        kept._held.set(Item::Image {
            path: kept.path.clone(),
            id: Some((md.dev(), md.ino())),
        })?;
        match backing {
            Some(b) => {
                let src = File::open(b).map_err(|e| Error::io("cannot open", b, e))?;
                let reflinked = crate::workload::probe::sys::ficlone(&src, &out, &kept.path)?
                    == crate::workload::probe::sys::CloneOutcome::Cloned;
                if reflinked {
                    kept.by = KeptBy::Reflink;
                    let md = src.metadata().map_err(|e| Error::io("cannot stat", b, e))?;
                    kept.data_bytes = md.blocks() * 512;
                } else {
                    room_for(dir, allocated(&src, b)?)?;
                    kept.by = KeptBy::SparseCopy;
                    kept.data_bytes = copy_sparse(&src, b, &out, &kept.path)?;
                }
            }
            None => {
                room_for(dir, size)?;
                kept.data_bytes = read_device(device, size, &out, &kept.path)?;
            }
        }
        out.set_len(size)
            .map_err(|e| Error::io("cannot size", &kept.path, e))?;
        kept.seconds = t0.elapsed().as_secs_f64();
        Ok(kept)
    }

    /// Write the image back to `device` (unmounted, the same size or larger): data runs
    /// written, holes zeroed, flushed.
    pub fn write_back(&self, device: &Path) -> Result<WrittenBack> {
        crate::cancel::check()?;
        let t0 = Instant::now();
        let dev_size = crate::host::sys::device_size_at(device)
            .map_err(|e| Error::io("BLKGETSIZE64 on", device, e))?;
        if dev_size < self.size {
            return Err(Error::Other(format!(
                "the aged image ({} bytes) is larger than {} ({dev_size} bytes)",
                self.size,
                device.display()
            )));
        }
        let img = File::open(&self.path).map_err(|e| Error::io("cannot open", &self.path, e))?;
        // Direct I/O in large aligned pieces (the runs are whole blocks of the image file):
        // the block device's page cache would halve the rate; buffered where it is refused.
        let dev = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(device)
            .or_else(|_| OpenOptions::new().write(true).open(device))
            .map_err(|e| Error::io("cannot open", device, e))?;
        let mut buf = crate::host::sys::aligned::AlignedBuf::new(WRITE_BACK_CHUNK);
        let (mut bytes, mut zeroed) = (0u64, 0u64);
        for run in runs(&img, &self.path, self.size)? {
            crate::cancel::check()?;
            if run.data {
                copy_range(&img, &self.path, &dev, device, run.start, run.len, &mut buf)?;
                bytes += run.len;
            } else {
                zero(&dev, device, run.start, run.len, &mut buf)?;
                zeroed += run.len;
            }
        }
        dev.sync_all().map_err(|e| Error::io("fsync", device, e))?;
        crate::workload::probe::sys::blkflsbuf(&dev, device)?;
        Ok(WrittenBack {
            bytes,
            zeroed,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Bytes of data it holds.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }
    /// How it was made.
    pub fn by(&self) -> KeptBy {
        self.by
    }
    /// How long keeping it took.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }
}

impl Drop for KeptImage {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!(
                "fsbench: warning: cannot remove the aged image {}: {e}",
                self.path.display()
            );
        }
    }
}

/// Flush the device and drop its cache, so what the unmounted filesystem left is on the
/// medium (and in a loop device's backing file) before it is read.
fn flush_device(device: &Path) -> Result<()> {
    let f = File::open(device).map_err(|e| Error::io("cannot open", device, e))?;
    f.sync_all().map_err(|e| Error::io("fsync", device, e))?;
    crate::workload::probe::sys::blkflsbuf(&f, device)
}

/// Refuse when `dir` has less than `need` bytes (plus 1 GiB for everything else) free.
fn room_for(dir: &Path, need: u64) -> Result<()> {
    let free = crate::host::sys::available_bytes(dir).unwrap_or(u64::MAX);
    if free < need.saturating_add(1 << 30) {
        return Err(Error::Other(format!(
            "too little room in {} for the aged image: {} needed (and 1 GiB spare), {} free; use replicate=re-age or a --scratch-dir with room",
            dir.display(),
            crate::units::format_size(need),
            crate::units::format_size(free)
        )));
    }
    Ok(())
}

/// A file's allocated bytes.
fn allocated(f: &File, path: &Path) -> Result<u64> {
    Ok(f.metadata()
        .map_err(|e| Error::io("cannot stat", path, e))?
        .blocks()
        * 512)
}

/// One stretch of a sparse file: data, or a hole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: u64,
    len: u64,
    data: bool,
}

/// The data runs and holes of `f` up to `size`, in order, covering all of it
/// (`SEEK_DATA`/`SEEK_HOLE`; a filesystem without them reports one data run).
fn runs(f: &File, path: &Path, size: u64) -> Result<Vec<Run>> {
    use rustix::fs::{SeekFrom, seek};
    let mut out = Vec::new();
    let mut at = 0u64;
    while at < size {
        let data = match seek(f, SeekFrom::Data(at)) {
            Ok(d) => d.min(size),
            // ENXIO: no data after `at`.
            Err(e) if e == rustix::io::Errno::NXIO => size,
            Err(e) => return Err(Error::io("SEEK_DATA in", path, std::io::Error::from(e))),
        };
        if data > at {
            out.push(Run {
                start: at,
                len: data - at,
                data: false,
            });
        }
        if data >= size {
            break;
        }
        let hole = seek(f, SeekFrom::Hole(data))
            .map_err(|e| Error::io("SEEK_HOLE in", path, std::io::Error::from(e)))?
            .min(size);
        out.push(Run {
            start: data,
            len: hole - data,
            data: true,
        });
        at = hole;
    }
    Ok(out)
}

/// Copy `src`'s data runs to the same offsets of `dst` (`copy_file_range`, or read and
/// write where the kernel refuses it); returns the data bytes.
fn copy_sparse(src: &File, src_path: &Path, dst: &File, dst_path: &Path) -> Result<u64> {
    let size = src
        .metadata()
        .map_err(|e| Error::io("cannot stat", src_path, e))?
        .len();
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    for run in runs(src, src_path, size)?.into_iter().filter(|r| r.data) {
        crate::cancel::check()?;
        let (mut off_in, mut off_out, end) = (run.start, run.start, run.start + run.len);
        while off_in < end {
            let len = (end - off_in).min(1 << 30) as usize;
            match rustix::fs::copy_file_range(src, Some(&mut off_in), dst, Some(&mut off_out), len)
            {
                Ok(n) if n > 0 => {}
                _ => {
                    // EXDEV, EINVAL, ENOSYS (or nothing copied): the plain way for the rest
                    // of this run.
                    copy_range(src, src_path, dst, dst_path, off_in, end - off_in, &mut buf)?;
                    break;
                }
            }
        }
        total += run.len;
    }
    Ok(total)
}

/// Read `len` bytes at `start` of `src` and write them at the same offset of `dst`.
fn copy_range(
    src: &File,
    src_path: &Path,
    dst: &File,
    dst_path: &Path,
    start: u64,
    len: u64,
    buf: &mut [u8],
) -> Result<()> {
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        src.read_exact_at(&mut buf[..n], start + done)
            .map_err(|e| Error::io("cannot read", src_path, e))?;
        dst.write_all_at(&buf[..n], start + done)
            .map_err(|e| Error::io("cannot write", dst_path, e))?;
        done += n as u64;
    }
    Ok(())
}

/// Read the whole device into `out`, leaving its all-zero MiBs as holes; returns the data
/// bytes written.
fn read_device(device: &Path, size: u64, out: &File, out_path: &Path) -> Result<u64> {
    let dev = File::open(device).map_err(|e| Error::io("cannot open", device, e))?;
    let mut buf = vec![0u8; CHUNK];
    let (mut at, mut total) = (0u64, 0u64);
    while at < size {
        crate::cancel::check()?;
        let n = (size - at).min(CHUNK as u64) as usize;
        dev.read_exact_at(&mut buf[..n], at)
            .map_err(|e| Error::io("cannot read", device, e))?;
        if buf[..n].iter().any(|&b| b != 0) {
            out.write_all_at(&buf[..n], at)
                .map_err(|e| Error::io("cannot write", out_path, e))?;
            total += n as u64;
        }
        at += n as u64;
    }
    Ok(total)
}

/// Zero `[start, start+len)` of the device: `fallocate(PUNCH_HOLE)` (a discard that reads
/// back zeros, or zeros written by the kernel), else `ZERO_RANGE`, else zeros written here.
fn zero(dev: &File, path: &Path, start: u64, len: u64, buf: &mut [u8]) -> Result<()> {
    use rustix::fs::FallocateFlags as F;
    for mode in [F::PUNCH_HOLE | F::KEEP_SIZE, F::ZERO_RANGE | F::KEEP_SIZE] {
        if rustix::fs::fallocate(dev, mode, start, len).is_ok() {
            return Ok(());
        }
    }
    buf.fill(0);
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        dev.write_all_at(&buf[..n], start + done)
            .map_err(|e| Error::io("cannot zero", path, e))?;
        done += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_a_sparse_file_in_order_and_a_copy_keeps_its_holes() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&a)
            .unwrap();
        let mib = 1u64 << 20;
        f.set_len(8 * mib).unwrap();
        f.write_all_at(&vec![7u8; mib as usize], 2 * mib).unwrap();
        f.write_all_at(&vec![9u8; mib as usize], 5 * mib).unwrap();
        f.sync_all().unwrap();
        let r = runs(&f, &a, 8 * mib).unwrap();
        assert_eq!(r.iter().map(|x| x.len).sum::<u64>(), 8 * mib, "{r:?}");
        assert!(r.windows(2).all(|w| w[0].start + w[0].len == w[1].start));
        let data: u64 = r.iter().filter(|x| x.data).map(|x| x.len).sum();
        // A filesystem without SEEK_DATA reports everything as data; tmpfs and the usual
        // disks report the two MiBs.
        assert!(data >= 2 * mib, "{r:?}");
        let g = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&b)
            .unwrap();
        copy_sparse(&f, &a, &g, &b).unwrap();
        g.set_len(8 * mib).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
}
