//! The integration tests' toolbox: how a privileged test meets, or misses, its prerequisites
//! (this file), running the binary and other programs ([`proc`]: [`bin`], [`BIN`], [`sh`],
//! [`sh_ok`], [`stderr`]…), scratch directories and the leftovers check ([`scratch`]), loop
//! devices over sparse images ([`loopdev`]: [`LoopImage`]), and headless Chromium.
//!
//! Privileged tests need root, loop devices, mkfs tools, ZFS, fio or Chromium. Where one is
//! missing the test prints `skipped: <test>: needs <what>` and passes — unless
//! `FSBENCH_REQUIRE_PRIVILEGED=1` (CI sets it), where it fails naming what is missing, so a CI
//! run cannot go green by skipping. A privileged test that does run prints
//! `privileged: <test> ran` and, when `FSBENCH_PRIVILEGED_LOG` names a file, appends its name
//! there (`.ci/run` counts the lines).
#![allow(dead_code, unused_imports)] // each test binary uses a different part

pub mod chromium;
pub mod loopdev;
pub mod proc;
pub mod scratch;

pub use loopdev::{LoopImage, LoopSpec};
pub use proc::*;
pub use scratch::*;

use std::io::Write;
use std::path::Path;

/// Set to `1` to turn every missing prerequisite into a failure.
pub const REQUIRE_VAR: &str = "FSBENCH_REQUIRE_PRIVILEGED";
/// A file each privileged test that ran appends its name to.
pub const LOG_VAR: &str = "FSBENCH_PRIVILEGED_LOG";

/// Whether missing prerequisites must fail (CI).
pub fn strict() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// `true` when `cond` holds. Otherwise fail naming `what` under [`REQUIRE_VAR`], or print
/// `skipped: <what>` and return `false` so the caller returns.
#[track_caller]
pub fn require(what: &str, cond: bool) -> bool {
    if cond {
        return true;
    }
    if strict() {
        panic!("{REQUIRE_VAR}=1 and a prerequisite is missing: {what}");
    }
    println!("skipped: {what}");
    false
}

/// Record that the privileged test `name` ran: a marker line, and a line in the log file.
pub fn ran(name: &str) {
    println!("privileged: {name} ran");
    if let Some(log) = std::env::var_os(LOG_VAR) {
        // One short O_APPEND write per test, so parallel tests do not interleave.
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|e| panic!("{LOG_VAR}={}: {e}", Path::new(&log).display()));
        f.write_all(format!("{name}\n").as_bytes()).unwrap();
    }
}

/// A loop over filesystems (or cases) ran `ran` of `of`: under [`REQUIRE_VAR`] all must have
/// run; otherwise the count is printed. Records the test as run when any case ran.
#[track_caller]
pub fn ran_cases(name: &str, ran_n: usize, of: usize) {
    println!("{name}: ran {ran_n} of {of} cases");
    if strict() {
        assert_eq!(ran_n, of, "{name}: only {ran_n} of {of} cases ran");
    }
    if ran_n > 0 {
        ran(name);
    }
}

/// The gate most privileged tests use: root, loop devices and `tools`, recorded as run under
/// `name` when all are there; otherwise skipped (or failed under [`REQUIRE_VAR`]).
#[track_caller]
pub fn privileged_loop(name: &str, tools: &[&str]) -> bool {
    privileged(name).loop_devices().tools(tools).ok()
}

/// Whether the process runs as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Whether `prog` is on PATH.
pub fn have(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}

/// Whether ZFS can be used here: its tools plus the kernel module or zfs-fuse.
pub fn zfs_usable() -> Result<(), String> {
    for t in ["zpool", "zfs"] {
        if !have(t) {
            return Err(format!("{t} (ZFS tools)"));
        }
    }
    if Path::new("/sys/module/zfs").exists() || have("zfs-fuse") {
        Ok(())
    } else {
        Err("kernel ZFS (/sys/module/zfs) or zfs-fuse".into())
    }
}

/// The prerequisites of one privileged test, collected and then checked at once.
#[must_use = "call .ok() to check the prerequisites"]
pub struct Needs {
    name: String,
    missing: Vec<String>,
}

/// Start listing what the privileged test `name` needs.
pub fn privileged(name: &str) -> Needs {
    Needs {
        name: name.to_string(),
        missing: Vec::new(),
    }
}

impl Needs {
    /// `what` is needed and present when `cond`.
    pub fn need(mut self, what: &str, cond: bool) -> Self {
        if !cond && !self.missing.iter().any(|m| m == what) {
            self.missing.push(what.to_string());
        }
        self
    }

    /// Root.
    pub fn root(self) -> Self {
        self.need("root", is_root())
    }

    /// Root and loop devices (`/dev/loop-control`, `losetup`).
    pub fn loop_devices(self) -> Self {
        self.root()
            .need(
                "loop devices (/dev/loop-control)",
                Path::new("/dev/loop-control").exists(),
            )
            .tools(&["losetup"])
    }

    /// Programs on PATH.
    pub fn tools(mut self, tools: &[&str]) -> Self {
        for t in tools {
            self = self.need(t, have(t));
        }
        self
    }

    /// Headless Chromium (`chromium` or `chromium-browser`, see [`chromium::find`]).
    pub fn chromium(self) -> Self {
        let found = chromium::find().is_some();
        self.need("chromium (headless page tests)", found)
    }

    /// ZFS (kernel or zfs-fuse) with its tools.
    pub fn zfs(self) -> Self {
        match zfs_usable() {
            Ok(()) => self,
            Err(what) => self.need(&what, false),
        }
    }

    /// What is missing, if anything (for tests that gate per case).
    pub fn missing(&self) -> Option<String> {
        (!self.missing.is_empty())
            .then(|| format!("{}: needs {}", self.name, self.missing.join(", ")))
    }

    /// `true` when everything is there (the test is recorded as run); otherwise
    /// [`require`] decides between failing and skipping.
    #[track_caller]
    pub fn ok(self) -> bool {
        match self.missing() {
            None => {
                ran(&self.name);
                true
            }
            Some(what) => require(&what, false),
        }
    }

    /// Like [`Needs::ok`] but without recording a run: for one case of a loop whose test
    /// reports with [`ran_cases`].
    #[track_caller]
    pub fn case_ok(self) -> bool {
        match self.missing() {
            None => true,
            Some(what) => require(&what, false),
        }
    }
}

/// A history store of its own in `dir` for one test (`FSBENCH_STORE` for the spawned runs).
/// Every other run the tests start records into [`TEST_STORE`] ([`bin`] sets it), never the
/// real store.
pub fn temp_store(dir: &Path) -> std::path::PathBuf {
    dir.join("history.db")
}

/// Command lines of the processes that name run `pid`'s mount root (`/run/fsbench/PID-…`) and
/// that `is_ours` accepts: what a run started and must not leave behind (qemu-storage-daemon,
/// podman).
pub fn run_processes(pid: u32, is_ours: impl Fn(&str) -> bool) -> Vec<String> {
    let needle = format!("/run/fsbench/{pid}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| is_ours(c) && c.contains(&needle))
        .collect()
}
