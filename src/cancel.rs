//! Process-wide cancellation: SIGINT, SIGTERM, SIGQUIT and SIGHUP set a flag that long loops
//! poll.
//!
//! The first signal asks for a clean stop (workloads end, guards release everything, partial
//! results are saved, exit 128 + the signal's number: 130 for Ctrl-C, 129 for a closed
//! terminal, so `--resume` continues). A second SIGINT, SIGTERM or SIGQUIT escalates: the
//! process exits at once, leaving cleanup to the kernel (autoclear loop devices) and to the
//! next fsbench (the ledger) — the user asked twice. SIGHUP never escalates: a closing
//! terminal sends it more than once (the kernel to the foreground group, the shell to its
//! jobs). SIGHUP also points the descriptors that were the terminal at /dev/null, so nothing
//! fails writing to a terminal that is gone ([`on_hangup`]; `host::stdio` relays the rest).
//! Daemons fsbench started ([`register_child`]) get SIGTERM on that immediate exit, since the
//! kernel would not stop them.

use crate::error::{interrupt_exit_code, interrupt_signal, record_interrupt_signal};
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();
/// /dev/null, kept open for the process's life once [`prepare_hangup`] ran.
static NULL: OnceLock<OwnedFd> = OnceLock::new();
static WAS_TTY: [AtomicBool; 3] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];
/// PIDs of daemons fsbench started (0 = free slot); read by the signal handler.
static CHILDREN: [AtomicI32; 4] = [const { AtomicI32::new(0) }; 4];

/// Remember a daemon's PID so an immediate exit (second signal) still stops it.
pub fn register_child(pid: u32) {
    for slot in &CHILDREN {
        if slot
            .compare_exchange(0, pid as i32, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Forget a daemon's PID once it was stopped and reaped.
pub fn unregister_child(pid: u32) {
    for slot in &CHILDREN {
        let _ = slot.compare_exchange(pid as i32, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// True once the user asked to stop.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Ask every loop to stop (used by signals and by tests).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Return `Err(Error::Interrupted)` when a stop was requested.
pub fn check() -> crate::Result<()> {
    if requested() {
        Err(crate::Error::Interrupted)
    } else {
        Ok(())
    }
}

/// The signal that asked to stop (0 when none did, e.g. [`request`]); recorded in
/// [`crate::error`], whose `Error::Interrupted` exit code depends on it.
pub fn signal() -> i32 {
    interrupt_signal()
}

/// Exit code after an interrupt: 128 + the first signal's number, 130 when no signal did it.
pub fn exit_code() -> i32 {
    interrupt_exit_code()
}

/// The signals handled, and whether a second one escalates.
const HANDLED: [(i32, bool); 4] = [
    (signal_hook::consts::SIGINT, true),
    (signal_hook::consts::SIGTERM, true),
    (signal_hook::consts::SIGQUIT, true),
    (signal_hook::consts::SIGHUP, false),
];

/// Install the handlers (idempotent). The handler only touches atomics, dup2 and _exit.
pub fn install_handlers() {
    INSTALL.call_once(|| {
        prepare_hangup();
        for (sig, escalates) in HANDLED {
            // unsafe outside host::sys (an exception, docs/ARCHITECTURE.md): the handler's
            // async-signal safety is this closure's, so the contract stays where it is written.
            // SAFETY: the handler only performs async-signal-safe operations (atomics,
            // dup2 in on_hangup, kill, _exit).
            let res = unsafe {
                signal_hook::low_level::register(sig, move || {
                    if sig == signal_hook::consts::SIGHUP {
                        on_hangup();
                    }
                    record_interrupt_signal(sig);
                    REQUESTED.store(true, Ordering::SeqCst);
                    if escalates && SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
                        // Second signal: the user insists; leave now, taking our daemons along.
                        for slot in &CHILDREN {
                            let pid = slot.load(Ordering::SeqCst);
                            if pid > 0 {
                                // kill(2) is async-signal-safe; the pid is a daemon we started
                                // and have not reaped (it is unregistered on reaping).
                                if let Some(p) = rustix::process::Pid::from_raw(pid) {
                                    let _ = rustix::process::kill_process(
                                        p,
                                        rustix::process::Signal::TERM,
                                    );
                                }
                            }
                        }
                        signal_hook::low_level::exit(128 + interrupt_signal());
                    }
                })
            };
            if let Err(e) = res {
                // Not host::stdio::note (a higher layer): a failed write here is moot.
                let _ = writeln!(
                    std::io::stderr(),
                    "fsbench: warning: cannot install a handler for signal {sig}: {e}"
                );
            }
        }
    });
}

/// Prepare [`on_hangup`]: open /dev/null and remember which of fds 0–2 are terminals (a
/// hung-up terminal no longer answers isatty). Idempotent.
pub fn prepare_hangup() {
    if NULL.get().is_some() {
        return;
    }
    let Ok(null) = File::options().read(true).write(true).open("/dev/null") else {
        return;
    };
    for (t, fd) in WAS_TTY.iter().zip(std_fds()) {
        t.store(fd.is_terminal(), Ordering::SeqCst);
    }
    let _ = NULL.set(null.into());
}

/// Descriptors 0, 1 and 2.
pub(crate) fn std_fds() -> [BorrowedFd<'static>; 3] {
    [
        rustix::stdio::stdin(),
        rustix::stdio::stdout(),
        rustix::stdio::stderr(),
    ]
}

/// `dup2(fd, target)` for a standard descriptor `target` (0–2); async-signal-safe.
pub(crate) fn dup2_onto(fd: impl AsFd, target: usize) -> rustix::io::Result<()> {
    match target {
        0 => rustix::stdio::dup2_stdin(fd),
        1 => rustix::stdio::dup2_stdout(fd),
        _ => rustix::stdio::dup2_stderr(fd),
    }
}

/// From a signal handler: the terminal went away, so point every descriptor that was a
/// terminal at /dev/null. Only async-signal-safe calls (an atomic load, dup2).
pub fn on_hangup() {
    let Some(null) = NULL.get() else {
        return;
    };
    for (i, t) in WAS_TTY.iter().enumerate() {
        if t.load(Ordering::SeqCst) {
            let _ = dup2_onto(null, i);
        }
    }
}
