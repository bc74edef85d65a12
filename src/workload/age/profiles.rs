//! The aging profiles: each a loop of operations on the live set until the amount is
//! written. Every random choice comes from the seeded generator, so a seed ages alike.

use super::{Ager, is_enospc};
use crate::{Error, Result};
use std::path::PathBuf;

/// Run `op`; on ENOSPC make room and go on (aging near full is the point, not a failure).
fn tolerant(a: &mut Ager<'_>, op: impl FnOnce(&mut Ager<'_>) -> Result<()>) -> Result<()> {
    match op(a) {
        Err(e) if is_enospc(&e) => a.make_room(),
        r => r,
    }
}

/// Largest churn file: a 64th of the live target (at most 16 MiB), so many files take part.
fn churn_max(a: &Ager<'_>) -> u64 {
    (a.live_target / 64).clamp(64 << 10, 16 << 20)
}

/// Create, append, overwrite and delete files of log-uniform sizes (4 KiB up to
/// [`churn_max`]) at depths 0..=4: mostly creates and appends below the live target, then
/// deletes as often as creates around it.
pub fn churn(a: &mut Ager<'_>) -> Result<()> {
    while !a.done() {
        let max = churn_max(a);
        let below = a.live < a.live_target;
        let r = a.rng.below(100);
        let op = match (below, r) {
            (_, _) if a.files.is_empty() => 0,
            (true, 0..60) | (false, 0..25) => 0,
            (true, 60..85) | (false, 25..45) => 1,
            (true, _) | (false, 45..65) => 2,
            (false, _) => 3,
        };
        tolerant(a, |a| match op {
            0 => {
                let dir = a.random_dir(4, 8)?;
                let size = a.log_size(4 << 10, max);
                a.create(&dir, size)
            }
            1 => {
                let i = a.pick().expect("not empty");
                let add = a.log_size(4 << 10, max / 2);
                let f = a.open(i)?;
                let (path, size) = (a.files[i].path.clone(), a.files[i].size);
                a.write_at(&f, &path, size, add)?;
                a.files[i].size += add;
                a.live += add;
                Ok(())
            }
            2 => {
                let i = a.pick().expect("not empty");
                let (path, size) = (a.files[i].path.clone(), a.files[i].size);
                let len = a.log_size(4 << 10, size.max(8 << 10)).min(size);
                let off = a.between(0, (size - len) / 4096) * 4096;
                let f = a.open(i)?;
                a.write_at(&f, &path, off, len)
            }
            _ => {
                let i = a.pick().expect("not empty");
                a.delete(i)
            }
        })?;
        a.step()?;
    }
    Ok(())
}

/// Fill the live target with four large files written sequentially, then overwrite 4–64
/// KiB pieces at random 4 KiB-aligned offsets (a database's or a VM image's pattern).
pub fn overwrite(a: &mut Ager<'_>) -> Result<()> {
    let each = (a.live_target / 4).max(1 << 20) / 4096 * 4096;
    let dir = a.random_dir(0, 1)?;
    for _ in 0..4 {
        if a.done() {
            break;
        }
        tolerant(a, |a| a.create(&dir, each))?;
        a.step()?;
    }
    while !a.done() && !a.files.is_empty() {
        let i = a.pick().expect("not empty");
        let (path, size) = (a.files[i].path.clone(), a.files[i].size);
        let len = a.between(1, 16) * 4096;
        if size < len {
            a.step()?;
            continue;
        }
        let off = a.between(0, (size - len) / 4096) * 4096;
        tolerant(a, |a| {
            let f = a.open(i)?;
            a.write_at(&f, &path, off, len)
        })?;
        a.step()?;
    }
    Ok(())
}

/// Fill the live target with 1–64 MiB files, then punch 4 KiB–1 MiB holes in one file and
/// write as much at a random place of another (into a hole when it lands on one): free
/// space cut into pieces and reused.
pub fn punch(a: &mut Ager<'_>) -> Result<()> {
    let max = (a.live_target / 16).clamp(1 << 20, 64 << 20);
    while !a.done() && a.live < a.live_target {
        let dir = a.random_dir(2, 4)?;
        let size = a.log_size(1 << 20, max) / 4096 * 4096;
        let before = a.files.len();
        tolerant(a, |a| a.create(&dir, size))?;
        a.step()?;
        if a.files.len() <= before {
            break;
        }
    }
    while !a.done() && !a.files.is_empty() {
        let len = a.between(1, 256) * 4096;
        let i = a.pick().expect("not empty");
        let size = a.files[i].size;
        if size > len {
            let off = a.between(0, (size - len) / 4096) * 4096;
            let f = a.open(i)?;
            punch_hole(&f, &a.files[i].path, off, len)?;
        }
        let j = a.pick().expect("not empty");
        let (path, size) = (a.files[j].path.clone(), a.files[j].size);
        if size > len {
            let off = a.between(0, (size - len) / 4096) * 4096;
            tolerant(a, |a| {
                let f = a.open(j)?;
                a.write_at(&f, &path, off, len)
            })?;
        }
        a.step()?;
    }
    Ok(())
}

/// `fallocate(PUNCH_HOLE | KEEP_SIZE)`: the range's blocks go back to free space.
fn punch_hole(f: &std::fs::File, path: &std::path::Path, off: u64, len: u64) -> Result<()> {
    use rustix::fs::FallocateFlags as F;
    rustix::fs::fallocate(f, F::PUNCH_HOLE | F::KEEP_SIZE, off, len).map_err(|e| {
        Error::io(
            "aging (punch): cannot punch a hole in",
            path,
            std::io::Error::from(e),
        )
    })
}

/// Files of a source tree: at most this many (a checkout of a mid-sized project).
const TREE_FILES: u64 = 20_000;

/// A generated source tree's history checked out revision after revision, as Conway et
/// al. age with `git pull`: a tree of small files (512 B–64 KiB, depth 1..=4), then per
/// revision about 3 % of the files rewritten whole the way a checkout does (a new file
/// renamed over the old), 0.5 % added and 0.3 % deleted, and the revision synced. No git
/// program runs: the generator is fsbench's own, so a seed gives the same history.
pub fn git(a: &mut Ager<'_>) -> Result<()> {
    let n = (a.live_target / (16 << 10)).clamp(64, TREE_FILES);
    let mut dirs: Vec<PathBuf> = Vec::new();
    for _ in 0..(n / 16).max(4) {
        let mut d = a.random_dir(4, 6)?;
        if d.file_name().is_some_and(|f| f == super::AGED_DIR) {
            d.push("src");
            std::fs::create_dir_all(&d).map_err(|e| Error::io("cannot create", &d, e))?;
        }
        dirs.push(d);
    }
    let mut i = 0u64;
    while i < n && !a.done() {
        let d = dirs[a.rng.below(dirs.len() as u64) as usize].clone();
        let size = a.log_size(512, 64 << 10);
        tolerant(a, |a| a.create(&d, size))?;
        a.step()?;
        i += 1;
    }
    while !a.done() && !a.files.is_empty() {
        let count = a.files.len() as u64;
        for _ in 0..(count * 3 / 100).max(1) {
            let k = a.pick().expect("not empty");
            let size = a.log_size(512, 64 << 10);
            tolerant(a, |a| checkout(a, k, size))?;
            a.step()?;
        }
        for _ in 0..(count / 200).max(1) {
            let d = dirs[a.rng.below(dirs.len() as u64) as usize].clone();
            let size = a.log_size(512, 64 << 10);
            tolerant(a, |a| a.create(&d, size))?;
            a.step()?;
        }
        for _ in 0..(count * 3 / 1000) {
            if let Some(k) = a.pick() {
                a.delete(k)?;
            }
        }
        a.sync()?;
    }
    Ok(())
}

/// One file of a revision: the new content written to a new file, renamed over the old.
fn checkout(a: &mut Ager<'_>, k: usize, size: u64) -> Result<()> {
    let path = a.files[k].path.clone();
    let tmp = path.with_extension("new");
    let f = std::fs::File::create(&tmp).map_err(|e| Error::io("aging: cannot create", &tmp, e))?;
    a.write_at(&f, &tmp, 0, size)?;
    drop(f);
    std::fs::rename(&tmp, &path).map_err(|e| Error::io("aging: cannot rename", &tmp, e))?;
    a.live = a.live - a.files[k].size + size;
    a.files[k].size = size;
    Ok(())
}
