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
//!   terminals at /dev/null (`cancel::on_hangup`) before anything writes to them again.
//!
//! [`error`] says what failed, for a note in the results.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

static ERROR: OnceLock<String> = OnceLock::new();

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

struct Relayed {
    /// 1 or 2.
    fd: usize,
    /// The real descriptor, shared with the relay thread that writes to it.
    orig: Arc<File>,
    thread: std::thread::JoinHandle<()>,
}

/// Standard output and error routed through relay threads (for descriptors that are not
/// terminals). Dropping it puts the real descriptors back and waits for the relays to drain.
pub struct Relay(Vec<Relayed>);

impl Relay {
    /// Install the relays; a descriptor that cannot be relayed stays as it was.
    pub fn install() -> Relay {
        crate::cancel::prepare_hangup();
        let mut v = Vec::new();
        for (fd, name) in [(1, "stdout"), (2, "stderr")] {
            let target = crate::cancel::std_fds()[fd];
            if target.is_terminal() {
                continue;
            }
            // Every descriptor made here closes when dropped, so a failed step leaves
            // nothing open.
            let Ok(orig) = rustix::io::fcntl_dupfd_cloexec(target, 3) else {
                continue;
            };
            let Ok((r, w)) = std::io::pipe() else {
                continue;
            };
            if crate::cancel::dup2_onto(&w, fd).is_err() {
                continue;
            }
            drop(w);
            let orig = Arc::new(File::from(orig));
            let sink = Arc::clone(&orig);
            let thread = std::thread::spawn(move || pump(r, &sink, name));
            v.push(Relayed { fd, orig, thread });
        }
        Relay(v)
    }
}

/// Copy from the pipe to the real descriptor until EOF; after a failed write keep reading
/// (so writers never block or fail) and discard.
fn pump(mut reader: impl Read, mut sink: &File, name: &str) {
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
            // Restores the saved descriptor; this closes the relay pipe's write end (unless a
            // child still holds a copy, hence the bounded wait below).
            let _ = crate::cancel::dup2_onto(&*r.orig, r.fd);
            let t0 = std::time::Instant::now();
            while !r.thread.is_finished() && t0.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if r.thread.is_finished() {
                let _ = r.thread.join();
            }
            // `r.orig` closes once the relay thread let go of it too (fd 1/2 is a separate
            // copy); a relay still blocked keeps it until the process exits.
        }
    }
}
