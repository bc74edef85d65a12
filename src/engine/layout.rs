//! File layout: when the file is missing or shorter than the job needs, write it sequentially
//! first (fio does the same), with incompressible data, and time it.

use super::buffer::{BufferPool, DataGen};
use super::rng::fresh_seed;
use super::verify;
use crate::{Error, Result};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// Chunk written per call while laying out.
const CHUNK: u64 = 1 << 20;

/// How to lay out a file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayoutOptions {
    /// O_DIRECT.
    pub direct: bool,
    /// Write `--verify` headers every `bs` bytes (so a later read job can verify).
    pub verify_bs: Option<u64>,
    /// Data seed.
    pub seed: u64,
    /// Compressible percentage of the data.
    pub compress: u8,
}

/// Make `path` at least `size` bytes long by writing sequentially from its current end
/// (rounded down to 4 KiB) to `size`, then fsync; returns the seconds it took (0 when the
/// file was already long enough). Creates the file when missing.
pub fn layout(path: &Path, size: u64, direct: bool) -> Result<f64> {
    layout_with(
        path,
        size,
        LayoutOptions {
            direct,
            verify_bs: None,
            seed: fresh_seed(),
            compress: 0,
        },
    )
}

pub(crate) fn layout_with(path: &Path, size: u64, o: LayoutOptions) -> Result<f64> {
    let start = Instant::now();
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create(true);
    if o.direct {
        opts.custom_flags(libc::O_DIRECT);
    }
    let file = opts
        .open(path)
        .map_err(|e| Error::io("cannot create", path, e))?;
    let current = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", path, e))?
        .len();
    if current >= size {
        return Ok(0.0);
    }
    // Restart at a boundary both verify blocks and O_DIRECT accept.
    let align = o.verify_bs.unwrap_or(4096);
    let mut pos = current / align * align;
    let chunk = match o.verify_bs {
        Some(bs) => (CHUNK / bs).max(1) * bs,
        None => CHUNK,
    };
    let mut pool = BufferPool::new(chunk as usize, 1);
    let mut data = DataGen::new(o.seed, chunk as usize, o.compress);
    data.fill(pool.buf(0));
    while pos < size {
        crate::cancel::check()?;
        let mut len = chunk.min(size - pos);
        if o.direct && len % 4096 != 0 {
            // A short tail with O_DIRECT: round up; the extra bytes are harmless file data.
            len = len.div_ceil(4096) * 4096;
        }
        let buf = &mut pool.buf(0)[..len as usize];
        data.refill(buf);
        if let Some(bs) = o.verify_bs {
            for (i, block) in buf.chunks_exact_mut(bs as usize).enumerate() {
                verify::stamp(block, pos + i as u64 * bs, o.seed, 0);
            }
        }
        file.write_all_at(buf, pos)
            .map_err(|e| Error::io("cannot lay out", path, e))?;
        pos += len;
    }
    file.sync_all()
        .map_err(|e| Error::io("cannot fsync", path, e))?;
    Ok(start.elapsed().as_secs_f64())
}
