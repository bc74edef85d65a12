//! The history store end to end: real runs on loop-attached images recorded into SQLite and
//! into a PostgreSQL server the test starts (the pgbench workload's `PgServer`), `history`,
//! `compare --against last`, `trend`, two runs finishing together, a store that cannot be
//! written, a password that must leak nowhere, and `history check` on planted histories.
//!
//! Every run here names its own store (`FSBENCH_STORE` in a temporary directory); the other
//! test binaries' runs go to `common::TEST_STORE` under `target/tmp` (`common::bin` sets it).

mod common;

use fsbench::metrics::registry::SECONDS;
use fsbench::results::{Results, Sample, SetupInfo};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fsbench"));
    // What the developer's shell may have set must not redirect or complete the store.
    for v in [
        "FSBENCH_STORE",
        "PGPASSWORD",
        "PGSERVICE",
        "PGPASSFILE",
        "PGHOST",
        "PGUSER",
    ] {
        c.env_remove(v);
    }
    // A test that looks at a store names its own; every other run records into the tests'.
    c.env(common::STORE_VAR, common::TEST_STORE);
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs that check for their own leftovers go one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tiny real run: ext4 on a 256 MiB image, randread 1 s, two rounds.
fn tiny_run(scratch: &Path, out: &Path) -> Command {
    let mut c = bin();
    c.args(["run", "--yes", "--fs", "ext4", "--only", "randread"])
        .args([
            "--image-size",
            "256M",
            "--file-size",
            "16M",
            "--rounds",
            "2",
        ])
        .args(common::QUICK)
        .arg("--scratch-dir")
        .arg(scratch)
        .arg("--out")
        .arg(out);
    c
}

fn history(store: &str, args: &[&str]) -> Output {
    bin()
        .env("FSBENCH_STORE", store)
        .args(args)
        .output()
        .unwrap()
}

fn run_ids(store: &str) -> Vec<i64> {
    let o = history(store, &["history", "list", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// Two runs, then list, compare --against last, trend (text and HTML), export.
fn two_runs_then_look(store: &str, env: &[(&str, &str)], extra: &[&str], scratch: &Path) {
    for i in 1..=2 {
        let out = scratch.join(format!("out{i}"));
        let o = tiny_run(scratch, &out)
            .envs(env.iter().copied())
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert!(out.join("results.json").is_file());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("fsbench: history: run "), "{err}");
    }
    let look = |args: &[&str]| {
        let o = bin()
            .envs(env.iter().copied())
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let list = look(&["history"]);
    assert_eq!(list.matches(" ext4 ").count(), 2, "{list}");
    assert!(list.contains("store: "), "{list}");
    let ids = {
        let o = bin()
            .envs(env.iter().copied())
            .args(["history", "--json"])
            .args(extra)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids.len(), 2, "{ids:?}");
    let (newer, older) = (ids[0], ids[1]);
    let cmp = look(&["compare", "--against", "last"]);
    assert!(cmp.contains(&format!("A = run {older} ")), "{cmp}");
    assert!(cmp.contains(&format!("B = run {newer} ")), "{cmp}");
    assert!(cmp.contains("randread iops"), "{cmp}");
    // B as a file: the same pair.
    let b = scratch.join("out2/results.json");
    let cmp_file = look(&["compare", "--against", "last", b.to_str().unwrap()]);
    assert!(
        cmp_file.contains(&format!("A = run {older} ")),
        "{cmp_file}"
    );
    let html = scratch.join("trend.html");
    let trend = look(&[
        "history",
        "trend",
        "--setup",
        "ext4",
        "--workload",
        "randread",
        "--metric",
        "iops",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(trend.contains("2 runs"), "{trend}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("class=\"median\"").count(), 2, "{page}");
    // export gives the results back: the same samples and setups as the file the run wrote.
    let exported = look(&["history", "export", &newer.to_string()]);
    let back: Results = serde_json::from_str(&exported).unwrap();
    let file = Results::load(&b).unwrap();
    assert_eq!(back.samples, file.samples);
    assert_eq!(back.setups, file.setups);
    // show: values in their units through the report's table (no raw floats).
    let shown = look(&["history", "show", &newer.to_string()]);
    assert!(shown.contains("Summary (median"), "{shown}");
    assert!(shown.contains("│ ext4 "), "{shown}");
    assert!(!shown.contains(".0000"), "{shown}");
    let _ = store;
}

/// Nothing of the test's own left attached under `scratch`.
fn assert_released(scratch: &Path) {
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(
        !loops.contains(scratch.to_str().unwrap()),
        "loop devices left: {loops}"
    );
}

#[test]
fn sqlite_store_two_runs_history_compare_trend() {
    if !common::privileged("history::sqlite_store_two_runs_history_compare_trend")
        .loop_devices()
        .tools(&["mkfs.ext4"])
        .ok()
    {
        return;
    }
    let _g = serial();
    let scratch = tempfile::tempdir().unwrap();
    let store = common::temp_store(scratch.path());
    let s = store.to_str().unwrap();
    two_runs_then_look(s, &[("FSBENCH_STORE", s)], &[], scratch.path());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&store).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the store is readable by others: {mode:o}");
    assert_released(scratch.path());
}

#[test]
fn two_runs_finishing_together_both_land() {
    if !common::privileged("history::two_runs_finishing_together_both_land")
        .loop_devices()
        .tools(&["mkfs.ext4"])
        .ok()
    {
        return;
    }
    let _g = serial();
    let scratch = tempfile::tempdir().unwrap();
    let store = common::temp_store(scratch.path());
    let s = store.to_str().unwrap();
    let children: Vec<_> = (1..=2)
        .map(|i| {
            tiny_run(scratch.path(), &scratch.path().join(format!("out{i}")))
                .env("FSBENCH_STORE", s)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("fsbench: history: run "),
            "{}",
            text(&o)
        );
    }
    assert_eq!(run_ids(s).len(), 2);
    assert_released(scratch.path());
}

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, opts: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "fsbench-test"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_store_that_cannot_be_written_costs_the_run_nothing() {
    if !common::privileged("history::a_store_that_cannot_be_written_costs_the_run_nothing")
        .loop_devices()
        .tools(&["mkfs.ext4", "mount", "umount"])
        .ok()
    {
        return;
    }
    let _g = serial();
    let scratch = tempfile::tempdir().unwrap();
    let ro = Tmpfs::mount(&scratch.path().join("ro"), "ro,size=1M");
    let full = Tmpfs::mount(&scratch.path().join("full"), "size=64k");
    // Fill it: the store file can be created (an inode), but no page of it written.
    let _ = std::fs::write(full.0.join("filler"), vec![0u8; 1 << 20]);
    for (what, store) in [
        ("read-only", ro.0.join("history.db")),
        ("full", full.0.join("history.db")),
    ] {
        let out = scratch.path().join(format!("out-{what}"));
        let o = tiny_run(scratch.path(), &out)
            .env("FSBENCH_STORE", &store)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{what}: {}", text(&o));
        assert!(out.join("results.json").is_file(), "{what}");
        assert!(out.join("report.html").is_file(), "{what}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("was not recorded in the history store"),
            "{what}: {err}"
        );
        assert!(err.contains("fsbench history import"), "{what}: {err}");
    }
    drop((ro, full));
    assert_released(scratch.path());
}

/// A private PostgreSQL server with a role `fsb` that logs in with a password only.
struct Pg {
    server: fsbench::workload::pgbench::server::PgServer,
    _dir: tempfile::TempDir,
    url: String,
}

const SECRET: &str = "Xq7-history-s3cret";

fn start_pg() -> Result<Pg, String> {
    use fsbench::workload::pgbench::server as pg;
    let bins = pg::Binaries::find()?;
    let user = pg::server_user()?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let timeout = std::time::Duration::from_secs(60);
    pg::init_cluster(&bins, user, &data, timeout).map_err(|e| e.to_string())?;
    let config = pg::ServerConfig {
        shared_buffers: 16 << 20,
        extra: Vec::new(),
        timeout,
    };
    let server = pg::PgServer::start(&bins, user, &data, &config).map_err(|e| e.to_string())?;
    server
        .sql(&format!("CREATE ROLE fsb LOGIN PASSWORD '{SECRET}'"))
        .map_err(|e| e.to_string())?;
    server
        .sql("CREATE DATABASE fsb OWNER fsb")
        .map_err(|e| e.to_string())?;
    // fsb must give its password; the superuser keeps trust for the test's own psql.
    let hba = data.join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).map_err(|e| e.to_string())?;
    std::fs::write(&hba, format!("local all fsb scram-sha-256\n{old}"))
        .map_err(|e| e.to_string())?;
    server
        .sql("SELECT pg_reload_conf()")
        .map_err(|e| e.to_string())?;
    let args = server.connect_args();
    let url = format!("postgresql://fsb@/fsb?host={}&port={}", args[1], args[3]);
    Ok(Pg {
        server,
        _dir: dir,
        url,
    })
}

/// Every file below `dir` that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                hits.push(p);
            }
        }
    }
    hits
}

/// Watch every process's command line until `stop`; what contained the secret.
fn watch_ps(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut scans = 0u32;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) || scans == 0 {
            let o = Command::new("ps")
                .args(["-eww", "-o", "pid=,args="])
                .output();
            if let Ok(o) = o {
                for l in String::from_utf8_lossy(&o.stdout).lines() {
                    if l.contains(SECRET) {
                        seen.push(l.to_string());
                    }
                }
            }
            scans += 1;
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(scans > 1, "ps was never scanned during the runs");
        seen
    })
}

#[test]
fn postgres_store_with_a_password_that_leaks_nowhere() {
    if !common::privileged("history::postgres_store_with_a_password_that_leaks_nowhere")
        .loop_devices()
        .tools(&["mkfs.ext4", "ps"])
        .need(
            "PostgreSQL server binaries (postgresql package)",
            fsbench::workload::pgbench::server::Binaries::find().is_ok(),
        )
        .ok()
    {
        return;
    }
    let _g = serial();
    let pg = start_pg().unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let scratch = tempfile::tempdir().unwrap();
    // The password in --store is refused before anything runs, and not echoed.
    let with_pw = pg.url.replace("fsb@", &format!("fsb:{SECRET}@"));
    let o = tiny_run(scratch.path(), &scratch.path().join("refused"))
        .args(["--store", &with_pw])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!text(&o).contains(SECRET), "{}", text(&o));
    assert!(!scratch.path().join("refused").exists());
    // No password at all: the server refuses, the run still succeeds with a warning.
    let o = tiny_run(scratch.path(), &scratch.path().join("nopw"))
        .args(["--store", &pg.url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("was not recorded"), "{}", text(&o));

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = watch_ps(stop.clone());
    // Run 1 and the readers get it from PGPASSWORD, run 2 from a password file.
    let pwfile = scratch.path().join("pw");
    std::fs::write(&pwfile, format!("{SECRET}\n")).unwrap();
    let store_flag = ["--store", pg.url.as_str()];
    two_runs_then_look(
        &pg.url,
        &[("PGPASSWORD", SECRET)],
        &store_flag,
        scratch.path(),
    );
    let o = tiny_run(scratch.path(), &scratch.path().join("out3"))
        .args(store_flag)
        .arg("--store-password-file")
        .arg(&pwfile)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains(SECRET));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(seen.is_empty(), "the password was in ps: {seen:?}");
    // Three runs in the database, none of its rows holding the password.
    let n = pg
        .server
        .sql("SELECT count(*) FROM fsbench_runs")
        .map(|s| s.trim().to_string());
    let n = n.or_else(|_| {
        // The tables are fsb's, in database fsb.
        let mut c = pg.server.client("psql");
        let o = c
            .args([
                "-X",
                "-A",
                "-t",
                "-d",
                "fsb",
                "-c",
                "SELECT count(*) FROM fsbench_runs",
            ])
            .output()
            .unwrap();
        Ok::<_, String>(String::from_utf8_lossy(&o.stdout).trim().to_string())
    });
    assert_eq!(n.unwrap(), "3");
    let mut c = pg.server.client("psql");
    let o = c
        .args(["-X", "-A", "-t", "-d", "fsb", "-c"])
        .arg(format!(
            "SELECT count(*) FROM fsbench_runs WHERE results_json LIKE '%{SECRET}%' OR \
             results_dir LIKE '%{SECRET}%'"
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "0",
        "{}",
        text(&o)
    );
    // No file fsbench wrote (results, reports, journal, trend page) holds it; the password
    // file the test wrote is the one expected hit.
    let hits: Vec<_> = files_containing(scratch.path(), SECRET)
        .into_iter()
        .filter(|p| p != &pwfile)
        .collect();
    assert!(hits.is_empty(), "the password is in {hits:?}");
    drop(pg);
    assert_released(scratch.path());
}

/// A results file of one run: setups ext4 and xfs, workload untar, three rounds of seconds.
fn synthetic(i: usize, ext4_factor: f64) -> Results {
    let mut r = Results::new();
    r.started_at = format!("2026-11-{:02}T10:00:00Z", i + 1);
    r.finished_at = r.started_at.clone();
    r.host.hostname = "box".into();
    r.host.kernel = "6.18.0".into();
    r.host.extra.insert("plan".into(), "quick".into());
    r.target.kind = "image".into();
    r.target.size_bytes = 8 << 30;
    r.target.extra.insert("backing_fs".into(), "ext4".into());
    for name in ["ext4", "xfs"] {
        r.setups.push(SetupInfo {
            name: name.into(),
            fs: name.into(),
            ..Default::default()
        });
    }
    for (setup, base) in [("ext4", 10.0 * ext4_factor), ("xfs", 12.0)] {
        for round in 1..=3u32 {
            // ±2 % wobble, deterministic so the test cannot flake.
            let k = ((i * 31 + round as usize * 17 + setup.len() * 7) % 11) as f64 / 10.0;
            r.samples.push(Sample {
                setup: setup.into(),
                workload: "untar".into(),
                metric: SECONDS.into(),
                unit: "s".into(),
                round,
                value: base * (0.98 + 0.04 * k),
            });
        }
    }
    r
}

#[test]
fn check_flags_a_planted_regression_and_not_an_aa_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::temp_store(dir.path());
    let s = store.to_str().unwrap();
    let mut paths = Vec::new();
    for i in 0..6 {
        let d = dir.path().join(format!("r{i}"));
        std::fs::create_dir(&d).unwrap();
        synthetic(i, 1.0).save(&d.join("results.json")).unwrap();
        paths.push(d);
    }
    let mut args = vec!["history".to_string(), "import".to_string()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let o = bin().env("FSBENCH_STORE", s).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Importing again records nothing twice.
    let o = bin().env("FSBENCH_STORE", s).args(&args).output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is already run"),
        "{}",
        text(&o)
    );
    assert_eq!(run_ids(s).len(), 6);
    // A/A: six runs of the same setups, only noise.
    let o = history(s, &["history", "check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 regressed"),
        "{}",
        text(&o)
    );
    // The seventh run: ext4 30 % slower, xfs unchanged.
    let d = dir.path().join("r6");
    std::fs::create_dir(&d).unwrap();
    synthetic(6, 1.3).save(&d.join("results.json")).unwrap();
    let o = history(s, &["history", "import", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = history(s, &["history", "check", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reg = v["regressions"].as_array().unwrap();
    assert_eq!(reg.len(), 1, "{v}");
    assert_eq!(reg[0]["setup"], "ext4");
    assert_eq!(reg[0]["metric"], "seconds");
    let pct = reg[0]["pct"].as_f64().unwrap();
    assert!((25.0..35.0).contains(&pct), "{pct}");
    assert!(v["improvements"].as_array().unwrap().is_empty(), "{v}");
    // The table form names it too.
    let o = history(s, &["history", "check"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1 regressed"),
        "{}",
        text(&o)
    );
}

#[test]
fn tests_never_record_into_the_real_store() {
    // Every way a test starts fsbench names the tests' store (tests/common/proc.rs).
    let store_of = |c: &Command| {
        c.get_envs()
            .find(|(k, _)| *k == common::STORE_VAR)
            .and_then(|(_, v)| v)
            .map(|v| v.to_string_lossy().into_owned())
    };
    for (what, c) in [("common::bin", common::bin()), ("history's bin", bin())] {
        let store = store_of(&c).unwrap_or_else(|| panic!("{what} sets no store"));
        assert!(
            store.ends_with("target/tmp/test-history.db"),
            "{what}: {store}"
        );
    }
    // `cargo run` is the user's: the cargo configuration sets no store for it.
    let cfg = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.cargo/config.toml"))
        .unwrap_or_default();
    assert!(
        !cfg.lines()
            .any(|l| l.trim_start().starts_with("FSBENCH_STORE")),
        "{cfg}"
    );
}

#[test]
fn bad_store_input_is_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = bin()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--store", "postgresql://u:pw@localhost/db", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!out.exists());
    let o = history(
        dir.path().join("missing.db").to_str().unwrap(),
        &["history", "show", "1"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = history(
        dir.path().join("missing.db").to_str().unwrap(),
        &["history"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no runs recorded yet"));
}

/// `fsbench plan` reads the store for the device it would measure: nothing before a run of it
/// is recorded, then each headline row's paired noise and whether the planned rounds settle it
/// at ±10 % (runs recorded as `fsbench run` records them: the identity enriched on this host).
#[test]
fn plan_estimates_the_noise_from_the_same_devices_history() {
    let scratch = tempfile::tempdir().unwrap();
    let store = scratch.path().join("plan-history.db");
    let plan = || {
        let o = bin()
            .env("FSBENCH_STORE", &store)
            .args(["plan", "--fs", "ext4,xfs", "--only", "randread"])
            .args([
                "--image-size",
                "512M",
                "--file-size",
                "16M",
                "--rounds",
                "3",
            ])
            .arg("--scratch-dir")
            .arg(scratch.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let before = plan();
    assert!(
        before.contains("Noise: no history for this device (image "),
        "{before}"
    );
    assert!(!store.exists(), "plan must not create the store");
    let image = fsbench::scratch::TargetKind::Image {
        scratch_dir: scratch.path().to_path_buf(),
        size: 512 << 20,
        keep: false,
    };
    // xfs wobbles 2 % and 4 % round to round against a steady ext4.
    for (i, wobble) in [0.02, 0.04].into_iter().enumerate() {
        let mut r = Results::new();
        r.started_at = format!("2026-12-0{}T10:00:00Z", i + 1);
        r.host.hostname = "planner".into();
        r.target = fsbench::report::history_noise::planned_target(&image).unwrap();
        fsbench::history::identity::enrich(&mut r);
        for name in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: name.into(),
                fs: name.into(),
                ..Default::default()
            });
        }
        for round in 1..=4u32 {
            let w = if round % 2 == 0 {
                1.0 + wobble
            } else {
                1.0 - wobble
            };
            for (setup, v) in [("ext4", 100.0), ("xfs", 90.0 * w)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "randread".into(),
                    metric: fsbench::metrics::registry::IOPS.into(),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                });
            }
        }
        let dir = scratch.path().join(format!("run{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        r.save(&dir.join("results.json")).unwrap();
        let o = bin()
            .env("FSBENCH_STORE", &store)
            .args(["history", "import"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let after = plan();
    assert!(
        after.contains("Noise (history: 2 run(s) of image "),
        "{after}"
    );
    assert!(
        after.contains("3 round(s) can settle 1 of 1: 4K random read"),
        "{after}"
    );
}
