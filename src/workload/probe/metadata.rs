//! `probe-metadata`: does the filesystem refuse writes for want of metadata space while `df`
//! still shows free space?
//!
//! Seed 004 calls this the most common Btrfs trap: metadata chunks exhausted, writes refused,
//! free space reported (hence its advice to run `btrfs balance`). It happens when the space
//! not yet given to chunks is all taken by data chunks, so metadata cannot get a new one. The
//! probe builds that state the way a volume gets there: data allocated until the filesystem is
//! full (fallocate'd 1 MiB files: data chunks take all the space), every other file deleted (the
//! chunks stay allocated, half used, so the freed space is data space only), then small files
//! whose data lives in the metadata (2000 bytes: Btrfs stores files under its 2 KiB
//! `max_inline` inside the metadata tree) with a 2000-byte extended attribute each, until the
//! filesystem refuses or the cap. "Reproduced" when it refused while `df` showed at least a
//! tenth of it free; otherwise "not reproduced", with what was tried (e.g. `mkfs=--mixed`,
//! where data and metadata share block groups). It applies to filesystems whose driver says
//! metadata has chunks of its own ([`crate::fs::maintenance::Maintenance::metadata_chunks`]).

use super::space::{self, Space, Stop};
use super::{ProbeFs, ProbeOptions, supported};
use crate::metrics::registry::{ENOSPC_WITH_FREE_SPACE, SUPPORTED};
use crate::workload::WorkloadOutput;
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Size of each allocated data file.
const BIG: u64 = 1 << 20;
/// Bytes of data (inline in Btrfs's metadata) and of the xattr of each small file.
const SMALL: usize = 2000;

/// Why the probe does not apply to a filesystem, from its driver's facts; `None`: it does.
pub fn not_applicable(fs: &str, metadata_chunks: bool) -> Option<String> {
    (!metadata_chunks).then(|| {
        format!(
            "n/a: {fs} allocates no separate metadata space that could run out while data \
             space is free (its case of ENOSPC with space left is inode exhaustion: \
             probe-inodes)"
        )
    })
}

/// Run the probe on a mounted filesystem (its own small image: it fills it).
///
/// Metrics: `enospc_with_free_space` (1: reproduced), `files_created` (small files),
/// `free_bytes_at_stop`, `size_bytes`.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    if let Some(why) = not_applicable(pfs.fs(), pfs.maintenance().metadata_chunks) {
        return Ok(super::unsupported(why));
    }
    let mnt = pfs.mountpoint().to_path_buf();
    let size = Space::of(&mnt)?.size;
    let big = mnt.join("fsbench-data");
    // More than the filesystem can hold, so the loop always ends by ENOSPC.
    let allocated = allocate_until_full(&big, size / BIG + 64)?;
    for i in (0..allocated).step_by(2) {
        let p = big.join(format!("b{i:06}"));
        std::fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
    }
    crate::host::sync_all();
    let after_delete = Space::of(&mnt)?;
    let (files, stop) = small_until_full(&mnt.join("fsbench-small"), u64::from(opts.metadata_cap))?;
    crate::host::sync_all();
    let at_stop = Space::of(&mnt)?;
    let reproduced = space::full_with_space_left(stop, &at_stop);
    let mut metrics = vec![
        supported(SUPPORTED, true),
        supported(ENOSPC_WITH_FREE_SPACE, reproduced),
    ];
    metrics.extend(space::stop_metrics(files, &at_stop));
    let tried = format!(
        "tried: {allocated} fallocate'd 1 MiB files until ENOSPC, every other one deleted \
         ({} then), then files of {SMALL} bytes with a {SMALL}-byte xattr each until ENOSPC or \
         {} files",
        after_delete.free_words(),
        opts.metadata_cap
    );
    let verdict = match (stop, reproduced) {
        (_, true) => format!(
            "reproduced: ENOSPC after {files} small files while df showed {}",
            at_stop.free_words()
        ),
        (Stop::Cap, _) => format!(
            "not reproduced: {files} small files fit ({} at the end)",
            at_stop.free_words()
        ),
        (Stop::Full, false) => format!(
            "not reproduced: ENOSPC after {files} small files with the space used up ({})",
            at_stop.free_words()
        ),
    };
    Ok(WorkloadOutput {
        metrics,
        notes: vec![verdict, tried],
        ..Default::default()
    })
}

/// fallocate `BIG`-byte files until ENOSPC (or `most` files); returns how many were made.
fn allocate_until_full(dir: &Path, most: u64) -> Result<u64> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    for i in 0..most {
        let p = dir.join(format!("b{i:06}"));
        let f = match std::fs::File::create_new(&p) {
            Ok(f) => f,
            Err(e) if space::is_full(&e) => return Ok(i),
            Err(e) => return Err(Error::io("cannot create", &p, e)),
        };
        if let Err(e) = rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, BIG) {
            let e = std::io::Error::from(e);
            if space::is_full(&e) {
                drop(f);
                // A partly allocated last file would count as allocated: leave none.
                let _ = std::fs::remove_file(&p);
                return Ok(i);
            }
            return Err(Error::io("cannot fallocate", &p, e));
        }
    }
    Ok(most)
}

/// Small files with inline-sized data and an xattr each, until full or `cap`.
fn small_until_full(root: &Path, cap: u64) -> Result<(u64, Stop)> {
    let mut data = vec![0u8; SMALL];
    super::sys::fill_pattern(&mut data, 0x6d65_7461);
    space::create_until_full(root, cap, |p| small_file(p, &data))
}

fn small_file(p: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create_new(p)?;
    f.write_all(data)?;
    rustix::fs::fsetxattr(&f, "user.fsbench", data, rustix::fs::XattrFlags::empty())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_filesystems_with_metadata_chunks_are_probed() {
        assert_eq!(not_applicable("btrfs", true), None);
        let why = not_applicable("ext4", false).unwrap();
        assert!(
            why.starts_with("n/a: ext4") && why.contains("probe-inodes"),
            "{why}"
        );
    }

    #[test]
    fn small_files_stop_at_the_cap_each_with_its_xattr() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        match small_until_full(&root, 3) {
            Ok(r) => assert_eq!(r, (3, Stop::Cap)),
            // tmpfs without user xattrs: nothing to check here.
            Err(e) if e.to_string().contains("Operation not supported") => return,
            Err(e) => panic!("{e}"),
        }
        let f = root.join("d00000/f2");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), SMALL as u64);
        let mut buf = vec![0u8; SMALL + 1];
        let n = rustix::fs::getxattr(&f, "user.fsbench", &mut buf).unwrap();
        assert_eq!(n, SMALL);
    }
}
