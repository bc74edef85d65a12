//! Running fio so that a stop request reaches it.
//!
//! `host::command` waits for a tool blindly; fio runs for as long as the job, so when fsbench
//! is asked to stop (SIGTERM to fsbench alone, or a test's [`crate::cancel::request`]) fio must
//! be told too. It gets SIGINT, which makes it end the job early and still print its JSON.

use crate::host::command::{ToolOutput, display};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `argv` (fio …), forwarding a cancellation as SIGINT; kill it after `timeout`.
pub fn run(argv: &[String], timeout: Duration) -> crate::Result<ToolOutput> {
    let start = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| crate::Error::tool(display(argv), e.to_string()))?;
    // Drain both pipes on threads: fio's JSON can exceed a pipe buffer before it exits.
    let mut so = child.stdout.take().expect("piped stdout");
    let mut se = child.stderr.take().expect("piped stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let mut interrupted = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(crate::Error::tool(
                    display(argv),
                    format!(
                        "still running after {:.0} s; killed it",
                        timeout.as_secs_f64()
                    ),
                ));
            }
            Ok(None) => {
                if crate::cancel::requested() && !interrupted {
                    interrupted = true;
                    // SAFETY: plain kill(2) on the pid of a child we have not reaped yet.
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(crate::Error::tool(display(argv), e.to_string())),
        }
    };
    Ok(ToolOutput {
        status: status.code(),
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        seconds: start.elapsed().as_secs_f64(),
    })
}
