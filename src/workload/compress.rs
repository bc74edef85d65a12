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
use crate::fs::Filesystem;
use crate::metrics::registry::{BW_MIB_S, BYTES, COMPRESS_RATIO, SECONDS};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

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
/// filesystem compresses) `compress_ratio`, as its driver `fs` reads it. The file is removed
/// afterwards.
pub fn run(dir: &Path, fs: &dyn Filesystem, spec: &CompressSpec) -> Result<WorkloadOutput> {
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

fn write_and_measure(
    path: &Path,
    fs: &dyn Filesystem,
    spec: &CompressSpec,
) -> Result<WorkloadOutput> {
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
    // Some filesystems account space later than fsync (ZFS: when the txg commits).
    fs.settle_space(path)?;
    match fs.compression_ratio(&path.to_string_lossy())? {
        Some(r) => out.metrics.push(Metric::new(COMPRESS_RATIO, "ratio", r)),
        None => out.notes.push(format!(
            "{} does not compress data; no ratio reported",
            fs.name()
        )),
    }
    Ok(out)
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
}
