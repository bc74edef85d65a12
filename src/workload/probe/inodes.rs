//! `probe-inodes`: create empty files until the filesystem refuses (ENOSPC, or EDQUOT under a
//! quota) or the probe's cap is reached, and record how many there were and the space `df`
//! still showed then.
//!
//! Seed 004 says ext4 fixes its inode count at mkfs (one inode per 16 KiB by default) and can
//! say "no space left on device" on a volume of millions of small files while space is free,
//! that XFS allocates inodes dynamically and never does, and Btrfs has no inode count at all.
//! An empty file costs an inode and a directory entry, no data block, so ext4 runs out of
//! inodes long before space; XFS (up to `imaxpct` of the space) and Btrfs would go on for a
//! long time, so the cap ends the probe: "no limit reached at CAP files".

use super::space::{self, Space, Stop};
use super::{ProbeFs, ProbeOptions, supported};
use crate::Result;
use crate::metrics::registry::{INODE_LIMIT_REACHED, SUPPORTED};
use crate::workload::WorkloadOutput;
use std::path::Path;

/// Create empty files on the mounted filesystem until it is full or `opts.inode_cap`.
///
/// Metrics: `inode_limit_reached` (1 when it refused with at least a tenth of the space
/// free), `files_created`, `free_bytes_at_stop`, `size_bytes`.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let root = pfs.mountpoint().join("fsbench-inodes");
    let before = Space::of(pfs.mountpoint())?;
    let (files, stop) = create_until_full(&root, u64::from(opts.inode_cap))?;
    crate::host::sync_all();
    let at_stop = Space::of(pfs.mountpoint())?;
    let limit = space::full_with_space_left(stop, &at_stop);
    let mut metrics = vec![
        supported(SUPPORTED, true),
        supported(INODE_LIMIT_REACHED, limit),
    ];
    metrics.extend(space::stop_metrics(files, &at_stop));
    let mut notes = vec![describe(
        files,
        stop,
        limit,
        &before,
        &at_stop,
        opts.inode_cap,
    )];
    if let Some(inodes) = pfs.maintenance().inodes {
        notes.push(format!("{} has {}", pfs.fs(), inodes.words()));
    }
    // The image is thrown away with the probe: deleting the files would only cost time.
    Ok(WorkloadOutput {
        metrics,
        notes,
        ..Default::default()
    })
}

/// Empty files until an ENOSPC/EDQUOT or `cap` files ([`space::create_until_full`]).
pub fn create_until_full(root: &Path, cap: u64) -> Result<(u64, Stop)> {
    space::create_until_full(root, cap, |p| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map(drop)
    })
}

/// The probe's note: where it stopped and what statvfs said before and then.
fn describe(
    files: u64,
    stop: Stop,
    limit: bool,
    before: &Space,
    at_stop: &Space,
    cap: u32,
) -> String {
    let inodes = |s: &Space| {
        if s.inodes == 0 {
            "no inode count".to_string()
        } else {
            format!("{} of {} inodes free", s.inodes_free, s.inodes)
        }
    };
    let what = match (stop, limit) {
        (Stop::Cap, _) => format!("no limit reached at {cap} files"),
        (Stop::Full, true) => format!("out of inodes at {files} files with space left"),
        (Stop::Full, false) => format!("ENOSPC at {files} files with the space used up"),
    };
    format!(
        "{what}: {} then ({}); before: {}, {}",
        at_stop.free_words(),
        inodes(at_stop),
        before.free_words(),
        inodes(before)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_ends_the_loop_with_every_file_made() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("r");
        assert_eq!(create_until_full(&root, 2500).unwrap(), (2500, Stop::Cap));
        let dirs = std::fs::read_dir(&root).unwrap().count();
        assert_eq!(dirs, 3, "1000 files per directory");
        let last = std::fs::read_dir(root.join("d00002")).unwrap().count();
        assert_eq!(last, 500);
    }

    #[test]
    fn the_note_says_where_it_stopped() {
        let s = |free, inodes, inodes_free| Space {
            size: 1000 << 20,
            free,
            inodes,
            inodes_free,
        };
        let n = describe(
            40908,
            Stop::Full,
            true,
            &s(990 << 20, 40960, 40949),
            &s(900 << 20, 40960, 0),
            100_000,
        );
        assert!(
            n.starts_with("out of inodes at 40908 files with space left: 90 %"),
            "{n}"
        );
        assert!(n.contains("0 of 40960 inodes free"), "{n}");
        let n = describe(100_000, Stop::Cap, false, &s(1, 0, 0), &s(1, 0, 0), 100_000);
        assert!(n.starts_with("no limit reached at 100000 files"), "{n}");
        assert!(n.contains("no inode count"), "{n}");
    }
}
