//! Seed 004's capacity and maintenance probes end to end: `probe-inodes`, `probe-metadata` and
//! `probe-fsck` (with its per-GiB rates) on ext4, XFS and Btrfs in one `fsbench run`, each on
//! small loop images of its own; the figures, the probe table, the claims judged from them,
//! and nothing left attached or mounted.

mod common;

use common::{bin, load_results, stderr};
use serde_json::Value;
use std::process::Stdio;

/// The one sample of `metric` for (setup, workload); the run has one round.
fn value(r: &Value, setup: &str, workload: &str, metric: &str) -> Option<f64> {
    r["samples"].as_array()?.iter().find_map(|s| {
        (s["setup"] == setup && s["workload"] == workload && s["metric"] == metric)
            .then(|| s["value"].as_f64())
            .flatten()
    })
}

#[test]
fn capacity_probes_on_ext4_xfs_and_btrfs_in_one_run() {
    let name = "capacity::capacity_probes_on_ext4_xfs_and_btrfs_in_one_run";
    if !common::privileged_loop(name, &["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "e2fsck"]) {
        return;
    }
    let scratch = common::scratch("fsbench-capacity-");
    let out = scratch.path().join("out");
    let child = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,xfs,btrfs",
            "--only",
            "probe-inodes,probe-metadata,probe-fsck",
            "--rounds",
            "1",
            "--image-size",
            "1G",
            "--quiet-window",
            "1s",
            "--no-history",
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
    assert!(
        o.status.success(),
        "exit {:?}\n{}",
        o.status.code(),
        stderr(&o)
    );
    let r = load_results(&out);
    let v = |setup: &str, w: &str, m: &str| {
        value(&r, setup, w, m).unwrap_or_else(|| panic!("{setup} {w} {m}: no sample"))
    };

    // Inodes: ext4 runs out with most of its space free; XFS and Btrfs reach the cap.
    assert_eq!(v("ext4", "probe-inodes", "inode_limit_reached"), 1.0);
    let ext4_files = v("ext4", "probe-inodes", "files_created");
    assert!(
        (1000.0..100_000.0).contains(&ext4_files),
        "{ext4_files} files"
    );
    let free = v("ext4", "probe-inodes", "free_bytes_at_stop");
    let size = v("ext4", "probe-inodes", "size_bytes");
    assert!(free > size / 2.0, "ext4 had {free} of {size} bytes free");
    for fs in ["xfs", "btrfs"] {
        assert_eq!(v(fs, "probe-inodes", "inode_limit_reached"), 0.0, "{fs}");
        assert_eq!(v(fs, "probe-inodes", "files_created"), 100_000.0, "{fs}");
    }

    // Metadata: reproduced on Btrfs (ENOSPC with a tenth or more free); n/a elsewhere.
    assert_eq!(v("btrfs", "probe-metadata", "supported"), 1.0);
    assert_eq!(v("btrfs", "probe-metadata", "enospc_with_free_space"), 1.0);
    let free = v("btrfs", "probe-metadata", "free_bytes_at_stop");
    let size = v("btrfs", "probe-metadata", "size_bytes");
    assert!(free >= size * 0.1, "btrfs had {free} of {size} bytes free");
    for fs in ["ext4", "xfs"] {
        assert_eq!(v(fs, "probe-metadata", "supported"), 0.0, "{fs}");
        assert_eq!(
            value(&r, fs, "probe-metadata", "enospc_with_free_space"),
            None
        );
    }

    // fsck: clean, with its time per GiB of the data written; Btrfs also scrubbed.
    for fs in ["ext4", "xfs", "btrfs"] {
        assert_eq!(v(fs, "probe-fsck", "clean"), 1.0, "{fs}");
        let bytes = v(fs, "probe-fsck", "checked_bytes");
        assert!(bytes >= (256u64 << 20) as f64, "{fs}: {bytes}");
        let secs = v(fs, "probe-fsck", "seconds");
        let rate = v(fs, "probe-fsck", "seconds_per_gib");
        let want = secs * (1u64 << 30) as f64 / bytes;
        assert!((rate - want).abs() <= want * 1e-9, "{fs}: {rate} vs {want}");
    }
    assert!(v("btrfs", "probe-fsck", "scrub_seconds_per_gib") > 0.0);
    assert_eq!(
        value(&r, "ext4", "probe-fsck", "scrub_seconds_per_gib"),
        None
    );

    // The report's probe table names them; the claims are judged from these figures.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let probes = md
        .split("## Capabilities (probes)")
        .nth(1)
        .expect("a probe table");
    for row in [
        "inode exhaustion (empty files until ENOSPC) — ran out of inodes with space left",
        "metadata exhaustion (ENOSPC while df shows space) — ENOSPC while df showed free space",
        "probe-fsck — seconds per GiB of data",
        "probe-fsck — scrub seconds per GiB of data",
    ] {
        assert!(probes.contains(row), "no row {row:?} in\n{probes}");
    }
    for claim in [
        "ext4 runs out of inodes on many small files while space is still free",
        "XFS allocates inodes dynamically and does not run out of them with space free",
        "Btrfs can refuse writes for want of metadata space while df shows free space",
    ] {
        let line = md
            .lines()
            .find(|l| l.contains(claim))
            .unwrap_or_else(|| panic!("claim {claim:?} not in the report"));
        assert!(line.contains("**confirmed**"), "{line}");
    }
    assert!(
        md.contains("reproduced: ENOSPC after"),
        "the metadata probe's note"
    );

    let left = common::leftovers(scratch.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
}
