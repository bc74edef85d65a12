//! Running programs from a test: the fsbench binary under test, and other tools.

use std::process::{Command, Output};

/// The path of the fsbench binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_fsbench");

/// A command for the fsbench binary under test.
pub fn bin() -> Command {
    Command::new(BIN)
}

/// The fsbench binary under test as an `assert_cmd` command (`.assert().success()`…).
pub fn assert_bin() -> assert_cmd::Command {
    assert_cmd::Command::new(BIN)
}

/// Bytes a program printed, as text (invalid UTF-8 replaced).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What a finished command printed on stdout.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// What a finished command printed on stderr.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// Run `argv` (no shell) and return its output; panics only when it cannot be started.
pub fn sh(argv: &[&str]) -> Output {
    Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

/// Run `argv`, assert it succeeded, and return its stdout trimmed.
#[track_caller]
pub fn sh_ok(argv: &[&str]) -> String {
    let o = sh(argv);
    assert!(o.status.success(), "{argv:?} failed: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// Run `argv`: its stdout when it succeeded, otherwise an error naming it with what it printed.
pub fn sh_result(argv: &[&str]) -> Result<String, String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}{}",
            argv.join(" "),
            stdout(&out),
            stderr(&out)
        ));
    }
    Ok(stdout(&out))
}

/// Assert the command succeeded (showing its exit code and both streams if not) and return
/// its stdout.
#[track_caller]
pub fn assert_ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}\nstdout: {}",
        o.status.code(),
        stderr(o),
        stdout(o)
    );
    stdout(o)
}

/// Assert a refusal: exit code 2 and a stderr containing every one of `needles`.
#[track_caller]
pub fn assert_refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2, stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks '{n}':\n{err}");
    }
}

/// A process-wide lock for tests of one binary that must not overlap (they share the page
/// cache, zfs-fuse, PostgreSQL's port range); a test that panicked does not poison it.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `pid` runs (a zombie waiting for its reaper counts as gone).
pub fn runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|t| t[t.rfind(')').unwrap() + 1..].split_whitespace().next() != Some("Z"))
}

/// The zfs-fuse daemons running now (pgrep also lists zombies, which do not run).
pub fn zfs_fuse_pids() -> Vec<u32> {
    let o = Command::new("pgrep").args(["-x", "zfs-fuse"]).output();
    let Ok(o) = o else { return Vec::new() };
    stdout(&o)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .filter(|p| runs(*p))
        .collect()
}
