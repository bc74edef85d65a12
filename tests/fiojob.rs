//! `--fio-job`: the user's fio job files, through the real binary.
//!
//! Refusals need nothing but the binary. Running needs fio; the loop-image test needs root,
//! mkfs.ext4, mkfs.xfs and fio. Without them a test prints `skipped: <reason>`, unless
//! FSBENCH_REQUIRE_PRIVILEGED=1 (CI), where a missing prerequisite fails it.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{stderr, stdout};

fn bin() -> Command {
    let mut c = common::bin();
    // The fixtures read ${FIOJOB_SIZE} and ${FIOJOB_BS}.
    c.env("FIOJOB_SIZE", "8m").env("FIOJOB_BS", "64k");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio-jobs")
        .join(name)
}

/// `true` when the test may run (root and loop devices when `root`, and `tools`); otherwise
/// `tests/common` prints `skipped:` (or fails under FSBENCH_REQUIRE_PRIVILEGED=1).
#[track_caller]
fn prerequisites(root: bool, tools: &[&str]) -> bool {
    let at = std::panic::Location::caller();
    let mut needs = common::privileged(&format!("fiojob:{}", at.line()));
    if root {
        needs = needs.loop_devices();
    }
    needs.tools(tools).ok()
}

#[test]
fn bad_job_files_are_refused_with_exit_2_before_anything_exists() {
    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path().to_str().unwrap();
    let cases: [(&str, &[&str]); 3] = [
        (
            "device.fio",
            &[
                "device.fio:6:",
                "[raw-read]",
                "filename=/dev/nvme0n1 names a device",
            ],
        ),
        ("syntax.fio", &["syntax.fio:3:", "no closing ']'"]),
        ("absent.fio", &["absent.fio", "cannot read the job file"]),
    ];
    for (file, needles) in cases {
        // `run` as well as `plan`: the refusal must come before the image exists.
        for cmd in ["plan", "run"] {
            let o = bin()
                .args([
                    cmd,
                    "--fs",
                    "ext4",
                    "--scratch-dir",
                    s,
                    "--image-size",
                    "512M",
                ])
                .arg("--fio-job")
                .arg(fixture(file))
                .output()
                .unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {file}: {err}");
            for n in needles {
                assert!(err.contains(n), "{cmd} {file}: stderr lacks '{n}':\n{err}");
            }
        }
    }
    let o = bin()
        .env_remove("FIOJOB_BS")
        .args(["plan", "--fs", "ext4", "--fio-job"])
        .arg(fixture("mixed.fio"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("mixed.fio:5: ${FIOJOB_BS} is not set"),
        "{}",
        stderr(&o)
    );
    // Native refuses by option name what it cannot run exactly.
    let o = bin()
        .args(["plan", "--fs", "ext4", "--engine", "native", "--fio-job"])
        .arg(fixture("mixed.fio"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--engine: native: "), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "refusals created {left:?}");
}

#[test]
fn plan_shows_the_jobs_as_they_will_run() {
    if !prerequisites(false, &["fio"]) {
        return;
    }
    let o = bin()
        .args([
            "plan",
            "--fs",
            "ext4,xfs",
            "--image-size",
            "1G",
            "--rounds",
            "2",
            "--fio-job",
        ])
        .arg(fixture("mixed.fio"))
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("Workloads: mkfs, usable-space, seq-write, log-append, rand-read, mixed, big"),
        "{out}"
    );
    // Phases follow the stonewalls (wait_for_previous is an alias).
    for (id, phase) in [
        ("seq-write", 1),
        ("log-append", 1),
        ("rand-read", 2),
        ("mixed", 3),
        ("big", 4),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with("1      ext4") && l.split_whitespace().nth(2) == Some(id))
            .unwrap_or_else(|| panic!("no step for {id}:\n{out}"));
        assert!(line.contains(&format!("phase {phase} (fio)")), "{line}");
    }
    // Rebased into the data directory, the included options and ${VAR}s inlined, size capped.
    assert!(
        out.contains("directory=$MNT/fsbench/fio-mixed\nnew_group\ngroup_reporting\n"),
        "{out}"
    );
    assert!(!out.contains("directory=/mnt/ssd\n"), "{out}");
    assert!(
        out.contains("ioengine=psync\ndirect=1\nsize=8m\nbs=64k\n"),
        "{out}"
    );
    assert!(out.contains("mixed.fio:41: size=64g capped to"), "{out}");
    assert!(
        out.contains("directory=/mnt/ssd replaced by fsbench's data directory"),
        "{out}"
    );
}

#[test]
fn io_runs_a_job_file_once_and_a_rejected_phase_does_not_stop_the_next() {
    if !prerequisites(false, &["fio"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let store = common::temp_store(elsewhere.path());
    // --no-settle: a shared disk may not go quiet within the 30 s cap after a job.
    let o = bin()
        .env("FSBENCH_STORE", &store)
        .args(["io", "--json", "--no-settle", "--fio-job"])
        .arg(fixture("rejected.fio"))
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "a failed section exits 1: {err}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let sections = v.as_array().unwrap();
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0]["section"], "sideways");
    let why = sections[0]["error"].as_str().unwrap();
    assert!(why.contains("rw=sideways"), "fio's own message: {why}");
    assert_eq!(sections[1]["section"], "after");
    assert!(sections[1]["error"].is_null(), "{}", sections[1]);
    assert!(
        sections[1]["metrics"]["bw_mib_s"]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The job's files went in the runner's directory inside --dir, removed at the end.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left in --dir: {left:?}");
    // It ends like every measuring command: the sections that ran, in the history store.
    assert_eq!(err.matches("fsbench: history: run ").count(), 1, "{err}");
    let list = bin()
        .env("FSBENCH_STORE", &store)
        .args(["history", "list", "--json"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let runs: serde_json::Value = serde_json::from_str(&stdout(&list)).expect("JSON");
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs[0]["source"], "io --fio-job", "{runs}");
    let show = bin()
        .env("FSBENCH_STORE", &store)
        .args(["history", "show", "last"])
        .output()
        .unwrap();
    let shown = stdout(&show);
    assert!(
        shown.contains("after") && !shown.contains("sideways"),
        "{shown}"
    );

    // With --filename every section uses the user's file, and nothing else is made there.
    let file = dir.path().join("f");
    let o = bin()
        .args(["io", "--json", "--no-settle", "--fio-job"])
        .arg(fixture("rejected.fio"))
        .arg("--filename")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert!(v[1]["error"].is_null(), "{v}");
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        2 << 20,
        "size=2m as written"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f"]);
}

#[test]
fn job_files_run_on_ext4_and_xfs_for_two_rounds_and_report() {
    if !prerequisites(true, &["fio", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    let scratch = tempfile::Builder::new()
        .prefix("fsbench-fiojob-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let out = scratch.path().join("out");
    let o = bin()
        .args([
            "run",
            "--fs",
            "ext4,xfs",
            "--image-size",
            "1G",
            "--rounds",
            "2",
        ])
        .args(["--quiet-window", "1s", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .arg("--fio-job")
        .arg(fixture("mixed.fio"))
        .arg("--fio-job")
        .arg(fixture("rejected.fio"))
        .output()
        .unwrap();
    let err = stderr(&o);
    // A section fio rejects is a failed step; the run goes on and exits 0 with it recorded.
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{err}"
    );
    assert!(
        common::leftovers(scratch.path(), None).is_empty(),
        "{:?}",
        common::leftovers(scratch.path(), None)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let samples = r["samples"].as_array().unwrap();
    let mut missing = Vec::new();
    for setup in ["ext4", "xfs"] {
        for id in [
            "seq-write",
            "log-append",
            "rand-read",
            "mixed",
            "big",
            "after",
        ] {
            for round in 1..=2u64 {
                for metric in ["iops", "bw_mib_s", "lat_p99_ms", "cpu_util"] {
                    let hit = samples.iter().any(|s| {
                        s["setup"] == setup
                            && s["workload"] == id
                            && s["round"] == round
                            && s["metric"] == metric
                            // A 2 MiB job may use no measurable CPU; the rest must be > 0.
                            && s["value"]
                                .as_f64()
                                .is_some_and(|v| v > 0.0 || (metric == "cpu_util" && v >= 0.0))
                    });
                    if !hit {
                        missing.push(format!("{setup}/{id}/{round}/{metric}"));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing: {missing:?}\nfailures: {}",
        r["failures"]
    );
    // Four clones merged into one rand-read result; the mix reports each side.
    assert!(
        samples
            .iter()
            .any(|s| s["workload"] == "mixed" && s["metric"] == "write_iops")
    );
    // One section alone in its phase gets the device bytes; concurrent ones the phase's.
    assert!(
        samples
            .iter()
            .any(|s| s["workload"] == "big" && s["metric"] == "device_write_bytes")
    );
    assert!(
        samples
            .iter()
            .any(|s| s["workload"] == "seq-write" && s["metric"] == "phase_device_write_bytes")
    );
    let failures = r["failures"].as_array().unwrap();
    assert_eq!(
        failures.len(),
        4,
        "sideways on 2 setups x 2 rounds: {failures:?}"
    );
    assert!(failures.iter().all(
        |f| f["workload"] == "sideways" && f["error"].as_str().unwrap().contains("rw=sideways")
    ));
    let notes = r["notes"].to_string();
    assert!(notes.contains("size=64g capped to"), "{notes}");
    let kinds: Vec<&str> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "fio-job")
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "seq-write",
            "log-append",
            "rand-read",
            "mixed",
            "big",
            "sideways",
            "after"
        ]
    );

    // --wide: every table (the default terminal report is the short headline form).
    let rep = bin()
        .arg("report")
        .arg(out.join("results.json"))
        .arg("--wide")
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", stderr(&rep));
    let text = stdout(&rep);
    for id in ["seq-write", "rand-read", "mixed", "after"] {
        assert!(
            text.contains(&format!("{id} — IOPS")),
            "report lacks {id}:\n{text}"
        );
    }
    // A 1 MiB job is judged in MiB/s; its IOPS row would repeat the bandwidth and is not shown.
    assert!(
        text.contains("big — bandwidth"),
        "report lacks big:\n{text}"
    );
    assert!(
        !text.contains("big — IOPS"),
        "big repeats its MiB/s as IOPS:\n{text}"
    );
    let cmp = bin()
        .args(["compare", "--format", "json"])
        .arg(out.join("results.json"))
        .arg(out.join("results.json"))
        .output()
        .unwrap();
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    let c = stdout(&cmp);
    assert!(c.contains("rand-read") && c.contains("big"), "{c}");
}

#[test]
fn native_engine_runs_a_file_inside_its_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args([
            "io",
            "--json",
            "--no-settle",
            "--engine",
            "native",
            "--fio-job",
        ])
        .arg(fixture("native.fio"))
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let s = v.as_array().unwrap();
    assert_eq!(s.len(), 2);
    for (sec, name) in s.iter().zip(["fill", "randread"]) {
        assert_eq!(sec["section"], name);
        assert_eq!(sec["engine"], "fsbench");
        assert!(
            sec["metrics"]["iops"]["value"].as_f64().unwrap() > 0.0,
            "{sec}"
        );
    }
    // native.dat was made and removed in the runner's directory inside --dir.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left in --dir: {left:?}");
}
