//! Replay: recreate a trace's starting tree in a directory, then issue its calls there as
//! fast as possible, timing each by class.
//!
//! **Order.** One replaying thread issues every call in the trace's order, which is the order
//! the capture saw them (each recorded thread's order, and across threads the order they
//! happened in). That keeps every dependency ARTC's rules would keep (same file, namespace
//! operations, an fsync after the writes it covers) and more: concurrency between recorded
//! threads is not reproduced in this first version (docs/replay.md). [`depends`] states the
//! rules a concurrent replay would keep; its tests pin them.
//!
//! **Safety.** Every path was checked by the reader (relative, no `..`); symlink targets too,
//! so a link made here points below the directory. Opens go through `openat2` with
//! `RESOLVE_BENEATH`, so no path, symlinks included, reaches outside the directory.

use super::scan;
use super::trace::{
    Call, Class, Entry, EntryType, Event, TraceReader, falloc_flags, open_flags, rename_flags,
};
use crate::Error;
use crate::measure::LatencyHistogram;
use rustix::fs::{FallocateFlags, Mode, OFlags, RenameFlags, ResolveFlags};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one replay measured.
#[derive(Debug, Default)]
pub struct Replayed {
    /// Time from the first call to the last.
    pub elapsed: Duration,
    /// Calls issued.
    pub calls: u64,
    /// Latency by class.
    pub hist: BTreeMap<Class, LatencyHistogram>,
    /// Bytes written by replayed writes.
    pub write_bytes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Calls whose outcome (success or error) differed from the recording.
    pub diverged: u64,
    /// The first few of them, for the notes.
    pub diverged_examples: Vec<String>,
    /// How the end state differs from the recorded one (names, types, sizes).
    pub end_mismatches: Vec<String>,
}

/// Size of the incompressible buffer writes and the starting files' data come from.
const BUF: usize = 1 << 20;

/// Incompressible bytes (xoshiro output) for the starting files and every write.
fn data_buffer(seed: u64) -> Vec<u8> {
    let mut rng = crate::engine::rng::Xoshiro::new(seed);
    let mut v = vec![0u8; BUF];
    for chunk in v.chunks_mut(8) {
        let x = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&x[..chunk.len()]);
    }
    v
}

/// Make `dir` hold exactly the starting state: removed if present, then every directory,
/// file (its size in incompressible data; hard links linked), symlink. Untimed.
pub fn recreate(dir: &Path, start: &[Entry], seed: u64) -> crate::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let data = data_buffer(seed);
    let mut inodes: HashMap<u64, String> = HashMap::new();
    for e in start {
        let path = dir.join(&e.p);
        let res = match e.t {
            EntryType::Dir => std::fs::create_dir(&path),
            EntryType::Symlink => match &e.target {
                Some(t) => std::os::unix::fs::symlink(t, &path),
                None => Ok(()),
            },
            EntryType::File => match inodes.get(&e.ino).filter(|_| e.ino != 0) {
                Some(first) => std::fs::hard_link(dir.join(first), &path),
                None => {
                    if e.ino != 0 {
                        inodes.insert(e.ino, e.p.clone());
                    }
                    fill(&path, e.size, &data)
                }
            },
        };
        res.map_err(|err| Error::io("cannot recreate", &path, err))?;
    }
    Ok(())
}

fn fill(path: &Path, size: u64, data: &[u8]) -> std::io::Result<()> {
    let f = File::create(path)?;
    let mut off = 0;
    while off < size {
        let n = (size - off).min(data.len() as u64) as usize;
        f.write_all_at(&data[..n], off)?;
        off += n as u64;
    }
    Ok(())
}

/// Wait until `ts_us` / `speed` after `began` (as-recorded timing), in slices short enough
/// for Ctrl-C to be noticed.
fn pace(began: Instant, ts_us: u64, speed: f64) -> crate::Result<()> {
    let due = began + Duration::from_secs_f64(ts_us as f64 / 1e6 / speed);
    loop {
        let now = Instant::now();
        if now >= due {
            return Ok(());
        }
        crate::cancel::check()?;
        std::thread::sleep((due - now).min(Duration::from_millis(100)));
    }
}

/// An open handle of the replay.
struct Open {
    file: File,
    rel: String,
    listed: bool,
}

/// The replay's state over one directory.
struct Replayer<'a> {
    dir: &'a Path,
    root: File,
    handles: HashMap<u32, Open>,
    data: Vec<u8>,
    scratch: Vec<u8>,
    out: Replayed,
}

/// Replay every event `reader` still holds in `dir` (already [`recreate`]d), then compare the
/// end state with the recorded one. `speed`: `None`, as fast as possible; `Some(x)`,
/// as recorded: each call starts no earlier than its recorded time (`ts`) divided by `x`
/// after the first, so think times are kept; a replay running late does not wait, which
/// lets it catch up.
pub fn replay(
    dir: &Path,
    reader: &mut TraceReader,
    seed: u64,
    speed: Option<f64>,
) -> crate::Result<Replayed> {
    let root = File::open(dir).map_err(|e| Error::io("cannot open", dir, e))?;
    let mut r = Replayer {
        dir,
        root,
        handles: HashMap::new(),
        data: data_buffer(seed ^ 0x5eed),
        scratch: Vec::new(),
        out: Replayed::default(),
    };
    for c in Class::ALL {
        r.out.hist.insert(c, LatencyHistogram::new());
    }
    let began = Instant::now();
    loop {
        let ev = reader
            .next_event()
            .map_err(|e| Error::invalid("--replay", e.to_string()))?;
        let Some(ev) = ev else { break };
        if r.out.calls.is_multiple_of(1024) {
            crate::cancel::check()?;
        }
        if let Some(x) = speed {
            pace(began, ev.ts, x)?;
        }
        let t = Instant::now();
        let ok = r.issue(&ev);
        let ns = t.elapsed().as_nanos() as u64;
        r.out.calls += 1;
        if let Some(h) = r.out.hist.get_mut(&ev.c.class()) {
            h.record(ns);
        }
        if ok.is_ok() != ev.err.is_none() {
            r.out.diverged += 1;
            if r.out.diverged_examples.len() < 5 {
                r.out.diverged_examples.push(format!(
                    "{:?} {}: recorded {}, replayed {}",
                    ev.c,
                    ev.p.as_deref().unwrap_or(""),
                    ev.err.as_deref().unwrap_or("success"),
                    match &ok {
                        Ok(()) => "success".to_string(),
                        Err(e) => e.to_string(),
                    }
                ));
            }
        }
    }
    r.out.elapsed = began.elapsed();
    r.handles.clear();
    let (actual, _) = scan::scan(dir).map_err(|e| Error::io("cannot scan", dir, e))?;
    r.out.end_mismatches = scan::compare(&reader.end, &actual);
    Ok(r.out)
}

impl Replayer<'_> {
    fn path(&self, p: &Option<String>) -> std::path::PathBuf {
        match p.as_deref() {
            Some(".") | None => self.dir.to_path_buf(),
            Some(p) => self.dir.join(p),
        }
    }

    fn file(&self, h: Option<u32>) -> std::io::Result<&Open> {
        h.and_then(|h| self.handles.get(&h))
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EBADF))
    }

    fn open_beneath(&self, rel: &str, fl: u32) -> std::io::Result<File> {
        let mut o = OFlags::CLOEXEC;
        o |= match (fl & open_flags::READ != 0, fl & open_flags::WRITE != 0) {
            (_, false) => OFlags::RDONLY,
            (false, true) => OFlags::WRONLY,
            (true, true) => OFlags::RDWR,
        };
        for (bit, flag) in [
            (open_flags::CREATE, OFlags::CREATE),
            (open_flags::TRUNCATE, OFlags::TRUNC),
            (open_flags::EXCL, OFlags::EXCL),
            (open_flags::DIRECTORY, OFlags::DIRECTORY),
            (open_flags::SYNC, OFlags::SYNC),
            (open_flags::DSYNC, OFlags::DSYNC),
        ] {
            if fl & bit != 0 {
                o |= flag;
            }
        }
        let fd = rustix::fs::openat2(
            &self.root,
            rel,
            o,
            // openat2 refuses a mode without O_CREAT.
            if fl & open_flags::CREATE != 0 {
                Mode::from_raw_mode(0o644)
            } else {
                Mode::empty()
            },
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )?;
        Ok(File::from(fd))
    }

    /// Issue one call; its outcome.
    fn issue(&mut self, e: &Event) -> std::io::Result<()> {
        let off = e.o.unwrap_or(0);
        let n = e.n.unwrap_or(0);
        match e.c {
            Call::Open => {
                let rel = e.p.clone().unwrap_or_else(|| ".".into());
                let f = self.open_beneath(&rel, e.fl)?;
                if let Some(h) = e.h {
                    self.handles.insert(
                        h,
                        Open {
                            file: f,
                            rel,
                            listed: false,
                        },
                    );
                }
                Ok(())
            }
            Call::Close => {
                if let Some(h) = e.h {
                    self.handles.remove(&h);
                }
                Ok(())
            }
            Call::Read => {
                let n = n as usize;
                if self.scratch.len() < n {
                    self.scratch.resize(n, 0);
                }
                let mut buf = std::mem::take(&mut self.scratch);
                let res = self
                    .file(e.h)
                    .and_then(|f| f.file.read_at(&mut buf[..n], off));
                self.scratch = buf;
                let o = res?;
                self.out.read_bytes += o as u64;
                Ok(())
            }
            Call::Write => {
                let f = &self.file(e.h)?.file;
                let mut done = 0u64;
                while done < n {
                    let start = ((off + done) % BUF as u64) as usize;
                    let len = ((n - done) as usize).min(BUF - start);
                    f.write_all_at(&self.data[start..start + len], off + done)?;
                    done += len as u64;
                }
                self.out.write_bytes += n;
                Ok(())
            }
            Call::Fsync => self.file(e.h)?.file.sync_all(),
            Call::Fdatasync | Call::SyncRange => self.file(e.h)?.file.sync_data(),
            Call::Syncfs => Ok(rustix::fs::syncfs(&self.root)?),
            Call::Ftruncate => self.file(e.h)?.file.set_len(n),
            Call::Truncate => {
                let f = self.open_beneath(e.p.as_deref().unwrap_or("."), open_flags::WRITE)?;
                f.set_len(n)
            }
            Call::Fallocate => {
                let mut mode = FallocateFlags::empty();
                for (bit, flag) in [
                    (falloc_flags::KEEP_SIZE, FallocateFlags::KEEP_SIZE),
                    (falloc_flags::PUNCH_HOLE, FallocateFlags::PUNCH_HOLE),
                    (falloc_flags::ZERO_RANGE, FallocateFlags::ZERO_RANGE),
                ] {
                    if e.fl & bit != 0 {
                        mode |= flag;
                    }
                }
                Ok(rustix::fs::fallocate(&self.file(e.h)?.file, mode, off, n)?)
            }
            Call::Mkdir => std::fs::create_dir(self.path(&e.p)),
            Call::Rmdir => std::fs::remove_dir(self.path(&e.p)),
            Call::Unlink => std::fs::remove_file(self.path(&e.p)),
            Call::Rename => {
                let mut flags = RenameFlags::empty();
                if e.fl & rename_flags::NOREPLACE != 0 {
                    flags |= RenameFlags::NOREPLACE;
                }
                if e.fl & rename_flags::EXCHANGE != 0 {
                    flags |= RenameFlags::EXCHANGE;
                }
                let (a, b) = (self.path(&e.p), self.path(&e.p2));
                Ok(rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    flags,
                )?)
            }
            Call::Link => std::fs::hard_link(self.path(&e.p), self.path(&e.p2)),
            Call::Symlink => match &e.target {
                Some(t) => std::os::unix::fs::symlink(t, self.path(&e.p2)),
                None => Ok(()),
            },
            Call::Stat => std::fs::symlink_metadata(self.path(&e.p)).map(|_| ()),
            Call::Getdents => {
                let h = e.h.unwrap_or(0);
                let Some(o) = self.handles.get_mut(&h) else {
                    return Err(std::io::Error::from_raw_os_error(libc::EBADF));
                };
                // A directory is listed once per open: later getdents calls return what
                // the first one read.
                if o.listed {
                    return Ok(());
                }
                o.listed = true;
                let path = if o.rel == "." {
                    self.dir.to_path_buf()
                } else {
                    self.dir.join(&o.rel)
                };
                for entry in std::fs::read_dir(path)? {
                    entry?;
                }
                Ok(())
            }
        }
    }
}

/// What an event touches, for ordering: the file (by path or handle), or the namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// A handle's file.
    Handle(u32),
    /// A path.
    Path(String),
}

/// ARTC's rules, as a concurrent replay would keep them: whether `later` must wait for
/// `earlier` (both from different threads; a thread's own order is always kept). Two calls
/// are ordered when they act on the same handle or path, when either changes the namespace
/// (create, rename, unlink, mkdir, rmdir, link, symlink) and the other names a path under
/// the changed one, and an fsync waits for every earlier write on its handle. The serial
/// replay keeps all of these by construction.
pub fn depends(earlier: &Event, later: &Event) -> bool {
    if earlier.tid == later.tid {
        return true;
    }
    let touches = |e: &Event| -> Vec<Resource> {
        let mut v = Vec::new();
        if let Some(h) = e.h {
            v.push(Resource::Handle(h));
        }
        for p in [&e.p, &e.p2].into_iter().flatten() {
            v.push(Resource::Path(p.clone()));
        }
        v
    };
    let a = touches(earlier);
    let b = touches(later);
    if a.iter().any(|r| b.contains(r)) {
        return true;
    }
    let changes_names = |e: &Event| {
        matches!(
            e.c,
            Call::Mkdir | Call::Rmdir | Call::Unlink | Call::Rename | Call::Link | Call::Symlink
        ) || (e.c == Call::Open && e.fl & open_flags::CREATE != 0)
    };
    let under = |x: &[Resource], y: &[Resource]| {
        x.iter().any(|r| match r {
            Resource::Path(p) => y.iter().any(|s| match s {
                Resource::Path(q) => {
                    q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/"))
                }
                Resource::Handle(_) => false,
            }),
            Resource::Handle(_) => false,
        })
    };
    (changes_names(earlier) || changes_names(later)) && under(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(tid: u32, c: Call, h: Option<u32>, p: Option<&str>) -> Event {
        let mut e = Event::new(tid, 0, c);
        e.h = h;
        e.p = p.map(str::to_string);
        e
    }

    #[test]
    fn two_threads_sharing_a_file_are_ordered_and_unrelated_ones_are_not() {
        let w = ev(0, Call::Write, Some(1), None);
        let f = ev(1, Call::Fsync, Some(1), None);
        assert!(depends(&w, &f), "an fsync waits for the writes on its file");
        let other = ev(1, Call::Write, Some(2), None);
        assert!(!depends(&w, &other), "writes to two files are independent");
        let mk = ev(0, Call::Mkdir, None, Some("d"));
        let create = {
            let mut e = ev(1, Call::Open, Some(3), Some("d/f"));
            e.fl = open_flags::CREATE | open_flags::WRITE;
            e
        };
        assert!(depends(&mk, &create), "a create waits for its directory");
        let stat_elsewhere = ev(1, Call::Stat, None, Some("e/g"));
        assert!(!depends(&mk, &stat_elsewhere));
        let same_thread = ev(0, Call::Stat, None, Some("z"));
        assert!(depends(&w, &same_thread), "a thread's own order is kept");
    }

    #[test]
    fn as_recorded_timing_keeps_think_times_and_the_speed_scales_them() {
        let text = "{\"k\":\"header\",\"format\":\"fsbench-trace\",\"version\":1,\"name\":\"t\",\"capture\":\"ebpf\",\"command\":[\"sh\"]}\n\
            {\"k\":\"ev\",\"tid\":0,\"ts\":0,\"c\":\"mkdir\",\"p\":\"d\"}\n\
            {\"k\":\"ev\",\"tid\":0,\"ts\":300000,\"c\":\"rmdir\",\"p\":\"d\"}\n\
            {\"k\":\"trailer\",\"events\":2}\n";
        let d = tempfile::tempdir().unwrap();
        let run = |speed| {
            let mut r = TraceReader::from_reader(std::io::Cursor::new(text.to_string())).unwrap();
            let done = replay(d.path(), &mut r, 1, speed).unwrap();
            assert_eq!(done.calls, 2);
            assert_eq!(done.diverged, 0);
            done.elapsed
        };
        // 0.3 s between the calls as recorded; 0.1 s at three times the speed; none as fast
        // as possible.
        assert!(run(Some(1.0)) >= Duration::from_millis(300));
        let fast = run(Some(3.0));
        assert!(fast >= Duration::from_millis(100) && fast < Duration::from_millis(300));
        assert!(run(None) < Duration::from_millis(100));
    }

    #[test]
    fn a_tree_is_recreated_and_calls_replay_in_it() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("r");
        let start = vec![
            Entry {
                p: "a".into(),
                t: EntryType::Dir,
                size: 0,
                nlink: 0,
                ino: 0,
                target: None,
            },
            Entry {
                p: "a/f".into(),
                t: EntryType::File,
                size: 3 << 20,
                nlink: 1,
                ino: 0,
                target: None,
            },
        ];
        recreate(&dir, &start, 1).unwrap();
        assert_eq!(std::fs::metadata(dir.join("a/f")).unwrap().len(), 3 << 20);
        // A second recreate starts over.
        std::fs::write(dir.join("junk"), b"x").unwrap();
        recreate(&dir, &start, 1).unwrap();
        assert!(!dir.join("junk").exists());
        let mut r = Replayer {
            dir: &dir,
            root: File::open(&dir).unwrap(),
            handles: HashMap::new(),
            data: data_buffer(2),
            scratch: Vec::new(),
            out: Replayed::default(),
        };
        let mut open = ev(0, Call::Open, Some(1), Some("a/g"));
        open.fl = open_flags::WRITE | open_flags::CREATE;
        r.issue(&open).unwrap();
        let mut w = ev(0, Call::Write, Some(1), None);
        w.o = Some(BUF as u64 - 10);
        w.n = Some(100);
        r.issue(&w).unwrap();
        r.issue(&ev(0, Call::Fsync, Some(1), None)).unwrap();
        r.issue(&ev(0, Call::Close, Some(1), None)).unwrap();
        let mut mv = ev(0, Call::Rename, None, Some("a/g"));
        mv.p2 = Some("h".into());
        r.issue(&mv).unwrap();
        assert_eq!(
            std::fs::metadata(dir.join("h")).unwrap().len(),
            BUF as u64 + 90
        );
        // A symlink pointing out cannot be followed by an open.
        std::os::unix::fs::symlink("/etc", dir.join("out")).unwrap();
        assert!(r.open_beneath("out/passwd", open_flags::READ).is_err());
        assert!(r.issue(&ev(0, Call::Unlink, None, Some("nope"))).is_err());
    }
}
