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

/// Copy from the pipe to the real descriptor until EOF, whole lines at a time; after a failed
/// write keep reading (so writers never block or fail) and discard. Whole lines because with
/// `2>&1` both relays write to one file: a chunk ending mid-line would let the other stream's
/// line land inside it (`fsbench: results: Verdict per workload class`). A line longer than
/// the buffer goes out in pieces; the last, unterminated piece goes out at EOF.
fn pump(mut reader: impl Read, mut sink: &File, name: &str) {
    let mut broken = false;
    let mut buf = [0u8; 8192];
    let mut pending: Vec<u8> = Vec::new();
    let mut put = |bytes: &[u8], broken: &mut bool| {
        if !*broken
            && !bytes.is_empty()
            && let Err(e) = sink.write_all(bytes)
        {
            record(name, &e);
            *broken = true;
        }
    };
    loop {
        match reader.read(&mut buf) {
            Ok(0) => {
                put(&pending, &mut broken);
                return;
            }
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                let whole = match pending.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None if pending.len() >= buf.len() => pending.len(),
                    None => 0,
                };
                put(&pending[..whole], &mut broken);
                pending.drain(..whole);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                put(&pending, &mut broken);
                return;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out `pieces` one read at a time; before each piece after the first it checks
    /// what the sink holds so far, so the test sees exactly what each read let through.
    struct Pieces<'a> {
        pieces: Vec<&'a [u8]>,
        sink: &'a std::path::Path,
        seen: Vec<String>,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.seen
                .push(std::fs::read_to_string(self.sink).unwrap_or_default());
            if self.pieces.is_empty() {
                return Ok(0);
            }
            let p = self.pieces.remove(0);
            buf[..p.len()].copy_from_slice(p);
            Ok(p.len())
        }
    }

    #[test]
    fn the_relay_writes_whole_lines_and_the_rest_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let sink = File::create(&path).unwrap();
        let mut r = Pieces {
            pieces: vec![
                b"fsbench: results: ",
                b"/x/results.json\nfsbench: every",
                b" metric",
            ],
            sink: &path,
            seen: Vec::new(),
        };
        pump(&mut r, &sink, "stdout");
        // Nothing of a line goes out before its newline; the unterminated tail at EOF.
        assert_eq!(
            r.seen,
            [
                "",
                "",
                "fsbench: results: /x/results.json\n",
                "fsbench: results: /x/results.json\n",
            ]
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "fsbench: results: /x/results.json\nfsbench: every metric"
        );
    }
}
