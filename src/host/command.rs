//! Running external tools (mkfs, mount, zpool, fsck…) with a timeout and captured output.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished tool printed.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    /// Exit status code (None when killed by a signal).
    pub status: Option<i32>,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Wall time, seconds.
    pub seconds: f64,
}

impl ToolOutput {
    /// stdout and stderr together, as a user would have seen them.
    pub fn combined(&self) -> String {
        let mut s = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&self.stderr);
        }
        s
    }
}

/// Render argv as a shell-like command line for messages and records.
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run `argv` with no stdin, capture its output, kill it after `timeout`.
///
/// Returns `Err(Error::Tool)` when the program is missing, times out or exits non-zero; the
/// message carries its stderr so the user sees the tool's own words.
pub fn run(argv: &[String], timeout: Duration) -> crate::Result<ToolOutput> {
    checked(argv, run_unchecked(argv, timeout)?)
}

/// `out` when the tool exited 0, else its error with its own words.
fn checked(argv: &[String], out: ToolOutput) -> crate::Result<ToolOutput> {
    if out.status != Some(0) {
        let msg = out.combined();
        let msg = msg.trim();
        return Err(crate::Error::tool(
            display(argv),
            format!(
                "exit status {}{}{}",
                out.status.map_or("signal".to_string(), |c| c.to_string()),
                if msg.is_empty() { "" } else { ": " },
                msg
            ),
        ));
    }
    Ok(out)
}

/// Like [`run`] but a non-zero exit is returned, not an error (for probes such as fsck -n).
pub fn run_unchecked(argv: &[String], timeout: Duration) -> crate::Result<ToolOutput> {
    run_in(argv, None, timeout)
}

/// `argv` in `cwd` (the caller's own working directory when `None`), unchecked.
fn run_in(argv: &[String], cwd: Option<&str>, timeout: Duration) -> crate::Result<ToolOutput> {
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| crate::Error::Other("empty command".into()))?;
    let mut cmd = Command::new(prog);
    cmd.args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    run_child(&mut cmd, &display(argv), timeout, OnCancel::Wait)
}

/// The working directory of every command that formats or mounts (mkfs, mount, a layout's
/// mkfs): a relative path in a variant's words then means the same file wherever fsbench was
/// started, and the plan-time check ([`crate::fs::setup::variant_args`]) and the last look
/// ([`crate::fs::setup::argv_guard`]) judge it against this directory, not the user's.
pub const DEVICE_TOOL_DIR: &str = "/";

/// [`run`] from [`DEVICE_TOOL_DIR`].
pub fn run_device_tool(argv: &[String], timeout: Duration) -> crate::Result<ToolOutput> {
    checked(argv, run_in(argv, Some(DEVICE_TOOL_DIR), timeout)?)
}

/// What to do with a running child when the user asks fsbench to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCancel {
    /// Let it finish: short tools (mkfs, mount, zpool) already got the terminal's SIGINT.
    Wait,
    /// Send it SIGINT once and keep collecting its output (fio then prints its JSON).
    Interrupt,
    /// Kill it and return [`crate::Error::Interrupted`].
    Kill,
}

/// Spawn `cmd` with no stdin and captured output, wait at most `timeout`, and handle a stop
/// request as `on_cancel` says. `shown` names the command in errors.
pub fn run_child(
    cmd: &mut Command,
    shown: &str,
    timeout: Duration,
    on_cancel: OnCancel,
) -> crate::Result<ToolOutput> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            crate::Error::tool(
                shown,
                if e.kind() == std::io::ErrorKind::NotFound {
                    format!(
                        "{} is not installed or not on PATH",
                        cmd.get_program().to_string_lossy()
                    )
                } else {
                    e.to_string()
                },
            )
        })?;
    // Recorded (best effort: tools also run unprivileged, where there is no ledger) so that
    // after fsbench is killed the next one stops a tool still writing to the target.
    let _held = crate::host::ledger::start_time_of(child.id()).and_then(|start_time| {
        crate::host::ledger::hold(crate::host::ledger::Item::Process {
            pid: child.id(),
            start_time,
            name: shown.split_whitespace().next().unwrap_or(shown).to_string(),
            data_dir: None,
        })
        .ok()
    });
    // Drain pipes on threads so a chatty tool cannot block on a full pipe while we wait.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let t_out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let t_err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let mut interrupted = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if start.elapsed() >= timeout => {
                kill_tree(&mut child);
                return Err(crate::Error::tool(
                    shown,
                    format!(
                        "timed out after {:.0} s and was killed",
                        timeout.as_secs_f64()
                    ),
                ));
            }
            Ok(None) => {
                if crate::cancel::requested() {
                    match on_cancel {
                        OnCancel::Wait => {}
                        OnCancel::Interrupt if !interrupted => {
                            interrupted = true;
                            // A child we have not reaped yet.
                            super::sys::signal(child.id() as i32, rustix::process::Signal::INT);
                        }
                        OnCancel::Interrupt => {}
                        OnCancel::Kill => {
                            kill_tree(&mut child);
                            return Err(crate::Error::Interrupted);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(crate::Error::tool(shown, e.to_string())),
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    Ok(ToolOutput {
        status: status.code(),
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        seconds,
    })
}

/// Kill `child` and every process below it, then reap `child`.
///
/// A tool killed alone can leave its own children running (a shell's pipeline, fio's job
/// processes, mkfs helpers), re-parented to init where nobody waits for them. So the tree is
/// collected while `child` still links it, frozen with SIGSTOP so nothing forks meanwhile,
/// and killed.
fn kill_tree(child: &mut std::process::Child) {
    let root = child.id();
    let mut tree = vec![root];
    // Repeat: a process may fork between the scan and its SIGSTOP.
    for _ in 0..3 {
        let before = tree.len();
        for pid in descendants(root) {
            if !tree.contains(&pid) {
                tree.push(pid);
            }
        }
        for &pid in &tree {
            // `root` is our unreaped child and the others were found below it a moment ago (a
            // pid reused in between is the accepted, tiny risk of any kill).
            super::sys::signal(pid as i32, rustix::process::Signal::STOP);
        }
        if tree.len() == before {
            break;
        }
    }
    for &pid in tree.iter().rev() {
        super::sys::signal(pid as i32, rustix::process::Signal::KILL);
    }
    let _ = child.wait();
}

/// Every process whose parent chain leads to `root` (from /proc/*/stat).
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            if let Some(ppid) = parse_ppid(&stat) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// The parent pid in a /proc/PID/stat line (the command name may contain spaces and `)`).
fn parse_ppid(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `prog` is on PATH.
pub fn available(prog: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(prog).is_file()))
        .unwrap_or(false)
}

/// Build an argv from string slices.
pub fn argv<S: AsRef<str>>(parts: &[S]) -> Vec<String> {
    parts.iter().map(|s| s.as_ref().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_kills_descendants_even_in_their_own_session() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        let mut cmd = Command::new("sh");
        // Like fio's job processes: a worker that left the process group with setsid().
        cmd.arg("-c").arg(format!(
            "setsid sleep 60 & echo $! > {}; wait",
            pidfile.display()
        ));
        let e = run_child(&mut cmd, "sh", Duration::from_millis(300), OnCancel::Wait).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The orphaned sleep is reaped by init once killed; give it a moment.
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map_or(true, |s| s.split_whitespace().nth(2) == Some("Z"))
        });
        assert!(gone, "the forked worker {pid} outlived the timeout");
    }

    #[test]
    fn captures_and_times_out() {
        let out = run(
            &argv(&["sh", "-c", "echo hi; echo err >&2"]),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(out.stdout.trim(), "hi");
        assert_eq!(out.stderr.trim(), "err");
        let e = run(&argv(&["sh", "-c", "exit 3"]), Duration::from_secs(5)).unwrap_err();
        assert!(e.to_string().contains("exit status 3"), "{e}");
        let e = run(&argv(&["sleep", "5"]), Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
        // The whole tree goes on timeout, not only the direct child.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let script = format!("sleep 600 & echo $! > {}; wait", pidfile.display());
        let e = run(&argv(&["sh", "-c", &script]), Duration::from_millis(500)).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
        let grandchild: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..100).any(|_| {
            let st = std::fs::read_to_string(format!("/proc/{grandchild}/stat"));
            // Gone, or a zombie waiting for init to reap it.
            let dead = st.as_ref().map_or(true, |s| {
                s[s.rfind(')').unwrap() + 1..].split_whitespace().next() == Some("Z")
            });
            if !dead {
                std::thread::sleep(Duration::from_millis(20));
            }
            dead
        });
        assert!(gone, "the tool's child {grandchild} survived the timeout");
        assert_eq!(parse_ppid("12 (a b) c) S 7 12 12"), Some(7));
        let e = run(&argv(&["no-such-tool-xyz"]), Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("not installed"), "{e}");
        assert!(available("sh"));
    }
}
