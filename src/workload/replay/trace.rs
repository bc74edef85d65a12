//! The trace file `fsbench record` writes and the `replay` kind reads (docs/replay.md).
//!
//! One JSON object per line, optionally gzip-compressed (told by its magic bytes, not by its
//! name). Every line has a `k` naming what it is, in this order:
//! 1. `header` — the format version ([`VERSION`]), the trace's name, the capture used and
//!    the command recorded;
//! 2. `start` lines — the starting state of the recorded directory (directories, files with
//!    sizes and link counts, symlinks), which replay recreates; never file contents;
//! 3. `ev` lines — the calls, in the order the capture saw them complete (each thread's own
//!    order kept), paths relative to the directory, I/O as offset and length;
//! 4. `end` lines — the directory's state when the command ended (names, sizes), which
//!    replay checks its own end state against;
//! 5. one `trailer` — how many events, and the calls seen that cannot be replayed.
//!
//! The reader ([`TraceReader`]) streams: the header and the starting state are read when it
//! opens, events one at a time, so memory is bounded by the starting tree and the open
//! handles, not by the trace's length. Every problem is a [`TraceError`] naming the line and
//! byte offset; a trace without its trailer is truncated.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path};

/// The format version this fsbench writes and reads.
pub const VERSION: u32 = 1;
/// What a trace's header says it is.
pub const FORMAT: &str = "fsbench-trace";
/// Longest line the reader accepts: a line is one call or one entry, far below this.
pub const MAX_LINE: usize = 64 * 1024;
/// Largest length one call may move: above it the trace is refused as hostile.
pub const MAX_IO: u64 = 1 << 30;
/// Largest file the starting state may hold (replay writes it in full).
pub const MAX_FILE: u64 = 1 << 40;
/// Most handles open at once (a hostile trace cannot make replay open without bound).
pub const MAX_OPEN: usize = 65_536;

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Line {
    /// The first line.
    Header(Header),
    /// One entry of the starting state.
    Start(Entry),
    /// One call.
    Ev(Event),
    /// One entry of the end state.
    End(Entry),
    /// The last line.
    Trailer(Trailer),
}

/// The trace's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written by this fsbench.
    pub version: u32,
    /// The trace's name (the workload's in reports): the command's program by default.
    pub name: String,
    /// How the calls were captured (`strace`).
    pub capture: String,
    /// The command recorded (program and arguments; tokens with `--anonymize`).
    pub command: Vec<String>,
    /// Names were replaced by stable tokens.
    #[serde(default)]
    pub anonymized: bool,
}

/// What an entry of the directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
}

/// One entry of a starting or end state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Path relative to the recorded directory.
    pub p: String,
    /// What it is.
    pub t: EntryType,
    /// Size in bytes (files).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub size: u64,
    /// Hard links (files): entries sharing `ino` are one file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nlink: u64,
    /// A token for the inode (files with more than one link).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ino: u64,
    /// The link's target (symlinks), as recorded (a name, not contents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What a call does, as replay treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// open/openat/openat2/creat: `p`, `fl` ([`open_flags`]), the handle `h` when it succeeded.
    Open,
    /// Last descriptor of handle `h` closed.
    Close,
    /// read/pread/readv/preadv: `n` bytes at `o` on `h`.
    Read,
    /// write/pwrite/writev/pwritev: `n` bytes at `o` on `h`.
    Write,
    /// fsync on `h`.
    Fsync,
    /// fdatasync on `h`.
    Fdatasync,
    /// sync_file_range on `h` (`o`, `n`); replayed as fdatasync.
    SyncRange,
    /// syncfs.
    Syncfs,
    /// ftruncate of `h` to `n`.
    Ftruncate,
    /// truncate of `p` to `n`.
    Truncate,
    /// fallocate on `h`: mode `fl`, `o`, `n`.
    Fallocate,
    /// mkdir `p`.
    Mkdir,
    /// rmdir `p`.
    Rmdir,
    /// unlink `p`.
    Unlink,
    /// rename `p` to `p2` (renameat2 flags in `fl`).
    Rename,
    /// hard link `p2` to `p`.
    Link,
    /// symlink `p2` pointing at `target`.
    Symlink,
    /// stat family on `p`.
    Stat,
    /// getdents on the directory handle `h`.
    Getdents,
}

/// The class a call's latency is reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Reads.
    Read,
    /// Writes, truncates, fallocate.
    Write,
    /// fsync, fdatasync, sync_file_range, syncfs.
    Fsync,
    /// open, close.
    Open,
    /// mkdir, rmdir, unlink, rename, link, symlink, stat, getdents.
    Namespace,
}

impl Class {
    /// Every class, in the summary's order.
    pub const ALL: [Class; 5] = [
        Class::Read,
        Class::Write,
        Class::Fsync,
        Class::Open,
        Class::Namespace,
    ];
    /// Its name in summaries and notes.
    pub fn name(self) -> &'static str {
        match self {
            Class::Read => "read",
            Class::Write => "write",
            Class::Fsync => "fsync",
            Class::Open => "open/close",
            Class::Namespace => "namespace",
        }
    }
}

impl Call {
    /// The class the call is counted in.
    pub fn class(self) -> Class {
        use Call::*;
        match self {
            Read => Class::Read,
            Write | Ftruncate | Truncate | Fallocate => Class::Write,
            Fsync | Fdatasync | SyncRange | Syncfs => Class::Fsync,
            Open | Close => Class::Open,
            Mkdir | Rmdir | Unlink | Rename | Link | Symlink | Stat | Getdents => Class::Namespace,
        }
    }
}

/// Portable open flags (bits of `fl` on an open): the recorder maps the platform's `O_*`.
pub mod open_flags {
    /// Opened for reading.
    pub const READ: u32 = 1;
    /// Opened for writing.
    pub const WRITE: u32 = 2;
    /// `O_CREAT`.
    pub const CREATE: u32 = 4;
    /// `O_TRUNC`.
    pub const TRUNCATE: u32 = 8;
    /// `O_EXCL`.
    pub const EXCL: u32 = 16;
    /// `O_APPEND` (the recorder already turned appends into offsets).
    pub const APPEND: u32 = 32;
    /// `O_DIRECTORY`.
    pub const DIRECTORY: u32 = 64;
    /// `O_SYNC`.
    pub const SYNC: u32 = 128;
    /// `O_DSYNC`.
    pub const DSYNC: u32 = 256;
    /// `O_DIRECT` (replay drops it: its buffers are not aligned).
    pub const DIRECT: u32 = 512;
    /// Every bit above.
    pub const ALL: u32 = 1023;
}

/// Bits of `fl` on a rename (renameat2's flags).
pub mod rename_flags {
    /// `RENAME_NOREPLACE`.
    pub const NOREPLACE: u32 = 1;
    /// `RENAME_EXCHANGE`.
    pub const EXCHANGE: u32 = 2;
}

/// Bits of `fl` on a fallocate (its mode).
pub mod falloc_flags {
    /// `FALLOC_FL_KEEP_SIZE`.
    pub const KEEP_SIZE: u32 = 1;
    /// `FALLOC_FL_PUNCH_HOLE`.
    pub const PUNCH_HOLE: u32 = 2;
    /// `FALLOC_FL_ZERO_RANGE`.
    pub const ZERO_RANGE: u32 = 16;
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Thread, numbered from 0 in order of appearance.
    pub tid: u32,
    /// Start, microseconds after the first recorded call.
    pub ts: u64,
    /// Duration as recorded, microseconds.
    #[serde(default)]
    pub dur: u64,
    /// The call.
    pub c: Call,
    /// The handle it acts on (or, for an open, creates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<u32>,
    /// Path relative to the recorded directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// Second path (rename's and link's new name, symlink's link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2: Option<String>,
    /// A symlink's target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub o: Option<u64>,
    /// Length (bytes moved, or the length truncated to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// Flags ([`open_flags`], [`rename_flags`], [`falloc_flags`]).
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub fl: u32,
    /// The error it returned (`ENOENT`), absent when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<String>,
}

fn is_zero32(v: &u32) -> bool {
    *v == 0
}

impl Event {
    /// A call of `c` by thread `tid` at `ts`, with nothing else set.
    pub fn new(tid: u32, ts: u64, c: Call) -> Event {
        Event {
            tid,
            ts,
            dur: 0,
            c,
            h: None,
            p: None,
            p2: None,
            target: None,
            o: None,
            n: None,
            fl: 0,
            err: None,
        }
    }
}

/// The trace's last line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trailer {
    /// Events in the trace (the reader checks it).
    pub events: u64,
    /// Calls seen on the directory's files that replay cannot do, by kind (`mmap`,
    /// `io_uring`, `fd_passing`, `copy_file_range`).
    #[serde(default)]
    pub not_replayable: BTreeMap<String, u64>,
    /// The recording was stopped early (Ctrl-C): the trace is valid and shorter.
    #[serde(default)]
    pub interrupted: bool,
    /// Events the capture lost (eBPF: a ring buffer overflowed): when not zero the trace is
    /// incomplete, and says so.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
}

/// A problem with a trace: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line (0: before any line, e.g. the file could not be opened).
    pub line: u64,
    /// Byte offset of the line's start in the (uncompressed) trace.
    pub offset: u64,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            f.write_str(&self.problem)
        } else {
            write!(
                f,
                "line {} (byte {}): {}",
                self.line, self.offset, self.problem
            )
        }
    }
}

/// Whether `p` is a safe path relative to the trace's directory: `.` (the directory itself)
/// or normal components only — not absolute, no `..`, no empty or `.` components, no NUL.
pub fn check_rel(p: &str) -> Result<(), String> {
    if p == "." {
        return Ok(());
    }
    if p.is_empty() || p.contains('\0') {
        return Err(format!("path {p:?} is empty or holds a NUL"));
    }
    if p.starts_with('/') {
        return Err(format!("path {p:?} is absolute: it escapes the directory"));
    }
    if p.split('/').any(|c| c.is_empty() || c == ".") {
        return Err(format!("path {p:?} is not in normal form"));
    }
    for c in Path::new(p).components() {
        if !matches!(c, Component::Normal(_)) {
            return Err(format!(
                "path {p:?} climbs out with '..': it escapes the directory"
            ));
        }
    }
    Ok(())
}

/// Reads a trace line by line, checking each (see the module's doc).
pub struct TraceReader {
    input: Box<dyn BufRead>,
    line: u64,
    offset: u64,
    /// The header.
    pub header: Header,
    /// The starting state.
    pub start: Vec<Entry>,
    /// The end state (filled once the events were read).
    pub end: Vec<Entry>,
    /// The trailer (once the events were read).
    pub trailer: Option<Trailer>,
    /// Recorded threads among the events read so far (one more than the highest `tid`).
    pub threads: u32,
    pending: Option<Line>,
    events: u64,
    open: HashSet<u32>,
    buf: Vec<u8>,
}

impl TraceReader {
    /// Open `path` (plain or gzip) and read its header and starting state.
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        let f = std::fs::File::open(path).map_err(|e| TraceError {
            line: 0,
            offset: 0,
            problem: format!("cannot open: {e}"),
        })?;
        TraceReader::from_reader(f)
    }

    /// Read a trace from `r` (plain or gzip), its header and starting state first.
    pub fn from_reader<R: Read + 'static>(r: R) -> Result<TraceReader, TraceError> {
        let mut raw = BufReader::new(r);
        let gzip = raw
            .fill_buf()
            .map(|b| b.starts_with(&[0x1f, 0x8b]))
            .unwrap_or(false);
        let input: Box<dyn BufRead> = if gzip {
            Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        let mut t = TraceReader {
            input,
            line: 0,
            offset: 0,
            header: Header {
                format: String::new(),
                version: 0,
                name: String::new(),
                capture: String::new(),
                command: Vec::new(),
                anonymized: false,
            },
            start: Vec::new(),
            end: Vec::new(),
            trailer: None,
            threads: 0,
            pending: None,
            events: 0,
            open: HashSet::new(),
            buf: Vec::new(),
        };
        match t.read_line()? {
            Some(Line::Header(h)) => {
                if h.format != FORMAT {
                    return Err(t.err(format!("not an fsbench trace (format {:?})", h.format)));
                }
                if h.version != VERSION {
                    return Err(t.err(format!(
                        "trace version {} is not the version this fsbench reads ({VERSION}){}",
                        h.version,
                        if h.version > VERSION {
                            ": a newer fsbench wrote it"
                        } else {
                            ""
                        }
                    )));
                }
                t.header = h;
            }
            Some(_) => return Err(t.err("the first line is not the header".into())),
            None => return Err(t.err("empty file: no header".into())),
        }
        loop {
            match t.read_line()? {
                Some(Line::Start(e)) => {
                    t.check_entry(&e)?;
                    t.start.push(e);
                }
                other => {
                    t.pending = other;
                    break;
                }
            }
        }
        Ok(t)
    }

    fn err(&self, problem: String) -> TraceError {
        TraceError {
            line: self.line,
            offset: self.offset,
            problem,
        }
    }

    /// The next line, parsed (`None` at the end of the file).
    fn read_line(&mut self) -> Result<Option<Line>, TraceError> {
        self.offset += self.buf.len() as u64;
        self.buf.clear();
        self.line += 1;
        let n = (&mut self.input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.err(format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        if self.buf.len() > MAX_LINE {
            return Err(self.err(format!("line longer than {MAX_LINE} bytes")));
        }
        if self.buf.last() != Some(&b'\n') {
            return Err(self.err("truncated: the last line is cut short".into()));
        }
        let text = std::str::from_utf8(&self.buf[..self.buf.len() - 1])
            .map_err(|_| self.err("not UTF-8".into()))?;
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| self.err(format!("not a trace line: {e}")))
    }

    fn check_entry(&self, e: &Entry) -> Result<(), TraceError> {
        check_rel(&e.p).map_err(|m| self.err(m))?;
        if e.size > MAX_FILE {
            return Err(self.err(format!("file size {} above {MAX_FILE}", e.size)));
        }
        if let Some(t) = &e.target {
            check_rel(t).map_err(|m| self.err(format!("symlink target: {m}")))?;
        }
        Ok(())
    }

    fn check_event(&mut self, e: &Event) -> Result<(), TraceError> {
        for p in [&e.p, &e.p2, &e.target].into_iter().flatten() {
            check_rel(p).map_err(|m| self.err(m))?;
        }
        if e.n.unwrap_or(0) > MAX_IO && matches!(e.c, Call::Read | Call::Write) {
            return Err(self.err(format!("a call of more than {MAX_IO} bytes")));
        }
        if e.o.unwrap_or(0).saturating_add(e.n.unwrap_or(0)) > MAX_FILE {
            return Err(self.err(format!("offset beyond {MAX_FILE} bytes")));
        }
        let needs_path = matches!(
            e.c,
            Call::Open
                | Call::Truncate
                | Call::Mkdir
                | Call::Rmdir
                | Call::Unlink
                | Call::Stat
                | Call::Rename
                | Call::Link
        );
        if needs_path && e.p.is_none() {
            return Err(self.err(format!("{:?} without a path", e.c)));
        }
        if matches!(e.c, Call::Rename | Call::Link | Call::Symlink) && e.p2.is_none() {
            return Err(self.err(format!("{:?} without its second path", e.c)));
        }
        match (e.c, e.h) {
            (Call::Open, Some(h)) => {
                if e.err.is_some() {
                    return Err(self.err("a failed open with a handle".into()));
                }
                if !self.open.insert(h) {
                    return Err(self.err(format!("handle {h} opened twice")));
                }
                if self.open.len() > MAX_OPEN {
                    return Err(self.err(format!("more than {MAX_OPEN} handles open")));
                }
            }
            (Call::Open, None) if e.err.is_none() => {
                return Err(self.err("a successful open without a handle".into()));
            }
            (Call::Close, Some(h)) => {
                let was_open = self.open.remove(&h);
                if !was_open {
                    return Err(self.err(format!("handle {h} closed but not open")));
                }
            }
            (Call::Open | Call::Syncfs | Call::Truncate, _) => {}
            (c, Some(h)) if c.class() != Class::Namespace || c == Call::Getdents => {
                let open = self.open.contains(&h);
                if !open {
                    return Err(self.err(format!("handle {h} used but not open")));
                }
            }
            (c, None) if matches!(c.class(), Class::Read | Class::Write | Class::Fsync) => {
                return Err(self.err(format!("{c:?} without a handle")));
            }
            (Call::Getdents | Call::Close, None) => {
                return Err(self.err(format!("{:?} without a handle", e.c)));
            }
            _ => {}
        }
        Ok(())
    }

    /// The next event (`None` once the trailer was read and checked).
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.trailer.is_some() {
            return Ok(None);
        }
        let line = match self.pending.take() {
            Some(l) => Some(l),
            None => self.read_line()?,
        };
        match line {
            Some(Line::Ev(e)) => {
                if !self.end.is_empty() {
                    return Err(self.err("an event after the end state".into()));
                }
                self.check_event(&e)?;
                self.events += 1;
                self.threads = self.threads.max(e.tid.saturating_add(1));
                Ok(Some(e))
            }
            Some(Line::End(e)) => {
                self.check_entry(&e)?;
                self.end.push(e);
                self.next_event()
            }
            Some(Line::Trailer(t)) => {
                if t.events != self.events {
                    return Err(self.err(format!(
                        "the trailer counts {} events, the trace holds {}",
                        t.events, self.events
                    )));
                }
                let tail = self.read_line()?;
                if tail.is_some() {
                    return Err(self.err("a line after the trailer".into()));
                }
                self.trailer = Some(t);
                Ok(None)
            }
            Some(Line::Header(_)) => Err(self.err("a second header".into())),
            Some(Line::Start(_)) => Err(self.err("a starting-state entry after the events".into())),
            None => Err(self.err(format!(
                "truncated: the file ends after {} events without its trailer",
                self.events
            ))),
        }
    }

    /// Read to the end, checking every line; the trailer.
    pub fn check_all(&mut self) -> Result<Trailer, TraceError> {
        while self.next_event()?.is_some() {}
        Ok(self.trailer.clone().unwrap_or_default())
    }
}

/// Writes a trace line by line (plain, or gzip when `gzip`).
pub struct TraceWriter {
    out: Box<dyn Write>,
    events: u64,
}

impl TraceWriter {
    /// Start a trace on `out` with its header.
    pub fn new(out: Box<dyn Write>, gzip: bool, header: &Header) -> std::io::Result<TraceWriter> {
        let out: Box<dyn Write> = if gzip {
            Box::new(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            ))
        } else {
            out
        };
        let mut w = TraceWriter { out, events: 0 };
        w.line(&Line::Header(header.clone()))?;
        Ok(w)
    }

    /// Write one line.
    pub fn line(&mut self, l: &Line) -> std::io::Result<()> {
        if matches!(l, Line::Ev(_)) {
            self.events += 1;
        }
        serde_json::to_writer(&mut self.out, l)?;
        self.out.write_all(b"\n")
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Write the trailer (its event count is the writer's) and flush.
    pub fn finish(mut self, mut trailer: Trailer) -> std::io::Result<()> {
        trailer.events = self.events;
        self.line(&Line::Trailer(trailer))?;
        self.out.flush()
        // The gzip encoder writes its footer when dropped.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            format: FORMAT.into(),
            version: VERSION,
            name: "t".into(),
            capture: "strace".into(),
            command: vec!["sh".into()],
            anonymized: false,
        }
    }

    /// A trace of `lines` (after the header), written to memory.
    pub(crate) fn write(lines: &[Line], gzip: bool) -> Vec<u8> {
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        {
            let mut w = TraceWriter::new(Box::new(Shared(buf.clone())), gzip, &header()).unwrap();
            for l in lines {
                w.line(l).unwrap();
            }
            w.finish(Trailer::default()).unwrap();
        }
        buf.lock().unwrap().clone()
    }

    fn read(bytes: Vec<u8>) -> Result<(TraceReader, Vec<Event>), TraceError> {
        let mut r = TraceReader::from_reader(std::io::Cursor::new(bytes))?;
        let mut evs = Vec::new();
        while let Some(e) = r.next_event()? {
            evs.push(e);
        }
        Ok((r, evs))
    }

    fn sample() -> Vec<Line> {
        let mut open = Event::new(0, 0, Call::Open);
        open.h = Some(1);
        open.p = Some("a/f".into());
        open.fl = open_flags::WRITE | open_flags::CREATE;
        let mut w = Event::new(1, 5, Call::Write);
        w.h = Some(1);
        w.o = Some(0);
        w.n = Some(4096);
        let mut c = Event::new(0, 9, Call::Close);
        c.h = Some(1);
        vec![
            Line::Start(Entry {
                p: "a".into(),
                t: EntryType::Dir,
                size: 0,
                nlink: 0,
                ino: 0,
                target: None,
            }),
            Line::Ev(open),
            Line::Ev(w),
            Line::Ev(c),
            Line::End(Entry {
                p: "a/f".into(),
                t: EntryType::File,
                size: 4096,
                nlink: 1,
                ino: 0,
                target: None,
            }),
        ]
    }

    #[test]
    fn a_written_trace_reads_back_plain_and_gzip() {
        for gzip in [false, true] {
            let (r, evs) = read(write(&sample(), gzip)).unwrap();
            assert_eq!(r.header.name, "t");
            assert_eq!(r.start.len(), 1);
            assert_eq!(evs.len(), 3);
            assert_eq!(evs[1].n, Some(4096));
            assert_eq!(r.end[0].size, 4096);
            assert_eq!(r.trailer.unwrap().events, 3);
        }
    }

    #[test]
    fn a_truncated_trace_names_its_last_line() {
        let bytes = write(&sample(), false);
        // Cut inside the trailer line, then exactly before it.
        let cut = bytes.len() - 5;
        let e = read(bytes[..cut].to_vec()).err().unwrap();
        assert!(e.problem.contains("truncated"), "{e}");
        assert_eq!(e.line, 7);
        let before = bytes[..bytes.len() - 1]
            .iter()
            .rposition(|b| *b == b'\n')
            .unwrap();
        let e = read(bytes[..=before].to_vec()).err().unwrap();
        assert!(e.problem.contains("without its trailer"), "{e}");
    }

    #[test]
    fn a_future_version_is_refused_at_line_one() {
        let text = String::from_utf8(write(&sample(), false)).unwrap();
        let text = text.replacen("\"version\":1", "\"version\":9", 1);
        let e = read(text.into_bytes()).err().unwrap();
        assert_eq!((e.line, e.offset), (1, 0));
        assert!(e.problem.contains("newer fsbench"), "{e}");
    }

    #[test]
    fn paths_that_escape_are_refused() {
        for bad in ["../x", "/etc/passwd", "a/../../b", "", "a//b", "./a"] {
            assert!(check_rel(bad).is_err(), "{bad}");
        }
        for good in [".", "a", "a/b.c", "..a"] {
            assert!(check_rel(good).is_ok(), "{good}");
        }
        let mut lines = sample();
        if let Line::Ev(e) = &mut lines[1] {
            e.p = Some("../../etc/shadow".into());
        }
        let e = read(write(&lines, false)).err().unwrap();
        assert_eq!(e.line, 3);
        assert!(e.problem.contains("escapes"), "{e}");
    }

    #[test]
    fn handles_must_be_opened_before_use() {
        let mut lines = sample();
        lines.remove(1);
        let e = read(write(&lines, false)).err().unwrap();
        assert!(e.problem.contains("handle 1 used but not open"), "{e}");
    }

    #[test]
    fn a_corrupt_line_names_its_offset() {
        let mut bytes = write(&sample(), false);
        let second = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
        bytes[second + 2] = b'#';
        let e = read(bytes).err().unwrap();
        assert_eq!((e.line, e.offset), (2, second as u64));
        assert!(e.problem.contains("not a trace line"), "{e}");
    }
}
