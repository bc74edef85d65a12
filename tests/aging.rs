//! Aged filesystems (docs/aging.md): a fresh and an aged ext4 side by side on a tiny loop
//! image, two rounds; the age measures move the expected way and nothing is left behind.
//! Bad aging values exit 2 before anything is created.

mod common;

use common::{bin, load_results, serial, stderr};
use serde_json::Value;
use std::process::Stdio;

/// The value of `metric` recorded under `workload` for `setup` in `round`.
fn value(r: &Value, setup: &str, workload: &str, metric: &str, round: u64) -> Option<f64> {
    r["samples"].as_array()?.iter().find_map(|s| {
        (s["setup"] == setup
            && s["workload"] == workload
            && s["metric"] == metric
            && s["round"] == round)
            .then(|| s["value"].as_f64())
            .flatten()
    })
}

#[test]
fn bad_aging_values_exit_2_before_anything() {
    for (args, needle) in [
        (
            vec!["plan", "--fs", "ext4", "--age", "chrun"],
            "unknown aging profile 'chrun'",
        ),
        (
            vec!["plan", "--fs", "e=ext4:age=churn:0"],
            "AMOUNT 0 must be above 0",
        ),
        (
            vec!["plan", "--fs", "e=ext4:age=churn:1:99%"],
            "FULLNESS 99% must be between",
        ),
        (
            vec!["plan", "--dir", "/var/tmp", "--age", "churn"],
            "cannot age a --dir target",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    let o = bin()
        .args([
            "plan",
            "--fs",
            "ext4,ext4-aged=ext4:age=punch:2",
            "--image-size",
            "4G",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("then age (punch:2:75%: 8 GiB written"),
        "{out}"
    );
}

#[test]
fn fresh_and_aged_ext4_side_by_side() {
    let _serial = serial();
    if !common::privileged_loop("aging::fresh_and_aged_ext4_side_by_side", &["mkfs.ext4"]) {
        return;
    }
    let scratch = common::scratch("fsbench-aging-");
    let out = scratch.path().join("out");
    let child = bin()
        .args([
            "run",
            "--fs",
            "ext4,ext4-aged=ext4:age=punch:1",
            "--image-size",
            "256M",
            "--only",
            "seqread",
            "--file-size",
            "16M",
            "--runtime",
            "1s",
            "--ramp",
            "0s",
            "--rounds",
            "2",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            "--seed",
            "43",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "exit {:?}\n{err}", o.status.code());
    assert!(
        err.contains("ext4-aged round 1: aged (punch:1:75%)"),
        "{err}"
    );
    let r = load_results(&out);
    assert_eq!(
        r["failures"].as_array().map(Vec::len),
        Some(0),
        "{}",
        r["failures"]
    );
    let v = |setup, workload, metric, round| {
        value(&r, setup, workload, metric, round)
            .unwrap_or_else(|| panic!("{setup}/{workload}/{metric} round {round} recorded"))
    };
    for round in 1..=2 {
        // Fresh: nothing aged, an empty filesystem, the probe file in one or two extents.
        assert_eq!(v("ext4", "age", "age_files", round), 0.0);
        assert!(v("ext4", "age", "age_fullness_pct", round) < 5.0);
        assert_eq!(v("ext4-aged", "age-before", "age_files", round), 0.0);
        let fresh_probe = v("ext4-aged", "age-before", "age_free_extent_kib", round);
        // Aged: near its 75 % target, files with several extents, free space cut up.
        let full = v("ext4-aged", "age", "age_fullness_pct", round);
        assert!((50.0..95.0).contains(&full), "fullness {full}");
        assert!(v("ext4-aged", "age", "age_files", round) > 0.0);
        assert!(v("ext4-aged", "age", "age_extents_per_file", round) > 1.0);
        let score = v("ext4-aged", "age", "age_layout_score", round);
        assert!(score > 0.0 && score < 1.0, "layout score {score}");
        let aged_probe = v("ext4-aged", "age", "age_free_extent_kib", round);
        assert!(
            aged_probe < fresh_probe,
            "probe {aged_probe} KiB vs {fresh_probe} KiB fresh"
        );
        let written = v("ext4-aged", "age", "age_written_bytes", round);
        // AMOUNT 1: the filesystem's capacity (the image less its metadata) written.
        assert!(
            written >= 256.0 * 1024.0 * 1024.0 * 0.8,
            "written {written}"
        );
        // The workloads ran on both.
        assert!(value(&r, "ext4-aged", "seqread", "bw_mib_s", round).is_some());
        assert!(value(&r, "ext4", "seqread", "bw_mib_s", round).is_some());
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("layout score"), "{md}");
    assert!(
        md.contains("## Fresh against aged") && md.contains("| ext4-aged | ext4 |"),
        "{md}"
    );
    let left = common::leftovers(scratch.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
}
