//! A background process fsbench starts itself (the zfs-fuse daemon) and must not leave behind.
//!
//! It runs in the foreground as fsbench's own child (not self-daemonizing), so fsbench knows its
//! PID and can reap it: stopping sends SIGTERM, waits for that PID to exit, escalates to SIGKILL
//! after a grace period, and waits again. It gets its own process group so the terminal's
//! Ctrl-C does not kill it while fsbench still needs it to clean up (destroy pools); fsbench
//! stops it itself once the cleanup is done. Its PID is registered with [`crate::cancel`] so a
//! second Ctrl-C, which exits at once, still takes it down.

use crate::{Error, Result};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a daemon gets to exit after SIGTERM before it is killed.
const GRACE: Duration = Duration::from_secs(30);

/// A running daemon owned by this process; dropping it stops it and waits until it is gone.
#[derive(Debug)]
pub struct Daemon {
    name: String,
    child: Option<Child>,
    /// Ledger entry (pid + start time), so a SIGKILLed fsbench's daemon is stopped by the next.
    _held: Option<super::ledger::Held>,
}

impl Daemon {
    /// Start `argv` with stdio on /dev/null in a process group of its own.
    pub fn spawn(argv: &[String]) -> Result<Daemon> {
        Daemon::spawn_with_stderr(argv, Stdio::null())
    }

    /// [`Daemon::spawn`] with its stderr sent to `stderr` (a file), so a daemon that exits
    /// at start-up can be quoted in the error.
    pub fn spawn_with_stderr(argv: &[String], stderr: Stdio) -> Result<Daemon> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| Error::Other("empty command".into()))?;
        let child = Command::new(prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .map_err(|e| Error::tool(super::command::display(argv), e.to_string()))?;
        crate::cancel::register_child(child.id());
        // Best effort: without root there is no ledger, and nothing outlives us that needs one.
        let held = super::ledger::start_time_of(child.id()).and_then(|start_time| {
            super::ledger::hold(super::ledger::Item::Process {
                pid: child.id(),
                start_time,
                name: prog.clone(),
                data_dir: None,
            })
            .ok()
        });
        Ok(Daemon {
            name: prog.clone(),
            child: Some(child),
            _held: held,
        })
    }

    /// Its process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether it is still running (a daemon that exited is reaped here).
    pub fn alive(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// SIGTERM, wait for the PID to exit (SIGKILL after a grace period), reap it.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = child.id();
        let result = terminate(&mut child, GRACE);
        crate::cancel::unregister_child(pid);
        result.map_err(|e| Error::tool(&self.name, format!("cannot stop pid {pid}: {e}")))
    }
}

/// Stop `child` and reap it: SIGTERM, up to `grace` for it to exit, then SIGKILL and wait.
fn terminate(child: &mut Child, grace: Duration) -> std::io::Result<()> {
    if child.try_wait()?.is_some() {
        return Ok(());
    }
    // Our own child, not reaped yet (try_wait above returned None): the pid cannot be reused.
    super::sys::signal(child.id() as i32, rustix::process::Signal::TERM);
    let t0 = Instant::now();
    while t0.elapsed() < grace {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill()?;
    child.wait().map(|_| ())
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("fsbench: warning: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exists(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn stop_reaps_the_process() {
        let mut d = Daemon::spawn(&super::super::command::argv(&["sleep", "600"])).unwrap();
        let pid = d.pid().unwrap();
        assert!(d.alive());
        d.stop().unwrap();
        assert!(!exists(pid), "pid {pid} still exists after stop");
        assert!(!d.alive());
        // A daemon that ignores SIGTERM is killed after the grace period.
        let mut c = Command::new("sh")
            .args(["-c", "trap '' TERM; while :; do sleep 0.1; done"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        terminate(&mut c, Duration::from_millis(300)).unwrap();
        assert!(!exists(c.id()));
    }
}
