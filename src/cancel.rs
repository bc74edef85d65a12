//! Process-wide cancellation: SIGINT/SIGTERM set a flag that long loops poll.
//!
//! The first signal asks for a clean stop (workloads end, guards release everything, partial
//! results are saved, exit 130). A second signal escalates: the process exits at once with 130,
//! leaving cleanup to the kernel (autoclear loop devices) — the user asked twice. Daemons fsbench
//! started ([`register_child`]) get SIGTERM first, since the kernel would not stop them.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();
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

/// Install SIGINT/SIGTERM handlers (idempotent). The handler only touches atomics.
pub fn install_handlers() {
    INSTALL.call_once(|| {
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // SAFETY: the handler only performs async-signal-safe atomic operations, kill and
            // _exit.
            let res = unsafe {
                signal_hook::low_level::register(sig, || {
                    let n = SIGNALS.fetch_add(1, Ordering::SeqCst);
                    REQUESTED.store(true, Ordering::SeqCst);
                    if n >= 1 {
                        // Second signal: the user insists; leave now, taking our daemons along.
                        for slot in &CHILDREN {
                            let pid = slot.load(Ordering::SeqCst);
                            if pid > 0 {
                                // kill(2) is async-signal-safe; the pid is a daemon we started
                                // and have not reaped (it is unregistered on reaping).
                                libc::kill(pid, libc::SIGTERM);
                            }
                        }
                        signal_hook::low_level::exit(130);
                    }
                })
            };
            if let Err(e) = res {
                eprintln!("fsbench: warning: cannot install signal handler: {e}");
            }
        }
    });
}
