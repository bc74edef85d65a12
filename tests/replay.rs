//! End-to-end tests of your own workload (docs/replay.md): `fsbench record` of a real shell
//! script (dd with fsync, sync, mv, rm, appends) under strace, then `fsbench run --replay` of
//! its trace on ext4 and XFS, checked against the recorded end state; the same script
//! recorded through eBPF (fsbench's own BPF program, and bpftrace), its calls checked against
//! strace's and replayed on ext4 and XFS; Ctrl-C during record; bad traces refused with their line, nothing created.
//!
//! The replay tests need root, loop devices, mkfs.ext4, mkfs.xfs and strace (the eBPF one
//! also bpftrace, and an fsbench built with clang); the record tests need strace; without them they print `skipped: <reason>`
//! (with `FSBENCH_REQUIRE_PRIVILEGED=1`, CI, they fail instead).

mod common;

use common::{assert_ok, assert_refused, bin, have, leftovers, load_results, quick_run, scratch};
use fsbench::workload::replay::trace::{EntryType, TraceReader};
use std::path::Path;

/// The script recorded: a directory, a file written by dd and fsync'd, a global sync, a
/// rename, an append, a file read back, a file made and removed, a file written in 4 KiB
/// steps with fdatasync.
const SCRIPT: &str = r#"set -e
cd "$1"
mkdir -p d
dd if=/dev/zero of=d/a bs=4k count=8 conv=fsync 2>/dev/null
sync
mv d/a d/b
echo hello >> d/b
cat keep/old > /dev/null
dd if=/dev/zero of=tmpf bs=1k count=3 2>/dev/null
rm tmpf
dd if=/dev/zero of=d/c bs=4k count=4 oflag=dsync 2>/dev/null
"#;

/// A root with a starting file, and the script beside it.
fn setup(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("keep")).unwrap();
    std::fs::write(root.join("keep/old"), vec![7u8; 100_000]).unwrap();
    let script = dir.join("script.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    (root, script)
}

fn record(dir: &Path, root: &Path, script: &Path, out: &Path, capture: &str) -> String {
    record_env(dir, root, script, out, capture, &[])
}

/// [`record`] with `env` set for fsbench.
fn record_env(
    dir: &Path,
    root: &Path,
    script: &Path,
    out: &Path,
    capture: &str,
    env: &[(&str, &str)],
) -> String {
    let o = bin()
        .envs(env.iter().copied())
        .current_dir(dir)
        .args(["record", "--capture", capture, "--root"])
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(["--", "sh"])
        .arg(script)
        .arg(root)
        .output()
        .unwrap();
    assert_ok(&o)
}

/// `fsbench run --replay TRACE` on ext4 and XFS (512M images, seed 3) for `rounds` rounds,
/// in `dir`: its pid (for the leftovers check) and its results.
fn replay_on_ext4_and_xfs(dir: &Path, trace: &Path, rounds: u32) -> (u32, serde_json::Value) {
    let out = dir.join("out");
    let child = quick_run(rounds)
        .arg("--replay")
        .arg(trace)
        .args(["--fs", "ext4,xfs", "--image-size", "512M", "--seed", "3"])
        .arg("--scratch-dir")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "fsbench run failed: {:?}", o.status);
    (pid, load_results(&out))
}

#[test]
fn a_recorded_script_replays_on_ext4_and_xfs_and_ends_as_recorded() {
    if !common::privileged_loop("replay_ext4_xfs", &["mkfs.ext4", "mkfs.xfs", "strace"]) {
        return;
    }
    let s = scratch("fsbench-replay-");
    let (root, script) = setup(s.path());
    let trace = s.path().join("script.trace.gz");
    let summary = record(s.path(), &root, &script, &trace, "strace");
    assert!(summary.contains("captured by strace"), "{summary}");
    assert!(summary.contains("fsyncs"), "{summary}");
    // The trace holds the starting file, the calls and the end state.
    let mut r = TraceReader::open(&trace).unwrap();
    assert!(
        r.start
            .iter()
            .any(|e| e.p == "keep/old" && e.size == 100_000)
    );
    let trailer = r.check_all().unwrap();
    assert!(trailer.events > 10, "{trailer:?}");
    // sh, dd, mv… are threads of the trace: its replay below is the concurrent one.
    assert!(r.threads > 1, "{} recorded threads", r.threads);
    let end: Vec<(String, u64)> = r
        .end
        .iter()
        .filter(|e| e.t == EntryType::File)
        .map(|e| (e.p.clone(), e.size))
        .collect();
    assert!(end.contains(&("d/b".into(), 32 * 1024 + 6)), "{end:?}");
    assert!(end.contains(&("d/c".into(), 16 * 1024)), "{end:?}");
    assert!(!end.iter().any(|(p, _)| p == "tmpf"), "{end:?}");

    let (pid, r) = replay_on_ext4_and_xfs(s.path(), &trace, 2);
    let samples = r["samples"].as_array().unwrap();
    for setup in ["ext4", "xfs"] {
        for round in [1, 2] {
            let get = |m: &str| {
                samples
                    .iter()
                    .find(|x| {
                        x["setup"] == setup
                            && x["round"] == round
                            && x["workload"] == "replay-sh"
                            && x["metric"] == m
                    })
                    .and_then(|x| x["value"].as_f64())
                    .unwrap_or_else(|| panic!("{setup} round {round}: no {m}"))
            };
            assert!(get("seconds") > 0.0);
            assert!(get("replay_calls_per_s") > 0.0);
            assert!(get("replay_fsync_p99_ms") > 0.0);
            assert_eq!(get("replay_end_mismatches"), 0.0, "{setup} round {round}");
            assert_eq!(get("replay_diverged"), 0.0, "{setup} round {round}");
            assert!(get("replay_write_bytes") >= (32 * 1024 + 16 * 1024) as f64);
        }
    }
    let left = leftovers(s.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:#?}");
    common::ran("replay_ext4_xfs");
}

/// The trace's events on files as (call, path or handle's path, offset, bytes), in order.
fn calls_of(trace: &Path) -> Vec<String> {
    let mut r = TraceReader::open(trace).unwrap();
    let mut paths = std::collections::HashMap::new();
    let mut out = Vec::new();
    while let Some(e) = r.next_event().unwrap() {
        if let (Some(h), Some(p)) = (e.h, e.p.as_ref()) {
            paths.insert(h, p.clone());
        }
        let p =
            e.p.clone()
                .or_else(|| e.h.and_then(|h| paths.get(&h).cloned()))
                .unwrap_or_default();
        out.push(format!("{:?} {p} {:?} {:?}", e.c, e.o, e.n));
    }
    out
}

#[test]
fn an_ebpf_recording_has_the_calls_strace_sees_and_replays_on_ext4_and_xfs() {
    if !common::privileged_loop(
        "replay_ebpf_ext4_xfs",
        &["mkfs.ext4", "mkfs.xfs", "strace", "bpftrace"],
    ) {
        return;
    }
    let s = scratch("fsbench-replay-ebpf-");
    let (root, script) = setup(s.path());
    let by_strace = s.path().join("strace.trace.gz");
    record(s.path(), &root, &script, &by_strace, "strace");
    std::fs::remove_dir_all(&root).unwrap();
    let (root, script) = setup(s.path());
    let trace = s.path().join("ebpf.trace.gz");
    let summary = record(s.path(), &root, &script, &trace, "ebpf");
    assert!(summary.contains("captured by ebpf"), "{summary}");
    // fsbench's own program (built by clang, which CI installs), not bpftrace.
    assert!(
        summary.contains("fsbench's BPF program attached in"),
        "{summary}"
    );
    assert!(!summary.contains("INCOMPLETE"), "{summary}");
    // The same calls on the same files, at the same offsets, as strace saw.
    assert_eq!(calls_of(&trace), calls_of(&by_strace));
    // A long recording's records are put in time order through sorted runs on the disk
    // (memory bounded): runs of 4 KiB make this one go that way, to the same trace.
    std::fs::remove_dir_all(&root).unwrap();
    let (root, script) = setup(s.path());
    let by_runs = s.path().join("runs.trace.gz");
    let summary = record_env(
        s.path(),
        &root,
        &script,
        &by_runs,
        "ebpf",
        &[("FSBENCH_TEST_SORT_RUN_BYTES", "4096")],
    );
    assert!(summary.contains("sorted runs on the disk"), "{summary}");
    assert_eq!(calls_of(&by_runs), calls_of(&by_strace));
    // And bpftrace, which the capture falls back to, sees them too.
    std::fs::remove_dir_all(&root).unwrap();
    let (root, script) = setup(s.path());
    let by_bpftrace = s.path().join("bpftrace.trace.gz");
    let summary = record(s.path(), &root, &script, &by_bpftrace, "bpftrace");
    assert!(
        summary.contains("bpftrace attached its probes in"),
        "{summary}"
    );
    assert_eq!(calls_of(&by_bpftrace), calls_of(&by_strace));
    let mut r = TraceReader::open(&trace).unwrap();
    assert_eq!(r.header.capture, "ebpf");
    let t = r.check_all().unwrap();
    assert_eq!(t.lost, 0);

    let (pid, r) = replay_on_ext4_and_xfs(s.path(), &trace, 1);
    let samples = r["samples"].as_array().unwrap();
    for setup in ["ext4", "xfs"] {
        let get = |m: &str| {
            samples
                .iter()
                .find(|x| x["setup"] == setup && x["workload"] == "replay-sh" && x["metric"] == m)
                .and_then(|x| x["value"].as_f64())
                .unwrap_or_else(|| panic!("{setup}: no {m}"))
        };
        assert!(get("replay_fsync_p99_ms") > 0.0);
        assert_eq!(get("replay_end_mismatches"), 0.0, "{setup}");
        assert_eq!(get("replay_diverged"), 0.0, "{setup}");
    }
    let left = leftovers(s.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:#?}");
    common::ran("replay_ebpf_ext4_xfs");
}

#[test]
fn ctrl_c_during_record_stops_the_command_and_leaves_a_valid_shorter_trace() {
    if !common::require("record_ctrl_c: needs strace", have("strace")) {
        return;
    }
    let s = scratch("fsbench-record-int-");
    let root = s.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let trace = s.path().join("t.trace");
    let child = bin()
        .args(["record", "--capture", "strace", "--root"])
        .arg(&root)
        .arg("--out")
        .arg(&trace)
        .args([
            "--",
            "sh",
            "-c",
            "while true; do echo x >> f; sleep 0.05; done",
        ])
        .current_dir(&root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{o:?}");
    let mut r = TraceReader::open(&trace).unwrap();
    let t = r.check_all().unwrap();
    assert!(t.interrupted);
    assert!(t.events >= 3, "{t:?}");
    assert!(r.end.iter().any(|e| e.p == "f" && e.size >= 2));
}

#[test]
fn bad_traces_are_refused_with_their_line_and_nothing_is_created() {
    let s = scratch("fsbench-replay-bad-");
    let good = "{\"k\":\"header\",\"format\":\"fsbench-trace\",\"version\":1,\"name\":\"t\",\"capture\":\"strace\",\"command\":[\"sh\"]}\n\
                {\"k\":\"ev\",\"tid\":0,\"ts\":0,\"c\":\"mkdir\",\"p\":\"d\"}\n\
                {\"k\":\"trailer\",\"events\":1}\n";
    let cases = [
        ("truncated", good[..good.len() - 10].to_string(), "line 3"),
        (
            "future",
            good.replace("\"version\":1", "\"version\":2"),
            "newer fsbench",
        ),
        (
            "escape",
            good.replace("\"p\":\"d\"", "\"p\":\"../../etc/x\""),
            "escapes",
        ),
        ("corrupt", good.replace("\"ts\":0", "\"ts\":x"), "line 2"),
    ];
    let dir = s.path().join("target");
    std::fs::create_dir(&dir).unwrap();
    for (name, text, needle) in cases {
        let f = s.path().join(format!("{name}.trace"));
        std::fs::write(&f, text).unwrap();
        let out = s.path().join(format!("out-{name}"));
        let o = quick_run(1)
            .arg("--replay")
            .arg(&f)
            .arg("--dir")
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_refused(&o, &["--replay", needle]);
        assert!(!out.exists(), "{name}: {} was created", out.display());
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // The good one plans.
    let f = s.path().join("good.trace");
    std::fs::write(&f, good).unwrap();
    let o = bin()
        .args(["plan", "--replay"])
        .arg(&f)
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    let text = assert_ok(&o);
    assert!(text.contains("replay-t"), "{text}");
    // The plan names the workload after its trace, sums the trace up, and says what data
    // it writes: incompressible by default, the stated share with --replay-compressibility.
    assert!(text.contains("t (replay)"), "{text}");
    assert!(text.contains("1 calls on 1 thread, 0 B read"), "{text}");
    assert!(text.contains("incompressible data"), "{text}");
    let plan = |extra: &[&str]| {
        bin()
            .args(["plan", "--replay"])
            .arg(&f)
            .arg("--dir")
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
    };
    let text = assert_ok(&plan(&["--replay-compressibility", "40"]));
    assert!(text.contains("data 40 % compressible"), "{text}");
    assert_refused(
        &plan(&["--replay-compressibility", "101"]),
        &["--replay-compressibility", "0 (incompressible"],
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn record_refuses_a_missing_root_and_a_trace_inside_it() {
    let s = scratch("fsbench-record-bad-");
    let o = bin()
        .args(["record", "--root", "/nonexistent-fsbench", "--", "true"])
        .output()
        .unwrap();
    assert_refused(&o, &["--root"]);
    let o = bin()
        .args(["record", "--root"])
        .arg(s.path())
        .arg("--out")
        .arg(s.path().join("t.trace"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_refused(&o, &["--out", "under --root"]);
    assert_eq!(std::fs::read_dir(s.path()).unwrap().count(), 0);
}

#[test]
fn record_attaches_to_a_running_process_for_a_while_and_leaves_it_running() {
    if !common::require("record_pid: needs strace", have("strace")) {
        return;
    }
    let s = scratch("fsbench-record-pid-");
    let root = s.path().join("root");
    std::fs::create_dir(&root).unwrap();
    // A "service" that opened its log before the capture and appends to it.
    // Killed on drop, so a failed assertion cannot leave it running (it holds the test's
    // stdout, and CI's log pipe with it, open).
    struct Service(std::process::Child);
    impl Drop for Service {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut svc = Service(
        std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3>>f; while :; do echo x >&3; sleep 0.05; done")
            .current_dir(&root)
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let trace = s.path().join("svc.trace");
    let o = bin()
        .args(["record", "--root"])
        .arg(&root)
        .args(["--pid", &svc.0.id().to_string(), "--for", "1s", "--out"])
        .arg(&trace)
        .output()
        .unwrap();
    let summary = assert_ok(&o);
    let alive = svc.0.try_wait().unwrap().is_none();
    drop(svc);
    assert!(alive, "the attached process was stopped");
    assert!(summary.contains("attached"), "{summary}");
    let mut r = TraceReader::open(&trace).unwrap();
    let start = r.start.iter().find(|e| e.p == "f").unwrap().size;
    let mut first_write = None;
    let mut written = 0;
    while let Some(e) = r.next_event().unwrap() {
        if e.c == fsbench::workload::replay::trace::Call::Write {
            first_write = first_write.or(e.o);
            written += e.n.unwrap_or(0);
        }
    }
    // The end state is taken while the capture still records, and the trace keeps the calls
    // between the two states: the log ends at its start plus the appends recorded (before,
    // the end was scanned after bpftrace had detached, and the appends made meanwhile were
    // in the end state but in no call).
    let end = r.end.iter().find(|e| e.p == "f").unwrap().size;
    assert_eq!(
        end,
        start + written,
        "the end state holds appends the trace does not: {summary}"
    );
    // The log opened before the capture is recorded as opened; its appends land at the end.
    let first = first_write.expect("no write recorded");
    assert!(
        first >= start,
        "first append at {first}, file was {start} bytes"
    );
}
