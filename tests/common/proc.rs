//! Running programs from a test: the fsbench binary under test, and other tools.

use std::process::{Command, Output};

/// The path of the fsbench binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_fsbench");

/// The history store every fsbench process a test starts records into unless the test names
/// its own: under cargo's scratch directory for integration tests (`target/tmp`), never the
/// user's real store. Set by [`bin`], [`assert_bin`] and [`test_env`]; a later
/// `.env("FSBENCH_STORE", …)` wins.
pub const TEST_STORE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/test-history.db");

/// The environment variable naming the history store.
pub const STORE_VAR: &str = "FSBENCH_STORE";

/// Give `c` (an fsbench run, or a program that starts one: a shell, `mpirun`) the test
/// store, [`TEST_STORE`].
pub fn test_env(c: &mut Command) -> &mut Command {
    c.env(STORE_VAR, TEST_STORE)
}

/// A command for the fsbench binary under test, recording into [`TEST_STORE`].
pub fn bin() -> Command {
    let mut c = Command::new(BIN);
    test_env(&mut c);
    c
}

/// The fsbench binary under test as an `assert_cmd` command (`.assert().success()`…),
/// recording into [`TEST_STORE`].
pub fn assert_bin() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(BIN);
    c.env(STORE_VAR, TEST_STORE);
    c
}

/// The flags that keep a test's `fsbench run` short, spelled out once: 1 s steps without a
/// ramp, a 1 s quiet window given up after 20 s. Rounds, sizes and the selection stay the
/// test's own.
pub const QUICK: &[&str] = &[
    "--runtime",
    "1s",
    "--ramp",
    "0s",
    "--quiet-window",
    "1s",
    "--quiet-timeout",
    "20s",
];

/// `fsbench run --yes` with [`QUICK`]'s flags and `--rounds rounds`, recording into
/// [`TEST_STORE`]: add the target, the selection, `--scratch-dir` and `--out`.
pub fn quick_run(rounds: u32) -> Command {
    let mut c = bin();
    c.args(["run", "--yes"])
        .args(QUICK)
        .args(["--rounds", &rounds.to_string()]);
    c
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
