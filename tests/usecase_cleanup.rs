//! Issue 41's cleanup, proven through the real binary: `fsbench run` of a small containers +
//! vm-image plan stopped in the middle of a workload with SIGINT (Ctrl-C: the run releases
//! everything itself and exits 130) and killed with SIGKILL (then the next `fsbench run`, or
//! `fsbench doctor --cleanup`, releases what the dead run's ledger names). After each: no
//! loop device on the test's image, no overlay, FUSE or other mount of the run, and no
//! `qemu-storage-daemon` or `podman` of the run still running.
//!
//! Privileged: root, loop devices, mkfs.ext4, overlayfs, qemu-img, qemu-storage-daemon and
//! /dev/fuse (podman for its part); `skipped: …` without them, a failure under
//! `FSBENCH_REQUIRE_PRIVILEGED=1`. Its own scratch directory and ledger directory, so it
//! releases and checks only what is its own.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{serial, stderr};

/// A start that never ends by itself (10 000 containers, each kept mounted until the step
/// ends) and an aging pass over a 256 MiB image: each is killed in the middle.
const PLAN: &str = "name = \"cleanup\"\n\
[[workload]]\nid = \"container-start\"\nlayers = 2\nfiles = 200\nimage_size = \"2M\"\n\
containers = 10000\nentry_files = 20\n\
[[workload]]\nid = \"vm-qcow2-aging\"\nimage_size = \"256M\"\nage_passes = 4\n\
[[workload]]\nid = \"container-pull\"\nlayers = 2\nfiles = 200\nimage_size = \"2M\"\n\
[[workload]]\nid = \"container-podman\"\nlayers = 8\nfiles = 20000\nimage_size = \"64M\"\n";

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let dir = common::scratch("fsbench-cleanup-test");
        std::fs::write(dir.path().join("plan.toml"), PLAN).unwrap();
        Case { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// fsbench with this case's ledger directory and no history.
    fn cmd(&self) -> Command {
        let mut c = common::bin();
        c.env("FSBENCH_LEDGER_DIR", self.path().join("ledger"))
            .env("FSBENCH_STORE", "off");
        c
    }

    /// `fsbench run` of the plan's workload `only` on ext4.
    fn run(&self, only: &str) -> Child {
        self.cmd()
            .args(["run", "--yes", "--fs", "ext4", "--rounds", "1"])
            .args(["--image-size", "1G", "--runtime", "1s", "--ramp", "0s"])
            .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
            .arg("--plan")
            .arg(self.path().join("plan.toml"))
            .args(["--only", only])
            .arg("--scratch-dir")
            .arg(self.path())
            .arg("--out")
            .arg(self.path().join(format!("out-{only}-{}", rand_suffix())))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// What of the run `pid` is still there: loop devices and mounts (common::leftovers),
    /// qemu-storage-daemon and podman processes naming its mount root.
    fn left(&self, pid: u32) -> Vec<String> {
        let mut left = common::leftovers(self.path(), Some(pid));
        left.extend(processes(pid).into_iter().map(|p| format!("process: {p}")));
        left
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// qemu-storage-daemon and podman processes whose command line names the run's mount root.
fn processes(pid: u32) -> Vec<String> {
    common::run_processes(pid, |c| {
        c.starts_with("qemu-storage-daemon") || c.contains("podman")
    })
}

/// Mounts of the run `pid` whose type is `fs_type` (overlay, fuse).
fn mounts_of(pid: u32, fs_type: &str) -> usize {
    let ours = format!("/run/fsbench/{pid}-");
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&ours))
        .filter(|l| {
            l.split(" - ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .is_some_and(|t| t == fs_type || t.starts_with(&format!("{fs_type}.")))
        })
        .count()
}

/// Wait until `ready` holds for the running child (in the middle of its workload).
#[track_caller]
fn wait_for(child: &mut Child, what: &str, ready: impl Fn(u32) -> bool) {
    let t0 = Instant::now();
    while !ready(child.id()) {
        if let Ok(Some(st)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            panic!("the run ended ({st}) before {what}:\n{err}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no {what} in 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

/// SIGINT: the run stops, releases everything itself and exits 130.
#[track_caller]
fn interrupt(case: &Case, mut child: Child, what: &str) {
    let pid = child.id();
    signal(&child, rustix::process::Signal::INT);
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{what}: still running 60 s after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let o = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{what}:\n{}", stderr(&o));
    let left = case.left(pid);
    assert!(left.is_empty(), "{what}: SIGINT left {left:?}");
}

/// SIGKILL: the run cannot clean up; what it held is still there afterwards.
fn kill(case: &Case, mut child: Child, what: &str) -> u32 {
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !case.left(pid).is_empty(),
        "{what}: the kill left nothing, so this proves nothing"
    );
    pid
}

#[test]
fn interrupted_and_killed_container_and_vm_runs_leave_nothing() {
    let _g = serial();
    let overlay = std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.ends_with("overlay"));
    if !common::privileged("interrupted_and_killed_container_and_vm_runs_leave_nothing")
        .loop_devices()
        .tools(&["mkfs.ext4", "qemu-img", "qemu-storage-daemon"])
        .need("/dev/fuse", Path::new("/dev/fuse").exists())
        .need("overlayfs in /proc/filesystems", overlay)
        .ok()
    {
        return;
    }
    let case = Case::new();

    // Ctrl-C while containers are mounted, then while a qemu-storage-daemon serves an image.
    let mut c = case.run("container-start");
    wait_for(&mut c, "overlay mounts", |pid| {
        mounts_of(pid, "overlay") >= 2
    });
    interrupt(&case, c, "SIGINT during container-start");
    let mut c = case.run("vm-qcow2-aging");
    wait_for(&mut c, "the FUSE export", |pid| mounts_of(pid, "fuse") >= 1);
    interrupt(&case, c, "SIGINT during vm-qcow2-aging");

    // kill -9 with containers mounted; the next run releases them before its own work.
    let mut c = case.run("container-start");
    wait_for(&mut c, "overlay mounts", |pid| {
        mounts_of(pid, "overlay") >= 2
    });
    let dead = kill(&case, c, "SIGKILL during container-start");
    let next = case.run("container-pull");
    let next_pid = next.id();
    let o = next.wait_with_output().unwrap();
    assert!(o.status.success(), "the next run failed:\n{}", stderr(&o));
    let left = case.left(dead);
    assert!(
        left.is_empty(),
        "the next run left {left:?}\n{}",
        stderr(&o)
    );
    assert!(case.left(next_pid).is_empty());

    // kill -9 while a qemu-storage-daemon serves an image; `doctor --cleanup` releases it.
    let mut c = case.run("vm-qcow2-aging");
    wait_for(&mut c, "the FUSE export", |pid| mounts_of(pid, "fuse") >= 1);
    let dead = kill(&case, c, "SIGKILL during vm-qcow2-aging");
    let o = case.cmd().args(["doctor", "--cleanup"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let left = case.left(dead);
    assert!(
        left.is_empty(),
        "doctor --cleanup left {left:?}\n{}",
        stderr(&o)
    );

    // kill -9 while Podman loads the image into its store on the filesystem under test: its
    // mounts there (the storage root's private bind mount) are released by the ledger too.
    if !common::require(
        "interrupted_and_killed_container_and_vm_runs_leave_nothing: podman (its part)",
        common::have("podman"),
    ) {
        return;
    }
    let mut c = case.run("container-podman");
    wait_for(&mut c, "podman's storage mount", |pid| {
        !processes(pid).is_empty()
            && std::fs::read_to_string("/proc/self/mountinfo")
                .unwrap_or_default()
                .lines()
                .any(|l| l.contains(&format!("/run/fsbench/{pid}-")) && l.contains("/podman/"))
    });
    let dead = kill(&case, c, "SIGKILL during container-podman");
    assert!(
        !run_roots(dead).is_empty(),
        "the kill left no Podman run root, so its check below proves nothing"
    );
    let o = case.cmd().args(["doctor", "--cleanup"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let left = case.left(dead);
    assert!(
        left.is_empty(),
        "doctor --cleanup left {left:?}\n{}",
        stderr(&o)
    );
    // Podman's run root (its state files, nothing mounted) goes with the dead run's ledger,
    // not only at the next containers run.
    let roots = run_roots(dead);
    assert!(
        roots.is_empty(),
        "doctor --cleanup left the run root {roots:?}\n{}",
        stderr(&o)
    );
}

/// The Podman run roots of the run `pid`: `/run/fsbench/podman-<pid>-<n>`.
fn run_roots(pid: u32) -> Vec<String> {
    let prefix = format!("podman-{pid}-");
    std::fs::read_dir("/run/fsbench")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}
