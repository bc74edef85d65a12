//! Compression: write text-like data and read back the on-disk ratio as the filesystem
//! reports it (seed 003: source, logs and container layers compress about 2.4:1 with zstd:3).
//!
//! btrfs: the file's EXTENT_DATA items through BTRFS_IOC_TREE_SEARCH (what `compsize` does):
//! referenced bytes over the bytes the extents occupy on disk. FIEMAP cannot answer this, it
//! only flags an extent as encoded and reports its uncompressed length. ZFS: the dataset's
//! `compressratio` property. Other filesystems do not compress (`None`).
//!
//! The writer is deliberately plain (buffered writes, one fsync): this workload is about what
//! the filesystem does with compressible data, not about the I/O engine.

use super::{Metric, WorkloadOutput};
use crate::fs::caps::Compression;
use crate::host::command::{self, argv};
use crate::metrics::registry::{BW_MIB_S, BYTES, COMPRESS_RATIO, SECONDS};
use crate::{Error, Result};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Workload id.
pub const WORKLOAD: &str = "compress";

/// What to write.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressSpec {
    /// Bytes to write.
    pub bytes: u64,
    /// Size of each write call.
    pub bs: usize,
    /// Generator seed: the same seed writes the same text.
    pub seed: u64,
}

impl Default for CompressSpec {
    fn default() -> Self {
        CompressSpec {
            bytes: 256 << 20,
            bs: 1 << 20,
            seed: 1,
        }
    }
}

/// Write the text file in `dir`, fsync it, and report `bw_mib_s`, `seconds` and (when the
/// filesystem compresses) `compress_ratio`. The file is removed afterwards.
pub fn run(dir: &Path, fs: &str, spec: &CompressSpec) -> Result<WorkloadOutput> {
    if spec.bs == 0 || spec.bytes == 0 {
        return Err(Error::invalid(
            "compress",
            "bytes and bs must be positive; use e.g. size 256M, bs 1M",
        ));
    }
    let path = dir.join("fsbench-compress.txt");
    let result = write_and_measure(&path, fs, spec);
    let _ = std::fs::remove_file(&path);
    result
}

fn write_and_measure(path: &Path, fs: &str, spec: &CompressSpec) -> Result<WorkloadOutput> {
    // Generate before the clock starts so the figure is the filesystem's, not the generator's.
    // Filesystems compress each extent or record (≤ 128 KiB) on its own, so cycling through a
    // few MiB of text gives the same ratio as an endless stream.
    let pool_len = (POOL_BYTES as u64).min(spec.bytes) as usize;
    let mut pool = vec![0u8; pool_len + spec.bs];
    TextGen::new(spec.seed).fill(&mut pool);
    let mut f = std::fs::File::create(path).map_err(|e| Error::io("cannot create", path, e))?;
    let start = Instant::now();
    let mut left = spec.bytes;
    let mut at = 0usize;
    while left > 0 {
        if crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        let n = left.min(spec.bs as u64) as usize;
        f.write_all(&pool[at..at + n])
            .map_err(|e| Error::io("cannot write", path, e))?;
        left -= n as u64;
        at = (at + n) % pool_len.max(1);
    }
    f.sync_all()
        .map_err(|e| Error::io("cannot fsync", path, e))?;
    let seconds = start.elapsed().as_secs_f64();
    drop(f);
    let mut out = WorkloadOutput {
        metrics: vec![
            Metric::new(
                BW_MIB_S,
                "MiB/s",
                spec.bytes as f64 / (1024.0 * 1024.0) / seconds.max(1e-9),
            ),
            Metric::new(SECONDS, "s", seconds),
            Metric::new(BYTES, "bytes", spec.bytes as f64),
        ],
        ..Default::default()
    };
    let caps = crate::fs::caps::of(fs);
    if caps.compression == Compression::DatasetProperty {
        // ZFS accounts space when the transaction group commits, seconds after fsync.
        wait_dataset_settled(path, caps.mount_types)?;
    }
    match measure_ratio(fs, &path.to_string_lossy())? {
        Some(r) => out.metrics.push(Metric::new(COMPRESS_RATIO, "ratio", r)),
        None => out
            .notes
            .push(format!("{fs} does not compress data; no ratio reported")),
    }
    Ok(out)
}

/// The on-disk compression ratio (logical / physical) of a btrfs file or directory tree, or
/// of the ZFS dataset holding `path_or_dataset` (a path or a dataset name), as the driver of
/// `fs` says it is read (`Caps::compression`). `None` for filesystems without compression,
/// or a btrfs path holding no data.
pub fn measure_ratio(fs: &str, path_or_dataset: &str) -> Result<Option<f64>> {
    let caps = crate::fs::caps::of(fs);
    match caps.compression {
        Compression::Extents => {
            let (logical, disk) = btrfs_usage(Path::new(path_or_dataset))?;
            Ok((disk > 0).then(|| logical as f64 / disk as f64))
        }
        Compression::DatasetProperty => {
            let ds = if path_or_dataset.starts_with('/') {
                dataset_of(Path::new(path_or_dataset), caps.mount_types)?
            } else {
                path_or_dataset.to_string()
            };
            let out = command::run(
                &argv(&["zfs", "get", "-Hp", "-o", "value", "compressratio", &ds]),
                Duration::from_secs(30),
            )?;
            parse_zfs_ratio(&out.stdout)
                .map(Some)
                .ok_or_else(|| Error::tool("zfs get compressratio", out.stdout))
        }
        Compression::None => Ok(None),
    }
}

/// `1.00x`, `2.41`, or `2.41x` → 2.41.
fn parse_zfs_ratio(s: &str) -> Option<f64> {
    s.trim().trim_end_matches('x').parse().ok()
}

/// The ZFS dataset whose mount (of one of `mount_types`) holds `path` (longest matching
/// mount point).
fn dataset_of(path: &Path, mount_types: &[&str]) -> Result<String> {
    let canon = std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Error::io("cannot read", "/proc/self/mountinfo", e))?;
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mp = left.split(' ').nth(4).unwrap_or("");
        let mut r = right.split(' ');
        let fstype = r.next().unwrap_or("");
        let source = r.next().unwrap_or("");
        if mount_types.contains(&fstype)
            && canon.starts_with(mp)
            && best.as_ref().is_none_or(|(l, _)| mp.len() >= *l)
        {
            best = Some((mp.len(), source.to_string()));
        }
    }
    best.map(|(_, s)| s).ok_or_else(|| {
        Error::Other(format!(
            "{} is not on a mounted ZFS dataset",
            path.display()
        ))
    })
}

/// Wait (up to 30 s) until the dataset's `used` stops changing after a sync.
fn wait_dataset_settled(path: &Path, mount_types: &[&str]) -> Result<()> {
    let ds = dataset_of(path, mount_types)?;
    crate::host::sync_all();
    let used = || -> Result<String> {
        Ok(command::run(
            &argv(&["zfs", "get", "-Hp", "-o", "value", "used", &ds]),
            Duration::from_secs(30),
        )?
        .stdout)
    };
    let start = Instant::now();
    let mut last = used()?;
    let mut stable = 0;
    while start.elapsed() < Duration::from_secs(30) && stable < 3 {
        std::thread::sleep(Duration::from_secs(1));
        let now = used()?;
        stable = if now == last { stable + 1 } else { 0 };
        last = now;
    }
    Ok(())
}

/// Referenced (logical) and on-disk bytes of every regular file under `path` on btrfs.
pub fn btrfs_usage(path: &Path) -> Result<(u64, u64)> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io("cannot stat", path, e))?;
    if meta.is_dir() {
        let mut total = (0, 0);
        let rd = std::fs::read_dir(path).map_err(|e| Error::io("cannot list", path, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("cannot list", path, e))?;
            let (l, d) = btrfs_usage(&entry.path())?;
            total.0 += l;
            total.1 += d;
        }
        return Ok(total);
    }
    if !meta.is_file() {
        return Ok((0, 0));
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    btrfs_file_usage(&f, meta.ino(), path)
}

const BTRFS_EXTENT_DATA_KEY: u32 = 108;
const SEARCH_KEY_LEN: usize = 104;
const SEARCH_HEADER_LEN: usize = 32;

fn btrfs_file_usage(f: &std::fs::File, ino: u64, path: &Path) -> Result<(u64, u64)> {
    let mut logical = 0u64;
    let mut disk = 0u64;
    let mut min_offset = 0u64;
    loop {
        // struct btrfs_ioctl_search_args: the key, then the result buffer; u64-aligned.
        let mut args = crate::host::sys::btrfs::SearchArgs::default();
        let bytes = &mut args.0;
        let key = [
            0u64, // tree_id: 0 = the subvolume holding the fd
            ino,  // min_objectid
            ino,  // max_objectid
            min_offset,
            u64::MAX, // max_offset
            0,        // min_transid
            u64::MAX, // max_transid
        ];
        for (i, v) in key.iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
        bytes[56..60].copy_from_slice(&BTRFS_EXTENT_DATA_KEY.to_ne_bytes());
        bytes[60..64].copy_from_slice(&BTRFS_EXTENT_DATA_KEY.to_ne_bytes());
        bytes[64..68].copy_from_slice(&4096u32.to_ne_bytes()); // nr_items: as many as fit
        crate::host::sys::btrfs::tree_search(f, &mut args).map_err(|e| {
            Error::io(
                "BTRFS_IOC_TREE_SEARCH (not btrfs, or not root?) on",
                path,
                e,
            )
        })?;
        let bytes = &args.0;
        let nr = u32::from_ne_bytes(bytes[64..68].try_into().unwrap()) as usize;
        if nr == 0 {
            break;
        }
        let mut pos = SEARCH_KEY_LEN;
        let mut last_offset = min_offset;
        for _ in 0..nr {
            let h = &bytes[pos..pos + SEARCH_HEADER_LEN];
            let offset = u64::from_ne_bytes(h[16..24].try_into().unwrap());
            let typ = u32::from_ne_bytes(h[24..28].try_into().unwrap());
            let len = u32::from_ne_bytes(h[28..32].try_into().unwrap()) as usize;
            let item = &bytes[pos + SEARCH_HEADER_LEN..pos + SEARCH_HEADER_LEN + len];
            if typ == BTRFS_EXTENT_DATA_KEY {
                let (l, d) = extent_usage(item);
                logical += l;
                disk += d;
            }
            last_offset = offset;
            pos += SEARCH_HEADER_LEN + len;
        }
        if last_offset == u64::MAX {
            break;
        }
        min_offset = last_offset + 1;
    }
    Ok((logical, disk))
}

/// Logical and on-disk bytes of one `btrfs_file_extent_item` (little-endian, packed).
fn extent_usage(item: &[u8]) -> (u64, u64) {
    let le = |o: usize| u64::from_le_bytes(item[o..o + 8].try_into().unwrap());
    if item.len() < 21 {
        return (0, 0);
    }
    let ram_bytes = le(8);
    let compression = item[16];
    match item[20] {
        // Inline: the (possibly compressed) data follows the 21-byte header.
        0 => (ram_bytes, (item.len() - 21) as u64),
        1 | 2 if item.len() >= 53 => {
            let (disk_bytenr, disk_num_bytes, num_bytes) = (le(21), le(29), le(45));
            if disk_bytenr == 0 {
                (0, 0) // a hole
            } else if compression != 0 {
                (num_bytes, disk_num_bytes)
            } else {
                (num_bytes, num_bytes)
            }
        }
        _ => (0, 0),
    }
}

/// Deterministic text-like data: lines of words from a seeded vocabulary with numbers and
/// punctuation, tuned to compress about 2.4:1 with zstd -3 (like logs and source trees).
pub struct TextGen {
    state: u64,
    vocab: Vec<Vec<u8>>,
    pending: Vec<u8>,
}

impl TextGen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> TextGen {
        let mut g = TextGen {
            state: seed ^ 0x7E47_0000_0000_0001,
            vocab: Vec::new(),
            pending: Vec::new(),
        };
        for _ in 0..VOCAB {
            let len = 2 + (g.next() % 9) as usize;
            let w: Vec<u8> = (0..len).map(|_| b'a' + (g.next() % 26) as u8).collect();
            g.vocab.push(w);
        }
        g
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn line(&mut self) {
        let words = 4 + self.next() % 10;
        for i in 0..words {
            if i > 0 {
                self.pending.push(b' ');
            }
            let r = self.next();
            if r % 100 < NUMBER_PERCENT {
                let n = self.next() % 1_000_000;
                self.pending.extend_from_slice(n.to_string().as_bytes());
            } else {
                // Zipf-ish: small indices are far more frequent, as in natural text.
                let a = (r >> 8) % VOCAB as u64;
                let b = (r >> 32) % VOCAB as u64;
                let idx = (a * b / VOCAB as u64) as usize;
                self.pending.extend_from_slice(&self.vocab[idx]);
            }
        }
        let end: &[u8] = if self.next().is_multiple_of(3) {
            b".\n"
        } else {
            b"\n"
        };
        self.pending.extend_from_slice(end);
    }

    /// Fill `buf` with the next bytes of text.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut at = 0;
        while at < buf.len() {
            if self.pending.is_empty() {
                self.line();
            }
            let n = self.pending.len().min(buf.len() - at);
            buf[at..at + n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            at += n;
        }
    }
}

const VOCAB: usize = 2048;
/// Text generated up front and written cyclically.
const POOL_BYTES: usize = 8 << 20;
const NUMBER_PERCENT: u64 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_deterministic_and_texty() {
        let mut a = vec![0u8; 1 << 16];
        let mut b = vec![0u8; 1 << 16];
        TextGen::new(3).fill(&mut a);
        TextGen::new(3).fill(&mut b);
        assert_eq!(a, b);
        TextGen::new(4).fill(&mut b);
        assert_ne!(a, b);
        assert!(
            a.iter()
                .all(|c| c.is_ascii_alphanumeric() || b" .\n".contains(c))
        );
        assert!(a.iter().filter(|&&c| c == b'\n').count() > 500);
    }

    /// Dump 32 MiB of text to $FSBENCH_TEXT_OUT to tune the generator with `zstd -3`.
    #[test]
    fn dump_text_when_asked() {
        if let Some(p) = std::env::var_os("FSBENCH_TEXT_OUT") {
            let mut v = vec![0u8; 32 << 20];
            TextGen::new(1).fill(&mut v);
            std::fs::write(p, v).unwrap();
        }
    }

    #[test]
    fn parses_zfs_ratio() {
        assert_eq!(parse_zfs_ratio("2.41x\n"), Some(2.41));
        assert_eq!(parse_zfs_ratio("1.00"), Some(1.0));
        assert_eq!(parse_zfs_ratio("-"), None);
    }

    #[test]
    fn extent_items() {
        let mut item = vec![0u8; 53];
        item[8..16].copy_from_slice(&131072u64.to_le_bytes()); // ram_bytes
        item[16] = 3; // zstd
        item[20] = 1; // regular
        item[21..29].copy_from_slice(&12345u64.to_le_bytes()); // disk_bytenr
        item[29..37].copy_from_slice(&53248u64.to_le_bytes()); // disk_num_bytes
        item[45..53].copy_from_slice(&131072u64.to_le_bytes()); // num_bytes
        assert_eq!(extent_usage(&item), (131072, 53248));
        item[16] = 0;
        assert_eq!(extent_usage(&item), (131072, 131072));
        item[21..29].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(extent_usage(&item), (0, 0));
    }
}
