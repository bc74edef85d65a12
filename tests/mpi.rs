//! fsbench under MPI: `mpirun -np 3` on /tmp (io, meta) and on tmpfs (/dev/shm: run). Built
//! only with `--features mpi`.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::process::{Command, Output};

mod common;

/// mpirun is a prerequisite (tests/common): missing, the test fails under
/// FSBENCH_REQUIRE_PRIVILEGED=1 (CI) and is skipped otherwise.
fn have_mpirun(test: &str) -> bool {
    common::privileged(&format!("mpi::{test}"))
        .tools(&["mpirun"])
        .ok()
}

/// One mpirun at a time: concurrent Open MPI jobs race on their session directory in /tmp,
/// and ranks of different tests would compete for the two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `fsbench <args>` as 3 MPI ranks, under a timeout so a hang fails the test instead.
fn mpirun(args: &[&str]) -> Output {
    mpirun_env(&[], args)
}

/// [`mpirun`] with `env` (`NAME=VALUE`) exported to every rank.
fn mpirun_env(env: &[&str], args: &[&str]) -> Output {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new("timeout");
    cmd.args([
        "-k",
        "10",
        "120",
        "mpirun",
        "--allow-run-as-root",
        "--oversubscribe",
    ]);
    for e in env {
        cmd.args(["-x", e]);
    }
    cmd
        // Every rank records into the tests' store, not the real one.
        .args([
            "-x",
            &format!("{}={}", common::STORE_VAR, common::TEST_STORE),
        ])
        .args(["-np", "3", common::BIN])
        .args(args)
        .output()
        .expect("timeout/mpirun run")
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("rank 0 prints one JSON report")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn hist_count(d: &Value) -> u64 {
    d["histogram"]
        .as_array()
        .map(|h| h.iter().map(|p| p[1].as_u64().unwrap()).sum())
        .unwrap_or(0)
}

#[test]
fn aggregate_is_the_sum_over_the_common_window() {
    if !have_mpirun("aggregate_is_the_sum_over_the_common_window") {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let file = format!("{}/f.%r", dir.path().display());
    let out = mpirun(&[
        "io",
        "--mpi",
        "--filename",
        &file,
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--json",
    ]);
    let v = json_of(&out);
    // It ends like every measuring command: rank 0 alone records the job in the history.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("fsbench: history: run ").count(), 1, "{err}");
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    assert_eq!(v["mpi"]["ranks"], 3);
    assert!(!v["hosts"].as_array().unwrap().is_empty());
    assert!(v["mpi"]["library"].as_str().unwrap().contains("MPI"));
    let total = v["read"]["ios"].as_u64().unwrap() + v["write"]["ios"].as_u64().unwrap();
    let sum: u64 = ranks.iter().map(|r| r["ios"].as_u64().unwrap()).sum();
    assert_eq!(total, sum, "aggregate I/Os = sum of the ranks'");
    // Size-based: each rank moves its 8 MiB once.
    assert_eq!(total, 3 * 2048);
    assert_eq!(
        hist_count(&v["read"]) + hist_count(&v["write"]),
        total,
        "merged histogram holds every I/O"
    );
    // IOPS = total I/Os / (latest end − earliest start), not a sum of per-rank rates.
    let window = f(&v["runtime_s"]);
    let start = ranks
        .iter()
        .map(|r| f(&r["start_s"]))
        .fold(f64::MAX, f64::min);
    let end = ranks.iter().map(|r| f(&r["end_s"])).fold(0.0, f64::max);
    assert!(
        (window - (end - start)).abs() < 1e-9,
        "{window} vs {start}..{end}"
    );
    let iops = f(&v["read"]["iops"]) + f(&v["write"]["iops"]);
    assert!((iops - total as f64 / window).abs() < 1e-6 * iops, "{iops}");
    let rate_sum: f64 = ranks.iter().map(|r| f(&r["iops"])).sum();
    assert!(
        rate_sum >= iops * (1.0 - 1e-9),
        "each rank's own window is inside the common one"
    );
    // The files were per rank.
    for r in 0..3 {
        assert!(dir.path().join(format!("f.{r}")).exists());
    }
}

#[test]
fn shared_file_gives_each_rank_its_own_regions() {
    if !have_mpirun("shared_file_gives_each_rank_its_own_regions") {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let file = dir.path().join("shared");
    let out = mpirun(&[
        "io",
        "--mpi",
        "--filename",
        file.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "4M",
        "--offset-increment",
        "4M",
        "--numjobs",
        "2",
        "--json",
    ]);
    let v = json_of(&out);
    let mut starts: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["region_start"].as_u64().unwrap())
        .collect();
    starts.sort();
    let m = 4 << 20;
    assert_eq!(starts, [0, m, 2 * m, 3 * m, 4 * m, 5 * m]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 6 * m);
}

#[test]
fn stonewall_stops_every_rank_close_to_the_first() {
    if !have_mpirun("stonewall_stops_every_rank_close_to_the_first") {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let file = format!("{}/f.%r", dir.path().display());
    let out = mpirun(&[
        "io",
        "--mpi",
        "--stonewall",
        "--filename",
        &file,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "256M",
        "--ioengine",
        "psync",
        "--json",
    ]);
    let v = json_of(&out);
    let m = &v["mpi"];
    assert_eq!(m["stonewall"], true);
    let (first, last) = (f(&m["first_done_s"]), f(&m["last_done_s"]));
    assert!(first > 0.0 && last >= first);
    // Bound in the job's own time: the others stop within half the first one's run (one
    // 2 ms poll plus the I/O in flight when the machine is idle; generous for a busy one).
    assert!(
        last - first <= 0.5 * first,
        "first {first} s, last {last} s"
    );
    let ends: Vec<f64> = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| f(&r["end_s"]))
        .collect();
    assert_eq!(ends.len(), 3);
    assert!(m["first_done_iops"].as_f64().unwrap() >= m["last_done_iops"].as_f64().unwrap());
    let total = v["read"]["ios"].as_u64().unwrap();
    assert!(total > 0 && total <= 3 * 65536, "{total}");
}

#[test]
fn a_rank_with_a_missing_file_fails_the_whole_job() {
    if !have_mpirun("a_rank_with_a_missing_file_fails_the_whole_job") {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    for r in 0..2 {
        std::fs::write(dir.path().join(format!("f.{r}")), vec![0u8; 1 << 20]).unwrap();
    }
    let file = format!("{}/f.%r", dir.path().display());
    let out = mpirun(&["io", "--mpi", "--filename", &file, "--rw", "read"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert_ne!(code, Some(0), "{err}");
    assert_ne!(code, Some(124), "timed out: a rank hung\n{err}");
    assert!(err.contains("rank 2 of 3 on host"), "{err}");
    assert!(err.contains("f.2"), "{err}");
    assert!(out.stdout.is_empty(), "no result is printed");
}

#[test]
fn meta_counts_every_ranks_entries_over_the_common_window() {
    if !have_mpirun("meta_counts_every_ranks_entries_over_the_common_window") {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    // Rank 1 sleeps 3 s at the end of every preparation (the runner step's test hook): meta
    // --mpi runs each workload as the same coordinated step as run --mpi, so the others wait
    // for it at the start barrier and no rank's measured part holds the sleep.
    let out = mpirun_env(
        &["FSBENCH_TEST_PREPARE_DELAY=1:3000"],
        &[
            "meta",
            "--mpi",
            "--dir",
            dir.path().to_str().unwrap(),
            "--workload",
            "smallfiles",
            "--smallfiles",
            "300",
            "--smallfiles-dirs",
            "3",
            "--json",
        ],
    );
    let v = json_of(&out);
    // Rank 0 alone records the all-ranks figures in the history.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("fsbench: history: run ").count(), 1, "{err}");
    let s = &v["samples"][0];
    assert_eq!(s["workload"], "smallfiles");
    assert_eq!(s["entries"], 900);
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    let start = ranks
        .iter()
        .map(|r| f(&r["start_s"]))
        .fold(f64::MAX, f64::min);
    let end = ranks.iter().map(|r| f(&r["end_s"])).fold(0.0, f64::max);
    assert!((f(&s["value"]) - 900.0 / (end - start)).abs() < 1e-6 * f(&s["value"]));
    assert!(
        end - start < 3.0,
        "the slow preparation fell inside the window: {ranks:?}"
    );
    // Every rank removed its own working directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A small `fsbench run --mpi` of workloads `only` in `dir`: I/O jobs of `runtime` on an
/// 8 MiB file, untar of a ~700-entry corpus, 2 rounds.
fn run_args(
    dir: &std::path::Path,
    out: &std::path::Path,
    runtime: &str,
    only: &str,
) -> Vec<String> {
    [
        "run",
        "--mpi",
        "--dir",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--rounds",
        "2",
        "--only",
        only,
        "--file-size",
        "8M",
        "--runtime",
        runtime,
        "--ramp",
        "0s",
        "--corpus-copies",
        "1",
        "--corpus-scale",
        "0.02",
    ]
    .map(String::from)
    .to_vec()
}

/// A fresh directory on tmpfs for the ranks, and OUT (not yet created) in another.
fn scratch() -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let outs = tempfile::tempdir().unwrap();
    let out = outs.path().join("run");
    (dir, outs, out)
}

/// The per-rank figures the aggregate's note lists (`… by rank 0: 12, 1: 30 …`).
fn per_rank(note: &str) -> Vec<u64> {
    let list = note
        .split(" by rank ")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    list.split(", ")
        .map(|kv| kv.split(": ").nth(1).unwrap().parse().unwrap())
        .collect()
}

fn fsbench(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

#[test]
fn run_writes_one_results_file_of_all_ranks_samples() {
    if !have_mpirun("run_writes_one_results_file_of_all_ranks_samples") {
        return;
    }
    let (dir, outs, out) = scratch();
    let store = outs.path().join("history.db");
    let mut args = run_args(dir.path(), &out, "1s", "randread,untar");
    args.extend(["--store".to_string(), store.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // It ends like `run`: rank 0 records the run in the history store, once.
    assert_eq!(err.matches("fsbench: history: run ").count(), 1, "{err}");
    assert!(store.is_file(), "{err}");
    let listed = fsbench(&["history", "--json", "--store", store.to_str().unwrap()]);
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["source"], "run --mpi", "{runs}");
    // Rank 0 speaks for all: one table, one plan summary.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.matches("Headline tests").count(), 1, "{stdout}");
    assert_eq!(err.matches("Estimated time").count(), 1, "{err}");
    // One results file, in OUT; the other ranks wrote nothing there.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".json")).count(),
        2,
        "{names:?}"
    );
    assert!(names.contains(&"results.json".to_string()), "{names:?}");
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // Ends like `run` (commands::ending::finish): what fsbench concluded is saved beside it.
    assert!(
        v["judgements"]["headline"].is_array(),
        "{}",
        v["judgements"]
    );
    let extra = &v["host"]["extra"];
    assert_eq!(extra["mpi_ranks"], "3");
    assert!(extra["mpi_library"].as_str().unwrap().contains("MPI"));
    assert!(extra["mpi_hosts"].as_str().unwrap().ends_with("(3)"));
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    let sample = |wl: &str, metric: &str, round: u64| {
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["workload"] == wl && s["metric"] == metric && s["round"] == round)
            .unwrap_or_else(|| panic!("no {wl} {metric} in round {round}"))["value"]
            .as_f64()
            .unwrap()
    };
    let rank_notes = |wl: &str| -> Vec<Vec<u64>> {
        notes
            .iter()
            .filter(|n| n.starts_with(&format!("{wl}: MPI: 3 ranks")))
            .map(|n| per_rank(n))
            .collect()
    };
    let io = rank_notes("randread");
    let meta = rank_notes("untar");
    assert_eq!((io.len(), meta.len()), (2, 2), "one per round: {notes:?}");
    for round in 1..=2u64 {
        let ranks = &io[round as usize - 1];
        assert_eq!(ranks.len(), 3);
        assert!(ranks.iter().all(|&n| n > 0), "{ranks:?}");
        // The aggregate's merged histogram holds exactly the ranks' I/Os.
        let hist: u64 = v["histograms"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["workload"] == "randread" && h["round"] == round)
            .map(|h| h["count"].as_u64().unwrap())
            .sum();
        assert_eq!(hist, ranks.iter().sum::<u64>(), "round {round}");
        // IOPS = all I/Os over the common window (each rank's is ~1 s), not one rank's rate.
        let iops = sample("randread", "iops", round);
        let window = hist as f64 / iops;
        assert!((0.9..3.0).contains(&window), "window {window} s");
        // Metadata: every rank's entries, over the common window.
        let entries = &meta[round as usize - 1];
        let total = sample("untar", "entries", round);
        assert_eq!(total, entries.iter().sum::<u64>() as f64);
        assert_eq!(
            total,
            3.0 * entries[0] as f64,
            "each rank untars the same corpus"
        );
        let secs = sample("untar", "seconds", round);
        assert!((sample("untar", "ops_per_s", round) - total / secs).abs() < 1e-6 * total / secs);
    }
    // Every rank removed its files.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // report and compare read it as any run.
    let res = out.join("results.json");
    let r = fsbench(&["report", res.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("random read"));
    let c = fsbench(&["compare", "--split-rounds", res.to_str().unwrap()]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let c = fsbench(&["compare", res.to_str().unwrap(), res.to_str().unwrap()]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
}

/// `(start, end)` of each rank's measured part, seconds after the start barrier, from the
/// aggregate's note (`… measured s after the start barrier by rank 0: 0.001–0.210, …`).
fn spans(note: &str) -> Vec<(f64, f64)> {
    note.split("after the start barrier by rank ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|kv| {
            let (a, b) = kv.split(": ").nth(1).unwrap().split_once('–').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_slow_preparation_on_one_rank_stays_out_of_the_measured_window() {
    if !have_mpirun("a_slow_preparation_on_one_rank_stays_out_of_the_measured_window") {
        return;
    }
    let (dir, _outs, out) = scratch();
    let args = run_args(dir.path(), &out, "1s", "untar");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Rank 1 sleeps 3 s at the end of every preparation (a test hook of runner::step): the
    // others wait for it at the start barrier, and no rank's measured part includes it.
    let o = mpirun_env(&["FSBENCH_TEST_PREPARE_DELAY=1:3000"], &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let note = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["message"].as_str().unwrap())
        .find(|n| n.starts_with("untar: MPI: 3 ranks"))
        .expect("the aggregate's note (one per round; the first is checked)");
    let spans = spans(note);
    assert_eq!(spans.len(), 3, "{note}");
    let sample = |metric: &str| {
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["workload"] == "untar" && s["metric"] == metric)
            .unwrap_or_else(|| panic!("no untar {metric}"))["value"]
            .as_f64()
            .unwrap()
    };
    // Every rank, the slow one too, measured from the barrier's release: no rank's measured
    // part holds the 3 s its preparation slept (the untar of ~700 entries on tmpfs takes a
    // small fraction of that).
    let earliest = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let latest = spans.iter().map(|s| s.1).fold(0.0, f64::max);
    assert!(
        latest - earliest < 3.0,
        "the delay fell inside the window: {note}"
    );
    // The aggregate is all ranks' entries over the true common window: the earliest start to
    // the latest end of the ranks' timed parts, which lies inside their measured spans.
    let secs = sample("seconds");
    assert!(
        secs > 0.0 && secs <= latest - earliest + 1e-3,
        "{secs} s in {note}"
    );
    let entries = sample("entries");
    assert_eq!(entries, per_rank(note).iter().sum::<u64>() as f64, "{note}");
    let rate = sample("ops_per_s");
    assert!(
        (rate - entries / secs).abs() < 1e-6 * rate,
        "{rate} vs {entries}/{secs}"
    );
}

#[test]
fn run_refuses_what_does_not_add_up_across_ranks() {
    if !have_mpirun("run_refuses_what_does_not_add_up_across_ranks") {
        return;
    }
    let (dir, _outs, out) = scratch();
    let args = run_args(dir.path(), &out, "1s", "randread,probe-reflink");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_ne!(o.status.code(), Some(124), "timed out\n{err}");
    assert!(
        err.contains("probe-reflink cannot run under --mpi"),
        "{err}"
    );
    assert!(!out.exists(), "nothing created");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // --until-settled is refused (exit 2, its reason) until the ranks can judge together.
    let mut args = run_args(dir.path(), &out, "1s", "randread");
    args.push("--until-settled".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--until-settled") && err.contains("--mpi"),
        "{err}"
    );
    assert!(!out.exists(), "nothing created");
}

#[test]
fn interrupting_mpirun_leaves_no_files() {
    if !have_mpirun("interrupting_mpirun_leaves_no_files") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, _outs, out) = scratch();
    let mut child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "3"])
        .arg(common::BIN)
        .args(run_args(dir.path(), &out, "20s", "randread,untar"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt while the ranks run the I/O job (its file is laid out).
    let started = std::time::Instant::now();
    let laid_out = || {
        walk(dir.path())
            .iter()
            .filter(|p| p.ends_with("fsbench.dat"))
            .count()
            == 3
    };
    while !laid_out() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let interrupted_in_time = laid_out();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(interrupted_in_time, "the ranks never laid out their files");
    let status = status.expect("mpirun did not end after SIGINT");
    assert!(!status.success());
    let left = walk(dir.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn walk(d: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all.extend(walk(&p));
        }
        all.push(p);
    }
    all
}

/// Unmounts the tmpfs it names when dropped.
struct Tmpfs(std::path::PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Directories `0`, `1` and `2` under `dir`, the last a tmpfs of 64 inodes (unmounted when
/// the guard drops).
fn rank_dirs_with_a_small_last(dir: &std::path::Path) -> Tmpfs {
    for r in 0..3 {
        std::fs::create_dir(dir.join(r.to_string())).unwrap();
    }
    let small = dir.join("2");
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64m,nr_inodes=64", "tmpfs"])
        .arg(&small)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount tmpfs");
    Tmpfs(small)
}

#[test]
fn a_rank_that_runs_out_of_space_fails_the_workload_on_every_rank() {
    if !common::privileged("mpi::a_rank_that_runs_out_of_space_fails_the_workload_on_every_rank")
        .root()
        .tools(&["mpirun", "mount", "umount"])
        .ok()
    {
        return;
    }
    let (dir, _outs, out) = scratch();
    // Rank 2's directory is a tmpfs of 64 inodes: its untar of ~700 entries hits ENOSPC.
    let _mounted = rank_dirs_with_a_small_last(dir.path());
    let per_rank = dir.path().join("%r");
    let args = run_args(&per_rank, &out, "1s", "untar");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_ne!(o.status.code(), Some(124), "timed out: a rank hung\n{err}");
    assert!(err.contains("rank 2 of 3 on host"), "{err}");
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // The workload failed in both rounds (the run went on), for every rank, said once.
    let failures = v["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{err}");
    for f in failures {
        assert_eq!(f["workload"], "untar");
        let why = f["error"].as_str().unwrap();
        assert!(why.starts_with("rank 2 of 3 on host"), "{why}");
        assert!(!why.contains("rank 0") && !why.contains("rank 1"), "{why}");
    }
    // No aggregate of a workload that failed on one rank.
    assert!(
        !v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["workload"] == "untar"),
        "{v}"
    );
    for r in 0..3 {
        let d = dir.path().join(r.to_string());
        assert_eq!(
            walk(&d),
            Vec::<std::path::PathBuf>::new(),
            "rank {r} left files"
        );
    }
}

#[test]
fn meta_lists_a_workload_that_failed_on_one_rank_and_runs_the_next() {
    if !common::privileged("mpi::meta_lists_a_workload_that_failed_on_one_rank_and_runs_the_next")
        .root()
        .tools(&["mpirun", "mount", "umount"])
        .ok()
    {
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    // Rank 2's directory is a tmpfs of 64 inodes: its untar of ~700 entries hits ENOSPC, its
    // 30 small files fit.
    let _mounted = rank_dirs_with_a_small_last(dir.path());
    let per_rank = dir.path().join("%r");
    let o = mpirun(&[
        "meta",
        "--mpi",
        "--dir",
        per_rank.to_str().unwrap(),
        "--workload",
        "untar,smallfiles",
        "--corpus-scale",
        "0.02",
        "--corpus-copies",
        "1",
        "--smallfiles",
        "30",
        "--smallfiles-dirs",
        "3",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Every rank recorded the failure and exits 1 (none aborted, none hung).
    assert_eq!(o.status.code(), Some(1), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("rank 0 prints one JSON report");
    let failures = v["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{v}");
    assert_eq!(failures[0]["workload"], "untar");
    let why = failures[0]["error"].as_str().unwrap();
    assert!(why.starts_with("rank 2 of 3 on host"), "{why}");
    // The next workload ran on every rank, and the failed one has no row.
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 1, "{v}");
    assert_eq!(samples[0]["workload"], "smallfiles");
    assert_eq!(samples[0]["entries"], 90);
    assert_eq!(v["ranks"].as_array().unwrap().len(), 3);
    for r in 0..3 {
        let d = dir.path().join(r.to_string());
        assert_eq!(
            walk(&d),
            Vec::<std::path::PathBuf>::new(),
            "rank {r} left files"
        );
    }
}
