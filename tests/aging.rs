//! Aged filesystems (docs/aging.md): a fresh and an aged ext4 side by side on a tiny loop
//! image, two rounds; the age measures move the expected way and nothing is left behind.
//! Restored rounds (`replicate=restore`) on an image and on a device, with the early stop on
//! a layout score and the series over the aging time; Ctrl-C while aging, then `--resume`.
//! Bad aging values exit 2 before anything is created.

mod common;

use common::{bin, load_results, serial, stderr};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

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
        (
            vec!["plan", "--fs", "e=ext4:age=churn:3:75:layout=1"],
            "layout=1 must be above 0 and below 1",
        ),
        (
            vec!["plan", "--fs", "ext4", "--age", "churn:replicate=copy"],
            "replicate='copy' is not one of re-age, restore",
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

/// Copy-on-write filesystems aged by overwrites near the target fullness: statvfs's free
/// space is more than they can write (chunk allocation, CoW of the overwritten blocks), so
/// aging writes the data file's size itself before it ends and deletes aged files until it
/// fits; the layout and the workload then run on both, and nothing fails.
#[test]
fn copy_on_write_filesystems_aged_by_overwrites_still_hold_the_data_file() {
    let _serial = serial();
    if !common::privileged(
        "aging::copy_on_write_filesystems_aged_by_overwrites_still_hold_the_data_file",
    )
    .loop_devices()
    .tools(&["mkfs.btrfs"])
    .zfs()
    .ok()
    {
        return;
    }
    let scratch = common::scratch("fsbench-aging-cow-");
    let out = scratch.path().join("out");
    let child = bin()
        .args([
            "run",
            "--fs",
            "btrfs-aged=btrfs:age=overwrite:1,zfs-aged=zfs:age=overwrite:1",
            "--image-size",
            "512M",
            "--only",
            "seqread",
            "--file-size",
            "64M",
            "--runtime",
            "1s",
            "--ramp",
            "0s",
            "--rounds",
            "1",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            "--seed",
            "7",
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
    let r = load_results(&out);
    assert_eq!(
        r["failures"].as_array().map(Vec::len),
        Some(0),
        "{}",
        r["failures"]
    );
    for setup in ["btrfs-aged", "zfs-aged"] {
        let full = value(&r, setup, "age", "age_fullness_pct", 1)
            .unwrap_or_else(|| panic!("{setup}: fullness recorded\n{err}"));
        assert!(full > 30.0, "{setup}: aged to {full} % full");
        assert!(
            value(&r, setup, "age", "age_freed_for_room_bytes", 1).is_some(),
            "{setup}: the room check recorded"
        );
        assert!(
            value(&r, setup, "seqread", "bw_mib_s", 1).is_some(),
            "{setup}: the data file laid out and read\n{err}"
        );
    }
    let left = common::leftovers(scratch.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Aged image files this process `pid` kept in `dir` (none once it ended).
fn kept_images(dir: &Path, pid: u32) -> Vec<String> {
    let prefix = format!("fsbench-aged-{pid}-");
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn restored_rounds_keep_the_aged_layout_on_an_image_and_on_a_device() {
    let _serial = serial();
    if !common::privileged_loop(
        "aging::restored_rounds_keep_the_aged_layout_on_an_image_and_on_a_device",
        &["mkfs.ext4", "fstrim"],
    ) {
        return;
    }
    // The device "target" is a loop device of the test's own.
    let dev = common::LoopImage::spec(256 << 20)
        .file_name("aged-device.img")
        .attach()
        .unwrap_or_else(|e| panic!("losetup: {e}"));
    for on_device in [false, true] {
        let scratch = common::scratch("fsbench-aging-restore-");
        let out = scratch.path().join("out");
        let mut cmd = bin();
        cmd.args([
            "run",
            "--yes",
            // A score just below 1 fires at the first sample after punching began: the
            // early stop, long before 20 capacities are written.
            "--fs",
            "e=ext4:age=punch:20:75%:layout=0.999999:replicate=restore",
            "--only",
            "seqread",
            "--file-size",
            "8M",
            "--rounds",
            "3",
            "--seed",
            "43",
        ])
        .args(common::QUICK)
        .arg("--out")
        .arg(&out);
        if on_device {
            cmd.arg("--device").arg(&dev.dev);
        } else {
            cmd.args(["--image-size", "256M", "--scratch-dir"])
                .arg(scratch.path());
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "device {on_device}: {err}");
        assert!(err.contains("stopped on its layout score"), "{err}");
        assert!(err.contains("aged image kept ("), "{err}");
        let r = load_results(&out);
        assert_eq!(
            r["failures"].as_array().map(Vec::len),
            Some(0),
            "{}",
            r["failures"]
        );
        let v = |workload, metric, round| value(&r, "e", workload, metric, round);
        // Round 1 aged, stopped early, and kept its image; rounds 2 and 3 restored it.
        assert_eq!(v("age", "age_stopped_on_layout", 1), Some(1.0));
        let written = v("age", "age_written_bytes", 1).expect("aging recorded");
        assert!(
            written < 20.0 * 200.0 * 1024.0 * 1024.0,
            "written {written}"
        );
        assert!(v("age", "age_keep_seconds", 1).is_some());
        assert!(v("age", "age_image_bytes", 1).unwrap() > 0.0);
        for round in [2, 3] {
            assert!(
                v("age", "age_written_bytes", round).is_none(),
                "round {round} re-aged"
            );
            assert!(v("age-before", "age_files", round).is_none());
            assert!(v("age", "age_restore_bytes", round).unwrap() > 0.0);
            // The same blocks: the same files, extents and layout score as the aged round.
            for m in ["age_files", "age_extents_per_file", "age_layout_score"] {
                assert_eq!(v("age", m, round), v("age", m, 1), "{m} in round {round}");
            }
            assert!(v("seqread", "bw_mib_s", round).is_some());
        }
        // The series over the aging time, drawn in the HTML report.
        let series = r["series"].as_array().unwrap();
        for m in ["age_fullness_pct", "age_written_bytes", "bw_mib_s"] {
            assert!(
                series
                    .iter()
                    .any(|s| s["workload"] == "age" && s["metric"] == m),
                "series {m}"
            );
        }
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(html.contains("Facts over time"), "no facts chart");
        let left = common::leftovers(scratch.path(), Some(pid));
        assert!(left.is_empty(), "left behind: {left:?}");
        let dir = if on_device {
            Path::new("/var/tmp").to_path_buf()
        } else {
            scratch.path().to_path_buf()
        };
        assert_eq!(kept_images(&dir, pid), Vec::<String>::new());
    }
}

#[test]
fn ctrl_c_while_aging_leaves_nothing_and_resume_redoes_the_round() {
    let _serial = serial();
    if !common::privileged_loop(
        "aging::ctrl_c_while_aging_leaves_nothing_and_resume_redoes_the_round",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let scratch = common::scratch("fsbench-aging-int-");
    let out = scratch.path().join("out");
    let mut child = bin()
        .args([
            "run",
            "--fs",
            "e=ext4:age=churn:8:replicate=restore",
            "--image-size",
            "256M",
            "--only",
            "seqread",
            "--file-size",
            "8M",
            "--rounds",
            "2",
            "--seed",
            "44",
        ])
        .args(common::QUICK)
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The progress line of the aging (its percent and ETA) shows it is under way.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let t0 = Instant::now();
    let mut seen = Vec::new();
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("fsbench ended before aging:\n{}", seen.join("\n")))
            .unwrap();
        seen.push(line.clone());
        if line.contains("aging churn:8:75%") && line.contains("ETA") && line.ends_with('%') {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "{}",
            seen.join("\n")
        );
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let err = format!("{}\n{}", seen.join("\n"), rest.join("\n"));
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        !err.contains("e round 1: aged ("),
        "aging ended before the interrupt: {err}"
    );
    let left = common::leftovers(scratch.path(), Some(pid));
    assert!(left.is_empty(), "left behind after SIGINT: {left:?}");
    assert_eq!(kept_images(scratch.path(), pid), Vec::<String>::new());
    // Only the output directory remains: the image is gone.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 1);
    let partial = load_results(&out);
    assert_eq!(partial["partial"], true);
    assert!(value(&partial, "e", "age", "age_written_bytes", 1).is_none());

    let o = bin().arg("run").arg("--resume").arg(&out).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "resume failed:\n{err}");
    assert!(err.contains("e round 1: aged (churn:8:75%"), "{err}");
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    assert!(value(&r, "e", "age", "age_written_bytes", 1).is_some());
    // The resumed run aged round 1 again and kept it; round 2 restored it.
    assert!(value(&r, "e", "age", "age_restore_bytes", 2).is_some());
    for round in [1, 2] {
        assert!(value(&r, "e", "seqread", "bw_mib_s", round).is_some());
    }
    let left = common::leftovers(scratch.path(), None);
    assert!(left.is_empty(), "left behind after resume: {left:?}");
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 1);
}
