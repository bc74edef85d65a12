//! `probe-reflink`: can the filesystem clone a file by sharing extents (FICLONE), and how long
//! does cloning a large file take? A real copy of 1 GiB takes seconds; a reflink milliseconds.

use super::supported;
use super::sys::{self, CloneOutcome};
use crate::metrics::registry::{BYTES, SECONDS, SUPPORTED};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Instant;

const CHUNK: usize = 1 << 20;

/// Write a `bytes`-long patterned file in `dir`, clone it with FICLONE, check the clone reads
/// back the same bytes, and report `supported` and `seconds` (the clone call alone).
pub fn probe(dir: &Path, bytes: u64, seed: u64) -> Result<WorkloadOutput> {
    let src_path = dir.join("fsbench-reflink-src");
    let dst_path = dir.join("fsbench-reflink-dst");
    let result = clone_and_check(&src_path, &dst_path, bytes, seed);
    let _ = std::fs::remove_file(&src_path);
    let _ = std::fs::remove_file(&dst_path);
    result
}

fn clone_and_check(
    src_path: &Path,
    dst_path: &Path,
    bytes: u64,
    seed: u64,
) -> Result<WorkloadOutput> {
    write_pattern_file(src_path, bytes, seed)?;
    let src = File::open(src_path).map_err(|e| Error::io("cannot open", src_path, e))?;
    let dst = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dst_path)
        .map_err(|e| Error::io("cannot create", dst_path, e))?;
    let start = Instant::now();
    let outcome = sys::ficlone(&src, &dst, dst_path)?;
    let seconds = start.elapsed().as_secs_f64();
    match outcome {
        CloneOutcome::Unsupported(code) => Ok(super::unsupported(format!(
            "FICLONE refused: {}",
            std::io::Error::from_raw_os_error(code)
        ))),
        CloneOutcome::Cloned => {
            verify_same(src_path, dst_path, bytes)?;
            let mut out = WorkloadOutput {
                metrics: vec![
                    supported(SUPPORTED, true),
                    Metric::new(SECONDS, "s", seconds),
                    Metric::new(BYTES, "bytes", bytes as f64),
                ],
                ..Default::default()
            };
            if let Ok(Some(ext)) = sys::fiemap(&dst, dst_path) {
                let shared = ext
                    .iter()
                    .filter(|e| e.flags & sys::FIEMAP_EXTENT_SHARED != 0)
                    .count();
                out.notes.push(format!(
                    "clone maps {} extent(s), {} flagged shared",
                    ext.len(),
                    shared
                ));
            }
            Ok(out)
        }
    }
}

/// Write `bytes` of pseudo-random data (a new pattern per MiB) and fsync it.
pub(crate) fn write_pattern_file(path: &Path, bytes: u64, seed: u64) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io("cannot create", path, e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut written = 0u64;
    let mut i = 0u64;
    while written < bytes {
        let n = (bytes - written).min(CHUNK as u64) as usize;
        sys::fill_pattern(&mut buf[..n], seed ^ i.wrapping_mul(0x9E37_79B9));
        f.write_all(&buf[..n])
            .map_err(|e| Error::io("cannot write", path, e))?;
        written += n as u64;
        i += 1;
    }
    f.sync_all().map_err(|e| Error::io("cannot fsync", path, e))
}

/// Compare the first and last MiB of both files: enough to catch a clone that is empty or
/// points at the wrong data without reading a whole GiB twice.
fn verify_same(a: &Path, b: &Path, bytes: u64) -> Result<()> {
    let len_b = std::fs::metadata(b)
        .map_err(|e| Error::io("cannot stat", b, e))?
        .len();
    if len_b != bytes {
        return Err(Error::workload(
            "probe-reflink",
            format!("the clone is {len_b} bytes, the source {bytes}"),
        ));
    }
    for off in [0, bytes.saturating_sub(CHUNK as u64)] {
        if read_at(a, off)? != read_at(b, off)? {
            return Err(Error::workload(
                "probe-reflink",
                format!("the clone differs from the source near offset {off}"),
            ));
        }
    }
    Ok(())
}

fn read_at(path: &Path, off: u64) -> Result<Vec<u8>> {
    let mut f = File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    f.seek(SeekFrom::Start(off))
        .map_err(|e| Error::io("cannot seek", path, e))?;
    let mut v = Vec::with_capacity(CHUNK);
    f.take(CHUNK as u64)
        .read_to_end(&mut v)
        .map_err(|e| Error::io("cannot read", path, e))?;
    Ok(v)
}
