//! Metadata and small-file workloads: untar, cold walk, rm -rf, small files, fs_mark-style creates.
//!
//! Seed 000's test (unpack three copies of /usr/share + /usr/include, 105k entries; `find` on a
//! cold cache; `rm -rf`; untar and rm end with sync), seed 003's 50,000 × 4 KiB files and the
//! fs_mark create rates of seeds 001/004. Everything works through directory fds and `*at`
//! system calls so fsbench's own overhead per entry is at most what GNU tar/find/rm spend.
//!
//! Metrics (per workload id):
//! - `untar`, `find-cold`, `rm-tree`: `seconds`, `entries`, `ops_per_s` (entries/s);
//!   `untar` also `bytes`.
//! - `smallfiles`: `create_seconds`, `create_files_per_s`, `sync_seconds`, `read_seconds`,
//!   `read_files_per_s`, `entries` (files), `bytes`.
//! - `fsmark`: `seconds`, `entries` (files), `ops_per_s` (files/s).

use super::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::os::fd::OwnedFd;
use std::path::Path;

mod fsmark;
pub mod kind;
mod remove;
mod smallfiles;
mod untar;
mod walk;

pub use super::corpus::{Corpus, CorpusSpec};
pub use fsmark::{FsmarkSpec, FsyncPolicy, fsmark};
pub use remove::rm_tree_checked;
pub use smallfiles::{SmallFilesSpec, smallfiles};
pub use untar::untar;
pub use walk::find_cold;

/// Remove `dir` and everything under it without timing or syncing (for cleanup guards).
/// A missing `dir` is fine.
pub fn remove_all(dir: &Path) -> Result<()> {
    remove::remove_all(dir)
}

/// Open a directory for `*at` calls and `syncfs`.
pub(crate) fn open_dir(path: &Path) -> Result<OwnedFd> {
    rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Error::io("cannot open directory", path, e.into()))
}

/// `syncfs(2)` on the filesystem holding `fd`: flush only the filesystem under test.
pub(crate) fn syncfs(fd: &OwnedFd, path: &Path) -> Result<()> {
    rustix::fs::syncfs(fd).map_err(|e| Error::io("cannot sync the filesystem of", path, e.into()))
}

/// Drop caches; without root, keep going warm and leave a note that says so.
/// Returns whether the caches were dropped.
pub(crate) fn drop_caches_or_note(workload: &str, notes: &mut Vec<String>) -> bool {
    if let Err(e) = crate::host::drop_caches() {
        notes.push(format!(
            "{workload}: caches not dropped, measured warm ({e})"
        ));
        return false;
    }
    true
}

/// A rayon pool of `threads` workers for the parallel walk and removal.
pub(crate) fn pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Other(format!("cannot start {threads} worker threads: {e}")))
}
