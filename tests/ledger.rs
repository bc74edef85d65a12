//! The ledger of held resources, signals and host tunings, end to end through the binary:
//! SIGKILL at several points then `run --resume` releases what the killed run held (also a
//! zfs-fuse pool and the daemon the run started, by `doctor --cleanup` or `--resume`); a ledger
//! naming things that are no longer ours releases nothing; SIGHUP and closed pipes are an
//! interrupt, not a crash; tuning variants are read back and always put back.
//!
//! Every test has its own scratch directory and its own ledger directory
//! (`FSBENCH_LEDGER_DIR`), so no test releases another's (or another user's) resources.
//! Privileged tests print `skipped: <reason>` without root and the tools, and fail instead
//! when `FSBENCH_REQUIRE_PRIVILEGED=1`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::loopdev::LoopImage;
use common::{load_results, runs, serial, stderr, zfs_fuse_pids};

/// `true` when the test can run: root, loop devices and `tools`; otherwise `tests/common`
/// prints `skipped: …`, or fails under `FSBENCH_REQUIRE_PRIVILEGED=1`.
#[track_caller]
fn privileged(tools: &[&str]) -> bool {
    common::privileged_loop(module_path!(), tools)
}

/// A scratch directory on a real disk (loop devices with direct I/O refuse tmpfs) with its
/// own ledger directory.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("fsbench-ledger-test")
                .tempdir_in("/var/tmp")
                .unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn out(&self) -> PathBuf {
        self.path().join("out")
    }
    fn ledger(&self) -> PathBuf {
        self.path().join("ledger")
    }
    fn cmd(&self) -> Command {
        let mut c = common::bin();
        c.env("FSBENCH_LEDGER_DIR", self.ledger());
        c
    }
    /// `fsbench run` with small sizes on an image in this scratch directory.
    fn run(&self, fs: &str, extra: &[&str]) -> Command {
        let mut c = self.cmd();
        c.args([
            "run",
            "--yes",
            "--fs",
            fs,
            "--image-size",
            "1G",
            "--file-size",
            "32M",
            "--rounds",
            "1",
            "--seed",
            "7",
            // Test-sized corpus (the quick profile's 52k entries take seconds per step).
            "--corpus-scale",
            "0.1",
        ])
        .args(common::QUICK)
        .args(extra)
        .arg("--scratch-dir")
        .arg(self.path())
        .arg("--out")
        .arg(self.out());
        c
    }
    fn resume(&self) -> Output {
        self.cmd()
            .args(["run", "--resume"])
            .arg(self.out())
            .output()
            .unwrap()
    }
    /// Ledger files left in this test's ledger directory.
    fn ledgers(&self) -> Vec<String> {
        std::fs::read_dir(self.ledger())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    }
    /// Everything in the scratch directory except the output and ledger directories.
    fn stray_files(&self) -> Vec<String> {
        std::fs::read_dir(self.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "out" && n != "ledger" && n != "shim")
            .collect()
    }
}

/// Loop devices backed by files under `scratch`, mounts under fsbench's root for `pid` or
/// under `scratch`.
fn leftovers(scratch: &Path, pid: u32) -> Vec<String> {
    common::leftovers(scratch, Some(pid))
}

/// Every recorded workload of the plan has a sample for every setup (one round), and the
/// file is not partial.
fn assert_complete(r: &serde_json::Value, setups: &[&str]) {
    assert_eq!(r["partial"], false, "results are partial");
    let samples = r["samples"].as_array().expect("samples");
    let mut missing = Vec::new();
    for w in r["workloads"].as_array().expect("workloads") {
        let id = w["id"].as_str().unwrap();
        for s in setups {
            if !samples
                .iter()
                .any(|x| x["setup"] == *s && x["workload"] == id && x["round"] == 1)
            {
                missing.push(format!("{s}/{id}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing samples: {missing:?}\nfailures: {}",
        r["failures"]
    );
}

/// A child whose stderr lines are collected as they come.
struct Running {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Running {
    fn spawn(mut cmd: Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l = lines.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line);
            }
        });
        Running { child, lines }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait until a stderr line contains `needle` (the progress line of a step starting).
    fn wait_for(&mut self, needle: &str) {
        let t0 = Instant::now();
        loop {
            if self
                .lines
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains(needle))
            {
                return;
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("exited ({st}) before '{needle}':\n{}", self.text());
            }
            assert!(
                t0.elapsed() < Duration::from_secs(300),
                "no '{needle}' within 300 s:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: rustix::process::Signal) {
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(self.pid() as i32).unwrap(),
            sig,
        )
        .unwrap();
    }

    fn wait(mut self) -> (Option<i32>, String) {
        let st = self.child.wait().unwrap();
        // Let the reader thread take the last lines.
        std::thread::sleep(Duration::from_millis(200));
        (st.code(), self.text())
    }

    fn text(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

fn read_trim(p: &str) -> String {
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

/// A PATH directory whose mkfs.ext4 waits 5 s before running the real one, so a kill lands
/// while mkfs is running.
fn slow_mkfs_shim(scratch: &Scratch) -> String {
    let shim = scratch.path().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("mkfs.ext4"))
        .find(|p| p.is_file())
        .unwrap();
    let script = shim.join("mkfs.ext4");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nsleep 5\nexec {} \"$@\"\n", real.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// SIGKILL a run during mkfs, during an I/O job and during untar; the next `run --resume`
/// releases what the killed run held (lines printed), finishes, and nothing is left.
#[test]
fn sigkill_then_resume_releases_what_the_killed_run_held() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    for point in ["mkfs", "randread", "untar"] {
        let scratch = Scratch::new();
        let mut cmd = scratch.run("ext4,xfs", &[]);
        if point == "mkfs" {
            cmd.env("PATH", slow_mkfs_shim(&scratch));
        }
        let mut run = Running::spawn(cmd);
        let pid = run.pid();
        run.wait_for(&format!("· ext4 · {point}"));
        std::thread::sleep(Duration::from_millis(1500));
        run.signal(rustix::process::Signal::KILL);
        let (code, _) = run.wait();
        assert_eq!(code, None, "killed by a signal");
        // The killed run held something, and its ledger says so.
        assert_eq!(scratch.ledgers().len(), 1, "{point}: one ledger");
        let before = leftovers(scratch.path(), pid);
        assert!(
            !before.is_empty() || point == "mkfs",
            "{point}: the kill left nothing to recover, the test proves nothing"
        );
        assert!(
            !scratch.stray_files().is_empty(),
            "{point}: the image is still there"
        );

        let o = scratch.resume();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{point}: resume failed:\n{err}");
        let recovery: Vec<&str> = err
            .lines()
            .filter(|l| l.contains(&format!("recovery (pid {pid})")))
            .collect();
        println!(
            "killed during {point}; before recovery: {before:?}\n{}",
            recovery.join("\n")
        );
        assert!(
            recovery.iter().any(|l| l.contains("released image")),
            "{point}: recovery lines:\n{}",
            recovery.join("\n")
        );
        if point == "mkfs" {
            assert!(
                recovery
                    .iter()
                    .any(|l| l.contains("mkfs.ext4") && l.contains("stopped")),
                "mkfs was still running and is stopped:\n{}",
                recovery.join("\n")
            );
        } else {
            assert!(
                recovery.iter().any(|l| l.contains("released mount")),
                "{point}: recovery lines:\n{}",
                recovery.join("\n")
            );
        }
        assert!(
            !recovery.iter().any(|l| l.contains("could not release")),
            "{point}: {}",
            recovery.join("\n")
        );
        let left = leftovers(scratch.path(), pid);
        assert!(left.is_empty(), "{point}: left after recovery: {left:?}");
        assert!(
            scratch.stray_files().is_empty(),
            "{point}: scratch dir still holds {:?}",
            scratch.stray_files()
        );
        assert!(
            scratch.ledgers().is_empty(),
            "{point}: {:?}",
            scratch.ledgers()
        );
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "the killed run is gone"
        );
        assert_complete(&load_results(&scratch.out()), &["ext4", "xfs"]);
    }
}

/// A ledger whose loop device now backs another file, whose process PID now belongs to
/// another process, whose image path is now another file and whose setting someone else
/// changed: recovery releases none of it and says why.
#[test]
fn a_ledger_naming_what_is_no_longer_ours_releases_nothing() {
    let _s = serial();
    if !privileged(&["losetup"]) {
        return;
    }
    let scratch = Scratch::new();
    let recorded = scratch.path().join("fsbench-recorded.img");
    std::fs::File::create(&recorded)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    // Someone else's image on a loop device (detached when the guard goes, even on panic).
    let other = LoopImage::spec(64 << 20)
        .in_dir(scratch.path())
        .file_name("someone-elses.img")
        .attach()
        .unwrap_or_else(|e| panic!("a loop device: {e}"));
    let dev = other.dev.clone();
    let mut sleeper = Command::new("sleep").arg("120").spawn().unwrap();
    let sleeper_start: u64 = {
        let t = std::fs::read_to_string(format!("/proc/{}/stat", sleeper.id())).unwrap();
        t[t.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(&recorded).unwrap();
    let setting = scratch.path().join("fake-sysctl");
    std::fs::write(&setting, "30\n").unwrap();
    let ledger = serde_json::json!({
        "pid": dead_pid,
        "start_time": 1,
        "argv": ["fsbench", "run"],
        "entries": [
            {"id": 1, "item": {"kind": "image", "path": recorded,
                               "id": [md.dev(), md.ino() + 1]}},
            {"id": 2, "item": {"kind": "loop", "device": dev, "image": recorded,
                               "image_id": [md.dev(), md.ino()]}},
            {"id": 3, "item": {"kind": "setting", "path": setting,
                               "original": "20", "applied": "10"}},
            {"id": 4, "item": {"kind": "process", "pid": sleeper.id(),
                               "start_time": sleeper_start + 1, "name": "postgres",
                               "data_dir": scratch.path()}},
        ]
    });
    std::fs::create_dir_all(scratch.ledger()).unwrap();
    std::fs::write(
        scratch.ledger().join(format!("{dead_pid}-1.json")),
        serde_json::to_vec_pretty(&ledger).unwrap(),
    )
    .unwrap();
    // Any root command recovers first; a --dir run of one cheap workload is the smallest.
    let work = scratch.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = scratch
        .cmd()
        .args(["run", "--only", "usable-space", "--rounds", "1", "--dir"])
        .arg(&work)
        .arg("--out")
        .arg(scratch.out())
        .output()
        .unwrap();
    let err = stderr(&o);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("recovery")).collect();
    let text = lines.join("\n");
    println!("{text}");
    assert_eq!(lines.len(), 4, "one line per item:\n{err}");
    assert!(
        lines.iter().all(|l| l.contains("not released")),
        "nothing is released:\n{text}"
    );
    assert!(
        text.contains(&format!("{dev} now backs {}", other.image.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "pid {} now belongs to another process",
            sleeper.id()
        )),
        "{text}"
    );
    assert!(text.contains("is now another file"), "{text}");
    assert!(text.contains("someone else changed it"), "{text}");
    // Untouched: the other image and its loop device (the guard detaches it when this
    // returns), the recorded path, the setting, the data directory.
    assert!(other.image.exists() && recorded.exists() && scratch.path().exists());
    assert!(
        other
            .sys("loop/backing_file")
            .starts_with(other.image.to_str().unwrap()),
        "{dev} was detached or rebound"
    );
    assert_eq!(std::fs::read_to_string(&setting).unwrap(), "30\n");
}

/// SIGHUP (a closed terminal) and SIGINT (Ctrl-C) mid-run: exit 128 + signal, everything
/// released, partial results, the sysctl variant put back; `--resume` completes.
#[test]
fn sighup_and_sigint_are_interrupts_and_resume_completes() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4"]) {
        return;
    }
    use rustix::process::Signal;
    for (sig, code) in [(Signal::HUP, 129), (Signal::INT, 130)] {
        interrupt_then_resume(sig, code);
    }
}

fn interrupt_then_resume(sig: rustix::process::Signal, want_code: i32) {
    let scratch = Scratch::new();
    let original = read_trim("/proc/sys/vm/dirty_background_ratio");
    let want = if original == "7" { "6" } else { "7" };
    let fs = format!("ext4,bg=ext4:sysctl.vm.dirty_background_ratio={want}");
    let mut run = Running::spawn(scratch.run(&fs, &["--only", "randread,randwrite"]));
    let pid = run.pid();
    run.wait_for("· bg · randread");
    assert_eq!(read_trim("/proc/sys/vm/dirty_background_ratio"), want);
    run.signal(sig);
    let (code, text) = run.wait();
    assert_eq!(code, Some(want_code), "{sig:?}: {text}");
    assert!(text.contains("--resume"), "{text}");
    assert_eq!(
        read_trim("/proc/sys/vm/dirty_background_ratio"),
        original,
        "put back on {sig:?}"
    );
    assert!(leftovers(scratch.path(), pid).is_empty());
    assert!(
        scratch.stray_files().is_empty(),
        "{:?}",
        scratch.stray_files()
    );
    assert!(scratch.ledgers().is_empty());
    assert_eq!(load_results(&scratch.out())["partial"], true);
    let o = scratch.resume();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = load_results(&scratch.out());
    assert_complete(&r, &["ext4", "bg"]);
    assert_eq!(read_trim("/proc/sys/vm/dirty_background_ratio"), original);
}

/// stdout and stderr go to pipes that are closed mid-run: the run still finishes, releases
/// everything, writes results.json and notes the failed output once.
#[test]
fn closed_pipes_do_not_stop_cleanup_or_results() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4"]) {
        return;
    }
    let scratch = Scratch::new();
    let mut child = scratch
        .run("ext4", &["--only", "randread,randwrite"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 && !line.contains("· ext4 ·") {
        line.clear();
    }
    drop(err);
    drop(child.stdout.take());
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "run did not end");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(leftovers(scratch.path(), pid).is_empty());
    assert!(
        scratch.stray_files().is_empty(),
        "{:?}",
        scratch.stray_files()
    );
    let r = load_results(&scratch.out());
    assert_complete(&r, &["ext4"]);
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .filter(|m| m.contains("writing to"))
        .collect();
    assert_eq!(notes.len(), 1, "the output error is noted once: {notes:?}");
    assert!(notes[0].contains("Broken pipe"), "{notes:?}");
}

/// A scheduler variant and a sysctl variant: results.json has the live values read back, and
/// every value is as it was afterwards.
#[test]
fn tuning_variants_record_live_values_and_leave_the_host_as_found() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4"]) {
        return;
    }
    let scratch = Scratch::new();
    let ratio = read_trim("/proc/sys/vm/dirty_ratio");
    let want = if ratio == "11" { "12" } else { "11" };
    let fs = format!(
        "ext4,dl=ext4:sched=mq-deadline;read_ahead_kb=256,dirty=ext4:sysctl.vm.dirty_ratio={want}"
    );
    let o = scratch.run(&fs, &["--only", "randread"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = load_results(&scratch.out());
    let setup = |n: &str| {
        r["setups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(setup("dl")["host"]["sched"], "mq-deadline");
    assert_eq!(setup("dl")["host"]["read_ahead_kb"], "256");
    assert_eq!(setup("dirty")["host"]["sysctl.vm.dirty_ratio"], want);
    assert!(setup("ext4").get("host").is_none());
    assert_eq!(read_trim("/proc/sys/vm/dirty_ratio"), ratio);
    // The loop device the run used is back to the kernel's default for loop devices.
    let dev = r["target"]["extra"]["loop_device"].as_str().unwrap();
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    let sched = read_trim(&format!("/sys/block/{name}/queue/scheduler"));
    assert!(sched.contains("[none]"), "{dev}: {sched}");
    assert!(scratch.ledgers().is_empty());
}

/// SIGKILL while a sysctl variant is applied: it stays changed until the next fsbench, whose
/// recovery puts the original back.
#[test]
fn sigkill_while_a_sysctl_is_applied_then_recovery_restores_it() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4"]) {
        return;
    }
    let scratch = Scratch::new();
    let original = read_trim("/proc/sys/vm/dirty_expire_centisecs");
    let want = if original == "1500" { "1400" } else { "1500" };
    let fs = format!("x=ext4:sysctl.vm.dirty_expire_centisecs={want}");
    let mut run = Running::spawn(scratch.run(&fs, &["--only", "randread,randwrite"]));
    run.wait_for("· x · randread");
    run.signal(rustix::process::Signal::KILL);
    let (code, _) = run.wait();
    assert_eq!(code, None);
    assert_eq!(
        read_trim("/proc/sys/vm/dirty_expire_centisecs"),
        want,
        "nothing could restore it after SIGKILL"
    );
    let o = scratch.resume();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.lines().any(
            |l| l.contains("released setting /proc/sys/vm/dirty_expire_centisecs")
                && l.contains(&format!("put back \"{original}\""))
        ),
        "{err}"
    );
    assert_eq!(read_trim("/proc/sys/vm/dirty_expire_centisecs"), original);
    assert!(scratch.stray_files().is_empty());
    assert_complete(&load_results(&scratch.out()), &["x"]);
}

/// Bad host tunings are refused with exit 2 before anything is created or changed.
#[test]
fn bad_tunings_are_refused_before_anything_changes() {
    let _s = serial();
    if !privileged(&["losetup"]) {
        return;
    }
    let scratch = Scratch::new();
    let ratio = read_trim("/proc/sys/vm/dirty_ratio");
    for (fs, needle) in [
        (
            "e=ext4:sysctl.vm.no_such_knob=1",
            "no sysctl vm.no_such_knob",
        ),
        (
            "e=ext4:sysctl.vm.dirty_ratio=101",
            "the kernel rejects vm.dirty_ratio=101",
        ),
        ("e=ext4:sched=cfq", "scheduler 'cfq' is not offered"),
        (
            "e=ext4:sysctl.vm.drop_caches=3",
            "not a readable and writable setting",
        ),
        ("e=ext4:nomerges=9", "from 0 to 2"),
    ] {
        let o = scratch.run(fs, &[]).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{fs}: {err}");
        assert!(err.contains(needle), "{fs}: {err}");
        if needle.starts_with("scheduler") {
            assert!(err.contains("available: none"), "{err}");
        }
        assert_eq!(read_trim("/proc/sys/vm/dirty_ratio"), ratio, "{fs}");
        assert!(!scratch.out().exists(), "{fs}: output created");
        assert!(scratch.stray_files().is_empty(), "{fs}: image created");
        assert!(scratch.ledgers().is_empty(), "{fs}");
    }
}

/// Pools of the run `pid` that anything could still import: listed by a running daemon, or
/// named in a cache file a daemon reads at start.
/// The recovery lines of `pid` a successful `doctor --cleanup` or `run --resume` printed,
/// shown under `label`; none of them may say "could not release".
fn recovered(o: &Output, pid: u32, label: &str) -> Vec<String> {
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(o));
    let recovery: Vec<String> = text
        .lines()
        .filter(|l| l.contains(&format!("recovery (pid {pid})")))
        .map(str::to_string)
        .collect();
    let shown = recovery.join("\n");
    println!("{label}\n{shown}");
    assert_eq!(o.status.code(), Some(0), "{label}:\n{text}");
    assert!(
        !recovery.iter().any(|l| l.contains("could not release")),
        "{label}:\n{shown}"
    );
    recovery
}

fn pools_of(pid: u32) -> Vec<String> {
    let prefix = format!("fsbench_{pid}_");
    let mut found = Vec::new();
    if !zfs_fuse_pids().is_empty() {
        let o = Command::new("zpool")
            .args(["list", "-H", "-o", "name"])
            .output()
            .unwrap();
        found.extend(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with(&prefix))
                .map(|l| format!("pool: {l}")),
        );
    }
    for cache in ["/var/lib/zfs/zpool.cache", "/etc/zfs/zpool.cache"] {
        if std::fs::read(cache)
            .is_ok_and(|b| b.windows(prefix.len()).any(|w| w == prefix.as_bytes()))
        {
            found.push(format!("{cache} names a pool {prefix}*"));
        }
    }
    found
}

/// The zfs-fuse daemon the killed run `pid` started, from its ledger.
fn daemon_in_ledger(scratch: &Scratch, pid: u32) -> u32 {
    let name = scratch
        .ledgers()
        .into_iter()
        .find(|n| n.starts_with(&format!("{pid}-")))
        .expect("the killed run's ledger");
    let l: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scratch.ledger().join(name)).unwrap()).unwrap();
    l["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["item"]["kind"] == "process" && e["item"]["name"] == "zfs-fuse")
        .and_then(|e| e["item"]["pid"].as_u64())
        .expect("the ledger names the zfs-fuse daemon the run started") as u32
}

/// SIGKILL a ZFS run while its pool exists and the zfs-fuse daemon it started is alive; then
/// `doctor --cleanup`, or `run --resume`, or (the daemon killed as well) `doctor --cleanup`:
/// afterwards no loop device, mount, pool (live or in a cache file), daemon or image of the
/// killed run is left, and the resumed results are complete.
#[test]
fn sigkill_with_a_zfs_pool_then_cleanup_or_resume_releases_pool_and_daemon() {
    let _s = serial();
    if !privileged(&["losetup", "zfs-fuse", "zpool", "zfs", "pgrep"]) {
        return;
    }
    // The test is about the daemon fsbench starts itself; one already running (the machine's
    // own) would be used instead and must not be stopped.
    if !common::require(
        "no zfs-fuse daemon running before the test (fsbench must start its own)",
        zfs_fuse_pids().is_empty(),
    ) {
        return;
    }
    for case in ["cleanup", "resume", "cleanup after the daemon died too"] {
        let scratch = Scratch::new();
        let mut run = Running::spawn(scratch.run("zfs", &["--only", "randread,randwrite"]));
        let pid = run.pid();
        run.wait_for("· zfs · randread");
        std::thread::sleep(Duration::from_millis(500));
        run.signal(rustix::process::Signal::KILL);
        let (code, _) = run.wait();
        assert_eq!(code, None, "{case}: killed by a signal");
        let daemon = daemon_in_ledger(&scratch, pid);
        assert!(runs(daemon), "{case}: the daemon outlived the killed run");
        let mut before = leftovers(scratch.path(), pid);
        before.extend(pools_of(pid));
        assert!(
            before.iter().any(|l| l.starts_with("pool: "))
                && before.iter().any(|l| l.starts_with("loop: ")),
            "{case}: the kill left no pool on a loop device, the test proves nothing: {before:?}"
        );
        if case.contains("died") {
            rustix::process::kill_process(
                rustix::process::Pid::from_raw(daemon as i32).unwrap(),
                rustix::process::Signal::KILL,
            )
            .unwrap();
            let t0 = Instant::now();
            while runs(daemon) && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let o = if case == "resume" {
            scratch.resume()
        } else {
            scratch
                .cmd()
                .args(["doctor", "--cleanup"])
                .output()
                .unwrap()
        };
        let recovery = recovered(&o, pid, &format!("{case}: before recovery: {before:?}"));
        let shown = recovery.join("\n");
        let released = |what: &str| {
            recovery
                .iter()
                .any(|l| l.contains(&format!("released {what}")))
        };
        assert!(
            released("zpool fsbench_"),
            "{case}: the pool (or its dead mount):\n{shown}"
        );
        assert!(released("image"), "{case}:\n{shown}");
        if case.contains("died") {
            assert!(
                recovery.iter().any(|l| l.contains("zfs-kstat")),
                "{case}: the dead daemon's kstat mount:\n{shown}"
            );
        } else {
            assert!(
                recovery
                    .iter()
                    .any(|l| l.contains(&format!("released zfs-fuse (pid {daemon}): stopped"))),
                "{case}: the daemon the killed run started:\n{shown}"
            );
        }
        let mut left = leftovers(scratch.path(), pid);
        left.extend(pools_of(pid));
        assert!(left.is_empty(), "{case}: left after recovery: {left:?}");
        assert!(!runs(daemon), "{case}: daemon {daemon} still runs");
        assert!(
            scratch.stray_files().is_empty(),
            "{case}: scratch dir still holds {:?}",
            scratch.stray_files()
        );
        assert!(
            scratch.ledgers().is_empty(),
            "{case}: {:?}",
            scratch.ledgers()
        );
        // No daemon is left at all: the killed run's is stopped, the resumed run's own
        // daemon is stopped when it ends, and nothing else may start one meanwhile.
        assert_eq!(
            zfs_fuse_pids(),
            Vec::<u32>::new(),
            "{case}: a zfs-fuse daemon is left"
        );
        let kstat = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(
            !kstat.lines().any(|l| l.contains(" /zfs-kstat ")),
            "{case}: /zfs-kstat is still mounted"
        );
        if case == "resume" {
            assert_complete(&load_results(&scratch.out()), &["zfs"]);
        }
    }
}

/// The killed run's recorder pieces still present: its FUSE mount, and a filesystem mounted
/// from a loop device over the recorder's file (both under `scratch`).
fn recorder_mounts(scratch: &Path) -> (bool, bool) {
    let s = scratch.to_string_lossy().into_owned();
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let fuse = info
        .lines()
        .any(|l| l.contains(&s) && l.contains("fsbench-recorder"));
    let recording = info
        .lines()
        .any(|l| l.contains(&s) && l.contains("fsbench-crash-") && l.contains(" ext4 "));
    (fuse, recording)
}

/// SIGKILL a run while a crash workload records (the FUSE recorder serving the loop device
/// the recording ext4 is mounted from, the oracle fsyncing): the recorder's watchdog aborts
/// the FUSE connection so the killed process finishes exiting, and `doctor --cleanup` then
/// releases the recording mount, the loop device, the FUSE mount, the backing file, the
/// directories and the watchdog; nothing of the killed run is left.
#[test]
fn sigkill_while_a_crash_workload_records_then_cleanup_releases_the_recorder() {
    let _s = serial();
    if !privileged(&["losetup", "mkfs.ext4", "e2fsck"])
        || !common::require("/dev/fuse", Path::new("/dev/fuse").exists())
    {
        return;
    }
    let scratch = Scratch::new();
    // Enough operations that the recording outlasts the wait for its mounts.
    let plan = scratch.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[workload]]\nid = \"crash-fsync\"\nops = 20000\nstates = 2\n",
    )
    .unwrap();
    let cmd = scratch.run(
        "ext4",
        &["--only", "crash-fsync", "--plan", plan.to_str().unwrap()],
    );
    let mut run = Running::spawn(cmd);
    let pid = run.pid();
    run.wait_for("· ext4 · crash-fsync");
    // Recording, not the mkfs before it (which mounts the same directory): the oracle's
    // tenth fsync'd file exists.
    let tenth = scratch.path().join(format!(
        "fsbench-crash-{pid}-crash-fsync/mnt/fsbench-crash/f00010"
    ));
    let t0 = Instant::now();
    while !(tenth.exists() && recorder_mounts(scratch.path()) == (true, true)) {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the recording never started:\n{}",
            run.text()
        );
        if let Ok(Some(st)) = run.child.try_wait() {
            panic!("exited ({st}) before recording:\n{}", run.text());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    run.signal(rustix::process::Signal::KILL);
    // The watchdog must let the process finish exiting: a wait that never ends fails here.
    let t0 = Instant::now();
    while run.child.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the killed run never finished exiting (a thread waits on the dead FUSE daemon)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, said) = run.wait();
    println!("the killed run said:\n{said}");
    assert_eq!(code, None, "killed by a signal");
    let before = leftovers(scratch.path(), pid);
    assert!(
        before.iter().any(|l| l.starts_with("loop: ")),
        "the kill left no loop device over the recorder, the test proves nothing: {before:?}"
    );
    assert!(
        scratch
            .stray_files()
            .iter()
            .any(|f| f.starts_with("fsbench-rec-")),
        "the recorder's backing file is still there: {:?}",
        scratch.stray_files()
    );

    let o = scratch
        .cmd()
        .args(["doctor", "--cleanup"])
        .output()
        .unwrap();
    let recovery = recovered(&o, pid, &format!("before recovery: {before:?}"));
    let shown = recovery.join("\n");
    // The recording ext4 (its loop device goes with it: autoclear), the FUSE mount, the
    // recorder's backing file.
    for (what, on) in [
        ("released mount", "fsbench-crash-"),
        ("released mount", "(fsbench-recorder)"),
        ("released image", "fsbench-rec-"),
    ] {
        assert!(
            recovery.iter().any(|l| l.contains(what) && l.contains(on)),
            "no '{what} … {on}' line:\n{shown}"
        );
    }
    let left = leftovers(scratch.path(), pid);
    assert!(left.is_empty(), "left after recovery: {left:?}");
    assert_eq!(recorder_mounts(scratch.path()), (false, false));
    let stray: Vec<String> = scratch
        .stray_files()
        .into_iter()
        .filter(|f| f != "plan.toml")
        .collect();
    assert!(stray.is_empty(), "scratch dir still holds {stray:?}");
    assert!(scratch.ledgers().is_empty(), "{:?}", scratch.ledgers());
    // The watchdog (a `sh` named after the recorder) is gone too.
    let watchdogs: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("fsbench-recorder-watchdog") && c.contains(&pid.to_string()))
        .collect();
    assert!(watchdogs.is_empty(), "{watchdogs:?}");
}
