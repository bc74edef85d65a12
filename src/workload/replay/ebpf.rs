//! `fsbench record --capture ebpf`: bpftrace driven as a program. The generated script
//! ([`super::bpftrace`]) is started first; the command, forked, reports its pid through a
//! pipe and waits before exec (its environment untouched) until bpftrace's `BEGIN` says every
//! probe is attached (bpftrace compiles and attaches for one to a few seconds, more on a
//! loaded machine), then runs, recorded from its first call. Once it ended (or, attached
//! with `--pid`, after `--for` or at Ctrl-C) bpftrace is stopped with SIGINT and its output,
//! held in a temporary file beside the trace, is parsed.
//!
//! bpftrace's output is fully buffered (`-B full`) into a pipe that a thread of fsbench
//! copies to that file: by default bpftrace writes every line with a system call of its own,
//! which on a busy program is tens of thousands a second taken from the CPUs the program
//! needs (docs/replay.md, "what the capture costs"). `READY` reaches the pipe at once: the
//! script's `BEGIN` prints enough after it to fill the buffer.

use super::bpftrace;
use super::record::{RecordOptions, which};
use crate::Error;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the kernel's tracepoints are listed (bpftrace needs tracefs for them).
const TRACEFS: &str = "/sys/kernel/tracing";

/// What an eBPF capture left.
pub struct EbpfRun {
    /// The command's status (attached: the capture's end).
    pub status: Option<ExitStatus>,
    /// Wall time of the command under capture, from its release.
    pub elapsed: Duration,
    /// bpftrace's start-up: compile and attach, before the command could start.
    pub startup: Duration,
    /// bpftrace's output.
    pub output: tempfile::NamedTempFile,
}

/// How bpftrace reaches tracefs (it reads the syscall tracepoints' formats there): the host's
/// own mount, or, when the host has none, a tracefs mounted in a mount namespace of
/// bpftrace's own. The private mount is seen by no other process, so a concurrent capture
/// cannot unmount it under another's bpftrace (the shared mount fsbench used to make and
/// remove could be), and it is gone when bpftrace exits, even after a SIGKILL.
pub(super) enum Tracefs {
    /// The host's tracefs: the directory of its syscall tracepoints.
    Host(PathBuf),
    /// None on the host: each program that needs it gets a private one.
    Private,
}

impl Tracefs {
    /// The host's tracefs, or [`Tracefs::Private`] when it has none.
    pub(super) fn find() -> Tracefs {
        [TRACEFS, "/sys/kernel/debug/tracing"]
            .iter()
            .map(|d| Path::new(d).join("events/syscalls"))
            .find(|p| p.is_dir())
            .map_or(Tracefs::Private, Tracefs::Host)
    }

    /// Give `cmd` the tracefs it needs: nothing for the host's, else a mount namespace of its
    /// own with tracefs mounted on [`TRACEFS`] (made private first, so the mount does not
    /// propagate back to the host's namespace).
    fn prepare(&self, cmd: &mut Command) {
        if let Tracefs::Private = self {
            crate::host::sys::spawn::private_mount_before_exec(
                cmd,
                c"tracefs",
                c"/sys/kernel/tracing",
            );
        }
    }

    /// The `format` files of the recorded calls' syscall tracepoints and of the sched events
    /// the capture follows, each after a `== <category>/<event>` line (a call this kernel
    /// lacks is left out).
    pub(super) fn formats(&self) -> crate::Result<String> {
        let mut events: Vec<String> = ["fork", "exec", "exit"]
            .iter()
            .map(|e| format!("sched/sched_process_{e}"))
            .collect();
        for s in super::bpftrace::SPECS {
            events.push(format!("syscalls/sys_enter_{}", s.name));
            events.push(format!("syscalls/sys_exit_{}", s.name));
        }
        match self {
            Tracefs::Host(dir) => {
                let root = dir.parent().unwrap_or(dir);
                let mut text = String::new();
                for e in &events {
                    if let Ok(f) = std::fs::read_to_string(root.join(e).join("format")) {
                        text.push_str(&format!("== {e}\n{f}"));
                    }
                }
                Ok(text)
            }
            Tracefs::Private => {
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!(
                        "cd {TRACEFS}/events && for e in \"$@\"; do [ -f \"$e/format\" ] && \
                         echo \"== $e\" && cat \"$e/format\"; done; true"
                    ))
                    .arg("sh")
                    .args(&events)
                    .stdin(Stdio::null())
                    .stderr(Stdio::null());
                self.prepare(&mut sh);
                let out = sh.output().map_err(|e| {
                    Error::invalid(
                        "--capture",
                        format!(
                            "the eBPF capture reads the tracepoints' formats in tracefs, and it \
                             could not be mounted ({e}): `mount -t tracefs nodev {TRACEFS}`, or \
                             --capture strace"
                        ),
                    )
                })?;
                Ok(String::from_utf8_lossy(&out.stdout).into_owned())
            }
        }
    }

    /// The names of the syscall tracepoints this kernel has (`sys_enter_openat` …).
    fn events(&self) -> crate::Result<Vec<String>> {
        let refused = |e: std::io::Error| {
            Error::invalid(
                "--capture",
                format!(
                    "the eBPF capture needs tracefs for the syscall tracepoints, and it could \
                     not be mounted for bpftrace ({e}): `mount -t tracefs nodev {TRACEFS}`, or \
                     --capture strace"
                ),
            )
        };
        match self {
            Tracefs::Host(dir) => Ok(std::fs::read_dir(dir)
                .map_err(refused)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()),
            Tracefs::Private => {
                let mut ls = Command::new("ls");
                ls.arg(format!("{TRACEFS}/events/syscalls"))
                    .stdin(Stdio::null())
                    .stderr(Stdio::null());
                self.prepare(&mut ls);
                let out = ls.output().map_err(refused)?;
                if !out.status.success() {
                    return Err(refused(std::io::Error::other(format!(
                        "listing its tracepoints: {}",
                        out.status
                    ))));
                }
                Ok(String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect())
            }
        }
    }
}

/// Why the eBPF capture cannot run here (`Err`), or bpftrace's path: bpftrace installed, root
/// (loading BPF programs and reading tracepoints needs CAP_BPF and CAP_PERFMON), BTF.
pub fn check() -> crate::Result<PathBuf> {
    let bpftrace = which("bpftrace").ok_or_else(|| {
        Error::invalid(
            "--capture",
            "bpftrace is not installed; the eBPF capture drives it: `apt-get install bpftrace`, \
             or --capture strace",
        )
    })?;
    if !rustix::process::geteuid().is_root() {
        return Err(Error::invalid(
            "--capture",
            "the eBPF capture loads BPF programs, which needs root (CAP_BPF and CAP_PERFMON): \
             run fsbench record with sudo (the command still runs as you), or --capture strace",
        ));
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(Error::invalid(
            "--capture",
            "this kernel has no BTF (/sys/kernel/btf/vmlinux), which bpftrace's tracepoint \
             arguments need: --capture strace",
        ));
    }
    Ok(bpftrace)
}

/// Run the command (or attach to `o.pid`) under bpftrace; `ids`: the uid and gid to run the
/// command as (under sudo).
/// `attached` is called once the probes are attached, before the command is released;
/// `ending`, attached to `o.pid`, once the recording ends, while the probes are still attached
/// (stopping bpftrace takes seconds in which the process runs on unrecorded).
pub fn run(
    o: &RecordOptions,
    bpftrace: &Path,
    ids: Option<(u32, u32)>,
    attached: &mut dyn FnMut(),
    ending: &mut dyn FnMut(),
) -> crate::Result<EbpfRun> {
    let tracefs = Tracefs::find();
    let events: std::collections::HashSet<String> = tracefs.events()?.into_iter().collect();
    let dir = o
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temp = |prefix: &str| {
        tempfile::Builder::new()
            .prefix(prefix)
            .tempfile_in(dir)
            .map_err(|e| Error::io("cannot create the capture file in", dir, e))
    };
    let available = |name: &str| events.contains(&format!("sys_enter_{name}"));
    let (spawner, gate, seeds) = match o.pid {
        Some(pid) => (None, None, threads_of(pid)),
        None => {
            let (s, gate, pid) = spawn_gated(&o.command, ids, dir)?;
            (Some(s), Some(gate), vec![pid])
        }
    };
    let mut script = temp(".fsbench-bpftrace-")?;
    script
        .write_all(bpftrace::script(Some(&available), &seeds).as_bytes())
        .map_err(|e| Error::io("cannot write", script.path(), e))?;
    let output = temp(".fsbench-ebpf-")?;
    let errors = temp(".fsbench-ebpf-err-")?;
    let out_file = output
        .reopen()
        .map_err(|e| Error::io("cannot open", output.path(), e))?;
    let err_file = errors
        .reopen()
        .map_err(|e| Error::io("cannot open", errors.path(), e))?;
    crate::cancel::install_handlers();
    let asked = Instant::now();
    let mut bt = Command::new(bpftrace);
    tracefs.prepare(&mut bt);
    let mut bt = bt
        .args(["-q", "-B", "full"])
        .arg(script.path())
        .env("BPFTRACE_STRLEN", bpftrace::STRLEN.to_string())
        // 4 MiB per CPU: a burst of small calls fills bpftrace's default 256 KiB.
        .env("BPFTRACE_PERF_RB_PAGES", "1024")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err_file)
        .spawn()
        .map_err(|e| Error::io("cannot start", bpftrace, e))?;
    let ready = Arc::new(AtomicBool::new(false));
    let copier = bt
        .stdout
        .take()
        .map(|pipe| copy_output(pipe, out_file, Arc::clone(&ready)));
    let finish = |bt: &mut Child, copier: Option<JoinHandle<std::io::Result<()>>>| {
        stop(bt);
        let copied = copier.map_or(Ok(()), |c| {
            c.join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the copying thread panicked")))
        });
        copied.map_err(|e| Error::io("cannot write", output.path(), e))
    };
    if let Err(e) = wait_ready(&mut bt, &ready, errors.path()) {
        // The gate closes unwritten: the child exits before exec, the command never runs.
        drop(gate);
        if let Some(s) = spawner {
            let _ = s.join();
        }
        let _ = finish(&mut bt, copier);
        return Err(e);
    }
    let startup = asked.elapsed();
    attached();
    let began = Instant::now();
    let status = match released(o, gate, spawner, ending) {
        Ok(s) => s,
        Err(e) => {
            let _ = finish(&mut bt, copier);
            return Err(e);
        }
    };
    let elapsed = began.elapsed();
    // The last events are in the per-CPU rings: let bpftrace read them before it stops.
    std::thread::sleep(Duration::from_millis(200));
    finish(&mut bt, copier)?;
    Ok(EbpfRun {
        status,
        elapsed,
        startup,
        output,
    })
}

/// The spawning thread of [`spawn_gated`]: `spawn` returns once the command runs.
pub(super) type Spawner = JoinHandle<std::io::Result<Child>>;

/// Release the gated command and wait for it (its status), or, attached (no gate), wait until
/// the recording ends and call `ending` (`None`).
pub(super) fn released(
    o: &RecordOptions,
    gate: Option<std::io::PipeWriter>,
    spawner: Option<Spawner>,
    ending: &mut dyn FnMut(),
) -> crate::Result<Option<ExitStatus>> {
    let (Some(mut g), Some(s)) = (gate, spawner) else {
        wait_attached(o);
        ending();
        return Ok(None);
    };
    let sent = g.write_all(b"g");
    drop(g);
    let spawned = s.join().unwrap_or_else(|_| {
        Err(std::io::Error::other(
            "the thread starting the command panicked",
        ))
    });
    match (sent, spawned) {
        (Ok(()), Ok(mut child)) => wait_command(&mut child).map(Some),
        (Err(e), _) | (_, Err(e)) => Err(Error::io("cannot start", Path::new(&o.command[0]), e)),
    }
}

/// Start `command` held before exec (as `ids` when given): returns the thread whose
/// `spawn` returns once the command runs (std's spawn waits for the exec), the gate to
/// release it by writing a byte (dropping it unwritten: the command never runs), and its pid,
/// which the child reports through a pipe before it waits.
pub(super) fn spawn_gated(
    command: &[String],
    ids: Option<(u32, u32)>,
    dir: &Path,
) -> crate::Result<(Spawner, std::io::PipeWriter, u32)> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let perr = |e| Error::io("cannot create a pipe in", dir, e);
    let (gate_r, gate_w) = std::io::pipe().map_err(perr)?;
    let (mut pid_r, pid_w) = std::io::pipe().map_err(perr)?;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    if let Some((uid, gid)) = ids {
        use std::os::unix::process::CommandExt;
        cmd.uid(uid).gid(gid);
    }
    crate::host::sys::spawn::announce_then_wait(
        &mut cmd,
        pid_w.as_raw_fd(),
        gate_r.as_raw_fd(),
        gate_w.as_raw_fd(),
    );
    let spawner = std::thread::spawn(move || {
        let r = cmd.spawn();
        // The child holds its own copies (or never was): ours go, so the reads below end.
        drop((pid_w, gate_r));
        r
    });
    let mut b = [0u8; 4];
    if let Err(e) = pid_r.read_exact(&mut b) {
        drop(gate_w);
        let why = match spawner.join() {
            Ok(Err(e)) => e,
            _ => e,
        };
        return Err(Error::io("cannot start", Path::new(&command[0]), why));
    }
    Ok((spawner, gate_w, u32::from_ne_bytes(b)))
}

/// The threads of process `pid` and of every process it started before (`--pid`: each is
/// recorded, and what they start; [`super::proctree`]).
pub(super) fn threads_of(pid: u32) -> Vec<u32> {
    super::proctree::processes(pid)
        .into_iter()
        .flat_map(super::proctree::threads)
        .collect()
}

/// Copy bpftrace's output from its pipe into `file` (large writes), setting `ready` once its
/// first line, `READY`, came through; ends when bpftrace closes the pipe.
fn copy_output(
    mut pipe: ChildStdout,
    file: std::fs::File,
    ready: Arc<AtomicBool>,
) -> JoinHandle<std::io::Result<()>> {
    std::thread::spawn(move || {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut buf = vec![0u8; 1 << 16];
        // The output's unfinished line, until `READY` came.
        let mut head: Vec<u8> = Vec::new();
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if !ready.load(Ordering::Relaxed) {
                head.extend_from_slice(&buf[..n]);
                let mut lines = head.split(|&b| b == b'\n');
                let last = lines.next_back().unwrap_or_default().to_vec();
                if lines.any(|l| l == bpftrace::READY.as_bytes()) {
                    ready.store(true, Ordering::Release);
                }
                head = last;
            }
            out.write_all(&buf[..n])?;
        }
        out.flush()
    })
}

/// Wait for bpftrace's `READY` (its probes attached); bpftrace ending first is exit 2 with
/// what it said.
fn wait_ready(bt: &mut Child, ready: &AtomicBool, err: &Path) -> crate::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let ended = bt.try_wait().ok().flatten();
        if ended.is_some() || Instant::now() > deadline || crate::cancel::requested() {
            let said = std::fs::read_to_string(err).unwrap_or_default();
            let said: Vec<&str> = said
                .lines()
                .filter(|l| !l.contains("RLIMIT_MEMLOCK"))
                .take(3)
                .collect();
            return Err(Error::invalid(
                "--capture",
                format!(
                    "bpftrace did not attach its probes{}: {}; --capture strace records \
                     without it",
                    if ended.is_some() { "" } else { " in time" },
                    said.join(" / ")
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait for the command; a signal that reached fsbench alone is forwarded to it (SIGINT, then
/// SIGKILL after five seconds).
fn wait_command(c: &mut Child) -> crate::Result<ExitStatus> {
    let mut first: Option<Instant> = None;
    loop {
        if let Some(s) = c
            .try_wait()
            .map_err(|e| Error::io("cannot wait for", Path::new("the command"), e))?
        {
            return Ok(s);
        }
        if crate::cancel::requested() {
            let f = *first.get_or_insert_with(|| {
                crate::host::stdio::note(
                    "fsbench record: stopping the command; the trace keeps what it did",
                );
                Instant::now()
            });
            let sig = if f.elapsed() > Duration::from_secs(5) {
                rustix::process::Signal::KILL
            } else {
                rustix::process::Signal::INT
            };
            if let Some(p) = rustix::process::Pid::from_raw(c.id() as i32) {
                let _ = rustix::process::kill_process(p, sig);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Attached: record until `--for` passed, Ctrl-C, or the process ended. It is never
/// signalled.
fn wait_attached(o: &RecordOptions) {
    let began = Instant::now();
    let alive = |pid: u32| Path::new(&format!("/proc/{pid}")).is_dir();
    while !crate::cancel::requested()
        && o.duration.is_none_or(|d| began.elapsed() < d)
        && o.pid.is_some_and(alive)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stop bpftrace: SIGINT (it detaches and flushes), SIGKILL after ten seconds.
fn stop(bt: &mut Child) {
    let t = Instant::now();
    if let Some(p) = rustix::process::Pid::from_raw(bt.id() as i32) {
        let _ = rustix::process::kill_process(p, rustix::process::Signal::INT);
    }
    while t.elapsed() < Duration::from_secs(10) {
        if bt.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = bt.kill();
    let _ = bt.wait();
}
