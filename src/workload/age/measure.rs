//! How old a filesystem looks, measured the same way on every filesystem (FIEMAP and
//! statvfs, no per-filesystem tool): extents per file and Conway's layout score over the
//! files aging left, free-space fragmentation as the extents a new sequential probe file
//! gets, and fullness.

use crate::host::sys::fiemap::{Extent, fiemap};
use crate::{Error, Result};
use std::fs::File;
use std::path::Path;

/// The block the layout score counts in.
const BLOCK: u64 = 4096;
/// The free-space probe's size at most; an eighth of the capacity (or half the free space)
/// on a smaller filesystem.
pub const PROBE_BYTES: u64 = 1 << 30;

/// The age measures of one filesystem at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgeMeasures {
    /// Regular files measured (those under the aging directory).
    pub files: u64,
    /// Extents per file (physically contiguous extents merged): mean, 90th percentile, most.
    pub extents_mean: Option<f64>,
    /// 90th percentile of extents per file.
    pub extents_p90: Option<f64>,
    /// Most extents of one file.
    pub extents_max: Option<f64>,
    /// Conway's layout score over those files: the fraction of blocks (after each file's
    /// first) that directly follow the previous block on disk; 1 is perfectly laid out.
    pub layout_score: Option<f64>,
    /// Extents of the free-space probe (a new sequential file).
    pub probe_extents: Option<u64>,
    /// The probe's mean extent, KiB: the free space's contiguity as the allocator hands it out.
    pub probe_extent_kib: Option<f64>,
    /// Used blocks as a percentage of all blocks (statvfs).
    pub fullness_pct: f64,
}

/// Extents physically contiguous with the one before merged (filesystems split extents
/// at their own maximum length, which is not fragmentation).
pub fn merged(extents: &[Extent]) -> Vec<Extent> {
    let mut out: Vec<Extent> = Vec::with_capacity(extents.len());
    for e in extents {
        match out.last_mut() {
            Some(l) if l.physical + l.length == e.physical && l.logical + l.length == e.logical => {
                l.length += e.length
            }
            _ => out.push(*e),
        }
    }
    out
}

/// A file's (contiguous, pairs) for the layout score: of the blocks after its first, how
/// many follow the previous block on disk. Holes break nothing (the next mapped block is
/// "previous").
pub fn layout_pairs(extents: &[Extent]) -> (u64, u64) {
    let m = merged(extents);
    let blocks: u64 = m.iter().map(|e| e.length.div_ceil(BLOCK)).sum();
    if blocks < 2 {
        return (0, 0);
    }
    let contiguous: u64 = m.iter().map(|e| e.length.div_ceil(BLOCK) - 1).sum();
    (contiguous, blocks - 1)
}

/// Measure the filesystem at `root`: the files under `files_dir` (absent on a fresh
/// filesystem) and a probe file written in `probe_dir`, then removed.
pub fn measure(root: &Path, files_dir: &Path, probe_dir: &Path) -> Result<AgeMeasures> {
    let mut m = AgeMeasures::default();
    let (mut counts, mut cont, mut pairs) = (Vec::new(), 0u64, 0u64);
    if files_dir.is_dir() {
        let d = File::open(files_dir).map_err(|e| Error::io("cannot open", files_dir, e))?;
        let _ = rustix::fs::syncfs(&d);
        walk(files_dir, &mut |path| {
            let f = File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
            if let Some(ext) = fiemap(&f, path)? {
                if ext.is_empty() {
                    return Ok(());
                }
                counts.push(merged(&ext).len() as f64);
                let (c, p) = layout_pairs(&ext);
                cont += c;
                pairs += p;
            }
            Ok(())
        })?;
    }
    m.files = counts.len() as u64;
    if !counts.is_empty() {
        counts.sort_by(f64::total_cmp);
        m.extents_mean = Some(counts.iter().sum::<f64>() / counts.len() as f64);
        let k = ((counts.len() as f64 * 0.9).ceil() as usize).clamp(1, counts.len()) - 1;
        m.extents_p90 = Some(counts[k]);
        m.extents_max = counts.last().copied();
    }
    if pairs > 0 {
        m.layout_score = Some(cont as f64 / pairs as f64);
    }
    if let Some((n, bytes)) = probe(probe_dir)? {
        m.probe_extents = Some(n);
        m.probe_extent_kib = Some(bytes as f64 / 1024.0 / n.max(1) as f64);
    }
    let st = rustix::fs::statvfs(root)
        .map_err(|e| Error::io("statvfs", root, std::io::Error::from(e)))?;
    m.fullness_pct = 100.0 * (st.f_blocks - st.f_bfree) as f64 / st.f_blocks.max(1) as f64;
    Ok(m)
}

/// Write a probe file sequentially (1 MiB writes, fsync), count its extents, remove it:
/// how fragmented the free space is that a new file is given. `None` when FIEMAP is not
/// supported or there is too little free space.
fn probe(dir: &Path) -> Result<Option<(u64, u64)>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    // An eighth of the capacity, so a fresh filesystem and one aged to 75 % (half its free
    // space) write the same probe, large enough that it cannot fit one leftover free run.
    let st =
        rustix::fs::statvfs(dir).map_err(|e| Error::io("statvfs", dir, std::io::Error::from(e)))?;
    let capacity = st.f_blocks.saturating_mul(st.f_frsize);
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    let size = (capacity / 8).min(free / 2).min(PROBE_BYTES) / (1 << 20) * (1 << 20);
    if size < (1 << 20) {
        return Ok(None);
    }
    let path = dir.join("probe");
    let r = (|| {
        use std::io::Write;
        let mut f = File::create(&path).map_err(|e| Error::io("cannot create", &path, e))?;
        let buf: Vec<u8> = (0..(1u32 << 20))
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for _ in 0..size >> 20 {
            f.write_all(&buf)
                .map_err(|e| Error::io("cannot write", &path, e))?;
        }
        f.sync_all().map_err(|e| Error::io("fsync", &path, e))?;
        Ok(fiemap(&f, &path)?.map(|e| (merged(&e).len() as u64, size)))
    })();
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(dir);
    r
}

/// Call `f` on every regular file under `dir` (symlinks not followed).
fn walk(dir: &Path, f: &mut dyn FnMut(&Path) -> Result<()>) -> Result<()> {
    for e in std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))? {
        let e = e.map_err(|e| Error::io("cannot read", dir, e))?;
        let t = e
            .file_type()
            .map_err(|x| Error::io("cannot stat", e.path(), x))?;
        if t.is_dir() {
            walk(&e.path(), f)?;
        } else if t.is_file() {
            f(&e.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    #[test]
    fn a_split_but_contiguous_file_is_one_extent_and_scores_one() {
        let e = [
            ext(0, 1 << 20, 128 << 10),
            ext(128 << 10, (1 << 20) + (128 << 10), 64 << 10),
        ];
        assert_eq!(merged(&e).len(), 1);
        assert_eq!(layout_pairs(&e), (47, 47));
    }

    #[test]
    fn each_jump_costs_one_pair_of_the_layout_score() {
        // 3 extents of 4 blocks each, none following the other: 9 of 11 pairs contiguous.
        let e = [
            ext(0, 0, 16384),
            ext(16384, 65536, 16384),
            ext(32768, 8192 * 4096, 16384),
        ];
        assert_eq!(merged(&e).len(), 3);
        assert_eq!(layout_pairs(&e), (9, 11));
        assert_eq!(layout_pairs(&[ext(0, 0, 4096)]), (0, 0));
    }
}
