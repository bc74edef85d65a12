//! fsbench under MPI: `mpirun -np 3` on /tmp. Built only with `--features mpi`.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::process::{Command, Output};

/// mpirun is a prerequisite: missing, the test fails under FSBENCH_REQUIRE_PRIVILEGED=1 (CI)
/// and is skipped otherwise.
fn have_mpirun() -> bool {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("FSBENCH_REQUIRE_PRIVILEGED").is_none(),
            "mpirun is missing (install openmpi-bin)"
        );
        eprintln!("skipped: mpirun is missing");
    }
    ok
}

/// One mpirun at a time: concurrent Open MPI jobs race on their session directory in /tmp,
/// and ranks of different tests would compete for the two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `fsbench <args>` as 3 MPI ranks, under a timeout so a hang fails the test instead.
fn mpirun(args: &[&str]) -> Output {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Command::new("timeout")
        .args([
            "-k",
            "10",
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
        ])
        .args(["-np", "3", env!("CARGO_BIN_EXE_fsbench")])
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
    if !have_mpirun() {
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
    if !have_mpirun() {
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
    if !have_mpirun() {
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
    if !have_mpirun() {
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
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let out = mpirun(&[
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
    ]);
    let v = json_of(&out);
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
    // Every rank removed its own working directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
