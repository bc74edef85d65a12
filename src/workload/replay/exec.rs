//! Replay: recreate a trace's starting tree in a directory, then issue its calls there as
//! fast as possible (or paced as recorded), timing each by class.
//!
//! **Order.** A trace of one recorded thread replays serially here, in the trace's order. A
//! trace of several threads replays concurrently ([`super::concurrent`]): each recorded thread
//! on a thread of its own, waiting across threads only where ARTC's rules say
//! ([`super::order`]). Both issue calls through one [`Replayer`], whose handle table is shared.
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
    /// Threads the calls were replayed on (1: serially).
    pub lanes: usize,
}

impl Replayed {
    /// An empty tally, a histogram per class.
    pub(super) fn new() -> Replayed {
        let mut out = Replayed {
            lanes: 1,
            ..Replayed::default()
        };
        for c in Class::ALL {
            out.hist.insert(c, LatencyHistogram::new());
        }
        out
    }

    /// Add another lane's tally (calls, latencies, bytes, divergences).
    pub(super) fn merge(&mut self, other: &Replayed) {
        self.calls += other.calls;
        for (c, h) in &other.hist {
            self.hist.entry(*c).or_default().merge(h);
        }
        self.write_bytes += other.write_bytes;
        self.read_bytes += other.read_bytes;
        self.diverged += other.diverged;
        let room = 5usize.saturating_sub(self.diverged_examples.len());
        self.diverged_examples
            .extend(other.diverged_examples.iter().take(room).cloned());
    }
}

use super::data::{BUF, Fill};

/// Make `dir` hold exactly the starting state: removed if present, then every directory,
/// file (its size in `fill`'s data; hard links linked), symlink. Untimed.
pub fn recreate(dir: &Path, start: &[Entry], fill: Fill) -> crate::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let data = fill.buffer();
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
                    write_dense(&path, e.size, &data)
                }
            },
        };
        res.map_err(|err| Error::io("cannot recreate", &path, err))?;
    }
    Ok(())
}

fn write_dense(path: &Path, size: u64, data: &[u8]) -> std::io::Result<()> {
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
pub(super) fn pace(began: Instant, ts_us: u64, speed: f64) -> crate::Result<()> {
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
    /// A directory is listed once per open (see `Getdents`).
    listed: AtomicBool,
}

/// The replay's state over one directory, shared by the replaying threads: the handle table
/// is behind a lock held only to look a handle up, enter or remove it, never during a call.
pub(super) struct Replayer<'a> {
    dir: &'a Path,
    root: File,
    handles: Mutex<HashMap<u32, Arc<Open>>>,
    data: Vec<u8>,
}

/// Replay every event `reader` still holds in `dir` (already [`recreate`]d), then compare the
/// end state with the recorded one. `speed`: `None`, as fast as possible; `Some(x)`,
/// as recorded: each call starts no earlier than its recorded time (`ts`) divided by `x`
/// after the first, so think times are kept; a replay running late does not wait, which
/// lets it catch up. `threads`: how many recorded threads the trace holds (the reader's
/// count after a first pass); more than one replays concurrently. Writes carry `fill`'s data
/// (its compressibility, another seed than the starting files').
pub fn replay(
    dir: &Path,
    reader: &mut TraceReader,
    fill: Fill,
    speed: Option<f64>,
    threads: u32,
) -> crate::Result<Replayed> {
    let r = Replayer::new(dir, fill)?;
    let mut out = if threads > 1 {
        super::concurrent::replay(&r, reader, speed, threads, None)?
    } else {
        r.serial(reader, speed)?
    };
    r.table().clear();
    let (actual, _) = scan::scan(dir).map_err(|e| Error::io("cannot scan", dir, e))?;
    out.end_mismatches = scan::compare(&reader.end, &actual);
    Ok(out)
}

/// A reader's problem as the run's error (bad input: the trace).
pub(super) fn bad_trace(e: super::trace::TraceError) -> Error {
    Error::invalid("--replay", e.to_string())
}

impl<'a> Replayer<'a> {
    /// A replayer over `dir`, its writes' data `fill`'s (reseeded: not the starting files').
    pub(super) fn new(dir: &'a Path, fill: Fill) -> crate::Result<Replayer<'a>> {
        Ok(Replayer {
            dir,
            root: File::open(dir).map_err(|e| Error::io("cannot open", dir, e))?,
            handles: Mutex::new(HashMap::new()),
            data: fill.reseeded(fill.seed ^ 0x5eed).buffer(),
        })
    }

    /// Every call on this thread, in the trace's order.
    fn serial(&self, reader: &mut TraceReader, speed: Option<f64>) -> crate::Result<Replayed> {
        let mut out = Replayed::new();
        let mut scratch = Vec::new();
        let began = Instant::now();
        while let Some(ev) = reader.next_event().map_err(bad_trace)? {
            if out.calls.is_multiple_of(1024) {
                crate::cancel::check()?;
            }
            if let Some(x) = speed {
                pace(began, ev.ts, x)?;
            }
            self.timed(&ev, &mut scratch, &mut out);
        }
        out.elapsed = began.elapsed();
        Ok(out)
    }

    /// Issue one call, timing it into `out`'s class and counting it when its outcome differs
    /// from the recording's.
    pub(super) fn timed(&self, ev: &Event, scratch: &mut Vec<u8>, out: &mut Replayed) {
        let t = Instant::now();
        let ok = self.issue(ev, scratch, out);
        let ns = t.elapsed().as_nanos() as u64;
        out.calls += 1;
        if let Some(h) = out.hist.get_mut(&ev.c.class()) {
            h.record(ns);
        }
        if ok.is_ok() != ev.err.is_none() {
            out.diverged += 1;
            if out.diverged_examples.len() < 5 {
                out.diverged_examples.push(format!(
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

    /// The handle table, locked (a poisoned lock is taken as it is: a panicking lane
    /// already fails the replay).
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Arc<Open>>> {
        self.handles.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn path(&self, p: &Option<String>) -> std::path::PathBuf {
        match p.as_deref() {
            Some(".") | None => self.dir.to_path_buf(),
            Some(p) => self.dir.join(p),
        }
    }

    /// The open handle `h` (EBADF when it is not open).
    fn file(&self, h: Option<u32>) -> std::io::Result<Arc<Open>> {
        h.and_then(|h| self.table().get(&h).cloned())
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

    /// Issue one call; its outcome. `scratch` is the calling thread's read buffer; `out` gets
    /// the bytes moved.
    fn issue(&self, e: &Event, scratch: &mut Vec<u8>, out: &mut Replayed) -> std::io::Result<()> {
        let off = e.o.unwrap_or(0);
        let n = e.n.unwrap_or(0);
        match e.c {
            Call::Open => {
                let rel = e.p.clone().unwrap_or_else(|| ".".into());
                let f = self.open_beneath(&rel, e.fl)?;
                if let Some(h) = e.h {
                    let open = Arc::new(Open {
                        file: f,
                        rel,
                        listed: AtomicBool::new(false),
                    });
                    self.table().insert(h, open);
                }
                Ok(())
            }
            Call::Close => {
                if let Some(h) = e.h {
                    self.table().remove(&h);
                }
                Ok(())
            }
            Call::Read => {
                let n = n as usize;
                if scratch.len() < n {
                    scratch.resize(n, 0);
                }
                let o = self.file(e.h)?.file.read_at(&mut scratch[..n], off)?;
                out.read_bytes += o as u64;
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
                out.write_bytes += n;
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
                let o = self.file(e.h)?;
                // A directory is listed once per open: later getdents calls return what
                // the first one read.
                if o.listed.swap(true, Ordering::Relaxed) {
                    return Ok(());
                }
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A call of `c` by `tid` on handle `h` and path `p` (the replay tests' shorthand).
    pub(in crate::workload::replay) fn ev(
        tid: u32,
        c: Call,
        h: Option<u32>,
        p: Option<&str>,
    ) -> Event {
        let mut e = Event::new(tid, 0, c);
        e.h = h;
        e.p = p.map(str::to_string);
        e
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
            let done = replay(d.path(), &mut r, Fill::incompressible(1), speed, 1).unwrap();
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
        recreate(&dir, &start, Fill::incompressible(1)).unwrap();
        assert_eq!(std::fs::metadata(dir.join("a/f")).unwrap().len(), 3 << 20);
        // A second recreate starts over.
        std::fs::write(dir.join("junk"), b"x").unwrap();
        recreate(&dir, &start, Fill::incompressible(1)).unwrap();
        assert!(!dir.join("junk").exists());
        let r = Replayer::new(&dir, Fill::incompressible(2)).unwrap();
        let (mut scratch, mut out) = (Vec::new(), Replayed::new());
        let mut issue = |e: &Event| r.issue(e, &mut scratch, &mut out);
        let mut open = ev(0, Call::Open, Some(1), Some("a/g"));
        open.fl = open_flags::WRITE | open_flags::CREATE;
        issue(&open).unwrap();
        let mut w = ev(0, Call::Write, Some(1), None);
        w.o = Some(BUF as u64 - 10);
        w.n = Some(100);
        issue(&w).unwrap();
        issue(&ev(0, Call::Fsync, Some(1), None)).unwrap();
        issue(&ev(0, Call::Close, Some(1), None)).unwrap();
        let mut mv = ev(0, Call::Rename, None, Some("a/g"));
        mv.p2 = Some("h".into());
        issue(&mv).unwrap();
        assert_eq!(
            std::fs::metadata(dir.join("h")).unwrap().len(),
            BUF as u64 + 90
        );
        // A symlink pointing out cannot be followed by an open.
        std::os::unix::fs::symlink("/etc", dir.join("out")).unwrap();
        assert!(r.open_beneath("out/passwd", open_flags::READ).is_err());
        assert!(issue(&ev(0, Call::Unlink, None, Some("nope"))).is_err());
    }
}
