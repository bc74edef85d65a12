//! The eBPF capture's records ([`super::bpftrace::Rec`]) turned into calls as strace would
//! have printed them ([`super::strace::Parsed`], descriptors with their paths), so one parser
//! ([`super::strace::Parser`]) makes the trace events of both captures.
//!
//! strace names each descriptor's path itself (`-y`); bpftrace prints numbers, so this keeps
//! the descriptor table of every recorded process: paths from the opens' results (resolved
//! lexically against the directory descriptor or the working directory), copies by `dup`,
//! removed by `close`, close-on-exec descriptors dropped at exec, the table and working
//! directory copied at fork. Every path handed on is absolute, so the parser's own notion of
//! each thread's working directory never matters.
//!
//! Approximations: a fork's child gets a copy of the table (threads, which share it, are told
//! apart by their process id); paths are resolved without following symlinks; `fcntl(F_SETFD)`
//! is not followed (only `O_CLOEXEC` at open and `F_DUPFD_CLOEXEC`/`dup3` flags).

use super::bpftrace::Rec;
use super::strace::{Fd, Parsed, normalize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const AT_FDCWD: i64 = -100;
const AT_REMOVEDIR: i64 = 0x200;
const AT_EMPTY_PATH: i64 = 0x1000;
const O_CLOEXEC: i64 = 0o2000000;

#[derive(Debug, Clone)]
struct Open {
    path: PathBuf,
    cloexec: bool,
}

#[derive(Debug, Clone, Default)]
struct Process {
    fds: HashMap<i64, Open>,
    cwd: PathBuf,
}

/// The recorded processes' descriptor tables and working directories.
pub struct FdTable {
    first_cwd: PathBuf,
    procs: HashMap<u32, Process>,
    /// Copies made at fork, keyed by the new thread (a new process's id is its first
    /// thread's).
    forked: HashMap<u32, Process>,
    /// Calls entered and not returned yet, by thread.
    pending: HashMap<u32, Rec>,
    /// Calls left out because a path argument could not be read: bpftrace reads the caller's
    /// memory without faulting it in, so a string on a page not in memory arrives empty (the
    /// script reads paths at the call's exit, after the kernel copied them, to make it rare).
    pub unread_paths: u64,
}

impl FdTable {
    /// A table for a command started in `cwd`.
    pub fn new(cwd: &Path) -> FdTable {
        FdTable {
            first_cwd: cwd.to_path_buf(),
            procs: HashMap::new(),
            forked: HashMap::new(),
            pending: HashMap::new(),
            unread_paths: 0,
        }
    }

    /// A descriptor process `pid` held before the capture (`--pid`).
    pub fn preset(&mut self, pid: u32, fd: i64, path: &str) {
        self.proc(pid).fds.insert(
            fd,
            Open {
                path: PathBuf::from(path),
                cloexec: false,
            },
        );
    }

    /// Set process `pid`'s working directory (`--pid`: from `/proc/PID/cwd`).
    pub fn set_cwd(&mut self, pid: u32, cwd: &Path) {
        self.proc(pid).cwd = cwd.to_path_buf();
    }

    fn proc(&mut self, pid: u32) -> &mut Process {
        let first = &self.first_cwd;
        let forked = &mut self.forked;
        self.procs.entry(pid).or_insert_with(|| {
            forked.remove(&pid).unwrap_or_else(|| Process {
                fds: HashMap::new(),
                cwd: first.clone(),
            })
        })
    }

    /// Take one record (in time order); a completed call comes out as (thread, seconds,
    /// call), the way strace would have printed it.
    pub fn feed(&mut self, rec: Rec) -> Option<(u32, f64, Parsed)> {
        match rec {
            Rec::Enter { tid, .. } => {
                // An entry without its return (lost, or the thread died in the call) is
                // dropped when the thread's next call enters.
                self.pending.insert(tid, rec);
                None
            }
            Rec::Ret { ts, tid, ret } => {
                let Some(Rec::Enter {
                    ts: t0,
                    pid,
                    name,
                    ints,
                    strs,
                    ..
                }) = self.pending.remove(&tid)
                else {
                    return None;
                };
                let mut p = self.call(pid, &name, &ints, &strs, ret)?;
                p.dur = ts.saturating_sub(t0) as f64 / 1e9;
                Some((tid, t0 as f64 / 1e9, p))
            }
            Rec::Fork { pid, child, .. } => {
                let copy = self.proc(pid).clone();
                self.forked.insert(child, copy);
                None
            }
            Rec::Exec { pid, .. } => {
                self.proc(pid).fds.retain(|_, o| !o.cloexec);
                None
            }
        }
    }

    fn fd(&mut self, pid: u32, fd: i64) -> String {
        match self.proc(pid).fds.get(&fd) {
            Some(o) => format!("{fd}<{}>", o.path.display()),
            None => fd.to_string(),
        }
    }

    fn cwd(&mut self, pid: u32) -> String {
        format!("AT_FDCWD<{}>", self.proc(pid).cwd.display())
    }

    /// `name` resolved against directory descriptor `dfd`, lexically.
    fn resolve(&mut self, pid: u32, dfd: i64, name: &str) -> PathBuf {
        let p = self.proc(pid);
        let base = if dfd == AT_FDCWD {
            p.cwd.clone()
        } else {
            p.fds.get(&dfd).map(|o| o.path.clone()).unwrap_or_default()
        };
        normalize(&base.join(name))
    }

    /// `name` resolved and quoted as strace prints a string.
    fn path(&mut self, pid: u32, dfd: i64, name: &str) -> String {
        quote(&self.resolve(pid, dfd, name).to_string_lossy())
    }

    fn opened(&mut self, pid: u32, fd: i64, path: PathBuf, cloexec: bool) -> Fd {
        let f = Fd {
            num: fd,
            path: path.to_string_lossy().into_owned(),
        };
        self.proc(pid).fds.insert(fd, Open { path, cloexec });
        f
    }

    fn call(
        &mut self,
        pid: u32,
        name: &str,
        ints: &[i64],
        strs: &[String],
        ret: i64,
    ) -> Option<Parsed> {
        let raw = Raw { ints, strs };
        let ok = !(-4095..0).contains(&ret);
        // An empty path is a real argument only with AT_EMPTY_PATH (fstat through
        // newfstatat/statx); elsewhere it is a string bpftrace could not read.
        let empty_ok = matches!(name, "newfstatat" | "statx") && raw.i(1) & AT_EMPTY_PATH != 0;
        if strs.iter().any(String::is_empty) && !empty_ok {
            self.unread_paths += 1;
            return None;
        }
        let (call, args, ret_fd) = match name {
            "open" | "openat" | "openat2" | "creat" => self.open_call(pid, name, &raw, ret, ok),
            "close" => {
                let f = self.fd(pid, raw.i(0));
                if ok {
                    self.proc(pid).fds.remove(&raw.i(0));
                }
                ("close", vec![f], None)
            }
            "mkdir" | "mkdirat" | "rmdir" | "unlink" | "unlinkat" | "rename" | "renameat"
            | "renameat2" | "link" | "linkat" | "symlink" | "symlinkat" => {
                let (call, args) = self.namespace_call(pid, name, &raw);
                (call, args, None)
            }
            "dup" | "dup2" | "dup3" | "fcntl" => self.dup_call(pid, name, &raw, ret, ok),
            "chdir" | "fchdir" => {
                if ok {
                    self.chdir(pid, name, &raw);
                }
                return None;
            }
            _ => {
                let (call, args) = self.plain_call(pid, name, &raw)?;
                (call, args, None)
            }
        };
        Some(Parsed {
            name: call.to_string(),
            args,
            ret: Some(ret),
            ret_fd,
            errno: (!ok).then(|| errno_name(-ret)),
            dur: 0.0,
        })
    }

    /// open, openat, openat2, creat: as strace's `openat(cwd, path, flags)`, the descriptor
    /// recorded.
    fn open_call(
        &mut self,
        pid: u32,
        name: &str,
        raw: &Raw,
        ret: i64,
        ok: bool,
    ) -> (&'static str, Vec<String>, Option<Fd>) {
        let (dfd, flags, file) = match name {
            "open" => (AT_FDCWD, raw.i(0), raw.st(0)),
            "openat" | "openat2" => (raw.i(0), raw.i(1), raw.st(0)),
            _ => (
                AT_FDCWD,
                (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as i64,
                raw.st(0),
            ),
        };
        let abs = self.resolve(pid, dfd, file);
        let args = vec![
            self.cwd(pid),
            quote(&abs.to_string_lossy()),
            open_flag_names(flags),
        ];
        let ret_fd = ok.then(|| self.opened(pid, ret, abs, flags & O_CLOEXEC != 0));
        ("openat", args, ret_fd)
    }

    /// Calls on one descriptor or one path that change no descriptor table (`None`: a call
    /// the trace does not hold).
    fn plain_call<'n>(
        &mut self,
        pid: u32,
        name: &'n str,
        raw: &Raw,
    ) -> Option<(&'n str, Vec<String>)> {
        let (i, l, st) = (|k| raw.i(k), |k| raw.l(k), |k| raw.st(k));
        Some(match name {
            "read" | "write" | "readv" | "writev" | "fsync" | "fdatasync" | "syncfs"
            | "getdents64" | "lseek" | "io_uring_enter" => (name, vec![self.fd(pid, i(0))]),
            "pread64" | "pwrite64" | "preadv" | "pwritev" | "preadv2" | "pwritev2" => (
                name,
                vec![
                    self.fd(pid, i(0)),
                    "\"\"".into(),
                    "0".into(),
                    l(1).to_string(),
                ],
            ),
            "sync_file_range" => (
                "sync_file_range",
                vec![self.fd(pid, i(0)), l(1).to_string(), l(2).to_string()],
            ),
            "ftruncate" => ("ftruncate", vec![self.fd(pid, i(0)), l(1).to_string()]),
            "fallocate" => (
                "fallocate",
                vec![
                    self.fd(pid, i(0)),
                    falloc_names(i(1)),
                    l(2).to_string(),
                    l(3).to_string(),
                ],
            ),
            "truncate" => (
                "truncate",
                vec![self.path(pid, AT_FDCWD, st(0)), l(0).to_string()],
            ),
            "newstat" | "newlstat" => (
                "newfstatat",
                vec![self.cwd(pid), self.path(pid, AT_FDCWD, st(0))],
            ),
            // AT_EMPTY_PATH: the descriptor itself.
            "newfstatat" | "statx" if st(0).is_empty() => {
                (name, vec![self.fd(pid, i(0)), "\"\"".into()])
            }
            "newfstatat" | "statx" => (name, vec![self.cwd(pid), self.path(pid, i(0), st(0))]),
            "newfstat" => ("fstat", vec![self.fd(pid, i(0))]),
            "copy_file_range" => (
                "copy_file_range",
                vec![self.fd(pid, i(0)), "NULL".into(), self.fd(pid, i(1))],
            ),
            "sendfile64" => ("sendfile", vec![self.fd(pid, i(0)), self.fd(pid, i(1))]),
            "mmap" => {
                let prot = if i(1) == 0 { "PROT_NONE" } else { "PROT_READ" };
                (
                    "mmap",
                    vec![
                        "NULL".into(),
                        "0".into(),
                        prot.into(),
                        "MAP_SHARED".into(),
                        self.fd(pid, i(0)),
                    ],
                )
            }
            _ => return None,
        })
    }

    /// mkdir, rmdir, unlink, rename, link and symlink in their `…at` forms, as strace
    /// prints them.
    fn namespace_call(&mut self, pid: u32, name: &str, raw: &Raw) -> (&'static str, Vec<String>) {
        let (i, st) = (|k| raw.i(k), |k| raw.st(k));
        match name {
            "mkdir" | "mkdirat" => {
                let dfd = if name == "mkdir" { AT_FDCWD } else { i(0) };
                (
                    "mkdirat",
                    vec![self.cwd(pid), self.path(pid, dfd, st(0)), "0777".into()],
                )
            }
            "rmdir" | "unlink" | "unlinkat" => {
                let (dfd, dir) = match name {
                    "rmdir" => (AT_FDCWD, true),
                    "unlink" => (AT_FDCWD, false),
                    _ => (i(0), i(1) & AT_REMOVEDIR != 0),
                };
                let flag = if dir { "AT_REMOVEDIR" } else { "0" };
                (
                    "unlinkat",
                    vec![self.cwd(pid), self.path(pid, dfd, st(0)), flag.into()],
                )
            }
            "symlink" | "symlinkat" => {
                let dfd = if name == "symlink" { AT_FDCWD } else { i(0) };
                // The target stays as written: it is resolved from the link's directory.
                let args = vec![quote(st(0)), self.cwd(pid), self.path(pid, dfd, st(1))];
                ("symlinkat", args)
            }
            _ => {
                let (d1, d2) = if name == "rename" || name == "link" {
                    (AT_FDCWD, AT_FDCWD)
                } else {
                    (i(0), i(1))
                };
                let mut fl = Vec::new();
                if name == "renameat2" && i(2) & 1 != 0 {
                    fl.push("RENAME_NOREPLACE");
                }
                if name == "renameat2" && i(2) & 2 != 0 {
                    fl.push("RENAME_EXCHANGE");
                }
                let fl = if fl.is_empty() {
                    "0".to_string()
                } else {
                    fl.join("|")
                };
                let call = if name.starts_with("link") {
                    "linkat"
                } else {
                    "renameat2"
                };
                let cwd = self.cwd(pid);
                let from = self.path(pid, d1, st(0));
                let to = self.path(pid, d2, st(1));
                (call, vec![cwd.clone(), from, cwd, to, fl])
            }
        }
    }

    /// dup, dup2, dup3 and fcntl(F_DUPFD…): the new descriptor names the old one's file.
    fn dup_call(
        &mut self,
        pid: u32,
        name: &str,
        raw: &Raw,
        ret: i64,
        ok: bool,
    ) -> (&'static str, Vec<String>, Option<Fd>) {
        let old = self.fd(pid, raw.i(0));
        let (call, args, cloexec) = match name {
            "dup" => ("dup", vec![old], false),
            "fcntl" => ("fcntl", vec![old, "F_DUPFD".into()], raw.i(1) == 1030),
            _ => {
                let new = self.fd(pid, raw.i(1));
                ("dup2", vec![old, new], raw.i(2) & O_CLOEXEC != 0)
            }
        };
        let mut ret_fd = None;
        if ok {
            let path = self.proc(pid).fds.get(&raw.i(0)).map(|o| o.path.clone());
            match path {
                Some(path) => ret_fd = Some(self.opened(pid, ret, path, cloexec)),
                None => {
                    self.proc(pid).fds.remove(&ret);
                }
            }
        }
        (call, args, ret_fd)
    }

    /// chdir and fchdir move the process's working directory; they are not trace events.
    fn chdir(&mut self, pid: u32, name: &str, raw: &Raw) {
        let next = if name == "chdir" {
            Some(self.resolve(pid, AT_FDCWD, raw.st(0)))
        } else {
            self.proc(pid).fds.get(&raw.i(0)).map(|o| o.path.clone())
        };
        if let Some(n) = next {
            self.proc(pid).cwd = n;
        }
    }
}

/// One event's raw arguments as bpftrace printed them.
struct Raw<'a> {
    ints: &'a [i64],
    strs: &'a [String],
}

impl Raw<'_> {
    /// A descriptor, flag or mode: bpftrace 0.17 widens a tracepoint's `int` field without its
    /// sign (AT_FDCWD arrives as 4294967196), so it is read back as 32-bit.
    fn i(&self, k: usize) -> i64 {
        self.ints.get(k).copied().unwrap_or(0) as u32 as i32 as i64
    }

    /// An offset or length, 64-bit whole.
    fn l(&self, k: usize) -> i64 {
        self.ints.get(k).copied().unwrap_or(0)
    }

    /// A path string (empty: not read).
    fn st(&self, k: usize) -> &str {
        self.strs.get(k).map(String::as_str).unwrap_or("")
    }
}

/// A string as strace quotes it (the parser undoes `\\` and `\"`).
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Open flags as strace names them (the ones the trace keeps).
fn open_flag_names(f: i64) -> String {
    let f = f as i32;
    let mut w = vec![match f & libc::O_ACCMODE {
        libc::O_WRONLY => "O_WRONLY",
        libc::O_RDWR => "O_RDWR",
        _ => "O_RDONLY",
    }];
    for (bit, name) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_DIRECTORY, "O_DIRECTORY"),
        (libc::O_DIRECT, "O_DIRECT"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
    ] {
        if f & bit != 0 {
            w.push(name);
        }
    }
    // O_SYNC includes O_DSYNC's bit.
    if f & libc::O_SYNC == libc::O_SYNC {
        w.push("O_SYNC");
    } else if f & libc::O_DSYNC != 0 {
        w.push("O_DSYNC");
    }
    w.join("|")
}

/// fallocate's mode as strace names it.
fn falloc_names(m: i64) -> String {
    let m = m as i32;
    let mut w = Vec::new();
    for (bit, name) in [
        (libc::FALLOC_FL_KEEP_SIZE, "FALLOC_FL_KEEP_SIZE"),
        (libc::FALLOC_FL_PUNCH_HOLE, "FALLOC_FL_PUNCH_HOLE"),
        (libc::FALLOC_FL_ZERO_RANGE, "FALLOC_FL_ZERO_RANGE"),
    ] {
        if m & bit != 0 {
            w.push(name);
        }
    }
    if w.is_empty() {
        "0".into()
    } else {
        w.join("|")
    }
}

/// An errno's name (`ENOENT`); `E<n>` for one not listed.
pub fn errno_name(n: i64) -> String {
    let name = match n as i32 {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ENODATA => "ENODATA",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOSYS => "ENOSYS",
        _ => return format!("E{n}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::bpftrace::parse_output;
    use crate::workload::replay::strace::Parser;
    use crate::workload::replay::trace::Call;

    fn run(out: &str) -> Vec<Parsed> {
        let (recs, _) = parse_output(out);
        let mut t = FdTable::new(Path::new("/r"));
        recs.into_iter()
            .filter_map(|r| t.feed(r))
            .map(|x| x.2)
            .collect()
    }

    #[test]
    fn descriptors_get_their_paths_from_opens_dups_and_forks() {
        let calls = run("E 10 5 5 openat -100 577\nS 5 d/f\nR 11 5 3\n\
             E 12 5 5 write 3\nR 13 5 4096\n\
             F 14 5 5 6\n\
             E 15 6 6 dup2 3 1\nR 16 6 1\n\
             E 17 6 6 write 1\nR 18 6 10\n\
             E 19 5 5 close 3\nR 20 5 0\n\
             E 21 5 5 write 3\nR 22 5 -9\n");
        assert_eq!(calls[0].name, "openat");
        assert_eq!(calls[0].args[1], "\"/r/d/f\"");
        assert_eq!(calls[0].args[2], "O_WRONLY|O_CREAT|O_TRUNC");
        assert_eq!(calls[0].ret_fd.as_ref().unwrap().path, "/r/d/f");
        assert_eq!(calls[1].args[0], "3</r/d/f>");
        assert!((calls[1].dur - 1e-9).abs() < 1e-12);
        // The child's copy of the table, its dup.
        assert_eq!(calls[2].args, vec!["3</r/d/f>", "1"]);
        assert_eq!(calls[3].args[0], "1</r/d/f>");
        // After close, the number is no file's.
        assert_eq!(calls[5].args[0], "3");
        assert_eq!(calls[5].errno.as_deref(), Some("EBADF"));
    }

    #[test]
    fn a_path_bpftrace_could_not_read_leaves_its_call_out() {
        let (recs, _) = parse_output(
            "E 1 5 5 openat -100 0\nS 5 \nR 2 5 -2\n\
             E 3 5 5 newfstatat 3 4096\nS 5 \nR 4 5 0\n\
             E 5 5 5 newfstatat -100 0\nS 5 \nR 6 5 -2\n",
        );
        let mut t = FdTable::new(Path::new("/r"));
        let calls: Vec<Parsed> = recs
            .into_iter()
            .filter_map(|r| t.feed(r))
            .map(|x| x.2)
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "newfstatat");
        assert_eq!(t.unread_paths, 2);
    }

    #[test]
    fn descriptors_widened_without_their_sign_are_read_back_as_32_bit() {
        let calls = run("E 1 5 5 openat 4294967196 4294967361\nS 5 f\nR 2 5 3\n\
             E 3 5 5 pwrite64 3 8589934592\nR 4 5 1\n");
        assert_eq!(calls[0].args[1], "\"/r/f\"");
        assert_eq!(calls[0].args[2], "O_WRONLY|O_CREAT");
        assert_eq!(calls[1].args[3], "8589934592");
    }

    #[test]
    fn working_directories_and_exec_close_on_exec() {
        let calls = run("E 1 5 5 chdir\nS 5 sub\nR 2 5 0\n\
             E 3 5 5 openat -100 524288\nS 5 a\nR 4 5 3\n\
             E 5 5 5 openat -100 0\nS 5 ../b\nR 6 5 4\n\
             X 7 5 5\n\
             E 8 5 5 read 3\nR 9 5 1\nE 10 5 5 read 4\nR 11 5 1\n\
             E 12 5 5 renameat2 -100 4 1\nS 5 x\nS 5 y\nR 13 5 -2\n");
        assert_eq!(calls[0].args[1], "\"/r/sub/a\"");
        assert_eq!(calls[1].args[1], "\"/r/b\"");
        assert_eq!(calls[2].args[0], "3");
        assert_eq!(calls[3].args[0], "4</r/b>");
        assert_eq!(calls[4].args[1], "\"/r/sub/x\"");
        assert_eq!(calls[4].args[3], "\"/r/b/y\"");
        assert_eq!(calls[4].args[4], "RENAME_NOREPLACE");
        assert_eq!(calls[4].errno.as_deref(), Some("ENOENT"));
    }

    #[test]
    fn the_strace_parser_makes_trace_events_from_the_ebpf_records() {
        let (recs, _) = parse_output(
            "E 1000 7 7 openat -100 65\nS 7 /r/log\nR 2000 7 3\n\
             E 3000 7 7 pwrite64 3 8192\nR 4000 7 512\n\
             E 5000 7 7 fsync 3\nR 6000 7 0\n\
             E 7000 7 7 mmap 3 1\nR 8000 7 140000000000\n\
             E 9000 7 7 unlinkat -100 512\nS 7 /r/dir\nR 9500 7 0\n\
             E 9600 7 7 openat -100 0\nS 7 /etc/passwd\nR 9700 7 4\n\
             E 9800 7 7 read 4\nR 9900 7 100\n\
             E 9950 7 7 openat2 -100 577\nS 7 /r/new\nR 9960 7 5\n",
        );
        let mut t = FdTable::new(Path::new("/"));
        let mut p = Parser::new(Path::new("/r"), Path::new("/"), HashMap::new());
        let evs: Vec<_> = recs
            .into_iter()
            .filter_map(|r| t.feed(r))
            .flat_map(|(tid, ts, c)| p.feed_call(tid, ts, &c))
            .collect();
        let calls: Vec<Call> = evs.iter().map(|e| e.c).collect();
        assert_eq!(
            calls,
            vec![
                Call::Open,
                Call::Write,
                Call::Fsync,
                Call::Rmdir,
                Call::Open
            ]
        );
        // openat2 with O_WRONLY|O_CREAT|O_TRUNC (its flags read from `how`).
        assert_eq!(evs[4].p.as_deref(), Some("new"));
        assert_ne!(
            evs[4].fl & crate::workload::replay::trace::open_flags::CREATE,
            0
        );
        assert_eq!(evs[1].o, Some(8192));
        assert_eq!(evs[1].n, Some(512));
        assert_eq!(evs[1].ts, 2);
        assert_eq!(evs[2].dur, 1);
        assert_eq!(evs[3].p.as_deref(), Some("dir"));
        assert_eq!(p.counts.not_replayable.get("mmap"), Some(&1));
    }
}
