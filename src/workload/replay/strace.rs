//! strace's output (`strace -f -ttt -T -y -s 0`) turned into trace events.
//!
//! strace prints one line per call with each descriptor's path (`-y`: `3</dir/f>`, the
//! working directory on `AT_FDCWD</dir>`), so paths come from the kernel, not from replaying
//! the descriptor table. What this parser tracks itself: each descriptor's file position
//! (strace does not print it; a read or write moves it by its result, `lseek` sets it), file
//! sizes (an `O_APPEND` write lands at the end), a handle per opened file shared by its
//! `dup`s, each thread's working directory (for `mkdir("d")` and other calls without a
//! directory descriptor), and renames (a handle follows its file).
//!
//! Approximations (docs/replay.md): descriptors are keyed by number and path across the
//! whole process tree (a forked child's close ends the handle; a later use by the parent
//! reopens it at offset 0, or at the end when appending); positions shared through `fork`
//! are tracked once.

use super::trace::{Call, Event, falloc_flags, open_flags, rename_flags};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

/// The syscalls `fsbench record` asks strace for (`?` tolerates one this architecture lacks).
pub const SYSCALLS: &[&str] = &[
    "?open",
    "openat",
    "?openat2",
    "?creat",
    "close",
    "read",
    "pread64",
    "readv",
    "preadv",
    "preadv2",
    "write",
    "pwrite64",
    "writev",
    "pwritev",
    "pwritev2",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "syncfs",
    "lseek",
    "ftruncate",
    "truncate",
    "fallocate",
    "?mkdir",
    "mkdirat",
    "?rmdir",
    "?unlink",
    "unlinkat",
    "?rename",
    "?renameat",
    "renameat2",
    "?link",
    "linkat",
    "?symlink",
    "symlinkat",
    "?stat",
    "?lstat",
    "fstat",
    "newfstatat",
    "statx",
    "getdents64",
    "copy_file_range",
    "sendfile",
    "mmap",
    "io_uring_enter",
    "sendmsg",
    "dup",
    "?dup2",
    "dup3",
    "fcntl",
    "chdir",
    "fchdir",
    "clone",
    "clone3",
    "?fork",
    "?vfork",
];

/// One opened file as the recorder follows it.
#[derive(Debug, Clone)]
struct Handle {
    /// Path relative to the root.
    rel: String,
    pos: u64,
    append: bool,
    /// Descriptors pointing at it.
    refs: u32,
}

/// Counts the summary prints.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Events by call.
    pub calls: BTreeMap<Call, u64>,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Seen on the root's files, not replayable, by kind.
    pub not_replayable: BTreeMap<String, u64>,
    /// Lines strace printed that were not understood (skipped).
    pub unparsed: u64,
    /// Distinct paths under the root that calls named.
    pub files: u64,
}

/// The parser's state over one strace output.
pub struct Parser {
    root: PathBuf,
    first_cwd: PathBuf,
    cwd: HashMap<u32, PathBuf>,
    unfinished: HashMap<u32, (f64, String)>,
    tids: HashMap<u32, u32>,
    fds: HashMap<i64, Vec<u32>>,
    handles: HashMap<u32, Handle>,
    next_handle: u32,
    sizes: HashMap<String, u64>,
    seen_paths: std::collections::HashSet<String>,
    t0: Option<f64>,
    /// Descriptors open before the capture (`--pid`): number → (path, position, append).
    preset: HashMap<i64, (String, u64, bool)>,
    /// What the summary prints.
    pub counts: Counts,
}

impl Parser {
    /// A parser for calls under `root` (canonical), the command started in `cwd`, the
    /// starting sizes of the root's files (relative path → size).
    pub fn new(root: &Path, cwd: &Path, sizes: HashMap<String, u64>) -> Parser {
        Parser {
            root: root.to_path_buf(),
            first_cwd: cwd.to_path_buf(),
            cwd: HashMap::new(),
            unfinished: HashMap::new(),
            tids: HashMap::new(),
            fds: HashMap::new(),
            handles: HashMap::new(),
            next_handle: 1,
            sizes,
            seen_paths: Default::default(),
            t0: None,
            preset: HashMap::new(),
            counts: Counts::default(),
        }
    }

    /// A descriptor the traced process held before the capture began (`--pid`, from
    /// `/proc/PID/fdinfo`): its first use is recorded as an open at this position.
    pub fn preset(&mut self, fd: i64, path: &str, pos: u64, append: bool) {
        self.preset.insert(fd, (path.to_string(), pos, append));
    }

    /// Parse one line of strace's output; the events it makes, in order.
    pub fn feed(&mut self, line: &str) -> Vec<Event> {
        let line = line.trim_end();
        let Some((pid, ts, rest)) = split_prefix(line) else {
            if !line.is_empty() {
                self.counts.unparsed += 1;
            }
            return Vec::new();
        };
        if rest.starts_with("---") || rest.starts_with("+++") {
            return Vec::new();
        }
        let whole;
        let (ts, text) = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            self.unfinished.insert(pid, (ts, head.to_string()));
            return Vec::new();
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some((_, after)) = tail.split_once(" resumed>") else {
                self.counts.unparsed += 1;
                return Vec::new();
            };
            let Some((t, head)) = self.unfinished.remove(&pid) else {
                return Vec::new();
            };
            whole = format!("{head}{after}");
            (t, whole.as_str())
        } else {
            (ts, rest)
        };
        match parse_call(text) {
            Some(c) => self.call(pid, ts, &c),
            None => {
                self.counts.unparsed += 1;
                Vec::new()
            }
        }
    }

    /// One call already split into its parts (the eBPF capture's, [`super::fdtable`]): thread
    /// `tid`, at `ts` seconds; the events it makes.
    pub fn feed_call(&mut self, tid: u32, ts: f64, c: &Parsed) -> Vec<Event> {
        self.call(tid, ts, c)
    }

    /// Handles still open when the output ended, closed so the trace is balanced.
    pub fn finish(&mut self, tid_ts: u64) -> Vec<Event> {
        let mut open: Vec<u32> = self.handles.keys().copied().collect();
        open.sort_unstable();
        self.handles.clear();
        self.fds.clear();
        open.into_iter()
            .map(|h| {
                let mut e = Event::new(0, tid_ts, Call::Close);
                e.h = Some(h);
                e
            })
            .collect()
    }

    /// Microseconds since the first call.
    pub fn elapsed_us(&self, ts: f64) -> u64 {
        ((ts - self.t0.unwrap_or(ts)) * 1e6).max(0.0).round() as u64
    }

    fn rel(&mut self, abs: &Path) -> Option<String> {
        let abs = normalize(abs);
        let r = abs.strip_prefix(&self.root).ok()?;
        let s = if r.as_os_str().is_empty() {
            ".".to_string()
        } else {
            r.to_str()?.to_string()
        };
        if self.seen_paths.insert(s.clone()) {
            self.counts.files += 1;
        }
        Some(s)
    }

    fn cwd_of(&self, pid: u32) -> PathBuf {
        self.cwd
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| self.first_cwd.clone())
    }

    /// A path argument resolved against a directory (`None`: the thread's cwd).
    fn resolve(&mut self, pid: u32, dir: Option<&Fd>, name: &str) -> Option<String> {
        let name = unquote(name)?;
        let base = match dir {
            Some(d) => {
                if d.num == AT_FDCWD {
                    self.cwd.insert(pid, PathBuf::from(&d.path));
                }
                PathBuf::from(&d.path)
            }
            None => self.cwd_of(pid),
        };
        self.rel(&base.join(name))
    }

    fn handle_of(&mut self, fd: &Fd) -> Option<(u32, String)> {
        let rel = self.rel(Path::new(&fd.path))?;
        if let Some(h) = self.fds.get(&fd.num).and_then(|hs| {
            hs.iter()
                .copied()
                .find(|h| self.handles.get(h).is_some_and(|x| x.rel == rel))
        }) {
            return Some((h, rel));
        }
        None
    }

    fn new_handle(&mut self, fd: i64, rel: &str, append: bool, pos: u64) -> u32 {
        let h = self.next_handle;
        self.next_handle += 1;
        self.handles.insert(
            h,
            Handle {
                rel: rel.to_string(),
                pos,
                append,
                refs: 1,
            },
        );
        self.fds.entry(fd).or_default().push(h);
        h
    }

    fn tid(&mut self, pid: u32) -> u32 {
        let n = self.tids.len() as u32;
        *self.tids.entry(pid).or_insert(n)
    }

    fn call(&mut self, pid: u32, ts: f64, c: &Parsed) -> Vec<Event> {
        self.t0.get_or_insert(ts);
        let tid = self.tid(pid);
        let mut base = Event::new(tid, self.elapsed_us(ts), Call::Stat);
        base.dur = (c.dur * 1e6).round() as u64;
        base.err = c.errno.clone();
        let ok = c.errno.is_none() && c.ret.is_some();
        let mut out = Vec::new();
        self.descriptor_call(pid, c, base.clone(), ok, &mut out);
        self.path_call_of(pid, c, base.clone(), ok, &mut out);
        self.process_call(pid, c, base, ok, &mut out);
        for e in &out {
            *self.counts.calls.entry(e.c).or_default() += 1;
            match e.c {
                Call::Read => self.counts.read_bytes += e.n.unwrap_or(0),
                Call::Write => self.counts.write_bytes += e.n.unwrap_or(0),
                _ => {}
            }
        }
        out
    }

    /// Calls on a descriptor: open, close, I/O, seeks, syncs, truncates, fallocate, getdents.
    fn descriptor_call(
        &mut self,
        pid: u32,
        c: &Parsed,
        base: Event,
        ok: bool,
        out: &mut Vec<Event>,
    ) {
        let a = &c.args;
        let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or("");
        match c.name.as_str() {
            "open" | "creat" => {
                let flags = if c.name == "creat" {
                    "O_WRONLY|O_CREAT|O_TRUNC"
                } else {
                    arg(1)
                };
                self.open(pid, None, arg(0), flags, c, base, out);
            }
            "openat" | "openat2" => {
                let dir = parse_fd(arg(0));
                let flags = if c.name == "openat2" {
                    arg(2).split("flags=").nth(1).unwrap_or("")
                } else {
                    arg(2)
                };
                self.open(pid, dir.as_ref(), arg(1), flags, c, base, out);
            }
            "close" => {
                if let Some(fd) = parse_fd(arg(0)) {
                    self.close_fd(&fd, base, out);
                }
            }
            "read" | "readv" | "write" | "writev" | "pread64" | "preadv" | "preadv2"
            | "pwrite64" | "pwritev" | "pwritev2" => {
                let Some(fd) = parse_fd(arg(0)) else {
                    return;
                };
                let write = c.name.starts_with("pw") || c.name.starts_with("wr");
                let explicit = match c.name.as_str() {
                    "pread64" | "pwrite64" | "preadv" | "pwritev" | "preadv2" | "pwritev2" => {
                        arg(3).parse::<i64>().ok().filter(|o| *o >= 0)
                    }
                    _ => None,
                };
                let n = if ok {
                    c.ret.unwrap_or(0).max(0) as u64
                } else {
                    0
                };
                self.io(&fd, write, explicit, n, base, out);
            }
            "lseek" => {
                if let (Some(fd), true) = (parse_fd(arg(0)), ok)
                    && let Some((h, _)) = self.handle_of(&fd)
                    && let Some(x) = self.handles.get_mut(&h)
                {
                    x.pos = c.ret.unwrap_or(0).max(0) as u64;
                }
            }
            "fsync" | "fdatasync" | "sync_file_range" | "ftruncate" | "fallocate"
            | "getdents64" => {
                let Some(fd) = parse_fd(arg(0)) else {
                    return;
                };
                let Some((h, rel)) = self.handle_or_implicit(&fd, base.clone(), out) else {
                    return;
                };
                // A directory first seen by getdents is opened as one.
                if c.name == "getdents64"
                    && let Some(o) = out
                        .last_mut()
                        .filter(|o| o.c == Call::Open && o.h == Some(h))
                {
                    o.fl = open_flags::READ | open_flags::DIRECTORY;
                }
                let mut e = base;
                e.h = Some(h);
                e.c = match c.name.as_str() {
                    "fsync" => Call::Fsync,
                    "fdatasync" => Call::Fdatasync,
                    "sync_file_range" => {
                        e.o = arg(1).parse().ok();
                        e.n = arg(2).parse().ok();
                        Call::SyncRange
                    }
                    "ftruncate" => {
                        let n: u64 = arg(1).parse().unwrap_or(0);
                        e.n = Some(n);
                        if ok {
                            self.sizes.insert(rel, n);
                        }
                        Call::Ftruncate
                    }
                    "fallocate" => {
                        e.fl = falloc_mode(arg(1));
                        e.o = arg(2).parse().ok();
                        e.n = arg(3).parse().ok();
                        if ok && e.fl & falloc_flags::KEEP_SIZE == 0 {
                            let end = e.o.unwrap_or(0) + e.n.unwrap_or(0);
                            let s = self.sizes.entry(rel).or_insert(0);
                            *s = (*s).max(end);
                        }
                        Call::Fallocate
                    }
                    _ => Call::Getdents,
                };
                out.push(e);
            }
            "syncfs" => {
                if let Some(fd) = parse_fd(arg(0))
                    && self.rel(Path::new(&fd.path)).is_some()
                {
                    let mut e = base;
                    e.c = Call::Syncfs;
                    out.push(e);
                }
            }
            _ => {}
        }
    }

    /// Calls on paths: truncate, mkdir, rmdir, unlink, stat, rename, link, symlink.
    fn path_call_of(&mut self, pid: u32, c: &Parsed, base: Event, ok: bool, out: &mut Vec<Event>) {
        let a = &c.args;
        let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or("");
        match c.name.as_str() {
            "truncate" => {
                if let Some(p) = self.resolve(pid, None, arg(0)) {
                    let mut e = base;
                    e.c = Call::Truncate;
                    e.n = arg(1).parse().ok();
                    if ok {
                        self.sizes.insert(p.clone(), e.n.unwrap_or(0));
                    }
                    e.p = Some(p);
                    out.push(e);
                }
            }
            "mkdir" | "rmdir" | "unlink" | "stat" | "lstat" => {
                let call = match c.name.as_str() {
                    "mkdir" => Call::Mkdir,
                    "rmdir" => Call::Rmdir,
                    "unlink" => Call::Unlink,
                    _ => Call::Stat,
                };
                self.path_call(pid, None, arg(0), call, ok, base, out);
            }
            "mkdirat" => {
                let dir = parse_fd(arg(0));
                self.path_call(pid, dir.as_ref(), arg(1), Call::Mkdir, ok, base, out);
            }
            "unlinkat" => {
                let dir = parse_fd(arg(0));
                let call = if arg(2).contains("AT_REMOVEDIR") {
                    Call::Rmdir
                } else {
                    Call::Unlink
                };
                self.path_call(pid, dir.as_ref(), arg(1), call, ok, base, out);
            }
            "newfstatat" | "statx" => {
                let dir = parse_fd(arg(0));
                if unquote(arg(1)).as_deref() == Some("") {
                    if let Some(d) = dir.filter(|d| d.num >= 0)
                        && let Some(p) = self.rel(Path::new(&d.path))
                    {
                        let mut e = base;
                        e.p = Some(p);
                        out.push(e);
                    }
                } else {
                    self.path_call(pid, dir.as_ref(), arg(1), Call::Stat, ok, base, out);
                }
            }
            "fstat" => {
                if let Some(fd) = parse_fd(arg(0))
                    && let Some(p) = self.rel(Path::new(&fd.path))
                {
                    let mut e = base;
                    e.p = Some(p);
                    out.push(e);
                }
            }
            "rename" | "renameat" | "renameat2" | "link" | "linkat" => {
                let (d1, n1, d2, n2, fl) = if c.name == "rename" || c.name == "link" {
                    (None, arg(0), None, arg(1), "")
                } else {
                    (parse_fd(arg(0)), arg(1), parse_fd(arg(2)), arg(3), arg(4))
                };
                let from = self.resolve(pid, d1.as_ref(), n1);
                let to = self.resolve(pid, d2.as_ref(), n2);
                let (Some(from), Some(to)) = (from, to) else {
                    return;
                };
                let mut e = base;
                e.c = if c.name.starts_with("link") {
                    Call::Link
                } else {
                    Call::Rename
                };
                if e.c == Call::Rename {
                    if fl.contains("RENAME_NOREPLACE") {
                        e.fl |= rename_flags::NOREPLACE;
                    }
                    if fl.contains("RENAME_EXCHANGE") {
                        e.fl |= rename_flags::EXCHANGE;
                    }
                    if ok {
                        self.renamed(&from, &to);
                    }
                }
                e.p = Some(from);
                e.p2 = Some(to);
                out.push(e);
            }
            "symlink" | "symlinkat" => {
                let (target, dir, name) = if c.name == "symlink" {
                    (arg(0), None, arg(1))
                } else {
                    (arg(0), parse_fd(arg(1)), arg(2))
                };
                let Some(link) = self.resolve(pid, dir.as_ref(), name) else {
                    return;
                };
                let mut e = base;
                e.c = Call::Symlink;
                e.p2 = Some(link);
                e.target = unquote(target).filter(|t| super::trace::check_rel(t).is_ok());
                if e.target.is_none() {
                    *self
                        .counts
                        .not_replayable
                        .entry("symlink_outside".into())
                        .or_default() += 1;
                    return;
                }
                out.push(e);
            }
            _ => {}
        }
    }

    /// Descriptor copies, working directories, new processes, and what cannot be replayed.
    fn process_call(&mut self, pid: u32, c: &Parsed, base: Event, ok: bool, out: &mut Vec<Event>) {
        let a = &c.args;
        let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or("");
        match c.name.as_str() {
            "dup" | "dup2" | "dup3" | "fcntl" => {
                if c.name == "fcntl" && !arg(1).starts_with("F_DUPFD") {
                    return;
                }
                if !ok {
                    return;
                }
                if matches!(c.name.as_str(), "dup2" | "dup3")
                    && let Some(target) = parse_fd(arg(1))
                    && !target.path.is_empty()
                {
                    // dup2 onto an open descriptor closes it first.
                    self.close_fd(&target, base.clone(), out);
                }
                if let (Some(old), Some(new)) = (parse_fd(arg(0)), c.ret_fd.as_ref())
                    && let Some((h, _)) = self.handle_or_implicit(&old, base, out)
                {
                    self.fds.entry(new.num).or_default().push(h);
                    if let Some(x) = self.handles.get_mut(&h) {
                        x.refs += 1;
                    }
                }
            }
            "chdir" => {
                if ok && let Some(p) = unquote(arg(0)) {
                    let next = normalize(&self.cwd_of(pid).join(p));
                    self.cwd.insert(pid, next);
                }
            }
            "fchdir" => {
                if ok && let Some(fd) = parse_fd(arg(0)) {
                    self.cwd.insert(pid, PathBuf::from(fd.path));
                }
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                if let (true, Some(child)) = (ok, c.ret) {
                    let cwd = self.cwd_of(pid);
                    self.cwd.insert(child as u32, cwd);
                }
            }
            "mmap" => {
                if let Some(fd) = parse_fd(arg(4))
                    && self.rel(Path::new(&fd.path)).is_some()
                    && !arg(2).contains("PROT_NONE")
                {
                    self.not_replayable("mmap");
                }
            }
            "io_uring_enter" => self.not_replayable("io_uring"),
            "sendmsg" if a.iter().any(|x| x.contains("SCM_RIGHTS")) => {
                self.not_replayable("fd_passing")
            }
            "copy_file_range" | "sendfile" => {
                let under = [arg(0), arg(1), arg(2)]
                    .iter()
                    .filter_map(|x| parse_fd(x))
                    .any(|fd| self.rel(Path::new(&fd.path)).is_some());
                if under {
                    self.not_replayable(&c.name);
                }
            }
            _ => {}
        }
    }

    fn not_replayable(&mut self, what: &str) {
        *self
            .counts
            .not_replayable
            .entry(what.to_string())
            .or_default() += 1;
    }

    #[allow(clippy::too_many_arguments)]
    fn path_call(
        &mut self,
        pid: u32,
        dir: Option<&Fd>,
        name: &str,
        call: Call,
        ok: bool,
        base: Event,
        out: &mut Vec<Event>,
    ) {
        let Some(p) = self.resolve(pid, dir, name) else {
            return;
        };
        if ok && matches!(call, Call::Unlink | Call::Rmdir) {
            self.sizes.remove(&p);
        }
        let mut e = base;
        e.c = call;
        e.p = Some(p);
        out.push(e);
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        pid: u32,
        dir: Option<&Fd>,
        name: &str,
        flags: &str,
        c: &Parsed,
        base: Event,
        out: &mut Vec<Event>,
    ) {
        let fl = open_bits(flags);
        let rel = match (&c.ret_fd, c.errno.is_none()) {
            (Some(fd), true) => self.rel(Path::new(&fd.path)),
            _ => self.resolve(pid, dir, name),
        };
        let Some(rel) = rel else { return };
        let mut e = base;
        e.c = Call::Open;
        e.fl = fl;
        if let (Some(fd), true) = (&c.ret_fd, c.errno.is_none()) {
            if fl & open_flags::TRUNCATE != 0 {
                self.sizes.insert(rel.clone(), 0);
            } else if fl & open_flags::CREATE != 0 {
                self.sizes.entry(rel.clone()).or_insert(0);
            }
            let h = self.new_handle(fd.num, &rel, fl & open_flags::APPEND != 0, 0);
            e.h = Some(h);
        }
        e.p = Some(rel);
        out.push(e);
    }

    /// The handle of `fd`, or a new one recorded as opened here (a descriptor the capture did
    /// not see opened).
    fn handle_or_implicit(
        &mut self,
        fd: &Fd,
        base: Event,
        out: &mut Vec<Event>,
    ) -> Option<(u32, String)> {
        if let Some(x) = self.handle_of(fd) {
            return Some(x);
        }
        let rel = self.rel(Path::new(&fd.path))?;
        let dir = rel == "." || fd.path.ends_with('/');
        let mut e = base;
        e.c = Call::Open;
        e.err = None;
        e.dur = 0;
        e.fl = if dir {
            open_flags::READ | open_flags::DIRECTORY
        } else {
            open_flags::READ | open_flags::WRITE
        };
        let (pos, append) = match self.preset.remove(&fd.num) {
            Some((path, pos, append)) if path == fd.path => (pos, append),
            _ => (0, false),
        };
        let h = self.new_handle(fd.num, &rel, append, pos);
        e.h = Some(h);
        e.p = Some(rel.clone());
        out.push(e);
        Some((h, rel))
    }

    fn io(
        &mut self,
        fd: &Fd,
        write: bool,
        explicit: Option<i64>,
        n: u64,
        base: Event,
        out: &mut Vec<Event>,
    ) {
        let Some((h, rel)) = self.handle_or_implicit(fd, base.clone(), out) else {
            return;
        };
        let size = self.sizes.get(&rel).copied().unwrap_or(0);
        let x = self.handles.get_mut(&h).expect("handle just looked up");
        let off = match explicit {
            Some(o) => o as u64,
            None if write && x.append => size,
            None => x.pos,
        };
        if explicit.is_none() {
            x.pos = off + n;
        }
        if write && base.err.is_none() {
            self.sizes.insert(rel, size.max(off + n));
        }
        let mut e = base;
        e.c = if write { Call::Write } else { Call::Read };
        e.h = Some(h);
        e.o = Some(off);
        e.n = Some(n);
        out.push(e);
    }

    fn close_fd(&mut self, fd: &Fd, base: Event, out: &mut Vec<Event>) {
        let Some((h, _)) = self.handle_of(fd) else {
            return;
        };
        if let Some(hs) = self.fds.get_mut(&fd.num) {
            hs.retain(|x| *x != h);
        }
        let last = match self.handles.get_mut(&h) {
            Some(x) => {
                x.refs = x.refs.saturating_sub(1);
                x.refs == 0
            }
            None => false,
        };
        if last {
            self.handles.remove(&h);
            let mut e = base;
            e.c = Call::Close;
            e.err = None;
            e.h = Some(h);
            out.push(e);
        }
    }

    /// After a rename, handles and sizes follow their files.
    fn renamed(&mut self, from: &str, to: &str) {
        let moved = |p: &str| -> Option<String> {
            if p == from {
                Some(to.to_string())
            } else {
                p.strip_prefix(from)
                    .filter(|r| r.starts_with('/'))
                    .map(|r| format!("{to}{r}"))
            }
        };
        for x in self.handles.values_mut() {
            if let Some(n) = moved(&x.rel) {
                x.rel = n;
            }
        }
        let keys: Vec<String> = self.sizes.keys().cloned().collect();
        for k in keys {
            if let Some(n) = moved(&k) {
                let v = self.sizes.remove(&k).unwrap_or(0);
                self.sizes.insert(n, v);
            }
        }
    }
}

const AT_FDCWD: i64 = -100;

/// A descriptor as strace prints it with `-y`: `3</dir/f>`, `AT_FDCWD</dir>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fd {
    /// Its number (`AT_FDCWD` is -100).
    pub num: i64,
    /// The path strace printed (empty when none).
    pub path: String,
}

/// Parse a descriptor argument or result.
pub fn parse_fd(s: &str) -> Option<Fd> {
    let s = s.trim();
    let (num, rest) = match s.find('<') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let num = if num == "AT_FDCWD" {
        AT_FDCWD
    } else {
        num.parse().ok()?
    };
    let path = rest
        .strip_prefix('<')
        .and_then(|r| r.strip_suffix('>'))
        .map(|p| p.strip_suffix(" (deleted)").unwrap_or(p))
        .map(unescape)
        .unwrap_or_default();
    Some(Fd { num, path })
}

/// A call as strace printed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Syscall name.
    pub name: String,
    /// Arguments at the top level, as printed.
    pub args: Vec<String>,
    /// The return value (`None` for `?`).
    pub ret: Option<i64>,
    /// The return value as a descriptor with its path (`= 3</dir/f>`).
    pub ret_fd: Option<Fd>,
    /// The error name (`ENOENT`).
    pub errno: Option<String>,
    /// Time in the call, seconds (`-T`).
    pub dur: f64,
}

/// `PID TIMESTAMP REST` (the PID is absent when strace followed one process only).
/// The wall-clock time (`-ttt` seconds) a line of strace's output starts with.
pub fn wall_time(line: &str) -> Option<f64> {
    split_prefix(line).map(|(_, ts, _)| ts)
}

fn split_prefix(line: &str) -> Option<(u32, f64, &str)> {
    let (first, rest) = line.split_once(' ')?;
    if let Ok(pid) = first.parse::<u32>() {
        let rest = rest.trim_start();
        let (ts, rest) = rest.split_once(' ')?;
        Some((pid, ts.parse().ok()?, rest))
    } else {
        Some((0, first.parse().ok()?, rest))
    }
}

/// Parse `name(args) = ret [ERRNO (text)] <dur>`.
pub fn parse_call(text: &str) -> Option<Parsed> {
    let open = text.find('(')?;
    let name = text[..open].to_string();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let (args, after) = split_args(&text[open + 1..])?;
    let after = after.trim_start();
    let after = after.strip_prefix('=')?.trim_start();
    let (ret_s, tail) = match after.find(" ") {
        Some(i) => (&after[..i], after[i..].trim_start()),
        None => (after, ""),
    };
    let ret_fd = parse_fd(ret_s).filter(|f| !f.path.is_empty());
    let ret = if let Some(h) = ret_s.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else {
        ret_s.split('<').next().and_then(|n| n.parse::<i64>().ok())
    };
    let errno = tail
        .split_whitespace()
        .next()
        .filter(|w| {
            w.starts_with('E')
                && w.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        })
        .map(str::to_string);
    let dur = tail
        .rsplit_once('<')
        .and_then(|(_, d)| d.strip_suffix('>'))
        .and_then(|d| d.parse().ok())
        .unwrap_or(0.0);
    Some(Parsed {
        name,
        args,
        ret,
        ret_fd,
        errno,
        dur,
    })
}

/// Split the arguments after `name(` at top-level commas; returns them and what follows the
/// closing parenthesis.
fn split_args(s: &str) -> Option<(Vec<String>, &str)> {
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut args = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            // A descriptor's path: `3</a,b>` (after a digit or AT_FDCWD).
            b'<' if i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1] == b'D') => {
                while i < b.len() && b[i] != b'>' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            b')' if depth == 0 => {
                let last = s[start..i].trim();
                if !last.is_empty() || !args.is_empty() {
                    args.push(last.to_string());
                }
                return Some((args, &s[i + 1..]));
            }
            b')' => depth -= 1,
            b',' if depth == 0 => {
                args.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A quoted string argument, unescaped (`None`: not a string, e.g. `NULL`).
pub fn unquote(s: &str) -> Option<String> {
    let s = s.trim();
    let s = s.strip_suffix("...").unwrap_or(s);
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    Some(unescape(inner))
}

/// strace's C-style escapes (`\n`, `\"`, `\\`, `\x41`, `\101`) undone.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(v) = hex {
                    out.push(v);
                    i += 2;
                }
            }
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `O_WRONLY|O_CREAT|…` as [`open_flags`] bits.
pub fn open_bits(flags: &str) -> u32 {
    let mut fl = 0;
    let words: Vec<&str> = flags
        .split(['|', ',', ' ', '{', '}'])
        .map(str::trim)
        .collect();
    let has = |w: &str| words.contains(&w);
    fl |= if has("O_RDWR") {
        open_flags::READ | open_flags::WRITE
    } else if has("O_WRONLY") {
        open_flags::WRITE
    } else {
        open_flags::READ
    };
    for (w, bit) in [
        ("O_CREAT", open_flags::CREATE),
        ("O_TRUNC", open_flags::TRUNCATE),
        ("O_EXCL", open_flags::EXCL),
        ("O_APPEND", open_flags::APPEND),
        ("O_DIRECTORY", open_flags::DIRECTORY),
        ("O_SYNC", open_flags::SYNC),
        ("O_DSYNC", open_flags::DSYNC),
        ("O_DIRECT", open_flags::DIRECT),
    ] {
        if has(w) {
            fl |= bit;
        }
    }
    fl
}

fn falloc_mode(s: &str) -> u32 {
    let mut fl = 0;
    for (w, bit) in [
        ("FALLOC_FL_KEEP_SIZE", falloc_flags::KEEP_SIZE),
        ("FALLOC_FL_PUNCH_HOLE", falloc_flags::PUNCH_HOLE),
        ("FALLOC_FL_ZERO_RANGE", falloc_flags::ZERO_RANGE),
    ] {
        if s.contains(w) {
            fl |= bit;
        }
    }
    fl
}

/// `a/./b/../c` → `a/c`, lexically (strace's paths are the kernel's, already resolved).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> Parser {
        let mut sizes = HashMap::new();
        sizes.insert("log".to_string(), 100);
        Parser::new(Path::new("/r"), Path::new("/r"), sizes)
    }

    fn feed(p: &mut Parser, lines: &str) -> Vec<Event> {
        lines.lines().flat_map(|l| p.feed(l)).collect()
    }

    #[test]
    fn calls_parse_with_paths_results_and_errors() {
        let c = parse_call(
            r#"openat(AT_FDCWD</r/d>, "f,g", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</r/d/f,g> <0.000129>"#,
        )
        .unwrap();
        assert_eq!(c.name, "openat");
        assert_eq!(c.args.len(), 4);
        assert_eq!(c.ret_fd.unwrap().path, "/r/d/f,g");
        assert!((c.dur - 0.000129).abs() < 1e-9);
        let c = parse_call(
            r#"unlinkat(AT_FDCWD</r>, "x", 0) = -1 ENOENT (No such file or directory) <0.000010>"#,
        )
        .unwrap();
        assert_eq!(c.errno.as_deref(), Some("ENOENT"));
        let c = parse_call(r#"writev(3</r/f>, [{iov_base=""..., iov_len=5}, {iov_base=""..., iov_len=3}], 2) = 8 <0.000010>"#).unwrap();
        assert_eq!(c.args.len(), 3);
        assert_eq!(c.ret, Some(8));
        assert_eq!(unescape(r#"a\"b\\c\x41\101\n"#), "a\"b\\cAA\n");
    }

    #[test]
    fn a_shell_session_becomes_ordered_events_with_offsets() {
        let mut p = parser();
        let evs = feed(
            &mut p,
            r#"10 1.000000 openat(AT_FDCWD</r>, "d/f", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</r/d/f> <0.000100>
10 1.000100 write(3</r/d/f>, ""..., 4096) = 4096 <0.000010>
10 1.000200 write(3</r/d/f>, ""..., 4096) = 4096 <0.000010>
10 1.000300 fsync(3</r/d/f>) = 0 <0.000700>
10 1.000400 close(3</r/d/f>) = 0 <0.000010>
10 1.000500 renameat2(AT_FDCWD</r>, "d/f", AT_FDCWD</r>, "d/g", RENAME_NOREPLACE) = 0 <0.000020>
10 1.000600 openat(AT_FDCWD</r>, "log", O_WRONLY|O_APPEND) = 4</r/log> <0.000012>
10 1.000700 write(4</r/log>, ""..., 3) = 3 <0.000010>
11 1.000800 mkdir("sub", 0777) = 0 <0.000100>
10 1.000900 openat(AT_FDCWD</r>, "/etc/passwd", O_RDONLY) = 5</etc/passwd> <0.000010>
10 1.001000 read(5</etc/passwd>, ""..., 4096) = 100 <0.000010>"#,
        );
        let calls: Vec<Call> = evs.iter().map(|e| e.c).collect();
        use Call::*;
        assert_eq!(
            calls,
            vec![Open, Write, Write, Fsync, Close, Rename, Open, Write, Mkdir]
        );
        assert_eq!(evs[2].o, Some(4096));
        assert_eq!(evs[5].fl, rename_flags::NOREPLACE);
        assert_eq!(evs[5].p2.as_deref(), Some("d/g"));
        // O_APPEND: the write lands at the file's recorded size.
        assert_eq!(evs[7].o, Some(100));
        assert_eq!(evs[8].p.as_deref(), Some("sub"));
        assert_eq!(evs[8].tid, 1);
        assert_eq!(evs[1].ts, 100);
        assert_eq!(p.counts.write_bytes, 8195);
    }

    #[test]
    fn dup_shares_a_handle_and_unfinished_lines_join() {
        let mut p = parser();
        let evs = feed(
            &mut p,
            r#"20 1.0 openat(AT_FDCWD</r>, "f", O_WRONLY|O_CREAT, 0666) = 3</r/f> <0.000010>
20 1.1 dup2(3</r/f>, 1</dev/pts/0>) = 1</r/f> <0.000010>
20 1.2 close(3</r/f>) = 0 <0.000010>
20 1.3 write(1</r/f>, ""..., 10 <unfinished ...>
21 1.35 chdir("/r/sub") = 0 <0.000010>
20 1.4 <... write resumed>) = 10 <0.000100>
21 1.5 unlink("x") = 0 <0.000010>
20 1.6 close(1</r/f>) = 0 <0.000010>"#,
        );
        let calls: Vec<Call> = evs.iter().map(|e| e.c).collect();
        assert_eq!(
            calls,
            vec![Call::Open, Call::Write, Call::Unlink, Call::Close]
        );
        assert_eq!(evs[1].h, evs[0].h);
        assert_eq!(evs[1].n, Some(10));
        assert_eq!(evs[2].p.as_deref(), Some("sub/x"));
    }

    #[test]
    fn a_descriptor_opened_before_capture_is_recorded_as_opened() {
        let mut p = parser();
        let evs = feed(
            &mut p,
            "30 2.0 pread64(7</r/db>, \"\"..., 8192, 16384) = 8192 <0.00001>\n30 2.1 mmap(NULL, 4096, PROT_READ, MAP_SHARED, 7</r/db>, 0) = 0x7f0000000000 <0.00001>",
        );
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].c, Call::Open);
        assert_eq!(evs[1].o, Some(16384));
        assert_eq!(p.counts.not_replayable.get("mmap"), Some(&1));
        assert_eq!(p.finish(5).len(), 1);
    }
}
