//! `rm-tree`: remove a tree like `rm -rf`, then sync.
//!
//! Each directory is read once through its fd (`getdents64`), its names are collected before
//! anything is unlinked (removing while reading is unspecified), then every entry goes with
//! one `unlinkat` relative to that fd. `d_type` decides file or directory; a `statat` is only
//! needed when the filesystem reports `DT_UNKNOWN`. No path is resolved more than once.

use super::walk::{list, open_subdir};
use super::{Metric, WorkloadOutput, open_dir, pool, syncfs};
use crate::metrics::registry::{ENTRIES, OPS_PER_S, SECONDS};
use crate::{Error, Result, cancel};
use rayon::prelude::*;
use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;
use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How a removal runs: in parallel or not, and whether Ctrl-C stops it (not for cleanup).
#[derive(Clone, Copy)]
struct How {
    parallel: bool,
    cancellable: bool,
}

fn remove_contents(fd: OwnedFd, path: &Path, removed: &AtomicU64, how: How) -> Result<()> {
    if how.cancellable && cancel::requested() {
        return Err(Error::Interrupted);
    }
    let names = list(fd.as_fd(), path)?;
    let mut subdirs = Vec::new();
    let mut n = 0u64;
    for (name, mut ft, _) in names {
        if ft == FileType::Unknown {
            let st = rustix::fs::statat(&fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(
                |e| {
                    Error::io(
                        "rm-tree: cannot stat",
                        path.join(name.to_string_lossy().as_ref()),
                        e.into(),
                    )
                },
            )?;
            ft = FileType::from_raw_mode(st.st_mode);
        }
        if ft == FileType::Directory {
            subdirs.push(name);
            continue;
        }
        match rustix::fs::unlinkat(&fd, name.as_c_str(), AtFlags::empty()) {
            Ok(()) => n += 1,
            // d_type lied (or raced): it is a directory after all.
            Err(Errno::ISDIR) => subdirs.push(name),
            Err(e) => {
                return Err(Error::io(
                    "rm-tree: cannot remove",
                    path.join(name.to_string_lossy().as_ref()),
                    e.into(),
                ));
            }
        }
    }
    removed.fetch_add(n, Ordering::Relaxed);
    let one = |name: &CString| -> Result<()> {
        let sub_path = path.join(name.to_string_lossy().as_ref());
        let sub = open_subdir(fd.as_fd(), name, &sub_path)?;
        remove_contents(sub, &sub_path, removed, how)?;
        rustix::fs::unlinkat(&fd, name.as_c_str(), AtFlags::REMOVEDIR)
            .map_err(|e| Error::io("rm-tree: cannot remove directory", &sub_path, e.into()))?;
        removed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    };
    if how.parallel {
        subdirs.par_iter().try_for_each(one)
    } else {
        subdirs.iter().try_for_each(one)
    }
}

/// Remove `dir` and everything below it; returns the entries removed below `dir`.
fn remove_tree(dir: &Path, threads: usize, cancellable: bool) -> Result<u64> {
    let removed = AtomicU64::new(0);
    let root = open_dir(dir)?;
    let how = How {
        parallel: threads > 1,
        cancellable,
    };
    if threads > 1 {
        pool(threads)?.install(|| remove_contents(root, dir, &removed, how))?;
    } else {
        remove_contents(root, dir, &removed, how)?;
    }
    std::fs::remove_dir(dir).map_err(|e| Error::io("rm-tree: cannot remove directory", dir, e))?;
    Ok(removed.into_inner())
}

/// Cleanup for guards: remove `dir` if it exists (single-threaded, no sync). It keeps going
/// after Ctrl-C, which is exactly when guards run.
pub(crate) fn remove_all(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        _ => remove_tree(dir, 1, false).map(|_| ()),
    }
}

/// `rm-tree` that also checks it removed exactly `expected` entries below `dir`.
///
/// Seconds cover the removal and the `syncfs` of the filesystem holding `dir`.
pub fn rm_tree_checked(
    dir: &Path,
    threads: usize,
    expected: Option<u64>,
) -> Result<WorkloadOutput> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let parent_fd = open_dir(parent)?;
    let start = Instant::now();
    let removed = remove_tree(dir, threads, true)?;
    syncfs(&parent_fd, parent)?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(want) = expected.filter(|&w| w != removed) {
        return Err(Error::workload(
            "rm-tree",
            format!(
                "removed {removed} entries under {}, expected {want}",
                dir.display()
            ),
        ));
    }
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", secs),
            Metric::new(ENTRIES, "entries", removed as f64),
            Metric::new(OPS_PER_S, "entries/s", removed as f64 / secs.max(1e-9)),
        ],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_nested_tree_and_counts() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t");
        std::fs::create_dir_all(t.join("a/b/c")).unwrap();
        std::fs::create_dir_all(t.join("empty")).unwrap();
        std::fs::write(t.join("a/f"), b"x").unwrap();
        std::fs::write(t.join("a/b/c/g"), b"y").unwrap();
        std::os::unix::fs::symlink("../nowhere", t.join("a/b/l")).unwrap();
        for threads in [1, 2] {
            if threads == 2 {
                std::fs::create_dir_all(t.join("a/b/c")).unwrap();
                std::fs::create_dir_all(t.join("empty")).unwrap();
                std::fs::write(t.join("a/f"), b"x").unwrap();
                std::fs::write(t.join("a/b/c/g"), b"y").unwrap();
                std::os::unix::fs::symlink("../nowhere", t.join("a/b/l")).unwrap();
            }
            let out = rm_tree_checked(&t, threads, Some(7)).unwrap();
            assert_eq!(out.metrics[1].value, 7.0);
            assert!(!t.exists());
        }
    }
}
