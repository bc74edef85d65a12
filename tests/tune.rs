//! `fsbench tune` (issue 57): bad input refused with exit 2 before anything is created, the
//! dry run's stages, and one search end to end on tiny loop images (root).
//!
//! Privileged tests (root, loop devices, mkfs) print `skipped: <reason>` when a prerequisite
//! is missing, and fail instead when `FSBENCH_REQUIRE_PRIVILEGED=1`.

use std::path::Path;
use std::process::{Command, Stdio};

mod common;

use common::{assert_refused, bin, stderr, stdout};

/// Flags of a tiny, quick search on a 256M image.
const TINY: &[&str] = &[
    "--fs",
    "ext4",
    "--only",
    "randwrite",
    "--image-size",
    "256M",
    "--file-size",
    "32M",
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
];

/// `fsbench tune --dry-run` of [`TINY`] with `extra`: its stdout, the command having succeeded.
fn dry_run(extra: &[&str]) -> String {
    let o = bin()
        .args(["tune", "--dry-run"])
        .args(TINY)
        .args(extra)
        .output()
        .unwrap();
    common::assert_ok(&o)
}

/// `fsbench tune` of [`TINY`] with `extra`, its images in `scratch` and its answer in `out`:
/// stdout, the command having succeeded.
fn tune_in(scratch: &Path, out: &Path, extra: &[&str]) -> String {
    let o = bin()
        .arg("tune")
        .args(TINY)
        .args(extra)
        .arg("--scratch-dir")
        .arg(scratch)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let (text, err) = (stdout(&o), stderr(&o));
    assert!(
        o.status.success(),
        "exit {:?}\n{err}\n{text}",
        o.status.code()
    );
    text
}

/// No loop device of `scratch`'s images is left attached.
fn no_loop_left(scratch: &Path) {
    let losetup = Command::new("losetup").arg("-a").output().unwrap();
    assert!(
        !stdout(&losetup).contains(&scratch.display().to_string()),
        "{}",
        stdout(&losetup)
    );
}

#[test]
fn unknown_options_invalid_combinations_and_a_short_budget_are_refused_creating_nothing() {
    let scratch = common::scratch("fsbench-tune-bad-");
    let out = scratch.path().join("out");
    let run = |extra: &[&str]| {
        let o = bin()
            .arg("tune")
            .args(TINY)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!out.exists(), "{} was created", out.display());
        o
    };
    assert_refused(
        &run(&["--options", "noatime,turbo"]),
        &["--options", "turbo named no option of ext4"],
    );
    assert_refused(
        &run(&["--fs", "e=ext4:mount=data=journal,journal_async_commit"]),
        &["invalid combination", "data=journal mode"],
    );
    assert_refused(
        &run(&["--fs", "e=ext4:mount=noatime,user_xattr"]),
        &["'user_xattr' is not in tune's ext4 space"],
    );
    assert_refused(&run(&["--budget", "5s"]), &["--budget", "too small"]);
    assert_refused(&run(&["--until-settled"]), &["--until-settled"]);
}

#[test]
fn current_must_be_a_mount_point_of_a_searched_filesystem_and_resume_a_tune() {
    let scratch = common::scratch("fsbench-tune-cur-");
    let out = scratch.path().join("out");
    let run = |path: &Path| {
        let o = bin()
            .arg("tune")
            .args(TINY)
            .arg("--current")
            .arg(path)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!out.exists(), "{} was created", out.display());
        o
    };
    let dir = scratch.path().display().to_string();
    assert_refused(
        &run(scratch.path()),
        &["--current", &dir, "is not a mount point (it is inside"],
    );
    assert_refused(&run(Path::new("/proc")), &["/proc is a proc mount"]);
    assert_refused(
        &run(&scratch.path().join("missing")),
        &["--current", "missing"],
    );
    let o = bin()
        .args(["tune", "--resume"])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_refused(&o, &["--resume", "holds no tune journal"]);
}

/// A loop-mounted image, unmounted and detached on drop (also when the test panics).
struct Mounted {
    dev: String,
    mnt: std::path::PathBuf,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn current_reads_a_mounted_ext4s_options_and_inode_size_as_the_baseline() {
    let _serial = common::serial();
    if !common::privileged_loop(
        "tune::current_reads_a_mounted_ext4s_options_and_inode_size_as_the_baseline",
        &["mkfs.ext4", "tune2fs"],
    ) {
        return;
    }
    let scratch = common::scratch("fsbench-tune-cur-");
    let img = scratch.path().join("cur.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
    ok(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-I", "512"])
        .arg(&img));
    let dev = stdout(
        &Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap(),
    )
    .trim()
    .to_string();
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let m = Mounted { dev, mnt };
    ok(Command::new("mount")
        .args(["-o", "noatime,lazytime,errors=remount-ro", &m.dev])
        .arg(&m.mnt));
    let o = bin()
        .args(["tune", "--dry-run"])
        .args(&TINY[2..])
        .arg("--current")
        .arg(&m.mnt)
        .output()
        .unwrap();
    let text = common::assert_ok(&o);
    for want in [
        "current=ext4:mkfs=-I 512;mount=noatime,lazytime",
        "superblock: -I 512",
        "measured at fsbench's default: errors=remount-ro",
        // Screening starts from the mount's values: atime is already noatime.
        "current-atime-default=ext4:mkfs=-I 512;mount=lazytime",
    ] {
        assert!(text.contains(want), "lacks {want}:\n{text}");
    }
    drop(m);
}

#[test]
fn the_dry_run_prints_the_stages_their_estimates_and_the_setups_screened() {
    let text = dry_run(&["--allow-unsafe"]);
    for want in [
        "1 screening",
        "2 racing",
        "3 confirmation",
        "budget 1 h",
        "ext4-noatime=ext4:mount=noatime",
        "ext4-data-writeback=ext4:mount=data=writeback   (weakens durability)",
        "not screened: journal_async_commit",
    ] {
        assert!(text.contains(want), "lacks {want}:\n{text}");
    }
    // Without --allow-unsafe no weakening value is screened.
    let text = dry_run(&[]);
    assert!(!text.contains("weakens durability"), "{text}");
    // Tune's plan refuses what the tune would: a budget short of screening and one
    // confirmation (exit 2).
    let o = bin()
        .args(["tune", "--dry-run", "--budget", "5s"])
        .args(TINY)
        .output()
        .unwrap();
    assert_refused(
        &o,
        &["--budget", "too small for screening and one confirmation"],
    );
    // A fractional design over ext4's two-level options (atime, data=journal alone without
    // --allow-unsafe, lazytime, discard, inode_size: 5 in 8 runs).
    let text = dry_run(&["--screen", "fractional"]);
    assert!(
        text.contains("1 screening     8 setups")
            && text.contains(
                "ext4 screened in a fractional design (8 runs, the baseline one of them): \
                 noatime, data=journal, lazytime, discard, -I 512"
            ),
        "{text}"
    );
    // `fsbench plan tune` prints the dry run's text, and as JSON its stages and budget;
    // refuses what the tune refuses (exit 2).
    let scratch = common::scratch("fsbench-plan-tune-");
    let out = scratch.path().join("out");
    let plan = |extra: &[&str]| {
        bin()
            .args(["plan", "tune"])
            .args(TINY)
            .args(["--options", "atime,lazytime,discard", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let text = common::assert_ok(&plan(&[]));
    let o = bin()
        .args(["tune", "--dry-run"])
        .args(TINY)
        .args(["--options", "atime,lazytime,discard", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(text, common::assert_ok(&o));
    assert!(
        text.contains("2 racing        ≤ 7 combinations per filesystem")
            && text.contains("installs nothing")
            && text.contains("creates "),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&common::assert_ok(&plan(&["--json"]))).unwrap();
    let stages = json["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["screening", "racing", "confirmation"], "{json}");
    assert_eq!(
        stages[0]["names"],
        serde_json::json!(["ext4", "ext4-noatime", "ext4-lazytime", "ext4-discard"])
    );
    assert_eq!(
        (stages[0]["rounds"].as_u64(), stages[1]["looks"].as_u64()),
        (Some(2), Some(3))
    );
    let total: f64 = stages
        .iter()
        .map(|s| s["estimate_s"].as_f64().unwrap())
        .sum();
    assert!(
        total > 0.0 && (json["total_s"].as_f64().unwrap() - total).abs() < 1e-6,
        "{json}"
    );
    assert_eq!(json["budget_s"], 3600.0);
    assert_eq!(json["creates"]["out"], out.display().to_string());
    assert_refused(&plan(&["--budget", "5s"]), &["--budget", "too small"]);
    assert!(!out.exists(), "{} was created", out.display());
    // Given setups: no screening, no race.
    let text = dry_run(&["--confirm", "n=ext4:mount=noatime"]);
    assert!(
        text.contains("screening and racing skipped (--confirm)")
            && text.contains("ext4-noatime=ext4:mount=noatime")
            && !text.contains("2 racing"),
        "{text}"
    );
}

#[test]
fn tune_screens_confirms_and_writes_the_answer_on_tiny_images() {
    let _serial = common::serial();
    if !common::privileged_loop(
        "tune::tune_screens_confirms_and_writes_the_answer_on_tiny_images",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let scratch = common::scratch("fsbench-tune-");
    let out = scratch.path().join("out");
    let text = tune_in(
        scratch.path(),
        &out,
        &["--options", "atime", "--seed", "57"],
    );
    // The answer comes first: a recommendation (or the defaults), the screened option in
    // one of the verdict groups, the time against the budget.
    let first = text.lines().nth(2).unwrap_or_default();
    assert!(first.starts_with("Recommended: "), "{text}");
    assert!(text.contains("noatime"), "{text}");
    assert!(
        text.contains("Time: ") && text.contains("of the 1 h 00 min budget"),
        "{text}"
    );
    let answer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).unwrap()).unwrap();
    let stages = answer["stages"].as_array().unwrap();
    assert_eq!(stages[0]["stage"], "screening");
    assert_eq!(
        stages[0]["setups"],
        serde_json::json!(["ext4", "ext4-noatime"])
    );
    // Tune's plan named the setups it screened and its screening estimate ("ratio only": the
    // time itself depends on the machine's load).
    let o = bin()
        .args(["plan", "tune", "--json", "--options", "atime"])
        .args(TINY)
        .arg("--scratch-dir")
        .arg(scratch.path())
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_str(&common::assert_ok(&o)).unwrap();
    assert_eq!(plan["stages"][0]["names"], stages[0]["setups"], "{plan}");
    assert_eq!(
        plan["stages"][0]["estimate_s"], stages[0]["estimate_s"],
        "{plan}"
    );
    assert_eq!(
        plan["stages"][1]["looks"], 0,
        "one value screened: nothing to race"
    );
    for s in stages {
        let dir = s["out"].as_str().unwrap();
        assert!(
            std::path::Path::new(dir).join("results.json").exists(),
            "{dir}"
        );
    }
    let fs = &answer["filesystems"][0];
    let row = &fs["screened"][0];
    assert_eq!(row["value"], "noatime");
    // Screening's 2 rounds and a round for each later look (the value not separated yet).
    let later = stages
        .iter()
        .filter(|s| s["stage"].as_str().unwrap().starts_with("screening-"))
        .count();
    assert!(later <= 3, "{stages:?}");
    assert_eq!(row["judgement"]["rounds"], 2 + later as u64, "{row}");
    if row["effect"] == "unclear" {
        assert_eq!(later, 3, "an open value is looked at again: {stages:?}");
    }
    assert!(row["judgement"]["ratio"].as_f64().unwrap() > 0.0, "{row}");
    assert_eq!(answer["objectives"][0]["workload"], "randwrite");
    assert_eq!(answer["complete"], true, "{answer}");
    // A winner is confirmed in a stage of its own, and its gain comes from there alone.
    if let Some(c) = fs["safe"].as_object() {
        assert_eq!(stages.last().unwrap()["stage"], "confirmation");
        assert_eq!(c["gain"]["rounds"], 2);
        assert_eq!(c["setup"]["variant"], "ext4-noatime=ext4:mount=noatime");
    }
    // The confirmation is the tune's results.json, as a run's (compare, report, history).
    let confirmed = stages.last().unwrap()["stage"] == "confirmation";
    assert_eq!(out.join("results.json").exists(), confirmed, "{answer}");
    // Nothing separated in screening: no race, no confirmation, screening's verdict instead.
    if !confirmed {
        assert_eq!(stages.len(), 1 + later, "screening's looks alone: {answer}");
        assert!(
            fs["verdict"]
                .as_str()
                .is_some_and(|v| v.starts_with("no option")),
            "{answer}"
        );
    }
    // Every finished stage is in the journal; a resume reads them all back and runs nothing.
    let journal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune-journal.json")).unwrap())
            .unwrap();
    assert_eq!(journal["stages"].as_array().unwrap().len(), stages.len());
    let dirs = |p: &Path| std::fs::read_dir(p).unwrap().count();
    let before = dirs(&out);
    let o = bin().args(["tune", "--resume"]).arg(&out).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("screening: finished before, read back"),
        "{err}"
    );
    assert_eq!(
        dirs(&out),
        before,
        "a resume of a finished tune ran a stage"
    );
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).unwrap()).unwrap();
    assert_eq!(again["stages"], answer["stages"]);
    assert_eq!(again["recommended"], answer["recommended"]);
    // Nothing left behind.
    no_loop_left(scratch.path());
}

#[test]
fn a_confirmed_weakening_setup_goes_through_the_crash_check_and_the_answer_says_what_it_lost() {
    // Refused without --allow-unsafe, before anything is created (no root needed).
    let scratch = common::scratch("fsbench-tune-crash-");
    let out = scratch.path().join("out");
    let o = bin()
        .arg("tune")
        .args(TINY)
        .args(["--confirm", "w=ext4:mount=barrier=0"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_refused(&o, &["--confirm", "w weakens durability", "--allow-unsafe"]);
    assert!(!out.exists());
    let _serial = common::serial();
    if !common::privileged_loop(
        "tune::a_confirmed_weakening_setup_goes_through_the_crash_check_and_the_answer_says_what_it_lost",
        &["mkfs.ext4"],
    ) {
        return;
    }
    // barrier=0 given (screening would pick it only when it measured ahead, which a loop
    // image does not promise): confirmed in fresh rounds, then crash-fsync on it and on the
    // baseline.
    let text = tune_in(
        scratch.path(),
        &out,
        &["--allow-unsafe", "--confirm", "w=ext4:mount=barrier=0"],
    );
    let answer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).unwrap()).unwrap();
    let stages: Vec<&str> = answer["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["confirmation", "crash"], "{answer}");
    let crash_dir = answer["stages"][1]["out"].as_str().unwrap();
    assert!(Path::new(crash_dir).join("results.json").exists());
    // Never the recommendation; reported apart with what the crash states showed.
    assert!(answer["recommended"].is_null(), "{answer}");
    let u = &answer["unsafe_best"];
    assert_eq!(
        u["setup"]["variant"], "ext4-barrier-0=ext4:mount=barrier=0",
        "{answer}"
    );
    assert_eq!(u["gain"]["rounds"], 2, "{u}");
    let k = &u["crash"];
    assert_eq!(k["workload"], "crash-fsync", "{u}");
    assert_eq!(k["safe"], "ext4", "{u}");
    let (lost, states) = (
        k["lost_states"].as_u64().unwrap(),
        k["states"].as_u64().unwrap(),
    );
    // Without flushes the writes after mkfs may all be lost in a state; with them (the
    // baseline) an acknowledged write never is.
    assert!(states > 0 && lost > 0, "{k}");
    assert_eq!(k["safe_lost_states"], 0, "{k}");
    assert_eq!(k["safe_states"].as_u64(), Some(states), "{k}");
    assert!(
        text.contains("barrier=0 would be ")
            && text.contains(&format!(
                "loses acknowledged writes in {lost} of {states} crash states (ext4: 0 of \
                 {states}; crash-fsync)"
            )),
        "{text}"
    );
    no_loop_left(scratch.path());
}
