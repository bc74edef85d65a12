//! End-to-end tests of the application workloads (pgbench on a private PostgreSQL server,
//! SQLite) through the real binary, on loop images formatted ext4 and xfs.
//!
//! Privileged tests need root, loop devices, mkfs.ext4/mkfs.xfs and PostgreSQL. Without them
//! they print `skipped: <reason>`; with `FSBENCH_REQUIRE_PRIVILEGED=1` (CI) they fail instead.
//! Each test gives the child its own TMPDIR (where the server's socket directory goes) and its
//! own scratch directory, so "nothing left behind" is checked on resources that are ours alone.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{bin, have, serial, stderr};

fn postgres_bindir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("postgres").is_file() && d.join("pgbench").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// `None` when the test can run; otherwise why not.
fn missing(tools: &[&str], postgres: bool) -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("needs root (loop devices, mkfs, mount)".into());
    }
    for t in tools {
        if !have(t) {
            return Some(format!("{t} is not installed"));
        }
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    if postgres && postgres_bindir().is_none() {
        return Some("PostgreSQL (postgres, pgbench) is not installed".into());
    }
    None
}

/// Skip (print) or, when CI requires privileged tests, fail.
fn skip_or_fail(why: &str) {
    if std::env::var_os("FSBENCH_REQUIRE_PRIVILEGED").is_some_and(|v| v == "1") {
        panic!("privileged test cannot run: {why}");
    }
    println!("skipped: {why}");
}

/// A scratch directory the server user can traverse, with a TMPDIR inside it.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    (d, tmp)
}

/// Loop devices backed by files under `scratch`, mounts of the child, server processes whose
/// data directory is under the child's mounts, entries left in the child's TMPDIR.
fn leftovers(scratch: &Path, tmp: &Path, child_pid: u32) -> Vec<String> {
    let mut found = common::leftovers(scratch, Some(child_pid));
    let s = scratch.to_string_lossy().into_owned();
    let ours = format!("/run/fsbench/{child_pid}-");
    let pg = Command::new("pgrep")
        .args(["-a", "-u", "postgres"])
        .output()
        .unwrap();
    found.extend(
        String::from_utf8_lossy(&pg.stdout)
            .lines()
            .filter(|l| l.contains(&ours) || l.contains(&s))
            .map(|l| format!("process: {l}")),
    );
    found.extend(
        std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .map(|e| format!("tmp: {}", e.path().display())),
    );
    found
}

fn load_results(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text).expect("results.json is JSON")
}

fn run_args(plan: &Path, scratch: &Path, out: &Path, fs: &str) -> Vec<String> {
    [
        "run",
        "--yes",
        "--plan",
        plan.to_str().unwrap(),
        "--fs",
        fs,
        "--image-size",
        "1G",
        "--quiet-window",
        "1s",
        "--quiet-timeout",
        "20s",
        "--seed",
        "11",
        "--scratch-dir",
        scratch.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn bad_app_parameters_exit_2_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    let mut cases = vec![
        ("[[workload]]\nid='pgbench-rw'\nscale=0\n", "scale = 0"),
        ("[[workload]]\nid='pgbench-ro'\nclients=0\n", "clients = 0"),
        (
            "[[workload]]\nid='pgbench-rw'\nclients=2\nthreads=3\n",
            "threads = 3",
        ),
        (
            "[[workload]]\nid='pgbench-rw'\nsettings={ port = 1 }\n",
            "settings.port",
        ),
        (
            "[[workload]]\nid='sqlite-wal'\ntransactions=0\n",
            "transactions = 0",
        ),
        ("[[workload]]\nid='sqlite-wal'\nscale=3\n", "scale"),
    ];
    // Names are checked against the installed server's own list.
    if postgres_bindir().is_some() {
        cases.push((
            "[[workload]]\nid='pgbench-rw'\nsettings={ wrok_mem = '8MB' }\n",
            "wrok_mem",
        ));
    }
    for (i, (text, needle)) in cases.iter().enumerate() {
        let plan = d.path().join(format!("bad{i}.toml"));
        std::fs::write(&plan, text).unwrap();
        let scratch = d.path().join(format!("s{i}"));
        std::fs::create_dir(&scratch).unwrap();
        let out = scratch.join("out");
        let o = bin()
            .args(run_args(&plan, &scratch, &out, "ext4"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: expected exit 2:\n{err}");
        assert!(
            err.contains(needle),
            "{text}: stderr lacks '{needle}':\n{err}"
        );
        assert_eq!(
            std::fs::read_dir(&scratch).unwrap().count(),
            0,
            "{text}: something was created"
        );
    }
}

/// Without a server the pgbench workloads are skipped with a note; the rest of the run goes on.
#[test]
fn a_missing_server_skips_pgbench_and_runs_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("p.toml");
    std::fs::write(
        &plan,
        "name='p'\nrounds=1\n[[workload]]\nid='pgbench-rw'\n[[workload]]\nid='sqlite-wal'\ntransactions=5\npreload=10\n",
    )
    .unwrap();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = d.path().join("out");
    let o = bin()
        .args(["run", "--plan", plan.to_str().unwrap(), "--dir"])
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .env("FSBENCH_PG_BINDIR", d.path().join("no-postgres-here"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("workload pgbench-rw skipped: no PostgreSQL server"),
        "{err}"
    );
    let r = load_results(&out);
    let samples = r["samples"].as_array().unwrap();
    assert!(samples.iter().any(|s| s["workload"] == "sqlite-wal"));
    assert!(!samples.iter().any(|s| s["workload"] == "pgbench-rw"));
    assert!(r["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .unwrap()
            .contains("pgbench-rw skipped")
    }));
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work dir cleaned"
    );
}

#[test]
fn pgbench_and_sqlite_on_ext4_and_xfs() {
    let _serial = serial();
    if let Some(why) = missing(&["losetup", "mkfs.ext4", "mkfs.xfs"], true) {
        return skip_or_fail(&why);
    }
    let (scratch, tmp) = scratch();
    let plan = scratch.path().join("apps.toml");
    // pgbench-broken cannot start (a preload library that does not exist): that step fails
    // with the server log's reason and the run goes on with sqlite.
    std::fs::write(
        &plan,
        r#"
        name = "apps"
        rounds = 1
        runtime = "3s"
        [[workload]]
        id = "pgbench-rw"
        scale = 1
        clients = 4
        threads = 2
        [[workload]]
        id = "pgbench-ro"
        scale = 1
        clients = 4
        threads = 2
        [[workload]]
        id = "pgbench-broken"
        kind = "pgbench"
        scale = 1
        clients = 1
        threads = 1
        settings = { shared_preload_libraries = "fsbench_no_such_library" }
        [[workload]]
        id = "sqlite-wal"
        transactions = 50
        [[workload]]
        id = "sqlite-delete"
        transactions = 50
        "#,
    )
    .unwrap();
    let out = scratch.path().join("out");
    let child = bin()
        .args(run_args(&plan, scratch.path(), &out, "ext4,xfs"))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    // Exit 1: a step (pgbench-broken) failed, and the run went on to the end.
    assert_eq!(o.status.code(), Some(1), "run failed:\n{err}");
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    let samples = r["samples"].as_array().unwrap();
    let value = |setup: &str, w: &str, m: &str| {
        samples
            .iter()
            .find(|s| s["setup"] == setup && s["workload"] == w && s["metric"] == m)
            .and_then(|s| s["value"].as_f64())
    };
    let pg_metrics = [
        "tps",
        "transactions",
        "failed_transactions",
        "lat_mean_ms",
        "lat_p50_ms",
        "lat_p95_ms",
        "lat_p99_ms",
        "init_seconds",
        "wal_bytes",
        "data_bytes",
        "device_write_bytes",
        "write_amplification",
        "cpu_server_s",
        "cpu_client_s",
        "system_cpu_util",
    ];
    let sqlite_metrics = [
        "tx_per_s",
        "lat_mean_ms",
        "lat_p50_ms",
        "lat_p95_ms",
        "lat_p99_ms",
        "fsyncs",
        "fsyncs_per_tx",
        "dir_fsyncs",
        "device_write_bytes",
        "device_flushes",
    ];
    for setup in ["ext4", "xfs"] {
        for w in ["pgbench-rw", "pgbench-ro"] {
            for m in pg_metrics {
                assert!(
                    value(setup, w, m).is_some(),
                    "{setup}/{w}: {m} missing; failures: {}",
                    r["failures"]
                );
            }
            assert!(value(setup, w, "tps").unwrap() > 0.0, "{setup}/{w}: tps");
            assert!(value(setup, w, "transactions").unwrap() > 0.0);
        }
        // A read-write run writes WAL and the device sees it.
        assert!(value(setup, "pgbench-rw", "wal_bytes").unwrap() > 0.0);
        assert!(value(setup, "pgbench-rw", "device_write_bytes").unwrap() > 0.0);
        for w in ["sqlite-wal", "sqlite-delete"] {
            for m in sqlite_metrics {
                assert!(value(setup, w, m).is_some(), "{setup}/{w}: {m} missing");
            }
            assert!(value(setup, w, "fsyncs").unwrap() >= 50.0, "{setup}/{w}");
        }
        let broken: Vec<&serde_json::Value> = r["failures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["setup"] == setup && f["workload"] == "pgbench-broken")
            .collect();
        assert_eq!(broken.len(), 1, "{setup}: failures {}", r["failures"]);
        let why = broken[0]["error"].as_str().unwrap();
        assert!(
            why.contains("fsbench_no_such_library"),
            "the failure carries the server log's reason: {why}"
        );
    }
    assert_eq!(
        r["failures"].as_array().unwrap().len(),
        2,
        "only the broken server fails: {}",
        r["failures"]
    );
    let left = leftovers(scratch.path(), &tmp, pid);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn sigint_during_pgbench_leaves_no_server_behind() {
    let _serial = serial();
    if let Some(why) = missing(&["losetup", "mkfs.ext4"], true) {
        return skip_or_fail(&why);
    }
    let (scratch, tmp) = scratch();
    let plan = scratch.path().join("long.toml");
    std::fs::write(
        &plan,
        "name='long'\nrounds=1\n[[workload]]\nid='pgbench-rw'\nscale=1\nclients=2\nthreads=1\nduration='60s'\n",
    )
    .unwrap();
    let out = scratch.path().join("out");
    let child = bin()
        .args(run_args(&plan, scratch.path(), &out, "ext4"))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the measured run: a pgbench client whose command line holds -T 60.
    let t0 = Instant::now();
    loop {
        let o = Command::new("pgrep")
            .args(["-a", "-P", &pid.to_string()])
            .output()
            .unwrap();
        let kids = String::from_utf8_lossy(&o.stdout).into_owned();
        if kids
            .lines()
            .any(|l| l.contains("pgbench") && l.contains("-T 60"))
        {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "the pgbench step never started; children: {kids}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
    let left = leftovers(scratch.path(), &tmp, pid);
    assert!(left.is_empty(), "left behind after SIGINT: {left:?}");
}
