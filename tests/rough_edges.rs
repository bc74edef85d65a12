//! Rough edges a new user hits (issue 18): the progress count ends at N/N, `plan` names no
//! results file it will not write, a warm walk is never labelled cold, an empty block device
//! is called empty.
//!
//! Privileged tests print `skipped: <reason>` when a prerequisite is missing, and fail instead
//! when `FSBENCH_REQUIRE_PRIVILEGED=1`.

mod common;

use common::{LoopImage, assert_ok as ok, bin, text};

/// `true` when the test can run: root, loop devices and `tools`; otherwise `tests/common`
/// prints `skipped: …`, or fails under `FSBENCH_REQUIRE_PRIVILEGED=1`.
#[track_caller]
fn privileged(tools: &[&str]) -> bool {
    common::privileged_loop(module_path!(), tools)
}

/// `(done, total)` of every `[done/total]` progress line on stderr.
fn progress_counts(stderr: &str) -> Vec<(usize, usize)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split_once("] [")?.1;
            let (nums, _) = rest.split_once(']')?;
            let (a, b) = nums.split_once('/')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

#[test]
fn progress_ends_at_n_of_n_with_mkfs_steps() {
    if !privileged(&["losetup", "mkfs.ext4"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let o = bin()
        // nvme (like vps) has no mkfs entry of its own: the step the old count left out.
        .args(["run", "--yes", "--fs", "ext4", "--profile", "nvme"])
        .args(["--only", "randread-qd1"])
        .args(["--rounds", "2", "--runtime", "1s", "--ramp", "0s"])
        .args(["--file-size", "16M", "--image-size", "1G"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(scratch.path().join("out"))
        .output()
        .unwrap();
    ok(&o);
    let counts = progress_counts(&text(&o.stderr));
    // Per round: mkfs, layout (the job's prerequisite), randread-qd1.
    let want: Vec<(usize, usize)> = (1..=6).map(|i| (i, 6)).collect();
    assert_eq!(counts, want, "{}", text(&o.stderr));
}

#[test]
fn plan_names_no_results_file_it_will_not_write() {
    let o = bin().args(["plan", "--fs", "ext4"]).output().unwrap();
    let out = ok(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("Results:"))
        .expect("a Results line");
    assert!(line.contains("a run would write"), "{line}");
    assert!(
        line.contains("<UTC timestamp of the run>") && !line.contains("fsbench-results/2"),
        "plan must not invent the run's timestamped directory: {line}"
    );
    let o = bin()
        .args(["plan", "--fs", "ext4", "--out", "/tmp/somewhere"])
        .output()
        .unwrap();
    assert!(ok(&o).contains("Results: a run would write /tmp/somewhere/results.json"));
}

#[test]
fn a_walk_with_warm_caches_is_labelled_warm_in_every_exporter() {
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = scratch.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let out = scratch.path().join("out");
    // The hook makes dropping caches fail as it does without root.
    let o = bin()
        .env("FSBENCH_TEST_REFUSE_DROP_CACHES", "1")
        .args(["run", "--yes", "--only", "find-cold", "--rounds", "1"])
        .args(["--corpus-copies", "1", "--corpus-scale", "0.02", "--dir"])
        .arg(&dir)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let results = out.join("results.json");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let ids: Vec<&str> = r["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["workload"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"find-warm"), "{ids:?}");
    assert!(
        !ids.contains(&"find-cold"),
        "a warm walk recorded as cold: {ids:?}"
    );
    for format in ["table", "md", "csv", "json", "html"] {
        let o = bin()
            .arg("report")
            .arg(&results)
            .args(["--format", format])
            .output()
            .unwrap();
        let s = ok(&o);
        assert!(!s.contains("cold cache"), "{format} calls it cold");
        if format == "csv" || format == "json" {
            assert!(s.contains("find-warm"), "{format}");
        } else {
            assert!(s.contains("find over the tree, warm cache"), "{format}");
        }
    }
}

#[test]
fn an_empty_block_device_is_called_empty() {
    if !privileged(&["losetup"]) {
        return;
    }
    let lo = LoopImage::spec(0)
        .file_name("zero.img")
        .attach()
        .unwrap_or_else(|e| panic!("losetup: {e}"));
    let dev = lo.dev.clone();
    for extra in [&[][..], &["--size", "1M"][..]] {
        let o = bin()
            .args(["io", "--rw", "read", "--filename", &dev])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains("is a block device of size 0") && !err.contains("--size 0 or less"),
            "{extra:?}: {err}"
        );
    }
}

/// The schedulers this kernel offers a loop device (none known when it has no loop queue).
fn loop_schedulers() -> Option<String> {
    std::fs::read_dir("/sys/block")
        .ok()?
        .flatten()
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("loop")
                .then(|| std::fs::read_to_string(e.path().join("queue/scheduler")).ok())
                .flatten()
        })
}

/// A shipped profile runs on any kernel that can run fsbench (issue 53): a variant this
/// kernel cannot offer (bfq where it was built without it) is left out with a note saying why
/// and how to get it, while the same variant named by the user is refused (exit 2).
#[test]
fn a_shipped_profile_leaves_out_what_this_kernel_lacks() {
    let o = bin()
        .args(["plan", "--profile", "tuning"])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    let setups = out
        .lines()
        .find(|l| l.starts_with("Setups:"))
        .unwrap_or_default()
        .to_string();
    match loop_schedulers() {
        Some(offered)
            if !offered
                .split_whitespace()
                .any(|s| s.trim_matches(['[', ']']) == "bfq") =>
        {
            assert!(
                out.contains("ext4-bfq left out: scheduler 'bfq' is not offered")
                    && out.contains("CONFIG_IOSCHED_BFQ"),
                "{out}"
            );
            assert!(!setups.contains("ext4-bfq"), "{setups}");
            assert!(setups.contains("ext4-deadline"), "{setups}");
            let o = bin()
                .args(["plan", "--fs", "ext4,ext4-bfq=ext4:sched=bfq"])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
            assert!(text(&o.stderr).contains("setup ext4-bfq: scheduler 'bfq'"));
        }
        Some(_) => assert!(setups.contains("ext4-bfq"), "{setups}"),
        None => {}
    }
    // A scheduler no kernel has, named by the user: refused whatever this kernel offers
    // (decided at apply when there is no loop queue to read).
    if loop_schedulers().is_some() {
        let o = bin()
            .args(["plan", "--fs", "ext4,e=ext4:sched=no-such-sched"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("'no-such-sched' is not offered"));
    }
}
