//! `fsbench record --capture ebpf` through fsbench's own BPF program (`bpf/capture.bpf.c`,
//! built by build.rs with clang and embedded): loaded with aya, attached to the syscall
//! tracepoints of [`super::bpftrace::SPECS`], its records drained from a ring buffer on a
//! timer. bpftrace ([`super::ebpf`]) is the fallback when this build has no program (no clang
//! when it was built) or it cannot be loaded.
//!
//! Why a program of its own: bpftrace formats each event as text in its own process and is
//! woken for every one, which cost pgbench about a tenth of its throughput (docs/replay.md,
//! "what the capture costs"). Here a recorded call costs one hash lookup at entry and one at
//! exit (a short call, [`EXIT_ONLY`], one at its exit) and a binary record in a ring that
//! nobody is woken for; the reader copies the records to a file every few milliseconds, paths
//! cut at their NUL, and once the command ended puts them in time order in bounded memory
//! ([`super::timesort`]) and decodes them.
//!
//! The records become the same [`Rec`]s as bpftrace's output, so the descriptor tables and the
//! parser are shared. Which argument is which comes from tracefs' `format` files (an
//! argument's offset in the tracepoint's record), the call's name from its syscall number.

use super::bpftrace::{Rec, SPECS, Spec};
use super::record::RecordOptions;
use super::timesort::TimeSort;
use crate::Error;
use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The program, when this build has it.
#[cfg(fsbench_bpf)]
const OBJECT: Option<&[u8]> = Some(aya::include_bytes_aligned!(concat!(
    env!("OUT_DIR"),
    "/capture.bpf.o"
)));
#[cfg(not(fsbench_bpf))]
const OBJECT: Option<&[u8]> = None;

/// The longest path the program reads, its NUL included (`PATH_LEN` in the C source).
pub const PATH_LEN: usize = 256;

/// Bytes of a record without paths and with them (`struct event`, `struct event_paths`).
const EVENT: usize = 88;
const EVENT_PATHS: usize = EVENT + 2 * PATH_LEN;

/// The calls recorded from their exit alone (`on_exit_only`, which reads their arguments from
/// the saved registers): one program run a call instead of two, and their time is their end.
/// These are short calls whose duration nothing reads (a trace event's `dur` only extends the
/// trace's span), and PostgreSQL's `lseek`s and stats are most of the calls it makes.
const EXIT_ONLY: &[&str] = &[
    "lseek",
    "close",
    "newstat",
    "newlstat",
    "newfstat",
    "newfstatat",
    "statx",
    "getdents64",
    "fcntl",
    "dup",
    "dup2",
    "dup3",
    "mmap",
    "chdir",
    "fchdir",
];

/// How often the ring is drained. Its 64 MiB hold a second of a million calls a second.
const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// Whether this build carries the program (it does when clang was there to build it).
pub fn built() -> bool {
    OBJECT.is_some()
}

/// How to turn one syscall's records into [`Rec`]s: its [`Spec`] and where each of the
/// spec's integer arguments is among the call's six.
#[derive(Debug, Clone)]
struct Call {
    spec: &'static Spec,
    ints: Vec<(usize, Width)>,
}

/// What decoding needs besides the records: the calls by syscall number.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    calls: HashMap<i32, Call>,
}

/// One tracepoint of tracefs: its id and its fields' offsets, by name.
#[derive(Debug, Default, Clone)]
struct Format {
    id: u32,
    /// Each field's offset and how wide its value is.
    fields: HashMap<String, (usize, Width)>,
}

/// How a syscall argument's 64 bits are read: the tracepoint stores every argument in 8
/// bytes, but an `int` is only its low 32 bits (AT_FDCWD arrives as 0xffffff9c), as bpftrace
/// reads it through the field's type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Width {
    /// `int`, `pid_t`: 32 bits, signed.
    I32,
    /// `unsigned int`, `umode_t`: 32 bits, unsigned.
    U32,
    /// Everything else (`long`, `loff_t`, `size_t`, pointers).
    W64,
}

impl Width {
    fn of(decl: &str) -> Width {
        let ty = decl.trim().trim_start_matches("const ");
        let ty = ty.rsplit_once([' ', '*']).map_or(ty, |(t, _)| t).trim();
        match ty {
            "int" | "pid_t" => Width::I32,
            "unsigned int" | "umode_t" | "u32" => Width::U32,
            _ => Width::W64,
        }
    }

    fn read(self, v: u64) -> i64 {
        match self {
            Width::I32 => i64::from(v as u32 as i32),
            Width::U32 => i64::from(v as u32),
            Width::W64 => v as i64,
        }
    }
}

/// Parse tracefs' `format` files, each after a `== <category>/<event>` line (what
/// [`super::ebpf::Tracefs::formats`] gives).
fn parse_formats(text: &str) -> HashMap<String, Format> {
    let mut all: HashMap<String, Format> = HashMap::new();
    let mut cur: Option<&mut Format> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("== ") {
            cur = Some(all.entry(name.trim().to_string()).or_default());
            continue;
        }
        let Some(f) = cur.as_deref_mut() else {
            continue;
        };
        if let Some(id) = line.strip_prefix("ID: ") {
            f.id = id.trim().parse().unwrap_or(0);
        } else if let Some(rest) = line.trim().strip_prefix("field:") {
            // `field:const char * filename;\toffset:24;\tsize:8;\tsigned:0;`
            let mut parts = rest.split(';');
            let decl = parts.next().unwrap_or("");
            let name = decl
                .rsplit([' ', '*'])
                .next()
                .unwrap_or("")
                .split('[')
                .next()
                .unwrap_or("");
            let off = parts
                .find_map(|p| p.trim().strip_prefix("offset:"))
                .and_then(|o| o.parse().ok());
            if let Some(off) = off
                && !name.is_empty()
            {
                f.fields.insert(name.to_string(), (off, Width::of(decl)));
            }
        }
    }
    all
}

/// The index (0–5) of a syscall tracepoint's argument at `offset` (its record: 8 bytes of
/// common fields, the syscall number, then the arguments from offset 16, 8 bytes each).
fn arg_index(offset: usize) -> Option<usize> {
    (offset >= 16 && (offset - 16).is_multiple_of(8) && (offset - 16) / 8 < 6)
        .then(|| (offset - 16) / 8)
}

/// The syscall numbers of the recorded calls (x86-64; the tracepoint names of [`SPECS`]).
#[cfg(target_arch = "x86_64")]
fn number(name: &str) -> Option<i32> {
    use libc::*;
    let n = match name {
        "open" => SYS_open,
        "openat" => SYS_openat,
        "openat2" => SYS_openat2,
        "creat" => SYS_creat,
        "close" => SYS_close,
        "read" => SYS_read,
        "write" => SYS_write,
        "readv" => SYS_readv,
        "writev" => SYS_writev,
        "pread64" => SYS_pread64,
        "pwrite64" => SYS_pwrite64,
        "preadv" => SYS_preadv,
        "pwritev" => SYS_pwritev,
        "preadv2" => SYS_preadv2,
        "pwritev2" => SYS_pwritev2,
        "fsync" => SYS_fsync,
        "fdatasync" => SYS_fdatasync,
        "syncfs" => SYS_syncfs,
        "sync_file_range" => SYS_sync_file_range,
        "lseek" => SYS_lseek,
        "ftruncate" => SYS_ftruncate,
        "truncate" => SYS_truncate,
        "fallocate" => SYS_fallocate,
        "mkdir" => SYS_mkdir,
        "mkdirat" => SYS_mkdirat,
        "rmdir" => SYS_rmdir,
        "unlink" => SYS_unlink,
        "unlinkat" => SYS_unlinkat,
        "rename" => SYS_rename,
        "renameat" => SYS_renameat,
        "renameat2" => SYS_renameat2,
        "link" => SYS_link,
        "linkat" => SYS_linkat,
        "symlink" => SYS_symlink,
        "symlinkat" => SYS_symlinkat,
        "newstat" => SYS_stat,
        "newlstat" => SYS_lstat,
        "newfstat" => SYS_fstat,
        "newfstatat" => SYS_newfstatat,
        "statx" => SYS_statx,
        "getdents64" => SYS_getdents64,
        "copy_file_range" => SYS_copy_file_range,
        "sendfile64" => SYS_sendfile,
        "mmap" => SYS_mmap,
        "io_uring_enter" => SYS_io_uring_enter,
        "dup" => SYS_dup,
        "dup2" => SYS_dup2,
        "dup3" => SYS_dup3,
        "fcntl" => SYS_fcntl,
        "chdir" => SYS_chdir,
        "fchdir" => SYS_fchdir,
        _ => return None,
    };
    Some(n as i32)
}
#[cfg(not(target_arch = "x86_64"))]
fn number(_: &str) -> Option<i32> {
    None
}

/// What the program is told about one call: the indices (plus one, 0 none) of its two paths
/// and of the argument to read a u64 through (`how->flags`), packed as `struct conf`.
fn conf_word(str0: Option<usize>, str1: Option<usize>, deref: Option<usize>) -> u32 {
    let b = |i: Option<usize>| i.map_or(0, |i| i as u32 + 1);
    b(str0) | (b(str1) << 8) | (b(deref) << 16)
}

/// A call's layout from its entry tracepoint's format: `None` when a field is missing.
fn call_of(spec: &'static Spec, f: &Format) -> Option<(Call, u32)> {
    let idx = |field: &str| f.fields.get(field).and_then(|&(o, _)| arg_index(o));
    let width = |field: &str| f.fields.get(field).map_or(Width::W64, |&(_, w)| w);
    let mut deref = None;
    let mut ints = Vec::new();
    for i in spec.ints {
        let at = match i.split_once("->") {
            // `how->flags`: the u64 the program read through the pointer.
            Some((ptr, _)) => {
                let k = idx(ptr)?;
                deref = Some(k);
                (k, Width::W64)
            }
            None => (idx(i)?, width(i)),
        };
        ints.push(at);
    }
    let strs: Vec<usize> = spec.strs.iter().map(|s| idx(s)).collect::<Option<_>>()?;
    let word = conf_word(strs.first().copied(), strs.get(1).copied(), deref);
    Some((Call { spec, ints }, word))
}

/// Why the native capture cannot run here, or nothing: the program built in, root.
pub fn check() -> Result<(), String> {
    if !built() {
        return Err("this fsbench was built without clang, so without its BPF program".into());
    }
    if !rustix::process::geteuid().is_root() {
        return Err("loading BPF programs needs root (CAP_BPF and CAP_PERFMON)".into());
    }
    Ok(())
}

/// What a native capture left: as [`super::ebpf::EbpfRun`], its output the raw records.
pub struct NativeRun {
    /// The command's status (attached: the capture's end).
    pub status: Option<ExitStatus>,
    /// Wall time of the command under capture, from its release.
    pub elapsed: Duration,
    /// Loading and attaching the program.
    pub startup: Duration,
    /// The records, each after its length (u16, native order).
    pub output: tempfile::NamedTempFile,
    /// How to decode them.
    pub layout: Layout,
    /// Records the ring had no room for.
    pub lost: u64,
}

/// The loaded program and its attachments; dropping it detaches everything (the perf event
/// descriptors close, the programs and maps go with the last reference).
struct Loaded {
    bpf: aya::Ebpf,
    links: Vec<OwnedFd>,
}

/// Attach program `prog` to tracepoint `id` (`name` for the error).
fn attach(prog: std::os::fd::BorrowedFd<'_>, id: u32, name: &str) -> crate::Result<OwnedFd> {
    crate::host::sys::perf::attach_to_tracepoint(prog, id).map_err(|(what, e)| {
        Error::invalid(
            "--capture",
            format!(
                "cannot attach the capture to tracepoint {name} ({what}: {e}); --capture \
                 strace records without BPF"
            ),
        )
    })
}

/// Load the program, tell it the calls' layouts and the fork event's layout, seed the
/// recorded threads, and attach it: the sched events first, so that no thread started while
/// the syscalls are being attached is missed.
fn load(formats: &HashMap<String, Format>, seeds: &[u32]) -> crate::Result<(Loaded, Layout)> {
    let refused = |what: &str, e: &dyn std::fmt::Display| {
        Error::invalid(
            "--capture",
            format!(
                "cannot load the capture's BPF program ({what}: {e}); --capture strace records without BPF"
            ),
        )
    };
    let object = OBJECT.ok_or_else(|| refused("not built", &"no clang at build time"))?;
    let mut bpf = aya::Ebpf::load(object).map_err(|e| refused("loading", &e))?;
    let fork = formats
        .get("sched/sched_process_fork")
        .and_then(|f| f.fields.get("child_pid").map(|&(o, _)| o))
        .ok_or_else(|| refused("tracefs", &"sched_process_fork has no child_pid"))?;
    {
        let mut params: aya::maps::Array<_, u32> = bpf
            .map_mut("params")
            .ok_or_else(|| refused("maps", &"no params"))?
            .try_into()
            .map_err(|e| refused("params", &e))?;
        params
            .set(0, fork as u32, 0)
            .map_err(|e| refused("params", &e))?;
    }
    let mut layout = Layout::default();
    let mut attach_to: Vec<(&'static str, u32, u32)> = Vec::new();
    {
        let mut confs: aya::maps::Array<_, u32> = bpf
            .map_mut("confs")
            .ok_or_else(|| refused("maps", &"no confs"))?
            .try_into()
            .map_err(|e| refused("confs", &e))?;
        for spec in SPECS {
            let (Some(enter), Some(exit), Some(nr)) = (
                formats.get(&format!("syscalls/sys_enter_{}", spec.name)),
                formats.get(&format!("syscalls/sys_exit_{}", spec.name)),
                number(spec.name),
            ) else {
                continue;
            };
            let Some((call, word)) = call_of(spec, enter) else {
                continue;
            };
            if word != 0 {
                confs
                    .set(nr as u32, word, 0)
                    .map_err(|e| refused("confs", &e))?;
            }
            layout.calls.insert(nr, call);
            attach_to.push((spec.name, enter.id, exit.id));
        }
    }
    {
        let mut threads: aya::maps::HashMap<_, u32, [u64; 8]> = bpf
            .map_mut("threads")
            .ok_or_else(|| refused("maps", &"no threads"))?
            .try_into()
            .map_err(|e| refused("threads", &e))?;
        for &t in seeds {
            threads
                .insert(t, [0u64; 8], 0)
                .map_err(|e| refused("threads", &e))?;
        }
    }
    for name in [
        "on_enter",
        "on_exit",
        "on_fork",
        "on_exec",
        "on_thread_exit",
        "on_exit_only",
    ] {
        let p: &mut aya::programs::TracePoint = bpf
            .program_mut(name)
            .ok_or_else(|| refused("programs", &name))?
            .try_into()
            .map_err(|e| refused(name, &e))?;
        match p.load() {
            // A kernel without the task helpers it calls (before 5.15): every call is then
            // recorded from its entry and its exit.
            Err(_) if name == "on_exit_only" => {}
            r => r.map_err(|e| refused(name, &e))?,
        }
    }
    let fd = |bpf: &aya::Ebpf, name: &str| -> crate::Result<OwnedFd> {
        let p: &aya::programs::TracePoint = bpf
            .program(name)
            .ok_or_else(|| refused("programs", &name))?
            .try_into()
            .map_err(|e| refused(name, &e))?;
        p.fd()
            .map_err(|e| refused(name, &e))?
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| refused(name, &e))
    };
    let (enter, exit) = (fd(&bpf, "on_enter")?, fd(&bpf, "on_exit")?);
    let exit_only = fd(&bpf, "on_exit_only").ok();
    let mut links = Vec::new();
    for (prog, event) in [
        ("on_fork", "sched_process_fork"),
        ("on_exec", "sched_process_exec"),
        ("on_thread_exit", "sched_process_exit"),
    ] {
        let id = formats
            .get(&format!("sched/{event}"))
            .map(|f| f.id)
            .ok_or_else(|| refused("tracefs", &event))?;
        links.push(attach(fd(&bpf, prog)?.as_fd(), id, event)?);
    }
    for (name, enter_id, exit_id) in attach_to {
        let exit = match &exit_only {
            Some(only) if EXIT_ONLY.contains(&name) => only,
            _ => {
                links.push(attach(
                    enter.as_fd(),
                    enter_id,
                    &format!("sys_enter_{name}"),
                )?);
                &exit
            }
        };
        links.push(attach(exit.as_fd(), exit_id, &format!("sys_exit_{name}"))?);
    }
    Ok((Loaded { bpf, links }, layout))
}

/// The fixed part of a record (`struct event`), read from a ring item.
struct Head<'a> {
    kind: u32,
    nr: i32,
    tid: u32,
    pid: u32,
    ts: u64,
    end: u64,
    ret: i64,
    item: &'a [u8],
}

impl<'a> Head<'a> {
    /// `None` when the item is shorter than a record.
    fn of(item: &'a [u8]) -> Option<Head<'a>> {
        if item.len() < EVENT {
            return None;
        }
        let u32_at = |o: usize| u32::from_ne_bytes(item[o..o + 4].try_into().unwrap_or_default());
        let u64_at = |o: usize| u64::from_ne_bytes(item[o..o + 8].try_into().unwrap_or_default());
        Some(Head {
            kind: u32_at(0),
            nr: u32_at(4) as i32,
            tid: u32_at(8),
            pid: u32_at(12),
            ts: u64_at(16),
            end: u64_at(24),
            ret: u64_at(32) as i64,
            item,
        })
    }

    /// Argument `k` (0–5) as stored.
    fn arg(&self, k: usize) -> u64 {
        let o = 40 + 8 * k;
        u64::from_ne_bytes(self.item[o..o + 8].try_into().unwrap_or_default())
    }
}

/// What a call does to the `lseek`s kept by [`Seeks`].
#[derive(Debug, Clone, Copy)]
enum Role {
    /// An `lseek` of the descriptor at this argument.
    Seek(usize, Width),
    /// A call that reads or writes at the descriptor's position ([`super::bpftrace::POSITIONED`]).
    Positioned(usize, Width),
    /// `close`.
    Close(usize, Width),
    /// A call whose result is a new descriptor.
    NewFd,
}

/// The `lseek`s written to the capture's output: as bpftrace's script did, a successful
/// `lseek` is held per process and descriptor and written only before the next call that uses
/// the position on that descriptor, dropped at `close` or when the number is reused. Most
/// `lseek`s are followed by no such call (PostgreSQL asks a relation's size with
/// `lseek(fd, 0, SEEK_END)`: most of its calls), and would otherwise be most of the output.
#[derive(Debug, Default)]
struct Seeks {
    roles: HashMap<i32, Role>,
    kept: HashMap<(u32, i64), Vec<u8>>,
}

impl Seeks {
    fn new(layout: &Layout) -> Seeks {
        let mut roles = HashMap::new();
        for (&nr, call) in &layout.calls {
            let name = call.spec.name;
            let fd = call.ints.first().copied();
            let role = match (name, fd) {
                ("lseek", Some((k, w))) => Role::Seek(k, w),
                ("close", Some((k, w))) => Role::Close(k, w),
                (n, Some((k, w))) if super::bpftrace::POSITIONED.contains(&n) => {
                    Role::Positioned(k, w)
                }
                (n, _) if super::bpftrace::NEW_FD.contains(&n) => Role::NewFd,
                _ => continue,
            };
            roles.insert(nr, role);
        }
        Seeks {
            roles,
            kept: HashMap::new(),
        }
    }

    /// The record `item` (a ring item) passed on: `write` is called for what goes to the
    /// output now, in order (a kept `lseek`, then the record), nothing for an `lseek` kept.
    fn pass(
        &mut self,
        item: &[u8],
        write: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let Some(h) = Head::of(item).filter(|h| h.kind == 0) else {
            return write(item);
        };
        let (nr, pid, ret) = (h.nr, h.pid, h.ret);
        let arg = |k: usize, w: Width| w.read(h.arg(k));
        match self.roles.get(&nr).copied() {
            Some(Role::Seek(k, w)) => {
                if ret >= 0 {
                    self.kept.insert((pid, arg(k, w)), item.to_vec());
                }
                Ok(())
            }
            Some(Role::Positioned(k, w)) => {
                if let Some(seek) = self.kept.remove(&(pid, arg(k, w))) {
                    write(&seek)?;
                }
                write(item)
            }
            Some(Role::Close(k, w)) => {
                self.kept.remove(&(pid, arg(k, w)));
                write(item)
            }
            Some(Role::NewFd) => {
                if ret >= 0 {
                    self.kept.remove(&(pid, ret));
                }
                write(item)
            }
            None => write(item),
        }
    }
}

/// A ring record to the capture file, after its u16 length: the fixed part, then, for a record
/// with paths, each path up to and with its NUL. The program reserves [`PATH_LEN`] bytes a
/// path, and most are a few dozen: a stat-heavy program (`git status`) wrote 708 MiB for 1.25
/// million calls before.
fn write_record(out: &mut impl Write, item: &[u8]) -> std::io::Result<()> {
    let (Some(fixed), Some(s0), Some(s1)) = (
        item.get(..EVENT),
        item.get(EVENT..EVENT + PATH_LEN),
        item.get(EVENT + PATH_LEN..EVENT_PATHS),
    ) else {
        out.write_all(&(item.len() as u16).to_ne_bytes())?;
        return out.write_all(item);
    };
    let (s0, s1) = (up_to_nul(s0), up_to_nul(s1));
    let len = EVENT + s0.len() + s1.len() + 2;
    out.write_all(&(len as u16).to_ne_bytes())?;
    out.write_all(fixed)?;
    for s in [s0, s1] {
        out.write_all(s)?;
        out.write_all(&[0])?;
    }
    Ok(())
}

/// A path field up to its NUL (the whole field when it has none).
fn up_to_nul(field: &[u8]) -> &[u8] {
    &field[..field.iter().position(|&b| b == 0).unwrap_or(field.len())]
}

/// Copy the ring's records into `file` every [`DRAIN_EVERY`] until `stop`, then once more,
/// the `lseek`s that no call uses left out ([`Seeks`]).
fn drain(
    mut ring: aya::maps::RingBuf<aya::maps::MapData>,
    file: std::fs::File,
    mut seeks: Seeks,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<std::io::Result<()>> {
    std::thread::spawn(move || {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut write = |r: &[u8]| write_record(&mut out, r);
        loop {
            let last = stop.load(Ordering::Acquire);
            while let Some(item) = ring.next() {
                seeks.pass(&item, &mut write)?;
            }
            if last {
                break;
            }
            std::thread::sleep(DRAIN_EVERY);
        }
        out.flush()
    })
}

/// Run the command (or attach to `o.pid`) under the native capture; as
/// [`super::ebpf::run`].
pub fn run(
    o: &RecordOptions,
    ids: Option<(u32, u32)>,
    attached: &mut dyn FnMut(),
    ending: &mut dyn FnMut(),
) -> crate::Result<NativeRun> {
    let asked = Instant::now();
    let tracefs = super::ebpf::Tracefs::find();
    let formats = parse_formats(&tracefs.formats()?);
    let dir = o
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (spawner, gate, seeds) = match o.pid {
        Some(pid) => (None, None, super::ebpf::threads_of(pid)),
        None => {
            let (s, gate, pid) = super::ebpf::spawn_gated(&o.command, ids, dir)?;
            (Some(s), Some(gate), vec![pid])
        }
    };
    let loaded = load(&formats, &seeds);
    let (mut loaded, layout) = match loaded {
        Ok(l) => l,
        Err(e) => {
            // The gate closes unwritten: the child exits before exec, the command never runs.
            drop(gate);
            if let Some(s) = spawner {
                let _ = s.join();
            }
            return Err(e);
        }
    };
    let output = tempfile::Builder::new()
        .prefix(".fsbench-ebpf-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot create the capture file in", dir, e))?;
    let file = output
        .reopen()
        .map_err(|e| Error::io("cannot open", output.path(), e))?;
    let ring = loaded
        .bpf
        .take_map("events")
        .ok_or_else(|| Error::invalid("--capture", "the capture's BPF program has no ring"))
        .and_then(|m| {
            aya::maps::RingBuf::try_from(m)
                .map_err(|e| Error::invalid("--capture", format!("the capture's ring: {e}")))
        })?;
    let stop = Arc::new(AtomicBool::new(false));
    let reader = drain(ring, file, Seeks::new(&layout), Arc::clone(&stop));
    let finish = |loaded: Loaded, reader: std::thread::JoinHandle<std::io::Result<()>>| {
        // Detach first: no record arrives after the last drain.
        let Loaded { bpf, links } = loaded;
        drop(links);
        stop.store(true, Ordering::Release);
        let copied = reader
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the draining thread panicked")));
        copied.map_err(|e| Error::io("cannot write", output.path(), e))?;
        Ok::<u64, Error>(lost_of(bpf))
    };
    crate::cancel::install_handlers();
    let startup = asked.elapsed();
    attached();
    let began = Instant::now();
    let status = match super::ebpf::released(o, gate, spawner, ending) {
        Ok(s) => s,
        Err(e) => {
            let _ = finish(loaded, reader);
            return Err(e);
        }
    };
    let elapsed = began.elapsed();
    let lost = finish(loaded, reader)?;
    Ok(NativeRun {
        status,
        elapsed,
        startup,
        output,
        layout,
        lost,
    })
}

/// The records the ring had no room for, summed over the CPUs.
fn lost_of(mut bpf: aya::Ebpf) -> u64 {
    let Some(map) = bpf.map_mut("lost") else {
        return 0;
    };
    let Ok(per_cpu) = aya::maps::PerCpuArray::<_, u64>::try_from(map) else {
        return 0;
    };
    per_cpu.get(&0, 0).map_or(0, |v| v.iter().sum())
}

/// What [`TimeSort`] holds of a record, in its first byte: a call's entry half (the whole
/// record, under its start), its return half (the fixed part, under its end), a fork or an
/// exec (the whole record, under its time).
const ENTER: u8 = 0;
const RET: u8 = 1;
const OTHER: u8 = 2;

/// Read the records (each after its u16 length) from `input` into `sort`, each half under the
/// time it happened; what cannot be decoded is counted in `notes.unparsed`, paths as long as
/// [`PATH_LEN`] - 1 in `notes.long_paths`. [`rec_of`] makes the [`Rec`]s of what `sort`
/// gives back, in time order.
pub fn sort_records(
    input: &mut dyn std::io::Read,
    from: &Path,
    layout: &Layout,
    sort: &mut TimeSort,
    notes: &mut super::bpftrace::OutputNotes,
) -> crate::Result<()> {
    let mut item = Vec::with_capacity(1 + EVENT_PATHS);
    loop {
        let mut len = [0u8; 2];
        let whole = match input.read(&mut len[..1]) {
            Ok(0) => break,
            Ok(_) => input
                .read_exact(&mut len[1..])
                .and_then(|()| {
                    item.resize(1 + u16::from_ne_bytes(len) as usize, 0);
                    input.read_exact(&mut item[1..])
                })
                .map(|()| true),
            Err(e) => Err(e),
        }
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Ok(false),
            _ => Err(e),
        })
        .map_err(|e| Error::io("cannot read", from, e))?;
        if !whole {
            // Cut short: the capture ended inside this record.
            notes.unparsed += 1;
            break;
        }
        let Some(h) = Head::of(&item[1..]) else {
            notes.unparsed += 1;
            continue;
        };
        let (kind, nr, ts, end) = (h.kind, h.nr, h.ts, h.end);
        match kind {
            1 | 2 => {
                item[0] = OTHER;
                sort.push(ts, &item)?;
            }
            0 => {
                let Some(call) = layout.calls.get(&nr) else {
                    notes.unparsed += 1;
                    continue;
                };
                if !kept(call.spec.name, &ints_of(call, &h)) {
                    continue;
                }
                if !call.spec.strs.is_empty() && !has_paths(&item[1..]) {
                    notes.unparsed += 1;
                    continue;
                }
                for k in 0..call.spec.strs.len().min(2) {
                    if path_at(&item[1..], k).len() >= PATH_LEN - 1 {
                        notes.long_paths += 1;
                    }
                }
                item[0] = ENTER;
                sort.push(ts, &item)?;
                item[0] = RET;
                sort.push(end, &item[..1 + EVENT])?;
            }
            _ => notes.unparsed += 1,
        }
    }
    Ok(())
}

/// The integer arguments of a call record, as `call` lists them.
fn ints_of(call: &Call, h: &Head<'_>) -> Vec<i64> {
    call.ints.iter().map(|&(k, w)| w.read(h.arg(k))).collect()
}

/// Path `k` (0 or 1) of a record with paths, up to its NUL.
fn path_at(item: &[u8], k: usize) -> &[u8] {
    item.get(EVENT..)
        .unwrap_or_default()
        .split(|&b| b == 0)
        .nth(k)
        .unwrap_or_default()
}

/// Whether a record carries its two paths, each ended by a NUL (as [`write_record`] writes
/// them, or as the ring holds them).
fn has_paths(item: &[u8]) -> bool {
    item.get(EVENT..)
        .is_some_and(|p| p.iter().filter(|&&b| b == 0).count() >= 2)
}

/// The [`Rec`] of an item [`sort_records`] gave [`TimeSort`].
pub fn rec_of(tagged: &[u8], layout: &Layout) -> Option<Rec> {
    let (&tag, item) = tagged.split_first()?;
    let h = Head::of(item)?;
    let (ts, tid, pid) = (h.ts, h.tid, h.pid);
    Some(match (tag, h.kind) {
        (RET, _) => Rec::Ret {
            ts: h.end,
            tid,
            ret: h.ret,
        },
        (OTHER, 1) => Rec::Fork {
            ts,
            tid,
            pid,
            child: h.arg(0) as u32,
        },
        (OTHER, _) => Rec::Exec { ts, tid, pid },
        _ => {
            let call = layout.calls.get(&h.nr)?;
            Rec::Enter {
                ts,
                tid,
                pid,
                name: call.spec.name.to_string(),
                ints: ints_of(call, &h),
                strs: (0..call.spec.strs.len().min(2))
                    .map(|k| String::from_utf8_lossy(path_at(item, k)).into_owned())
                    .collect(),
            }
        }
    })
}

/// The filters bpftrace's script applies in the kernel ([`Spec::filter`]), applied here:
/// `mmap` of a file only, `fcntl` only when it copies a descriptor.
fn kept(name: &str, ints: &[i64]) -> bool {
    match name {
        "mmap" => ints.first().is_some_and(|&fd| (fd as u64) < 1_048_576),
        "fcntl" => ints.get(1).is_some_and(|&cmd| cmd == 0 || cmd == 1030),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records of `bytes` in time order, sorted in memory.
    fn decode(bytes: &[u8], layout: &Layout) -> (Vec<Rec>, super::super::bpftrace::OutputNotes) {
        let mut notes = super::super::bpftrace::OutputNotes::default();
        let mut sort = TimeSort::new(Path::new("."), usize::MAX);
        sort_records(
            &mut &bytes[..],
            Path::new("test"),
            layout,
            &mut sort,
            &mut notes,
        )
        .unwrap();
        let mut recs = Vec::new();
        sort.drain(&mut |_, item| {
            recs.extend(rec_of(item, layout));
            Ok(())
        })
        .unwrap();
        (recs, notes)
    }

    const OPENAT: &str = "== syscalls/sys_enter_openat\nname: sys_enter_openat\nID: 782\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
        \tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\
        \tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n\
        \tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\
        == sched/sched_process_fork\nID: 366\n\
        \tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
        \tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";

    #[test]
    fn formats_give_ids_and_argument_positions() {
        let f = parse_formats(OPENAT);
        let o = &f["syscalls/sys_enter_openat"];
        assert_eq!(o.id, 782);
        assert_eq!(o.fields["filename"], (24, Width::W64));
        assert_eq!(o.fields["dfd"], (16, Width::I32));
        assert_eq!(f["sched/sched_process_fork"].fields["child_pid"].0, 20);
        assert_eq!(f["sched/sched_process_fork"].fields["parent_comm"].0, 8);
        let spec = SPECS.iter().find(|s| s.name == "openat").unwrap();
        let (call, word) = call_of(spec, o).unwrap();
        // dfd is the first argument, flags the third; the path the second.
        assert_eq!(call.ints, vec![(0, Width::I32), (2, Width::I32)]);
        assert_eq!(word, conf_word(Some(1), None, None));
        assert_eq!(word, 2);
    }

    /// A call record of process 5: `nr`, result `ret`, first argument `fd`.
    fn call_item(nr: i32, ret: i64, fd: u64) -> Vec<u8> {
        let mut r = Vec::new();
        for v in [0u32, nr as u32, 7, 5] {
            r.extend_from_slice(&v.to_ne_bytes());
        }
        for v in [1u64, 2, ret as u64, fd, 0, 0, 0, 0, 0] {
            r.extend_from_slice(&v.to_ne_bytes());
        }
        r
    }

    #[test]
    fn an_lseek_is_written_only_before_a_call_that_uses_the_position() {
        let mut layout = Layout::default();
        let spec = |n: &str| SPECS.iter().find(|s| s.name == n).unwrap();
        for (nr, name) in [(8, "lseek"), (0, "read"), (3, "close"), (257, "openat")] {
            let ints = if name == "openat" {
                vec![(0, Width::I32), (2, Width::I32)]
            } else {
                vec![(0, Width::U32)]
            };
            layout.calls.insert(
                nr,
                Call {
                    spec: spec(name),
                    ints,
                },
            );
        }
        let mut seeks = Seeks::new(&layout);
        let mut out: Vec<Vec<u8>> = Vec::new();
        let items = [
            call_item(8, 0, 3),    // lseek fd 3: kept
            call_item(8, 8192, 4), // lseek fd 4: kept
            call_item(8, -22, 6),  // a failed lseek: dropped
            call_item(0, 10, 3),   // read fd 3: its lseek first
            call_item(3, 0, 4),    // close fd 4: its lseek dropped
            call_item(8, 0, 5),    // lseek fd 5: kept
            call_item(257, 5, 0),  // openat returning 5: fd 5's lseek dropped
            call_item(0, 10, 5),   // read fd 5: no lseek before it
        ];
        for item in &items {
            seeks
                .pass(item, &mut |r| {
                    out.push(r.to_vec());
                    Ok(())
                })
                .unwrap();
        }
        let expected = [&items[0], &items[3], &items[4], &items[6], &items[7]];
        assert_eq!(out.len(), expected.len());
        for (got, want) in out.iter().zip(expected) {
            assert_eq!(got, want);
        }
        // A fork or exec record passes as it is.
        let mut fork = call_item(0, 0, 9);
        fork[0] = 1;
        let mut n = 0;
        seeks
            .pass(&fork, &mut |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn records_decode_into_calls_and_filters_apply() {
        let f = parse_formats(OPENAT);
        let spec = SPECS.iter().find(|s| s.name == "openat").unwrap();
        let (call, _) = call_of(spec, &f["syscalls/sys_enter_openat"]).unwrap();
        let mut layout = Layout::default();
        layout.calls.insert(257, call);
        let mut bytes = Vec::new();
        let mut rec = |kind: u32, nr: i32, ts: u64, args: [u64; 6], path: &str| {
            let mut r = Vec::new();
            for v in [kind, nr as u32, 7, 5] {
                r.extend_from_slice(&v.to_ne_bytes());
            }
            for v in [ts, ts + 10, 3] {
                r.extend_from_slice(&v.to_ne_bytes());
            }
            for a in args {
                r.extend_from_slice(&a.to_ne_bytes());
            }
            if kind == 0 {
                let mut s = [0u8; 2 * PATH_LEN];
                s[..path.len()].copy_from_slice(path.as_bytes());
                r.extend_from_slice(&s);
            }
            bytes.extend_from_slice(&(r.len() as u16).to_ne_bytes());
            bytes.extend_from_slice(&r);
        };
        // AT_FDCWD as the tracepoint stores an int: its low 32 bits.
        rec(0, 257, 200, [0xffff_ff9c, 0, 0o2000000, 0, 0, 0], "a/b");
        rec(1, 0, 100, [9, 0, 0, 0, 0, 0], "");
        let (recs, notes) = decode(&bytes, &layout);
        assert_eq!(notes.unparsed, 0);
        assert_eq!(recs.len(), 3);
        assert!(matches!(
            recs[0],
            Rec::Fork {
                ts: 100,
                child: 9,
                ..
            }
        ));
        match &recs[1] {
            Rec::Enter {
                name, ints, strs, ..
            } => {
                assert_eq!(name, "openat");
                assert_eq!(ints, &vec![-100, 0o2000000]);
                assert_eq!(strs, &vec!["a/b".to_string()]);
            }
            r => panic!("{r:?}"),
        }
        assert!(matches!(
            recs[2],
            Rec::Ret {
                ts: 210,
                ret: 3,
                ..
            }
        ));
        // As the drain writes them, paths cut at their NUL: the same records, fewer bytes.
        let mut compact = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let len = u16::from_ne_bytes([bytes[at], bytes[at + 1]]) as usize;
            write_record(&mut compact, &bytes[at + 2..at + 2 + len]).unwrap();
            at += 2 + len;
        }
        assert_eq!(compact.len(), bytes.len() - 2 * PATH_LEN + "a/b".len() + 2);
        let (again, notes) = decode(&compact, &layout);
        assert_eq!(notes.unparsed, 0);
        assert_eq!(again, recs);
        // A cut file: the partial record is counted, the rest kept.
        let (recs, notes) = decode(&bytes[..bytes.len() - 5], &layout);
        assert_eq!((recs.len(), notes.unparsed), (2, 1));
        assert!(!kept("mmap", &[-1, 3]));
        assert!(kept("mmap", &[4, 3]));
        assert!(kept("fcntl", &[4, 1030]) && !kept("fcntl", &[4, 2]));
    }
}
