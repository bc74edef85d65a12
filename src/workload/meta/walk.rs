//! `find-cold`: drop caches, then walk the tree and `lstat` every entry.
//!
//! GNU `find DIR` alone trusts `d_type` and stats nothing; anything that prints sizes or tests
//! types beyond `d_type` (`-printf '%s'`, `-ls`, `-size`) makes it `fstatat` every entry. The
//! workload is defined as the latter (the "stat every entry, as find does"), so the fair
//! GNU equivalent is `find DIR -printf '%s\n' >/dev/null`. Each directory is read with
//! `getdents64` through an fd, every entry is `fstatat(AT_SYMLINK_NOFOLLOW)`-ed relative to it,
//! and subdirectories are opened with `openat(O_NOFOLLOW)`: no path is resolved twice. The
//! order is fts's pre-order (a subdirectory is walked as soon as it is stat-ed), with every
//! directory's entries in inode order (see [`walk_dir`] and [`list`] for why).

use super::{Metric, WorkloadOutput, drop_caches_or_note, pool};
use crate::metrics::registry::{ENTRIES, OPS_PER_S, SECONDS};
use crate::{Error, Result, cancel};
use rayon::prelude::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Running totals of a walk (shared between threads).
#[derive(Default)]
struct Tally {
    entries: AtomicU64,
    bytes: AtomicU64,
}

thread_local! {
    /// getdents64 buffer: 64 KiB like GNU's fts, so a directory is read in one or two calls
    /// (rustix's `Dir` starts at under 1 KiB and costs many more system calls).
    static DENTS: RefCell<Vec<MaybeUninit<u8>>> = RefCell::new(vec![MaybeUninit::uninit(); 64 << 10]);
}

/// One directory entry: name, `d_type`, inode number.
pub(crate) type Dent = (CString, FileType, u64);

/// List a directory (without `.` and `..`), sorted by inode number.
///
/// Inode order turns the per-entry `stat`/`unlink` that follows into a mostly sequential sweep
/// of the inode table on a cold cache; on hashed directories (ext4 htree, XFS) readdir order
/// is random. gnulib's fts (under find and rm) sorts only directories above 10,000 entries;
/// sorting every directory costs no extra system call, and a cold walk of the corpus on ext4
/// issues 2 % fewer read requests than in readdir order (same on XFS and Btrfs; counts in
/// docs/reports.md, "fsbench's walk and rm against GNU find and rm -rf").
pub(crate) fn list(fd: BorrowedFd<'_>, path: &Path) -> Result<Vec<Dent>> {
    DENTS.with(|buf| {
        let mut buf = buf.borrow_mut();
        let mut it = RawDir::new(fd, &mut buf[..]);
        let mut v = Vec::new();
        while let Some(e) = it.next() {
            let e = e.map_err(|e| Error::io("cannot read directory", path, e.into()))?;
            let n = e.file_name();
            if n != c"." && n != c".." {
                v.push((n.to_owned(), e.file_type(), e.ino()));
            }
        }
        v.sort_unstable_by_key(|d| d.2);
        Ok(v)
    })
}

/// Whether a walk's directory reads may update directory atimes.
///
/// Under `relatime` the first read of a directory after it changed updates its atime (a
/// metadata write). The measured walk reads as `find` does ([`Atime::Touch`]); a check that
/// runs before it, like untar's verification, must not use up those updates ([`Atime::Keep`]):
/// else the measured walk over fsbench's own tree would skip writes that `find` over a tree
/// GNU tar extracted pays, and `find-cold`'s device writes could not show what `noatime` saves.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Atime {
    /// Read directories the ordinary way (atime updated as the mount options say).
    Touch,
    /// Open directories with `O_NOATIME` (where permitted: owner or root).
    Keep,
}

const DIR_READ: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Open subdirectory `name` of `parent` for listing, never following a symlink.
pub(crate) fn open_subdir(parent: BorrowedFd<'_>, name: &CStr, path: &Path) -> Result<OwnedFd> {
    open_dir_at(parent, name, path, Atime::Touch)
}

/// Open directory `name` relative to `parent` (no symlink followed), keeping atimes if asked.
fn open_dir_at(parent: BorrowedFd<'_>, name: &CStr, path: &Path, atime: Atime) -> Result<OwnedFd> {
    open_with(atime, path, |extra| {
        rustix::fs::openat(parent, name, DIR_READ | extra, Mode::empty())
    })
}

/// Open the walk's root `dir` (a symlink to a directory is fine there, as for `find DIR`).
fn open_root(dir: &Path, atime: Atime) -> Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    open_with(atime, dir, |extra| {
        rustix::fs::open(dir, flags | extra, Mode::empty())
    })
}

/// Run `open` with `O_NOATIME` for [`Atime::Keep`]. That flag needs ownership or
/// CAP_FOWNER; without them (EPERM) the directory is opened the ordinary way.
fn open_with(
    atime: Atime,
    path: &Path,
    open: impl Fn(OFlags) -> rustix::io::Result<OwnedFd>,
) -> Result<OwnedFd> {
    let res = match atime {
        Atime::Keep => match open(OFlags::NOATIME) {
            Err(rustix::io::Errno::PERM) => open(OFlags::empty()),
            other => other,
        },
        Atime::Touch => open(OFlags::empty()),
    };
    res.map_err(|e| Error::io("cannot open directory", path, e.into()))
}

/// Walk the directory open as `fd`: stat every entry in inode order (see [`list`]).
///
/// Single-threaded, a subdirectory is entered as soon as it is stat-ed, before its next
/// sibling: a pre-order walk, as gnulib's fts does under `find`. Opening a directory right
/// after its `fstatat` finds its inode and dentry still cached; stat-ing all siblings first and
/// descending later (the order before issue 19) kept a whole frontier of directories stat-ed
/// but not yet opened, and when memory is reclaimed meanwhile (another process's
/// `drop_caches`, a busy host) each of them is read from the device again. Parallel walks
/// (`--threads N`) stat a directory's entries first and then hand its subdirectories to the
/// pool, so that there is work to share.
fn walk_dir(fd: OwnedFd, path: &Path, tally: &Tally, parallel: bool, atime: Atime) -> Result<()> {
    if cancel::requested() {
        return Err(Error::Interrupted);
    }
    let mut subdirs: Vec<CString> = Vec::new();
    let (mut entries, mut bytes) = (0u64, 0u64);
    let descend = |name: &CString| -> Result<()> {
        let sub_path: PathBuf = path.join(name.to_string_lossy().as_ref());
        let sub = open_dir_at(fd.as_fd(), name, &sub_path, atime)?;
        walk_dir(sub, &sub_path, tally, parallel, atime)
    };
    for (name, _, _) in list(fd.as_fd(), path)? {
        let st =
            rustix::fs::statat(&fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(|err| {
                Error::io(
                    "cannot stat",
                    path.join(name.to_string_lossy().as_ref()),
                    err.into(),
                )
            })?;
        entries += 1;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory if parallel => subdirs.push(name),
            FileType::Directory => descend(&name)?,
            FileType::RegularFile => bytes += st.st_size as u64,
            _ => {}
        }
    }
    tally.entries.fetch_add(entries, Ordering::Relaxed);
    tally.bytes.fetch_add(bytes, Ordering::Relaxed);
    if parallel {
        subdirs.par_iter().try_for_each(descend)
    } else {
        Ok(())
    }
}

/// Walk `dir` and return (entries below it, bytes of its regular files), stat-ing everything.
pub(crate) fn count(dir: &Path, threads: usize, atime: Atime) -> Result<(u64, u64)> {
    let tally = Tally::default();
    let root = open_root(dir, atime)?;
    if threads > 1 {
        pool(threads)?.install(|| walk_dir(root, dir, &tally, true, atime))?;
    } else {
        walk_dir(root, dir, &tally, false, atime)?;
    }
    Ok((tally.entries.into_inner(), tally.bytes.into_inner()))
}

/// `find-cold`: drop caches, walk `dir` and stat every entry; `expected` entries are checked.
///
/// With `include_root` the root itself is stat-ed and counted too, as `find DIR` does (used
/// when walking a user's existing tree, so the count matches `find DIR | wc -l`).
/// Without root the caches cannot be dropped: the walk runs warm, a note says so and the
/// output is marked [`WorkloadOutput::ran_warm`] (recorded as `find-warm`).
pub fn find_cold(
    dir: &Path,
    threads: usize,
    expected: Option<u64>,
    include_root: bool,
) -> Result<WorkloadOutput> {
    let mut out = WorkloadOutput::default();
    match crate::host::cache::checkpoint(dir) {
        Ok(true) => {}
        Ok(false) => out.notes.push(
            "find-cold: the journal was not checkpointed (filesystem of / or of fsbench, or it cannot be frozen); metadata written just before may still be cached".into(),
        ),
        Err(e) => out
            .notes
            .push(format!("find-cold: the journal was not checkpointed: {e}")),
    }
    out.ran_warm = !drop_caches_or_note("find-cold", &mut out.notes);
    let start = Instant::now();
    let mut entries = 0;
    if include_root {
        std::fs::symlink_metadata(dir).map_err(|e| Error::io("cannot stat", dir, e))?;
        entries += 1;
    }
    entries += count(dir, threads, Atime::Touch)?.0;
    let secs = start.elapsed().as_secs_f64();
    if let Some(want) = expected.filter(|&w| w != entries) {
        return Err(Error::workload(
            "find-cold",
            format!(
                "walked {entries} entries under {}, expected {want}",
                dir.display()
            ),
        ));
    }
    out.metrics = vec![
        Metric::new(SECONDS, "s", secs),
        Metric::new(ENTRIES, "entries", entries as f64),
        Metric::new(OPS_PER_S, "entries/s", entries as f64 / secs.max(1e-9)),
    ];
    Ok(out)
}
