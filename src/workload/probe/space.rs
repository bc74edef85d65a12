//! What the capacity probes (`probe-inodes`, `probe-metadata`) share: statvfs as `df` reads
//! it, which errors mean "the filesystem is full", and the one judgement both make — did it
//! stop with space still free?

use crate::metrics::registry::{FILES_CREATED, FREE_BYTES_AT_STOP, SIZE_BYTES};
use crate::workload::Metric;
use crate::{Error, Result};
use std::path::Path;

/// The share of the filesystem `df` must still show free, when creating stopped with ENOSPC,
/// for the stop to count as "full with space left": well above the few percent a filesystem
/// keeps back for itself (ext4's 5 % root reserve is not in `f_bavail` either way).
pub const FREE_LEFT: f64 = 0.10;

/// A filesystem's space and inodes, as statvfs (and so `df`, `df -i`) reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Space {
    /// Size, bytes (`f_blocks` × `f_frsize`).
    pub size: u64,
    /// Available to an unprivileged writer, bytes (`f_bavail` × `f_frsize`): `df`'s "Avail".
    pub free: u64,
    /// Inodes in total (`f_files`; 0 where there is no count: Btrfs).
    pub inodes: u64,
    /// Inodes free (`f_ffree`).
    pub inodes_free: u64,
}

impl Space {
    /// statvfs of the filesystem mounted at `path`.
    pub fn of(path: &Path) -> Result<Space> {
        let st = rustix::fs::statvfs(path)
            .map_err(|e| Error::io("cannot statvfs", path, std::io::Error::from(e)))?;
        Ok(Space {
            size: st.f_blocks * st.f_frsize,
            free: st.f_bavail * st.f_frsize,
            inodes: st.f_files,
            inodes_free: st.f_ffree,
        })
    }

    /// Free share of the size, 0–1.
    pub fn free_share(&self) -> f64 {
        if self.size == 0 {
            0.0
        } else {
            self.free as f64 / self.size as f64
        }
    }

    /// "92 % (567 MiB) free".
    pub fn free_words(&self) -> String {
        format!(
            "{:.0} % ({} MiB) free",
            self.free_share() * 100.0,
            self.free >> 20
        )
    }
}

/// Why creating files stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// ENOSPC or EDQUOT.
    Full,
    /// The probe's file cap, before any error.
    Cap,
}

/// Whether an error is the filesystem saying it is full (ENOSPC, or EDQUOT under a quota).
pub fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// Files per directory of [`create_until_full`], so no directory grows large enough to be the
/// bottleneck.
pub const PER_DIR: u64 = 1000;

/// Make files `root/dNNNNN/f<i>` with `make`, [`PER_DIR`] to a directory, until an ENOSPC/EDQUOT
/// (from `make` or from creating a directory) or `cap` files; any other error fails. Returns
/// the files made and why it stopped.
pub fn create_until_full(
    root: &Path,
    cap: u64,
    mut make: impl FnMut(&Path) -> std::io::Result<()>,
) -> Result<(u64, Stop)> {
    std::fs::create_dir_all(root).map_err(|e| Error::io("cannot create", root, e))?;
    let mut dir = root.to_path_buf();
    for i in 0..cap {
        if i % PER_DIR == 0 {
            if crate::cancel::requested() {
                return Err(Error::Interrupted);
            }
            dir = root.join(format!("d{:05}", i / PER_DIR));
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if is_full(&e) => return Ok((i, Stop::Full)),
                Err(e) => return Err(Error::io("cannot create", &dir, e)),
            }
        }
        let path = dir.join(format!("f{i}"));
        match make(&path) {
            Ok(()) => {}
            Err(e) if is_full(&e) => return Ok((i, Stop::Full)),
            Err(e) => return Err(Error::io("cannot create", &path, e)),
        }
    }
    Ok((cap, Stop::Cap))
}

/// Whether the filesystem refused to create more while `df` still showed at least
/// [`FREE_LEFT`] of it free: the trap both probes look for.
pub fn full_with_space_left(stop: Stop, at_stop: &Space) -> bool {
    stop == Stop::Full && at_stop.free_share() >= FREE_LEFT
}

/// The metrics both probes record about where they stopped: files created, the free space
/// then, and the filesystem's size (so a reader sees the share).
pub fn stop_metrics(files: u64, at_stop: &Space) -> Vec<Metric> {
    vec![
        Metric::new(FILES_CREATED, "count", files as f64),
        Metric::new(FREE_BYTES_AT_STOP, "bytes", at_stop.free as f64),
        Metric::new(SIZE_BYTES, "bytes", at_stop.size as f64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(size: u64, free: u64) -> Space {
        Space {
            size,
            free,
            inodes: 0,
            inodes_free: 0,
        }
    }

    #[test]
    fn full_with_space_left_needs_enospc_and_a_tenth_free() {
        let mib = 1u64 << 20;
        // ext4 out of inodes: 567 of 613 MiB free.
        assert!(full_with_space_left(
            Stop::Full,
            &space(613 * mib, 567 * mib)
        ));
        // Really full: a few MiB of slack is not "df shows free space".
        assert!(!full_with_space_left(
            Stop::Full,
            &space(251 * mib, 2 * mib)
        ));
        // Stopped by the cap: nothing ran out.
        assert!(!full_with_space_left(
            Stop::Cap,
            &space(640 * mib, 431 * mib)
        ));
        assert!(!full_with_space_left(Stop::Full, &space(0, 0)));
        assert_eq!(
            space(100 * mib, 25 * mib).free_words(),
            "25 % (25 MiB) free"
        );
    }

    #[test]
    fn enospc_and_edquot_are_full_other_errors_are_not() {
        let e = |n| std::io::Error::from_raw_os_error(n);
        assert!(is_full(&e(libc::ENOSPC)) && is_full(&e(libc::EDQUOT)));
        assert!(!is_full(&e(libc::EIO)) && !is_full(&e(libc::EROFS)));
    }
}
