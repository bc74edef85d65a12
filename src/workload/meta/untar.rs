//! `untar`: extract the corpus with as few system calls per entry as GNU tar or fewer.
//!
//! The tar crate parses the archive; creation is ours. `Entry::unpack_in` canonicalizes the
//! destination and the parent of every entry (a realpath, i.e. one `lstat` per path component)
//! and restores mtimes, which roughly doubles the syscalls per file. Here every entry is created
//! relative to a cached directory fd: a file is `openat` + `write` + `close`, a directory one
//! `mkdirat`, a symlink one `symlinkat`. Parents are opened with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)`, so a hostile archive cannot write outside the destination.
//! Ownership and mtimes are not restored (like `tar --no-same-owner --touch`); modes are.

use super::{Metric, WorkloadOutput, open_dir, syncfs, walk};
use crate::metrics::registry::{BYTES, ENTRIES, OPS_PER_S, SECONDS};
use crate::workload::corpus::{Corpus, Kind, Source, classify, normalize};
use crate::{Error, Result, cancel};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn split_parent(p: &[u8]) -> (&[u8], &[u8]) {
    match p.iter().rposition(|&c| c == b'/') {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => (&[], p),
    }
}

/// Extracts one archive stream under one root directory.
struct Extractor<'a> {
    root: BorrowedFd<'a>,
    root_path: &'a Path,
    /// The most recently used parent directory (archives list a directory's files together).
    cur: Option<(Vec<u8>, OwnedFd)>,
    buf: Vec<u8>,
    entries: u64,
    bytes: u64,
}

const DIR_PATH: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

impl<'a> Extractor<'a> {
    fn new(root: BorrowedFd<'a>, root_path: &'a Path) -> Self {
        Extractor {
            root,
            root_path,
            cur: None,
            buf: vec![0; 256 << 10],
            entries: 0,
            bytes: 0,
        }
    }

    fn err(&self, action: &str, rel: &[u8], e: impl Into<io::Error>) -> Error {
        let rel = String::from_utf8_lossy(rel);
        Error::io(
            format!("untar: cannot {action}"),
            self.root_path.join(&*rel),
            e.into(),
        )
    }

    /// Make `parent` the cached directory, creating missing components like `mkdir -p`.
    fn enter(&mut self, parent: &[u8]) -> Result<()> {
        if self.cur.as_ref().is_some_and(|(p, _)| p == parent) {
            return Ok(());
        }
        // Resolve relative to the cached directory when it is an ancestor (shorter walk).
        let (base, rest): (BorrowedFd<'_>, &[u8]) = match &self.cur {
            Some((p, fd))
                if parent.len() > p.len() && parent.starts_with(p) && parent[p.len()] == b'/' =>
            {
                (fd.as_fd(), &parent[p.len() + 1..])
            }
            _ => (self.root, parent),
        };
        let fd = match rustix::fs::openat2(base, rest, DIR_PATH, Mode::empty(), beneath()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                self.mkdir_p(parent)?;
                rustix::fs::openat2(self.root, parent, DIR_PATH, Mode::empty(), beneath())
                    .map_err(|e| self.err("open directory", parent, e))?
            }
            Err(e) => return Err(self.err("open directory", parent, e)),
        };
        self.cur = Some((parent.to_vec(), fd));
        Ok(())
    }

    /// Create every missing directory of `path` (archives may omit parents).
    fn mkdir_p(&mut self, path: &[u8]) -> Result<()> {
        let mut end = 0;
        while end < path.len() {
            end = path[end..]
                .iter()
                .position(|&c| c == b'/')
                .map_or(path.len(), |i| end + i);
            match rustix::fs::mkdirat(self.root, &path[..end], Mode::from_raw_mode(0o755)) {
                Ok(()) => self.entries += 1,
                Err(Errno::EXIST) => {}
                Err(e) => return Err(self.err("create directory", &path[..end], e)),
            }
            end += 1;
        }
        Ok(())
    }

    fn dirfd(&self) -> BorrowedFd<'_> {
        match &self.cur {
            Some((_, fd)) => fd.as_fd(),
            None => self.root,
        }
    }

    fn run<R: Read>(&mut self, reader: R) -> Result<()> {
        let mut ar = tar::Archive::new(reader);
        let rerr = |e: io::Error| Error::Other(format!("untar: cannot read the corpus: {e}"));
        for entry in ar.entries().map_err(rerr)? {
            if cancel::requested() {
                return Err(Error::Interrupted);
            }
            let mut entry = entry.map_err(rerr)?;
            let kind = classify(entry.header().entry_type());
            if kind == Kind::Skip {
                continue;
            }
            let Some(path) = normalize(&entry.path_bytes()) else {
                return Err(Error::workload(
                    "untar",
                    format!(
                        "archive entry {} climbs out of the destination with `..`",
                        String::from_utf8_lossy(&entry.path_bytes())
                    ),
                ));
            };
            if path.is_empty() {
                continue;
            }
            let (parent, name) = split_parent(&path);
            let mode = entry.header().mode().unwrap_or(0o644) & 0o7777;
            if self.cur.as_ref().is_none_or(|(p, _)| p != parent) {
                if parent.is_empty() {
                    self.cur = None;
                } else {
                    self.enter(parent)?;
                }
            }
            let dir = self.dirfd();
            match kind {
                Kind::Dir => {
                    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode | 0o700)) {
                        Ok(()) => self.entries += 1,
                        Err(Errno::EXIST) => {
                            let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                                .map_err(|e| self.err("stat", &path, e))?;
                            if rustix::fs::FileType::from_raw_mode(st.st_mode)
                                != rustix::fs::FileType::Directory
                            {
                                return Err(self.err("create directory", &path, Errno::EXIST));
                            }
                        }
                        Err(e) => return Err(self.err("create directory", &path, e)),
                    }
                }
                Kind::File => {
                    let fd = rustix::fs::openat(
                        dir,
                        name,
                        OFlags::WRONLY
                            | OFlags::CREATE
                            | OFlags::EXCL
                            | OFlags::NOFOLLOW
                            | OFlags::CLOEXEC,
                        Mode::from_raw_mode(mode),
                    )
                    .map_err(|e| self.err("create", &path, e))?;
                    let mut left = entry.size();
                    while left > 0 {
                        let want = (left as usize).min(self.buf.len());
                        let n = entry
                            .read(&mut self.buf[..want])
                            .map_err(|e| self.err("read archive data for", &path, e))?;
                        if n == 0 {
                            return Err(self.err(
                                "read archive data for",
                                &path,
                                io::Error::from(io::ErrorKind::UnexpectedEof),
                            ));
                        }
                        write_all(&fd, &self.buf[..n]).map_err(|e| self.err("write", &path, e))?;
                        left -= n as u64;
                        self.bytes += n as u64;
                    }
                    self.entries += 1;
                }
                Kind::Symlink => {
                    let target = entry.link_name_bytes().unwrap_or_default();
                    rustix::fs::symlinkat(&*target, dir, name)
                        .map_err(|e| self.err("create symlink", &path, e))?;
                    self.entries += 1;
                }
                Kind::Hardlink => {
                    let target = entry
                        .link_name_bytes()
                        .and_then(|t| normalize(&t))
                        .unwrap_or_default();
                    let (tp, tn) = split_parent(&target);
                    let tdir = if tp.is_empty() {
                        None
                    } else {
                        Some(
                            rustix::fs::openat2(self.root, tp, DIR_PATH, Mode::empty(), beneath())
                                .map_err(|e| self.err("open link target of", &path, e))?,
                        )
                    };
                    let tfd = tdir.as_ref().map_or(self.root, |f| f.as_fd());
                    rustix::fs::linkat(tfd, tn, self.dirfd(), name, AtFlags::empty())
                        .map_err(|e| self.err("create hard link", &path, e))?;
                    self.entries += 1;
                }
                Kind::Skip => {}
            }
        }
        Ok(())
    }
}

fn write_all(fd: &OwnedFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match rustix::io::write(fd, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Extract copy `i` of an in-memory corpus into `dest/copy-i`.
fn extract_copy(corpus: &Corpus, dest_fd: BorrowedFd<'_>, dest: &Path, i: u32) -> Result<()> {
    let name = format!("copy-{i}");
    let path = dest.join(&name);
    rustix::fs::mkdirat(dest_fd, name.as_str(), Mode::from_raw_mode(0o755))
        .map_err(|e| Error::io("untar: cannot create directory", &path, e.into()))?;
    let root = open_dir(&path)?;
    let mut x = Extractor::new(root.as_fd(), &path);
    x.run(corpus.reader())
}

/// `untar`: extract every copy under `dest` (created when missing), then `syncfs`; seconds
/// include the sync. `threads` > 1 extracts copies in parallel (not for a tarball file, which
/// is one stream). The result is verified by a walk: entries and file bytes must match.
///
/// On failure (ENOSPC, interrupt, short result) a `dest` that untar created itself is removed
/// again, so a failed step does not keep the space; an existing `dest` is left to the caller.
pub fn untar(corpus: &Corpus, dest: &Path, threads: usize) -> Result<WorkloadOutput> {
    let created = !dest.exists();
    std::fs::create_dir_all(dest)
        .map_err(|e| Error::io("untar: cannot create directory", dest, e))?;
    let res = untar_into(corpus, dest, threads);
    if res.is_err() && created {
        let _ = super::remove::remove_all(dest);
    }
    res
}

fn untar_into(corpus: &Corpus, dest: &Path, threads: usize) -> Result<WorkloadOutput> {
    let dest_fd = open_dir(dest)?;
    let mut out = WorkloadOutput {
        notes: corpus.notes().to_vec(),
        ..Default::default()
    };
    let start = Instant::now();
    match &*corpus.source {
        Source::File(p) => {
            if threads > 1 {
                out.notes
                    .push("untar: --threads is ignored for --corpus-file (one stream)".into());
            }
            let f = std::fs::File::open(p).map_err(|e| Error::io("untar: cannot open", p, e))?;
            let mut x = Extractor::new(dest_fd.as_fd(), dest);
            x.run(io::BufReader::with_capacity(1 << 20, f))?;
        }
        _ if threads <= 1 || corpus.copies <= 1 => {
            for i in 0..corpus.copies {
                extract_copy(corpus, dest_fd.as_fd(), dest, i)?;
            }
        }
        _ => {
            let next = AtomicUsize::new(0);
            let n = threads.min(corpus.copies as usize);
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..n)
                    .map(|_| {
                        s.spawn(|| -> Result<()> {
                            loop {
                                let i = next.fetch_add(1, Ordering::Relaxed);
                                if i >= corpus.copies as usize {
                                    return Ok(());
                                }
                                extract_copy(corpus, dest_fd.as_fd(), dest, i as u32)?;
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("untar thread panicked"))
                    .collect::<Result<Vec<()>>>()
            })?;
        }
    }
    syncfs(&dest_fd, dest)?;
    let secs = start.elapsed().as_secs_f64();

    // Not through the atimes: the first read of the new tree belongs to the measured walk.
    let (entries, bytes) = walk::count(dest, threads, walk::Atime::Keep)?;
    if entries != corpus.entries() || bytes != corpus.bytes() {
        return Err(Error::workload(
            "untar",
            format!(
                "extracted {entries} entries / {bytes} bytes under {}, the corpus has {} / {}",
                dest.display(),
                corpus.entries(),
                corpus.bytes()
            ),
        ));
    }
    out.metrics = vec![
        Metric::new(SECONDS, "s", secs),
        Metric::new(ENTRIES, "entries", entries as f64),
        Metric::new(BYTES, "bytes", bytes as f64),
        Metric::new(OPS_PER_S, "entries/s", entries as f64 / secs.max(1e-9)),
    ];
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_paths() {
        assert_eq!(normalize(b"./a//b/").unwrap(), b"a/b");
        assert_eq!(normalize(b"/abs/x").unwrap(), b"abs/x");
        assert_eq!(normalize(b"./").unwrap(), b"");
        assert!(normalize(b"a/../../etc").is_none());
    }

    #[test]
    fn extracts_and_verifies_a_small_corpus() {
        let c = Corpus::build(&super::super::CorpusSpec {
            copies: 2,
            seed: 5,
            scale: 0.02,
            ..Default::default()
        })
        .unwrap();
        let d = tempfile::tempdir().unwrap();
        let out = untar(&c, &d.path().join("t"), 2).unwrap();
        let entries = out.metrics.iter().find(|m| m.metric == ENTRIES).unwrap();
        assert_eq!(entries.value as u64, c.entries());
    }

    /// Directories below `root` (and itself) whose atime is later than their last change, i.e.
    /// that were read since; listed with `O_NOATIME`, so counting reads nothing itself.
    fn read_dirs(root: &Path) -> usize {
        let (mut n, mut stack) = (0, vec![root.to_path_buf()]);
        while let Some(d) = stack.pop() {
            let st = rustix::fs::lstat(&d).unwrap();
            let changed = (st.st_mtime, st.st_mtime_nsec).max((st.st_ctime, st.st_ctime_nsec));
            n += usize::from((st.st_atime, st.st_atime_nsec) > changed);
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOATIME | OFlags::CLOEXEC;
            let fd = rustix::fs::open(&d, flags, Mode::empty()).unwrap();
            for (name, ft, _) in walk::list(fd.as_fd(), &d).unwrap() {
                if ft == rustix::fs::FileType::Directory {
                    stack.push(d.join(name.to_str().unwrap()));
                }
            }
        }
        n
    }

    #[test]
    fn the_verification_walk_leaves_atimes_to_the_measured_walk() {
        let c = Corpus::build(&super::super::CorpusSpec {
            copies: 1,
            seed: 5,
            scale: 0.02,
            ..Default::default()
        })
        .unwrap();
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("t");
        untar(&c, &dest, 1).unwrap();
        let read = read_dirs(&dest);
        assert_eq!(
            read, 0,
            "untar's verification walk updated {read} directory atimes"
        );
        // Control: an ordinary walk a little later does update them (unless the mount never does).
        std::thread::sleep(std::time::Duration::from_millis(20));
        walk::count(&dest, 1, walk::Atime::Touch).unwrap();
        if read_dirs(&dest) == 0 {
            eprintln!("skipped control: this mount does not update directory atimes (noatime?)");
        }
    }

    #[test]
    fn a_failed_untar_removes_the_directory_it_created() {
        let d = tempfile::tempdir().unwrap();
        // A tarball whose second entry is a file where a directory already is: EEXIST.
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_size(0);
        b.append_data(&mut h, "a/", std::io::empty()).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(1);
        b.append_data(&mut h, "a", &b"x"[..]).unwrap();
        let path = d.path().join("bad.tar");
        std::fs::write(&path, b.into_inner().unwrap()).unwrap();
        let c = Corpus::build(&super::super::CorpusSpec {
            file: Some(path),
            ..Default::default()
        })
        .unwrap();
        let dest = d.path().join("t");
        let err = untar(&c, &dest, 1).unwrap_err();
        assert!(err.to_string().contains("untar: cannot create"), "{err}");
        assert!(!dest.exists());
    }

    #[test]
    fn refuses_paths_climbing_out() {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_entry_type(tar::EntryType::Regular);
        // set_path refuses `..`, so write the name bytes directly.
        h.as_old_mut().name[..9].copy_from_slice(b"../escape");
        h.set_cksum();
        b.append(&h, &b"x"[..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let d = tempfile::tempdir().unwrap();
        let root = open_dir(d.path()).unwrap();
        let mut x = Extractor::new(root.as_fd(), d.path());
        let err = x.run(&bytes[..]).unwrap_err();
        assert!(err.to_string().contains("climbs out"), "{err}");
        assert!(!d.path().parent().unwrap().join("escape").exists());
    }
}
