//! Whole runs on loop images: four filesystems, the vps and nvme profiles, a full filesystem.

use super::*;
use std::process::Stdio;

#[test]
fn full_run_on_a_loop_image_over_four_filesystems() {
    let _serial = serial();
    // ZFS in the kernel or zfs-fuse, whichever is installed.
    if !common::privileged("run::full_run_on_a_loop_image_over_four_filesystems")
        .loop_devices()
        .tools(&["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs"])
        .zfs()
        .ok()
    {
        return;
    }
    let daemons_before = zfs_fuse_pids();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let pools = zfs_pools();
    let child = common::quick_run(2)
        .args([
            "--fs",
            "ext4,xfs,btrfs,zfs",
            "--image-size",
            "1G",
            "--file-size",
            "64M",
            // The quick profile's full corpus is sized for a real run; a tenth keeps CI short.
            "--corpus-scale",
            "0.1",
            "--seed",
            "42",
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
    assert!(
        o.status.success(),
        "exit {:?}\n{err}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout)
    );
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    assert_complete(&r, &["ext4", "xfs", "btrfs", "zfs"], 2);
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md beside results");
    assert!(md.contains("| Test |") && md.contains("zfs"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("<svg"), "the HTML report has its charts");
    let setups = r["setups"].as_array().unwrap();
    assert_eq!(setups.len(), 4);
    for s in setups {
        assert!(!s["mkfs_args"].as_array().unwrap().is_empty(), "{s}");
        assert!(!s["mount_opts"].as_str().unwrap().is_empty(), "{s}");
    }
    assert!(r["summary"].as_array().is_some_and(|s| !s.is_empty()));
    assert!(
        r["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["fio_command"].is_string())
    );
    assert!(out.join("journal.jsonl").exists() && out.join("plan.json").exists());
    // Every randread job ran, and none was preceded by a reading of the disk beside the
    // image: by steps a pair's runs are seconds apart (the nvme run below has readings).
    let samples = r["samples"].as_array().unwrap();
    let jobs = samples
        .iter()
        .filter(|s| s["metric"] == "iops" && s["workload"] == "randread")
        .count();
    assert_eq!(jobs, 8, "randread in 2 rounds of 4 setups");
    assert!(!samples.iter().any(|s| s["metric"] == "disk_ref_iops"));
    // The round ran by steps: one image per setup, and each timed step on every setup back to
    // back, which the journal's order shows (each setup-round still journaled as its own).
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["plan"]["by_step"], true, "{}", plan["plan"]);
    assert_eq!(r["target"]["extra"]["device_count"], "4", "{}", r["target"]);
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).unwrap();
    let steps: Vec<(u64, String, String)> = journal
        .lines()
        .filter_map(|l| {
            let e: serde_json::Value = serde_json::from_str(l).ok()?;
            let s = e.get("step")?;
            Some((
                s["record"]["round"].as_u64()?,
                s["workload"].as_str()?.to_string(),
                s["record"]["setup"].as_str()?.to_string(),
            ))
        })
        .collect();
    let at = |round: u64, w: &str| -> Vec<usize> {
        (0..steps.len())
            .filter(|&i| steps[i].0 == round && steps[i].1 == w)
            .collect()
    };
    for round in [1, 2] {
        for w in ["mkfs", "randread", "untar"] {
            let at = at(round, w);
            assert!(
                at.len() == 4 && at[3] - at[0] == 3,
                "{w} of round {round} not on the four setups back to back: {steps:?}"
            );
        }
        // rm -rf meets the tree as the walk left it: each setup's right after its own walk.
        for i in at(round, "rm-tree") {
            assert_eq!(steps[i - 1].1, "find-cold", "{steps:?}");
            assert_eq!(steps[i - 1].2, steps[i].2, "{steps:?}");
        }
        assert_eq!(at(round, "rm-tree").len(), 4, "{steps:?}");
    }
    assert_eq!(journal.matches("\"round_done\"").count(), 8, "{journal}");
    // The table is printed.
    assert!(String::from_utf8_lossy(&o.stdout).contains("ext4"));
    let left = leftovers(scratch.path(), pid, &pools);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        1,
        "image not deleted"
    );
    // A zfs-fuse daemon the run started is gone with it; one that ran before is untouched.
    let after = zfs_fuse_pids();
    assert_eq!(
        after, daemons_before,
        "zfs-fuse daemons before the run {daemons_before:?}, after {after:?}"
    );
    if daemons_before.is_empty() && zfs_is_fuse() {
        assert!(
            err.contains("stopped the zfs-fuse daemon it started"),
            "{err}"
        );
    }
}

#[test]
fn vps_and_nvme_profiles_run_end_to_end_at_tiny_sizes() {
    let _serial = serial();
    if !privileged(
        "vps_and_nvme_profiles_run_end_to_end_at_tiny_sizes",
        &["mkfs.ext4", "mkfs.btrfs"],
    ) {
        return;
    }
    for (profile, fs, setups) in [
        (
            "vps",
            "ext4,btrfs-zstd=btrfs:mount=compress=zstd:3",
            vec!["ext4", "btrfs-zstd"],
        ),
        ("nvme", "ext4", vec!["ext4"]),
    ] {
        let scratch = tempfile::tempdir().unwrap();
        let out = scratch.path().join("out");
        let o = common::quick_run(1)
            .args([
                "--profile",
                profile,
                "--fs",
                fs,
                "--image-size",
                "1G",
                "--file-size",
                "64M",
                "--corpus-scale",
                "0.1",
            ])
            .arg("--scratch-dir")
            .arg(scratch.path())
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{profile}: exit {:?}\n{}",
            o.status.code(),
            stderr(&o)
        );
        let r = load_results(&out);
        let samples = r["samples"].as_array().unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
        for w in plan["plan"]["workloads"].as_array().unwrap() {
            if w["record"] != true {
                continue;
            }
            for s in &setups {
                assert!(
                    samples
                        .iter()
                        .any(|x| x["setup"] == *s && x["workload"] == w["id"]),
                    "{profile}: no sample for {s}/{}",
                    w["id"]
                );
            }
        }
        if profile == "nvme" {
            // One setup runs by setup: each I/O job was preceded by a reading of the disk
            // beside the image, recorded with its setup, round and workload (the file it read
            // is gone with the run: the scratch directory holds only OUT, below).
            let key = |s: &serde_json::Value| {
                (
                    s["setup"].as_str().unwrap_or_default().to_string(),
                    s["round"].as_u64(),
                    s["workload"].as_str().unwrap_or_default().to_string(),
                )
            };
            let jobs: std::collections::BTreeSet<_> = samples
                .iter()
                .filter(|s| s["metric"] == "iops" && s["workload"] == "seqread")
                .map(key)
                .collect();
            let readings: std::collections::BTreeSet<_> = samples
                .iter()
                .filter(|s| {
                    s["metric"] == "disk_ref_iops" && s["value"].as_f64().is_some_and(|v| v > 0.0)
                })
                .map(key)
                .collect();
            assert_eq!(plan["plan"]["by_step"], false);
            assert!(!jobs.is_empty(), "nvme: no seqread job");
            assert!(jobs.is_subset(&readings), "readings {readings:?}");
            assert_eq!(
                std::fs::read_dir(scratch.path()).unwrap().count(),
                1,
                "nvme: the image or the reading's file was left"
            );
        }
        if profile == "vps" {
            // The 8-writer job reports its factor over the single writer.
            assert!(
                samples
                    .iter()
                    .any(|x| x["workload"] == "par8-write" && x["metric"] == "scaling_factor")
            );
        }
        let left = leftovers(scratch.path(), 0, &[]);
        assert!(left.is_empty(), "{profile}: left behind: {left:?}");
    }
}

#[test]
fn enospc_is_a_failed_step_and_the_run_goes_on() {
    let _serial = serial();
    if !privileged(
        "enospc_is_a_failed_step_and_the_run_goes_on",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    // A corpus that fits the image's bytes (the plan checks those up front) but not its
    // inodes: ext4 made with 1,024 of them runs out during untar's 3,500 entries.
    let o = bin()
        .args([
            "run",
            "--yes",
            "--profile",
            "standard",
            "--fs",
            "ext4:mkfs=-N 1024",
        ])
        .args(["--corpus-scale", "0.1", "--corpus-copies", "1"])
        .args(["--image-size", "128M", "--file-size", "8M", "--rounds", "1"])
        .args(common::QUICK)
        .args(["--only", "untar,find-cold,rm-tree,randread"])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = load_results(&out);
    let failures = r["failures"].as_array().unwrap();
    let failed = |w: &str| {
        failures
            .iter()
            .find(|f| f["workload"] == w)
            .map(|f| f["error"].as_str().unwrap().to_string())
    };
    assert!(
        failed("untar").unwrap().contains("No space left on device"),
        "{failures:?}"
    );
    assert!(failed("find-cold").unwrap().contains("untar failed"));
    // The other workloads of the setup-round still ran and were recorded.
    let samples = r["samples"].as_array().unwrap();
    assert!(samples.iter().any(|s| s["workload"] == "randread"));
    assert!(!samples.iter().any(|s| s["workload"] == "untar"));
    let left = leftovers(scratch.path(), 0, &[]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

// ---------------------------------------------------------------------------------------------
// Consent: `--device` wipes only after the device name was typed on the terminal, or `--yes`.
