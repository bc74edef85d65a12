//! `probe-corruption`: does the filesystem notice when a data block changes behind its back?
//!
//! Write a file whose every 4 KiB block is a unique pseudo-random pattern, unmount (ZFS:
//! export), flip bytes inside one of its blocks on the raw device, mount again, drop caches
//! and read it back. `detected` = 1 when the read fails (data checksums), 0 when the
//! filesystem hands back the altered bytes. Handing back the ORIGINAL bytes means the probe
//! hit the wrong place (a stale copy, or a cache): that is an error of the probe, not a result.
//!
//! Every copy of the block is found by scanning the raw device for its unique pattern (a few
//! seconds for the probe's small image) and every copy is altered, so redundancy (btrfs DUP,
//! ZFS copies=2) cannot mask the damage. FIEMAP is only a cross-check: btrfs reports its own
//! logical addresses there and zfs-fuse reports no extents at all.

use super::{ProbeFs, ProbeOptions, supported, sys};
use crate::metrics::registry::{DETECTED, INTACT};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

const BLOCK: usize = 4096;
/// Bytes flipped, inside one 512-byte sector of the block.
const FLIP: std::ops::Range<usize> = 1024..1088;
/// Granularity of the raw-device scan: ZFS with ashift=9 places blocks on 512-byte sectors.
const SCAN_STEP: usize = 512;
const SCAN_CHUNK: usize = 4 << 20;

/// Run the corruption probe; the filesystem is mounted again when it returns.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let blocks = (opts.corruption_bytes as usize / BLOCK).max(4);
    let path = pfs.mountpoint().join("fsbench-corruption");
    write_file(&path, blocks, opts.seed)?;
    let victim = blocks / 2;
    let expected = block_pattern(victim, opts.seed);
    let hint = fiemap_hint(&path, victim)?;
    let device = pfs.device().to_path_buf();

    pfs.unmount()?;
    let located = locate_and_flip(&device, &expected, hint);
    pfs.mount()?;
    let (offsets, how) = located?;
    crate::host::drop_caches()?;

    let path = pfs.mountpoint().join("fsbench-corruption");
    let offset = offsets[0];
    let mut notes = vec![format!(
        "flipped bytes {}..{} of file block {victim} in {} cop{} at device offset(s) {:?} (found by {how})",
        FLIP.start,
        FLIP.end,
        offsets.len(),
        if offsets.len() == 1 { "y" } else { "ies" },
        offsets
    )];
    let outcome = read_back(&path);
    let _ = std::fs::remove_file(&path);
    let detected = match outcome {
        ReadBack::Error(e) => {
            notes.push(format!("reading the file failed: {e}"));
            true
        }
        ReadBack::Data(data) if data.len() < (victim + 1) * BLOCK => {
            return Err(Error::workload(
                "probe-corruption",
                format!(
                    "the file reads back {} bytes, shorter than written",
                    data.len()
                ),
            ));
        }
        ReadBack::Data(data) => {
            let got = &data[victim * BLOCK..(victim + 1) * BLOCK];
            if got == &expected[..] {
                return Err(Error::workload(
                    "probe-corruption",
                    format!(
                        "the file still reads its original bytes after device offset {offset} was altered: the probe altered a copy the filesystem does not read (or a cache served the read); no verdict"
                    ),
                ));
            }
            notes.push("the altered bytes were returned without an error".into());
            false
        }
    };
    Ok(WorkloadOutput {
        metrics: vec![
            supported(DETECTED, detected),
            Metric::new(INTACT, "bool", 0.0),
        ],
        notes,
        ..Default::default()
    })
}

/// The pattern of file block `i`: unique per block and seed, incompressible.
fn block_pattern(i: usize, seed: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    sys::fill_pattern(
        &mut b,
        seed ^ 0xC0FF_EE00_0000_0000 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    b
}

fn write_file(path: &Path, blocks: usize, seed: u64) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io("cannot create", path, e))?;
    let mut buf = Vec::with_capacity(blocks * BLOCK);
    for i in 0..blocks {
        buf.extend_from_slice(&block_pattern(i, seed));
    }
    f.write_all(&buf)
        .map_err(|e| Error::io("cannot write", path, e))?;
    f.sync_all().map_err(|e| Error::io("cannot fsync", path, e))
}

/// Device offset of file block `victim` according to FIEMAP, when the extent is plain data.
fn fiemap_hint(path: &Path, victim: usize) -> Result<Option<u64>> {
    let f = File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    let Some(extents) = sys::fiemap(&f, path)? else {
        return Ok(None);
    };
    let logical = (victim * BLOCK) as u64;
    let bad = sys::FIEMAP_EXTENT_UNKNOWN
        | sys::FIEMAP_EXTENT_ENCODED
        | sys::FIEMAP_EXTENT_NOT_ALIGNED
        | sys::FIEMAP_EXTENT_DATA_INLINE;
    Ok(extents
        .iter()
        .find(|e| e.logical <= logical && logical < e.logical + e.length && e.flags & bad == 0)
        .map(|e| e.physical + (logical - e.logical)))
}

/// Find every copy of the victim block on the raw device and flip bytes in each, so that
/// redundancy (btrfs DUP data, ZFS copies=2) cannot hide the damage by reading another copy.
/// Returns the offsets and how the first was found.
fn locate_and_flip(
    device: &Path,
    expected: &[u8],
    hint: Option<u64>,
) -> Result<(Vec<u64>, &'static str)> {
    let dev = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .map_err(|e| Error::io("cannot open (O_DIRECT)", device, e))?;
    let size = sys::device_size(device)?;
    let copies = scan(&dev, device, size, expected)?;
    if copies.is_empty() {
        return Err(Error::workload(
            "probe-corruption",
            format!(
                "the file's block was not found on {} (encrypted, compressed or not yet written?)",
                device.display()
            ),
        ));
    }
    let how = if hint.is_some_and(|h| copies.contains(&h)) {
        "FIEMAP, confirmed by scanning the device"
    } else {
        "scanning the device"
    };
    for &off in &copies {
        // Read-modify-write the 4 KiB-aligned window holding the flipped sector (O_DIRECT
        // needs alignment to the device's logical block size, at most 4 KiB).
        let target = off + FLIP.start as u64;
        let win = target & !(BLOCK as u64 - 1);
        let mut buf = read_direct(&dev, device, win, BLOCK)?;
        let at = (target - win) as usize;
        for b in &mut buf[at..at + FLIP.len()] {
            *b ^= 0xFF;
        }
        dev.write_all_at(&buf, win)
            .map_err(|e| Error::io("cannot write", device, e))?;
    }
    dev.sync_all()
        .map_err(|e| Error::io("cannot fsync", device, e))?;
    sys::blkflsbuf(&dev, device)?;
    Ok((copies, how))
}

fn read_direct(dev: &File, path: &Path, off: u64, len: usize) -> Result<sys::AlignedBuf> {
    let mut buf = sys::AlignedBuf::new(len);
    dev.read_exact_at(&mut buf, off)
        .map_err(|e| Error::io("cannot read", path, e))?;
    Ok(buf)
}

/// Offsets of every copy of `expected` on the device, at 512-byte boundaries.
fn scan(dev: &File, path: &Path, size: u64, expected: &[u8]) -> Result<Vec<u64>> {
    let mut found = Vec::new();
    let head = &expected[..64];
    let mut buf = sys::AlignedBuf::new(SCAN_CHUNK);
    let mut pos = 0u64;
    while pos < size {
        let n = ((size - pos) as usize).min(SCAN_CHUNK);
        dev.read_exact_at(&mut buf[..n], pos)
            .map_err(|e| Error::io("cannot read", path, e))?;
        let mut i = 0;
        while i + head.len() <= n {
            if &buf[i..i + head.len()] == head {
                let off = pos + i as u64;
                if off + BLOCK as u64 <= size
                    && read_direct(dev, path, off & !511, BLOCK)?[..] == expected[..]
                {
                    found.push(off);
                }
            }
            i += SCAN_STEP;
        }
        pos += n as u64;
    }
    Ok(found)
}

enum ReadBack {
    Data(Vec<u8>),
    Error(std::io::Error),
}

fn read_back(path: &Path) -> ReadBack {
    let mut v = Vec::new();
    match File::open(path).and_then(|mut f| f.read_to_end(&mut v)) {
        Ok(_) => ReadBack::Data(v),
        Err(e) => ReadBack::Error(e),
    }
}
