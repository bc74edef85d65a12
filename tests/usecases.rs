//! End-to-end tests of the use-case workloads (docs/usecases.md): real git on a generated
//! repository, maildir delivery, PostMark, logs, through the real binary.
//!
//! The privileged test needs root, loop devices, mkfs.ext4, mkfs.xfs and git (PostMark is
//! run where installed); without them it prints `skipped: <reason>`, and with
//! `FSBENCH_REQUIRE_PRIVILEGED=1` (CI) it fails instead. The directory test needs no root.

mod common;

use common::{assert_ok, bin, have, leftovers, load_results, scratch, serial};
use std::path::Path;

/// A plan with every use-case workload at test sizes (a second or two each).
fn tiny_plan(dir: &Path) -> std::path::PathBuf {
    let plan = dir.join("usecases.toml");
    std::fs::write(
        &plan,
        r#"
        name = "usecases-tiny"
        rounds = 1
        [[workload]]
        id = "git"
        files = 300
        commits = 30
        changes = 5
        revisions = 3
        [[workload]]
        id = "maildir"
        messages = 150
        deliverers = 3
        [[workload]]
        id = "postmark"
        files = 100
        transactions = 300
        [[workload]]
        id = "logs"
        seconds = 1
        appenders = 2
        readers = 1
        rotate_bytes = "128K"
        keep = 2
        "#,
    )
    .unwrap();
    plan
}

/// The value of `metric` for (`setup`, `workload`) in a results file.
fn sample(results: &serde_json::Value, setup: &str, workload: &str, metric: &str) -> Option<f64> {
    results["samples"].as_array().unwrap().iter().find_map(|s| {
        (s["setup"] == setup && s["workload"] == workload && s["metric"] == metric)
            .then(|| s["value"].as_f64().unwrap())
    })
}

/// The use-case metrics every setup must have recorded, by workload.
const MUST: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "git_clone_seconds",
            "git_checkout_seconds",
            "git_status_cold_seconds",
            "git_status_warm_seconds",
            "git_gc_seconds",
            "build_seconds",
        ],
    ),
    (
        "maildir",
        &[
            "deliveries_per_s",
            "lat_p99_ms",
            "mail_read_seconds",
            "mail_expunge_seconds",
        ],
    ),
    (
        "logs",
        &[
            "records_per_s",
            "lat_p99_ms",
            "tail_records_per_s",
            "rotations",
        ],
    ),
];

#[test]
fn use_cases_on_ext4_and_xfs_are_measured_judged_and_released() {
    let _serial = serial();
    if !common::privileged_loop("usecases_ext4_xfs", &["mkfs.ext4", "mkfs.xfs", "git"]) {
        return;
    }
    let s = scratch("fsbench-usecases-");
    let plan = tiny_plan(s.path());
    let out = s.path().join("out");
    let postmark = have("postmark");
    let only = if postmark {
        "git,maildir,postmark,logs"
    } else {
        "git,maildir,logs"
    };
    let child = bin()
        .args(["run", "--yes", "--plan"])
        .arg(&plan)
        .args([
            "--fs",
            "ext4,xfs",
            "--only",
            only,
            "--rounds",
            "1",
            "--image-size",
            "1G",
        ])
        .args([
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            "--seed",
            "5",
        ])
        .arg("--scratch-dir")
        .arg(s.path())
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "fsbench run failed: {:?}", o.status);
    let r = load_results(&out);
    for setup in ["ext4", "xfs"] {
        for (w, metrics) in MUST {
            for m in *metrics {
                let v = sample(&r, setup, w, m)
                    .unwrap_or_else(|| panic!("{setup}/{w}: no {m} in results.json"));
                assert!(v > 0.0, "{setup}/{w}/{m} = {v}");
            }
        }
        assert!(sample(&r, setup, "logs", "rotations").unwrap() >= 1.0);
        // The runner counted the device around each step (Writes::Runner).
        assert!(sample(&r, setup, "maildir", "device_write_bytes_total").unwrap_or(0.0) > 0.0);
        if postmark {
            assert!(sample(&r, setup, "postmark", "postmark_tx_per_s").unwrap() > 0.0);
        }
    }
    // Every workload answers its own verdict class.
    for w in r["workloads"].as_array().unwrap() {
        assert_eq!(w["kind"], w["id"], "{w}");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for class in ["Source trees and builds", "Mail", "Logs"] {
        assert!(report.contains(class), "report.md has no {class} verdict");
    }
    for claim in [
        "ext4 suits a build box better than XFS: faster git checkouts",
        "ext4 suits a mail spool better than XFS: more maildir deliveries/s",
        "XFS beats ext4 at log ingestion: more fdatasync'd log records/s",
    ] {
        let line = report
            .lines()
            .find(|l| l.contains(claim))
            .unwrap_or_else(|| panic!("claim not in report.md: {claim}"));
        assert!(!line.contains("NOT MEASURED"), "{line}");
    }
    // The source repository is a cache outside the filesystem under test, complete or absent.
    let cache = s.path().join(format!(
        "fsbench-cache-{}",
        rustix::process::geteuid().as_raw()
    ));
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.len() == 1 && names[0].starts_with("git-"),
        "{names:?}"
    );
    assert!(cache.join(&names[0]).join("HEAD").is_file());
    let left = leftovers(s.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:#?}");
    common::ran("usecases_ext4_xfs");
}

#[test]
fn use_cases_run_on_a_directory_and_leave_it_as_it_was() {
    let s = scratch("fsbench-usecases-dir-");
    let plan = tiny_plan(s.path());
    let (dir, out) = (s.path().join("target"), s.path().join("out"));
    std::fs::create_dir(&dir).unwrap();
    let only = if have("git") {
        "git,maildir,logs"
    } else {
        "maildir,logs"
    };
    let o = bin()
        .args(["run", "--yes", "--plan"])
        .arg(&plan)
        .arg("--dir")
        .arg(&dir)
        .args(["--only", only, "--rounds", "1", "--seed", "5"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "20s"])
        .arg("--scratch-dir")
        .arg(s.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&o);
    let r = load_results(&out);
    assert!(sample(&r, "dir", "maildir", "deliveries_per_s").unwrap() > 0.0);
    assert!(sample(&r, "dir", "logs", "records_per_s").unwrap() > 0.0);
    if only.starts_with("git") {
        assert!(sample(&r, "dir", "git", "git_checkout_seconds").unwrap() > 0.0);
    }
    // Each workload removed its own directory: nothing of theirs is left in the target.
    let left: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            ["git", "maildir", "logs", "postmark"].contains(&name.as_str())
        })
        .collect();
    assert!(left.is_empty(), "left in the target: {left:?}");
}

#[test]
fn ctrl_c_during_a_use_case_leaves_nothing_of_it_in_the_target() {
    let s = scratch("fsbench-usecases-int-");
    let plan = s.path().join("long-logs.toml");
    std::fs::write(
        &plan,
        "name = \"long-logs\"\nrounds = 1\n[[workload]]\nid = \"logs\"\nseconds = 120\n",
    )
    .unwrap();
    let (dir, out) = (s.path().join("target"), s.path().join("out"));
    std::fs::create_dir(&dir).unwrap();
    let child = bin()
        .args(["run", "--yes", "--plan"])
        .arg(&plan)
        .arg("--dir")
        .arg(&dir)
        .args(["--only", "logs", "--rounds", "1", "--quiet-window", "1s"])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the appenders are writing, then interrupt.
    let logs_dir = |d: &Path| {
        walk(d)
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n == "logs"))
    };
    let start = std::time::Instant::now();
    while logs_dir(&dir).is_none() {
        assert!(
            start.elapsed().as_secs() < 120,
            "the logs step never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    common::sh_ok(&["kill", "-INT", &child.id().to_string()]);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", common::stderr(&o));
    assert!(
        logs_dir(&dir).is_none(),
        "the interrupted step left its logs"
    );
}

/// Every path under `d`.
fn walk(d: &Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            all.push(p);
        }
    }
    all
}
