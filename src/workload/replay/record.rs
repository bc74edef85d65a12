//! `fsbench record`'s work: run a command under a capture, turn its calls on files under the
//! root into a trace ([`super::trace`]) with the root's starting and end state.
//!
//! Two captures, one parser: eBPF (bpftrace driven as a program, [`super::ebpf`]; its
//! records become strace-shaped calls through [`super::fdtable`]) and strace (`-f -ttt -T -y
//! -s 0`). Either's output goes to a temporary file beside the trace, parsed once the command
//! ended. `--capture auto` takes eBPF when bpftrace and BPF are usable here (docs/replay.md
//! says what each costs).

use super::bpftrace;
use super::fdtable::FdTable;
use super::scan::{self, Anonymizer};
use super::strace::{self, Counts, Parser};
use super::trace::{Entry, Event, FORMAT, Header, Line, TraceWriter, Trailer, VERSION};
use super::window::{Moment, Window};
use crate::Error;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What `fsbench record` was asked.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The directory whose files are recorded.
    pub root: PathBuf,
    /// The trace to write (gzip when it ends in `.gz`).
    pub out: PathBuf,
    /// Replace names by stable tokens.
    pub anonymize: bool,
    /// The trace's name (default: the command's program).
    pub name: Option<String>,
    /// The command and its arguments (empty with `pid`).
    pub command: Vec<String>,
    /// Attach to this running process instead (`--pid`).
    pub pid: Option<u32>,
    /// With `pid`: detach after this long (`--for`; default at Ctrl-C).
    pub duration: Option<Duration>,
    /// The capture asked for (`--capture`).
    pub capture: Capture,
}

/// How calls are captured (`--capture`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Capture {
    /// eBPF when it is usable here (fsbench's own program, else bpftrace), else strace.
    #[default]
    Auto,
    /// fsbench's BPF program on the syscall tracepoints, bpftrace when this build has none: a
    /// few per cent, needs root.
    Ebpf,
    /// bpftrace driven as a program (what `ebpf` falls back to): needs root and bpftrace.
    Bpftrace,
    /// strace (ptrace): each call stops the process twice.
    Strace,
}

/// What a recording gave.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Where the trace is.
    pub out: PathBuf,
    /// Its name.
    pub name: String,
    /// The capture used.
    pub capture: &'static str,
    /// Events written.
    pub events: u64,
    /// Counts by call, bytes, not replayable.
    pub counts: Counts,
    /// Entries of the starting state.
    pub start_entries: usize,
    /// Entries of the end state.
    pub end_entries: usize,
    /// Wall time of the command under capture.
    pub elapsed: Duration,
    /// The command's exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Who the command ran as (`user uid/gid`).
    pub ran_as: String,
    /// Bytes of the capture's output parsed.
    pub capture_bytes: u64,
    /// What the capture said about itself: eBPF's start-up, why auto fell back to strace.
    pub capture_note: String,
    /// Events the capture lost (the trace says it is incomplete).
    pub lost: u64,
}

/// Where a program is on `PATH`.
pub fn which(prog: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(prog))
            .find(|p| p.is_file())
    })
}

/// Check what the capture needs before anything runs: strace installed, ptrace allowed.
pub fn check_capture() -> crate::Result<PathBuf> {
    let strace = which("strace").ok_or_else(|| {
        Error::invalid(
            "strace",
            "strace is not installed; fsbench record captures through it: `apt-get install \
             strace` (docs/replay.md)",
        )
    })?;
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    let root = rustix::process::geteuid().is_root();
    if scope >= 3 {
        return Err(Error::invalid(
            "ptrace",
            "ptrace is disabled on this machine (kernel.yama.ptrace_scope = 3, only a reboot \
             lowers it); fsbench record captures through strace, which needs it",
        ));
    }
    if scope == 2 && !root {
        return Err(Error::invalid(
            "ptrace",
            "kernel.yama.ptrace_scope = 2 lets only CAP_SYS_PTRACE trace: run fsbench record \
             with sudo (the command still runs as you), or `sysctl kernel.yama.ptrace_scope=1`",
        ));
    }
    Ok(strace)
}

/// The user the command runs as: under sudo the one who invoked it (`SUDO_USER`), else the
/// current one. Returns strace's `-u` argument when it must switch, and a description.
fn run_as() -> (Option<String>, String) {
    let root = rustix::process::geteuid().is_root();
    let sudo_user = std::env::var("SUDO_USER").ok().filter(|u| u != "root");
    match (root, sudo_user) {
        (true, Some(u)) => {
            let ids = format!(
                "{}/{}",
                std::env::var("SUDO_UID").unwrap_or_default(),
                std::env::var("SUDO_GID").unwrap_or_default()
            );
            (Some(u.clone()), format!("{u} (uid/gid {ids}, from sudo)"))
        }
        (true, None) => (
            None,
            "root (fsbench itself runs as root, not under sudo)".into(),
        ),
        (false, _) => (
            None,
            format!(
                "uid {} (the invoking user)",
                rustix::process::getuid().as_raw()
            ),
        ),
    }
}

/// Check the options (exit 2, nothing created, on a problem).
pub fn check(o: &RecordOptions) -> crate::Result<PathBuf> {
    match (o.command.is_empty(), o.pid) {
        (true, None) => {
            return Err(Error::invalid(
                "COMMAND",
                "give the command to record after `--`, or --pid",
            ));
        }
        (false, Some(_)) => {
            return Err(Error::invalid("--pid", "give --pid or a command, not both"));
        }
        (true, Some(pid)) if !Path::new(&format!("/proc/{pid}")).is_dir() => {
            return Err(Error::invalid("--pid", format!("no process {pid}")));
        }
        _ => {}
    }
    let root = std::fs::canonicalize(&o.root)
        .map_err(|e| Error::invalid("--root", format!("{}: {e}", o.root.display())))?;
    if !root.is_dir() {
        return Err(Error::invalid(
            "--root",
            format!("{} is not a directory", root.display()),
        ));
    }
    let parent = o
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let parent = std::fs::canonicalize(parent)
        .map_err(|e| Error::invalid("--out", format!("{}: {e}", o.out.display())))?;
    if parent.starts_with(&root) {
        return Err(Error::invalid(
            "--out",
            "the trace would be written under --root, among the files it records: put it \
             elsewhere",
        ));
    }
    Ok(root)
}

/// The capture `--capture` resolves to here: auto is eBPF when [`super::ebpf::check`] passes,
/// else strace, with the reason as a note.
enum Chosen {
    Native(String),
    Ebpf(PathBuf, String),
    Strace(PathBuf, String),
}

/// bpftrace, when fsbench's own program cannot run (`why`): the note says so.
fn bpftrace_instead(why: String) -> crate::Result<Chosen> {
    Ok(Chosen::Ebpf(
        super::ebpf::check()?,
        format!("bpftrace, not fsbench's own BPF program: {why}"),
    ))
}

fn choose(c: Capture) -> crate::Result<Chosen> {
    Ok(match c {
        Capture::Ebpf => match super::native::check() {
            Ok(()) => Chosen::Native(String::new()),
            Err(why) => bpftrace_instead(why)?,
        },
        Capture::Bpftrace => Chosen::Ebpf(super::ebpf::check()?, String::new()),
        Capture::Strace => Chosen::Strace(check_capture()?, String::new()),
        Capture::Auto => match super::native::check() {
            Ok(()) => Chosen::Native(String::new()),
            Err(why) => match bpftrace_instead(why) {
                Ok(b) => b,
                Err(e) => Chosen::Strace(
                    check_capture()?,
                    format!(
                        "auto chose strace: {}",
                        e.to_string().replace("--capture: ", "")
                    ),
                ),
            },
        },
    })
}

/// What ran under a capture, its output not parsed yet.
struct Ran {
    status: Option<std::process::ExitStatus>,
    elapsed: Duration,
    output: tempfile::NamedTempFile,
    capture: &'static str,
    note: String,
    /// The native capture's records (binary, decoded with this layout), not bpftrace's text.
    native: Option<super::native::Layout>,
    /// Records the native capture's ring had no room for.
    lost: u64,
}

/// Run the command (or attach) under the chosen capture.
/// The root's entries now and (attached) the descriptors the process and the processes it
/// started before hold.
type Held = Vec<(u32, Vec<(i64, String, u64, bool)>)>;
fn starting_state(o: &RecordOptions, root: &Path) -> crate::Result<(Vec<Entry>, Held)> {
    let (start, _) = scan::scan(root).map_err(|e| Error::io("cannot scan", root, e))?;
    let held = o
        .pid
        .map(super::proctree::processes)
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p, held_descriptors(p)))
        .collect();
    Ok((start, held))
}

/// Run the capture; `attached` is called once it records (before the command runs, or
/// attached to `--pid`'s processes), to take the starting state then, and `ending`, attached,
/// when the recording ends while the capture still records, to take the end state then.
fn run_capture(
    o: &RecordOptions,
    chosen: Chosen,
    user: Option<&str>,
    attached: &mut dyn FnMut(),
    ending: &mut dyn FnMut(),
) -> crate::Result<Ran> {
    match chosen {
        Chosen::Native(note) => {
            let r = super::native::run(o, sudo_ids(user), attached, ending)?;
            let took = format!(
                "fsbench's BPF program attached in {:.2} s, before recording began",
                r.startup.as_secs_f64()
            );
            Ok(Ran {
                native: Some(r.layout),
                lost: r.lost,
                ..ebpf_ran(r.status, r.elapsed, r.output, join_notes(note, took))
            })
        }
        Chosen::Ebpf(bpftrace, note) => {
            let r = super::ebpf::run(o, &bpftrace, sudo_ids(user), attached, ending)?;
            let took = format!(
                "bpftrace attached its probes in {:.1} s, before recording began",
                r.startup.as_secs_f64()
            );
            Ok(ebpf_ran(
                r.status,
                r.elapsed,
                r.output,
                join_notes(note, took),
            ))
        }
        Chosen::Strace(strace_bin, note) => {
            let dir = o.out.parent().filter(|p| !p.as_os_str().is_empty());
            let tmp = tempfile::Builder::new()
                .prefix(".fsbench-strace-")
                .tempfile_in(dir.unwrap_or(Path::new(".")))
                .map_err(|e| Error::io("cannot create the capture file in", &o.out, e))?;
            // strace attaches in milliseconds: the state is taken just before.
            attached();
            let mut cmd = strace_command(o, &strace_bin, tmp.path(), user);
            crate::cancel::install_handlers();
            let began = Instant::now();
            let mut child = cmd
                .spawn()
                .map_err(|e| Error::io("cannot start", &strace_bin, e))?;
            let status = wait(o, &mut child, &strace_bin, began, ending)?;
            Ok(Ran {
                status: Some(status),
                elapsed: began.elapsed(),
                output: tmp,
                capture: "strace",
                note,
                native: None,
                lost: 0,
            })
        }
    }
}

/// What an eBPF capture ran (bpftrace's text; the native capture sets its layout and loss).
fn ebpf_ran(
    status: Option<std::process::ExitStatus>,
    elapsed: Duration,
    output: tempfile::NamedTempFile,
    note: String,
) -> Ran {
    Ran {
        status,
        elapsed,
        output,
        capture: "ebpf",
        note,
        native: None,
        lost: 0,
    }
}

/// The uid and gid to run the command as: the invoking user's under sudo (`user` set).
fn sudo_ids(user: Option<&str>) -> Option<(u32, u32)> {
    user.and_then(|_| {
        let id = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
        Some((id("SUDO_UID")?, id("SUDO_GID")?))
    })
}

/// Two notes as one, either may be empty.
fn join_notes(a: String, b: String) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a,
        _ => format!("{a}; {b}"),
    }
}

/// Record `o.command` (see the module's doc).
pub fn record(o: &RecordOptions) -> crate::Result<Recorded> {
    let root = check(o)?;
    let chosen = choose(o.capture)?;
    let (user, ran_as) = match o.pid {
        Some(pid) => (
            None,
            format!("its own user (process {pid}, attached; not signalled)"),
        ),
        None => run_as(),
    };
    // The starting state is taken once the capture is attached (eBPF: bpftrace compiles and
    // attaches for seconds, fsbench's own program for a fraction of one, while an attached
    // service runs on), so what happens between the
    // scan and the first recorded call is a moment's, not the start-up's: a file an
    // attached PostgreSQL's autovacuum made in that gap was in neither the starting state
    // nor the calls, and replay ended without it.
    // Attached, the end state too is taken while the capture records, and the trace keeps the
    // calls between the two scans (`window.rs`).
    let mut at_start = None;
    let mut at_end = None;
    let ran = run_capture(
        o,
        chosen,
        user.as_deref(),
        &mut || at_start = Some((Moment::now(), starting_state(o, &root))),
        &mut || at_end = Some((Moment::now(), scan::scan(&root))),
    )?;
    let mut window = Window {
        from: at_start.as_ref().map(|(m, _)| *m),
        to: at_end.as_ref().map(|(m, _)| *m),
        ..Default::default()
    };
    let at_start = at_start.map(|(_, s)| s);
    let at_end = at_end.map(|(_, s)| s);
    let (mut start, held) = at_start.unwrap_or_else(|| starting_state(o, &root))?;
    let outside_links = keep_replayable(&mut start);
    let elapsed = ran.elapsed;
    let interrupted = crate::cancel::requested();
    // Attached, the process keeps running: detaching is the recording's normal end.
    let status_code = if o.pid.is_some() && !interrupted {
        Some(0)
    } else {
        ran.status.and_then(|s| s.code())
    };
    let (mut end, _) = at_end
        .unwrap_or_else(|| scan::scan(&root))
        .map_err(|e| Error::io("cannot scan", &root, e))?;
    keep_replayable(&mut end);
    let (program, name) = program_and_name(o);
    let mut anon = o.anonymize.then(Anonymizer::default);
    let mut hide = |p: &mut String| {
        if let Some(a) = anon.as_mut() {
            *p = a.path(p);
        }
    };
    let header = header(o, &name, &program, ran.capture);
    let partial = o.out.with_extension("partial");
    let file =
        std::fs::File::create(&partial).map_err(|e| Error::io("cannot create", &partial, e))?;
    let gzip = o.out.extension().is_some_and(|e| e == "gz");
    let werr = |e: std::io::Error| Error::io("cannot write", &partial, e);
    let mut w =
        TraceWriter::new(Box::new(std::io::BufWriter::new(file)), gzip, &header).map_err(werr)?;
    let sizes: HashMap<String, u64> = start.iter().map(|e| (e.p.clone(), e.size)).collect();
    for mut e in start.iter().cloned() {
        hide(&mut e.p);
        if let Some(t) = e.target.as_mut() {
            hide(t);
        }
        w.line(&Line::Start(e)).map_err(werr)?;
    }
    let (mut parser, mut table) = parsers(o, &root, sizes, held);
    let tmp = ran.output.path();
    let mut last_ts = 0;
    let mut note = ran.note.clone();
    let mut put = |e: Event| -> crate::Result<()> {
        let mut e = e;
        last_ts = e.ts;
        for p in [&mut e.p, &mut e.p2, &mut e.target].into_iter().flatten() {
            hide(p);
        }
        w.line(&Line::Ev(e)).map_err(werr)
    };
    let (capture_bytes, lost) = if ran.capture == "ebpf" {
        feed_ebpf(
            tmp,
            ran.native.as_ref(),
            &mut parser,
            &mut table,
            &mut window,
            &mut note,
            &mut put,
        )?
    } else {
        (feed_strace(tmp, &mut parser, &mut window, &mut put)?, 0)
    };
    let lost = lost + ran.lost;
    note.push_str(&window.note());
    for e in parser.finish(last_ts) {
        w.line(&Line::Ev(e)).map_err(werr)?;
    }
    for mut e in end.iter().cloned() {
        hide(&mut e.p);
        if let Some(t) = e.target.as_mut() {
            hide(t);
        }
        w.line(&Line::End(e)).map_err(werr)?;
    }
    let events = w.events();
    if outside_links > 0 {
        *parser
            .counts
            .not_replayable
            .entry("symlink_outside".into())
            .or_default() += outside_links;
    }
    w.finish(Trailer {
        events,
        not_replayable: parser.counts.not_replayable.clone(),
        interrupted,
        lost,
    })
    .map_err(werr)?;
    std::fs::rename(&partial, &o.out).map_err(|e| Error::io("cannot rename", &partial, e))?;
    Ok(Recorded {
        out: o.out.clone(),
        name,
        capture: ran.capture,
        events,
        counts: parser.counts,
        start_entries: start.len(),
        end_entries: end.len(),
        elapsed,
        exit: status_code,
        interrupted,
        ran_as,
        capture_bytes,
        capture_note: note,
        lost,
    })
}

/// The parser and the descriptor tables, started in the command's working directory (or the
/// attached process's) and told of the descriptors the attached processes held.
fn parsers(
    o: &RecordOptions,
    root: &Path,
    sizes: HashMap<String, u64>,
    held: Held,
) -> (Parser, FdTable) {
    let cwd = match o.pid {
        Some(pid) => std::fs::read_link(format!("/proc/{pid}/cwd")).ok(),
        None => std::env::current_dir().ok(),
    }
    .unwrap_or_else(|| PathBuf::from("/"));
    let mut parser = Parser::new(root, &cwd, sizes);
    let mut table = FdTable::new(&cwd);
    for (pid, fds) in held {
        for (fd, path, pos, append) in fds {
            parser.preset(fd, &path, pos, append);
            table.preset(pid, fd, &path);
        }
    }
    (parser, table)
}

/// The recorded program's name (the command's, or the attached process's `comm`) and the
/// trace's name (`--name`, else the program's file name).
fn program_and_name(o: &RecordOptions) -> (String, String) {
    let program = match o.pid {
        Some(pid) => std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim().to_string())
            .unwrap_or_else(|_| format!("pid-{pid}")),
        None => o.command[0].clone(),
    };
    let name = o.name.clone().unwrap_or_else(|| {
        Path::new(&program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("trace")
            .to_string()
    });
    (program, name)
}

/// The eBPF capture's output — the native program's records (`native`: their layout), put in
/// time order by [`super::timesort`] in bounded memory, or bpftrace's text, held whole while
/// it is sorted — through the descriptor tables and the parser, each event to `put`; what was
/// cut or left out is added to `note`. Returns the output's size and the events bpftrace
/// lost.
fn feed_ebpf(
    tmp: &Path,
    native: Option<&super::native::Layout>,
    parser: &mut Parser,
    table: &mut FdTable,
    window: &mut Window,
    note: &mut String,
    put: &mut dyn FnMut(Event) -> crate::Result<()>,
) -> crate::Result<(u64, u64)> {
    let mut feed = |r: bpftrace::Rec| -> crate::Result<()> {
        // A call's two halves: its entry outside the window drops the call (its return
        // finds no entry); forks and execs stay, the descriptor tables need them.
        let call = matches!(r, bpftrace::Rec::Enter { .. });
        if call && !window.keeps_ns(r.ts()) {
            return Ok(());
        }
        if let Some((tid, ts, c)) = table.feed(r) {
            for e in parser.feed_call(tid, ts, &c) {
                put(e)?;
            }
        }
        Ok(())
    };
    let (bytes, notes, limit) = match native {
        Some(layout) => {
            let file = std::fs::File::open(tmp).map_err(|e| Error::io("cannot read", tmp, e))?;
            let bytes = file.metadata().map_or(0, |m| m.len());
            let mut input = std::io::BufReader::with_capacity(1 << 20, file);
            let dir = tmp.parent().unwrap_or(Path::new("."));
            let mut sort = super::timesort::TimeSort::new(dir, run_bytes());
            let mut notes = bpftrace::OutputNotes::default();
            super::native::sort_records(&mut input, tmp, layout, &mut sort, &mut notes)?;
            let runs = sort.drain(&mut |_, item| {
                super::native::rec_of(item, layout).map_or(Ok(()), &mut feed)
            })?;
            if runs > 0 {
                note.push_str(&format!(
                    "; records put in time order through {runs} sorted runs on the disk"
                ));
            }
            (bytes, notes, super::native::PATH_LEN)
        }
        None => {
            let text = std::fs::read(tmp).map_err(|e| Error::io("cannot read", tmp, e))?;
            let (recs, notes) = bpftrace::parse_output(&String::from_utf8_lossy(&text));
            let bytes = text.len() as u64;
            drop(text);
            for r in recs {
                feed(r)?;
            }
            (bytes, notes, bpftrace::STRLEN)
        }
    };
    parser.counts.unparsed += notes.unparsed;
    if notes.long_paths > 0 {
        note.push_str(&format!(
            "; {} paths at the capture's {}-byte limit (cut)",
            notes.long_paths, limit
        ));
    }
    if table.unread_paths > 0 {
        note.push_str(&format!(
            "; calls left out, their path not readable by bpftrace (a page not in \
             memory when it read it): {}",
            table.unread_paths
        ));
    }
    Ok((bytes, notes.lost))
}

/// The bytes of records sorted in memory at a time: [`super::timesort::RUN_BYTES`], or
/// `FSBENCH_TEST_SORT_RUN_BYTES` (a test hook: tests/replay.rs makes a small recording go
/// through runs on the disk).
fn run_bytes() -> usize {
    std::env::var("FSBENCH_TEST_SORT_RUN_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(super::timesort::RUN_BYTES)
}

/// strace's output, line by line (streamed), through the parser, each event to `put`.
/// Returns the output's size.
fn feed_strace(
    tmp: &Path,
    parser: &mut Parser,
    window: &mut Window,
    put: &mut dyn FnMut(Event) -> crate::Result<()>,
) -> crate::Result<u64> {
    let reader = std::io::BufReader::new(
        std::fs::File::open(tmp).map_err(|e| Error::io("cannot read", tmp, e))?,
    );
    let mut bytes = 0;
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| Error::io("cannot read", tmp, e))?;
        bytes += line.len() as u64 + 1;
        let line = String::from_utf8_lossy(&line);
        if strace::wall_time(&line).is_some_and(|t| !window.keeps_s(t)) {
            continue;
        }
        for e in parser.feed(&line) {
            put(e)?;
        }
    }
    Ok(bytes)
}

/// strace's command line: the whole tree (`-f`), absolute timestamps and durations, each
/// descriptor's path (`-y`), no buffer contents (`-s 0`), into `tmp`; then the command (as
/// `user` when given) or `-p PID`.
fn strace_command(o: &RecordOptions, strace_bin: &Path, tmp: &Path, user: Option<&str>) -> Command {
    let mut cmd = Command::new(strace_bin);
    cmd.args(["-f", "-ttt", "-T", "-y", "-s", "0", "-qq", "-o"])
        .arg(tmp)
        .arg("-e")
        .arg(format!("trace={}", strace::SYSCALLS.join(",")));
    if let Some(u) = user {
        cmd.args(["-u", u]);
    }
    match o.pid {
        // The process and those it started before, each attached (`-f` follows new ones).
        Some(pid) => cmd.args(
            super::proctree::processes(pid)
                .into_iter()
                .flat_map(|p| ["-p".to_string(), p.to_string()]),
        ),
        None => cmd.arg("--").args(&o.command),
    };
    cmd
}

/// Wait for strace to end: after `--for`, or on Ctrl-C, detach from an attached process
/// (SIGINT to strace; the process itself is never signalled); a signal that reached fsbench
/// alone is forwarded to the command strace started. After five seconds, SIGKILL.
fn wait(
    o: &RecordOptions,
    child: &mut std::process::Child,
    strace_bin: &Path,
    began: Instant,
    ending: &mut dyn FnMut(),
) -> crate::Result<std::process::ExitStatus> {
    let mut forwarded = None;
    loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| Error::io("cannot wait for", strace_bin, e))?
        {
            return Ok(s);
        }
        let timed_out = o.duration.is_some_and(|d| began.elapsed() >= d);
        if o.pid.is_some() && (timed_out || crate::cancel::requested()) {
            // Attached: strace detaches on SIGINT; the traced process is never signalled. The
            // end state first, while strace still records.
            if forwarded.is_none() {
                ending();
            }
            let first = *forwarded.get_or_insert_with(Instant::now);
            let sig = if first.elapsed() > Duration::from_secs(5) {
                rustix::process::Signal::KILL
            } else {
                rustix::process::Signal::INT
            };
            if let Some(p) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(p, sig);
            }
        } else if crate::cancel::requested() {
            // A terminal's Ctrl-C reached the command already (one process group); a signal
            // sent to fsbench alone is forwarded to the command strace started, then, after
            // five seconds, it is killed.
            let first = *forwarded.get_or_insert_with(Instant::now);
            let sig = if first.elapsed() > Duration::from_secs(5) {
                rustix::process::Signal::KILL
            } else {
                rustix::process::Signal::INT
            };
            signal_children(child.id(), sig, first.elapsed() < Duration::from_millis(60));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The trace's header for a recording named `name` of `program`.
fn header(o: &RecordOptions, name: &str, program: &str, capture: &str) -> Header {
    Header {
        format: FORMAT.into(),
        version: VERSION,
        name: name.to_string(),
        capture: capture.into(),
        command: match (o.anonymize, o.pid) {
            (true, _) => vec![name.to_string()],
            (false, Some(pid)) => vec!["--pid".into(), pid.to_string(), program.to_string()],
            (false, None) => o.command.clone(),
        },
        anonymized: o.anonymize,
    }
}

/// Send `sig` to the processes strace (`pid`) started; `note` says so once.
fn signal_children(pid: u32, sig: rustix::process::Signal, note: bool) {
    for k in super::proctree::children(pid) {
        if let Some(p) = rustix::process::Pid::from_raw(k as i32) {
            let _ = rustix::process::kill_process(p, sig);
        }
    }
    if note {
        crate::host::stdio::note(
            "fsbench record: stopping the command; the trace keeps what it did",
        );
    }
}

/// The descriptors process `pid` holds now: (number, path, position, opened for appending),
/// from `/proc/PID/fd` and `/proc/PID/fdinfo`.
fn held_descriptors(pid: u32) -> Vec<(i64, String, u64, bool)> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<i64>().ok()) else {
            continue;
        };
        let Ok(target) = std::fs::read_link(e.path()) else {
            continue;
        };
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap_or_default();
        let field = |k: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(str::trim)
                .map(str::to_string)
        };
        let pos = field("pos:").and_then(|p| p.parse().ok()).unwrap_or(0);
        let append = field("flags:")
            .and_then(|f| u32::from_str_radix(&f, 8).ok())
            .is_some_and(|f| f & libc::O_APPEND as u32 != 0);
        out.push((fd, target.to_string_lossy().into_owned(), pos, append));
    }
    out
}

/// Drop the symlinks whose target leaves the root (absolute, or climbing with `..`): replay
/// refuses them, so the trace does not hold them. Returns how many were dropped.
fn keep_replayable(entries: &mut Vec<super::trace::Entry>) -> u64 {
    let before = entries.len();
    entries.retain(|e| {
        e.target
            .as_deref()
            .is_none_or(|t| super::trace::check_rel(t).is_ok())
    });
    (before - entries.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::trace::{Entry, EntryType};

    #[test]
    fn symlinks_leaving_the_root_are_dropped_from_a_state() {
        let link = |p: &str, t: &str| Entry {
            p: p.into(),
            t: EntryType::Symlink,
            size: 0,
            nlink: 0,
            ino: 0,
            target: Some(t.into()),
        };
        let mut es = vec![link("a", "b/c"), link("x", "/etc"), link("y", "../up")];
        assert_eq!(keep_replayable(&mut es), 2);
        assert_eq!(es.len(), 1);
        assert_eq!(es[0].p, "a");
    }
}
