//! Output that survives a vanished terminal or a closed pipe.
//!
//! `println!`/`eprintln!` panic when the write fails (EPIPE from a closed pipe, EIO from a
//! hung-up terminal), which would abort a run in the middle of its cleanup. So `fsbench run`
//! makes its standard output and error unable to fail:
//!
//! - a descriptor that is a pipe or a file is replaced by a pipe into a relay thread, which
//!   copies to the real one and, when that write fails, notes the error once and discards the
//!   rest ([`Relay`]);
//! - a terminal is left as it is (the progress bar needs to see a terminal); when it hangs up
//!   the kernel sends SIGHUP, and [`crate::cancel`]'s handler points the descriptors that were
//!   terminals at /dev/null ([`on_hangup`]) before anything writes to them again.
//!
//! [`error`] says what failed, for a note in the results.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static ERROR: OnceLock<String> = OnceLock::new();
static NULL_FD: AtomicI32 = AtomicI32::new(-1);
static WAS_TTY: [AtomicBool; 3] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];

/// Remember the first output error (later ones add nothing).
pub fn record(stream: &str, e: &std::io::Error) {
    let _ = ERROR.set(format!(
        "writing to {stream} failed ({e}); later output there was discarded, the run went on"
    ));
}

/// The first output error of this process, in words, if any.
pub fn error() -> Option<&'static str> {
    ERROR.get().map(String::as_str)
}

/// `eprintln!` that never panics: a failed write is recorded ([`error`]) and ignored.
pub fn note(msg: &str) {
    let mut e = std::io::stderr().lock();
    if let Err(err) = writeln!(e, "{msg}") {
        record("stderr", &err);
    }
}

/// `print!` that never panics.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    if let Err(err) = o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        record("stdout", &err);
    }
}

/// Prepare [`on_hangup`]: open /dev/null and remember which of fds 0–2 are terminals (a
/// hung-up terminal no longer answers isatty). Idempotent.
pub fn prepare_hangup() {
    if NULL_FD.load(Ordering::SeqCst) >= 0 {
        return;
    }
    // SAFETY: open(2) of a constant path; the descriptor is kept for the process's life.
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    for (i, t) in WAS_TTY.iter().enumerate() {
        // SAFETY: isatty(3) on a descriptor number.
        t.store(unsafe { libc::isatty(i as RawFd) } == 1, Ordering::SeqCst);
    }
    NULL_FD.store(fd, Ordering::SeqCst);
}

/// From a signal handler: the terminal went away, so point every descriptor that was a
/// terminal at /dev/null. Only async-signal-safe calls (dup2).
pub fn on_hangup() {
    let null = NULL_FD.load(Ordering::SeqCst);
    if null < 0 {
        return;
    }
    for (i, t) in WAS_TTY.iter().enumerate() {
        if t.load(Ordering::SeqCst) {
            // SAFETY: dup2(2) is async-signal-safe; both descriptors are valid.
            unsafe { libc::dup2(null, i as RawFd) };
        }
    }
}

struct Relayed {
    fd: RawFd,
    orig: RawFd,
    thread: std::thread::JoinHandle<()>,
}

/// Standard output and error routed through relay threads (for descriptors that are not
/// terminals). Dropping it puts the real descriptors back and waits for the relays to drain.
pub struct Relay(Vec<Relayed>);

impl Relay {
    /// Install the relays; a descriptor that cannot be relayed stays as it was.
    pub fn install() -> Relay {
        prepare_hangup();
        let mut v = Vec::new();
        for (fd, name) in [(1, "stdout"), (2, "stderr")] {
            // SAFETY: isatty/dup/pipe/dup2/close on descriptors this function owns or on 1/2.
            unsafe {
                if libc::isatty(fd) == 1 {
                    continue;
                }
                let orig = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
                if orig < 0 {
                    continue;
                }
                let mut p = [0; 2];
                if libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                    libc::close(orig);
                    continue;
                }
                let (r, w) = (p[0], p[1]);
                if libc::dup2(w, fd) < 0 {
                    libc::close(r);
                    libc::close(w);
                    libc::close(orig);
                    continue;
                }
                libc::close(w);
                let reader = std::fs::File::from_raw_fd(r);
                let thread = std::thread::spawn(move || pump(reader, orig, name));
                v.push(Relayed { fd, orig, thread });
            }
        }
        Relay(v)
    }
}

/// Copy from the pipe to the real descriptor until EOF; after a failed write keep reading
/// (so writers never block or fail) and discard.
fn pump(mut reader: std::fs::File, orig: RawFd, name: &str) {
    // SAFETY: `orig` stays open until Relay::drop closes it after this thread ended (or
    // gave up waiting, in which case the process is exiting).
    let mut sink = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(orig) });
    let mut broken = false;
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) if !broken => {
                if let Err(e) = sink.write_all(&buf[..n]) {
                    record(name, &e);
                    broken = true;
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
        for r in self.0.drain(..) {
            // SAFETY: restores the saved descriptor; this closes the relay pipe's write end
            // (unless a child still holds a copy, hence the bounded wait below).
            unsafe { libc::dup2(r.orig, r.fd) };
            let t0 = std::time::Instant::now();
            while !r.thread.is_finished() && t0.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if r.thread.is_finished() {
                let _ = r.thread.join();
                // SAFETY: the relay no longer uses it; fd 1/2 is a separate copy.
                unsafe { libc::close(r.orig) };
            }
        }
    }
}
