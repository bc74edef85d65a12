//! Crash consistency (issue 32): the FUSE recorder under a direct-I/O loop device, the oracle
//! workloads' crash states, the negative control, and the refusal on a `--dir` target.

mod common;

use fsbench::host::recorder::{Entry, Recorder};
use fsbench::scratch::fileloop::FileLoop;
use std::path::Path;
use std::process::Command;

const FILESYSTEMS: &[&str] = &["ext4", "xfs", "btrfs"];

fn mkfs(fs: &str, dev: &Path) {
    let d = dev.to_str().unwrap();
    let out = match fs {
        "ext4" => Command::new("mkfs.ext4").args(["-q", "-F", d]).output(),
        "xfs" => Command::new("mkfs.xfs").args(["-q", "-f", d]).output(),
        _ => Command::new("mkfs.btrfs").args(["-q", "-f", d]).output(),
    }
    .unwrap();
    assert!(out.status.success(), "mkfs {fs}: {:?}", out);
}

fn tool(fs: &str) -> &'static str {
    match fs {
        "ext4" => "mkfs.ext4",
        "xfs" => "mkfs.xfs",
        _ => "mkfs.btrfs",
    }
}

/// A direct-I/O loop device over the recorder's FUSE file carries each filesystem, and an
/// fsync on it reaches the daemon as a flush after the data's writes.
#[test]
fn recorder_carries_each_filesystem_and_sees_its_flushes() {
    let mut ran = 0;
    for fs in FILESYSTEMS {
        let needs = common::privileged(&format!("recorder-{fs}"))
            .loop_devices()
            .need("/dev/fuse", Path::new("/dev/fuse").exists())
            .tools(&[tool(fs)]);
        if !needs.case_ok() {
            continue;
        }
        ran += 1;
        let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
        let rec = Recorder::start(scratch.path(), 320 << 20, 64 << 20).unwrap();
        let lo = FileLoop::attach(&rec.file(), true).unwrap();
        mkfs(fs, lo.device());
        let mnt = scratch.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let st = Command::new("mount")
            .args([lo.device().to_str().unwrap(), mnt.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(st.success(), "mount {fs}");
        rec.log().start();
        let before = rec.log().position();
        {
            use std::io::Write;
            let mut f = std::fs::File::create(mnt.join("x")).unwrap();
            f.write_all(&vec![0x5au8; 8192]).unwrap();
            f.sync_all().unwrap();
        }
        let mark = rec.log().position();
        let st = Command::new("umount").arg(&mnt).status().unwrap();
        assert!(st.success());
        let log = rec.log().stop();
        drop(lo);
        drop(rec);
        let entries = &log.entries[before..mark];
        let data_at = entries.iter().position(|e| match e {
            Entry::Write { data, .. } => data.windows(64).any(|w| w.iter().all(|&b| b == 0x5a)),
            Entry::Flush => false,
        });
        let data_at =
            data_at.unwrap_or_else(|| panic!("{fs}: the file's data never reached the log"));
        assert!(
            entries[data_at..].contains(&Entry::Flush),
            "{fs}: no flush after the data before fsync returned ({} entries)",
            entries.len()
        );
        eprintln!(
            "{fs}: {} entries up to the fsync's return, {} flushes",
            entries.len(),
            entries.iter().filter(|e| **e == Entry::Flush).count()
        );
    }
    common::ran_cases(
        "recorder_carries_each_filesystem_and_sees_its_flushes",
        ran,
        FILESYSTEMS.len(),
    );
}

fn fsbench() -> Command {
    common::bin()
}

/// A plan with the crash workloads shrunk to `states` states of `ops` operations.
fn small_plan(dir: &Path, ids: &[&str], ops: u32, states: u32) -> std::path::PathBuf {
    let mut s = String::from("rounds = 1\n");
    for id in ids {
        s.push_str(&format!(
            "[[workload]]\nid = \"{id}\"\nops = {ops}\nstates = {states}\n"
        ));
    }
    let p = dir.join("plan.toml");
    std::fs::write(&p, s).unwrap();
    p
}

/// `(setup, workload) → value` of one metric in results.json.
fn metric(results: &serde_json::Value, workload: &str, setup: &str, id: &str) -> Option<f64> {
    results["samples"]
        .as_array()?
        .iter()
        .find(|s| s["workload"] == workload && s["setup"] == setup && s["metric"] == id)
        .and_then(|s| s["value"].as_f64())
}

/// `fsbench run` of `plan` (its setups, or `fs` instead) with `--only only`: results.json.
fn run_crash(scratch: &Path, fs: Option<&str>, plan: &Path, only: &str) -> serde_json::Value {
    // One run at a time: a run's preparation syncs every filesystem (before its cache drop),
    // and that sync, landing in another test's recording, writes back and flushes what a
    // negative control (fsync=off, no fsync) must leave unflushed.
    static ONE_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let out = scratch.join("out");
    let mut cmd = fsbench();
    // A short wait for a quiet device after mkfs: the crash figures are counts, not speeds.
    cmd.args(["run", "--yes", "--image-size", "1G", "--quiet-window", "1s"])
        .args(["--quiet-timeout", "10s", "--scratch-dir"])
        .arg(scratch);
    if let Some(fs) = fs {
        cmd.args(["--fs", fs]);
    }
    let o = cmd
        .args(["--only", only, "--plan"])
        .arg(plan)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "fsbench run failed: {stderr}");
    assert!(
        stderr.contains("crash states,"),
        "progress lines while states are checked: {stderr}"
    );
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every default setup keeps every acknowledged fsync and rename through every crash state,
/// mounts each state, and its checker finds each clean.
#[test]
fn default_setups_lose_no_acknowledged_operation() {
    if !common::privileged("default_setups_lose_no_acknowledged_operation")
        .loop_devices()
        .need("/dev/fuse", Path::new("/dev/fuse").exists())
        .tools(&[
            "mkfs.ext4",
            "e2fsck",
            "mkfs.xfs",
            "xfs_repair",
            "mkfs.btrfs",
            "btrfs",
        ])
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let ids = ["crash-fsync", "crash-rename"];
    let plan = small_plan(scratch.path(), &ids, 12, 6);
    let r = run_crash(
        scratch.path(),
        Some("ext4,xfs,btrfs"),
        &plan,
        &ids.join(","),
    );
    for fs in FILESYSTEMS {
        for id in ids {
            let m = |k| metric(&r, id, fs, k).unwrap_or_else(|| panic!("{id} on {fs}: no {k}"));
            assert_eq!(m("crash_states"), 6.0, "{id} on {fs}");
            assert_eq!(m("acked_ops"), 12.0, "{id} on {fs}");
            assert_eq!(m("lost_acked_ops"), 0.0, "{id} on {fs}");
            assert_eq!(m("corrupt_files"), 0.0, "{id} on {fs}");
            assert_eq!(m("unmountable_states"), 0.0, "{id} on {fs}");
            assert_eq!(m("fsck_errors"), 0.0, "{id} on {fs}");
            assert!(m("log_bytes") > 0.0);
        }
    }
    assert_nothing_left(scratch.path());
}

/// The negative controls: ext4 with seed 001's `data=writeback,barrier=0` (no flush reaches
/// the device), and an oracle that skips its fsyncs, both lose acknowledged operations under
/// this model; a failing state is kept with its log position and seed. The seeds' durability
/// claims are judged from these crash states, and the durability verdict disqualifies the
/// setup that lost data, in the terminal, HTML and JSON reports.
#[test]
fn unsafe_configurations_lose_acknowledged_operations() {
    if !common::privileged("unsafe_configurations_lose_acknowledged_operations")
        .loop_devices()
        .need("/dev/fuse", Path::new("/dev/fuse").exists())
        .tools(&["mkfs.ext4", "e2fsck"])
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let plan = scratch.path().join("plan.toml");
    // Seed 004's data=writeback claim is about a database's own log: append + fdatasync.
    std::fs::write(
        &plan,
        "rounds = 1\n\
         fs = [\"ext4\", \"nb=ext4:mount=data=writeback,barrier=0\", \"wb=ext4:mount=data=writeback\"]\n\
         [[workload]]\nid = \"crash-fsync\"\nops = 12\nstates = 3\n\
         [[workload]]\nid = \"crash-append\"\nops = 12\nstates = 3\nsetups = [\"wb\"]\n\
         [[workload]]\nid = \"crash-nosync\"\nkind = \"crash\"\nmode = \"append\"\nops = 12\n\
         states = 6\nsync = false\nsetups = [\"ext4\"]\n",
    )
    .unwrap();
    let r = run_crash(
        scratch.path(),
        None,
        &plan,
        "crash-fsync,crash-append,crash-nosync",
    );
    let lost = |id, setup| metric(&r, id, setup, "lost_acked_ops").unwrap();
    assert!(lost("crash-fsync", "nb") > 0.0, "barrier=0 must lose data");
    assert!(metric(&r, "crash-fsync", "nb", "lost_states").unwrap() > 0.0);
    assert_eq!(lost("crash-fsync", "ext4"), 0.0);
    assert_eq!(lost("crash-fsync", "wb"), 0.0);
    assert_eq!(lost("crash-append", "wb"), 0.0);
    assert!(
        lost("crash-nosync", "ext4") > 0.0,
        "no fsync must lose data"
    );
    let kept = scratch.path().join("fsbench-crash-kept-nb-crash-fsync");
    let state = std::fs::read_dir(&kept)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("state.json")).unwrap()).unwrap();
    assert!(json["state"]["point"].as_u64().is_some());
    assert!(json["lost"].as_u64().unwrap() > 0);
    assert!(state.join("image").exists());
    remove_kept(scratch.path());
    assert_nothing_left(scratch.path());

    let results = scratch.path().join("out/results.json");
    let report = |format: &str| report(&results, format);
    // The seeds' claims, from the crash states: one round settles each.
    let md = report("md");
    let row = |needle: &str| {
        md.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no claim row with {needle}:\n{md}"))
            .to_string()
    };
    let nb = row("data=writeback,barrier=0 needs a battery-backed cache");
    assert!(
        nb.contains("confirmed") && nb.contains("nb crash-fsync"),
        "{nb}"
    );
    let wb = row("data=writeback is safe for a database");
    assert!(
        wb.contains("confirmed") && wb.contains("wb crash-append"),
        "{wb}"
    );
    let xfs = row("XFS nobarrier needs a battery-backed cache");
    assert!(
        xfs.contains("not comparable here") && xfs.contains("removed in Linux 4.19"),
        "{xfs}"
    );
    // The durability verdict: the setup that lost data is disqualified, the two that kept
    // everything tie, the control is not counted.
    let table = report("table");
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Durability (fsync'd data after a power cut): tie: ext4, wb kept every acknowledged write"
        ),
        "{table}"
    );
    assert!(
        flat.contains("nb: lost acknowledged writes in") && flat.contains("disqualified"),
        "{table}"
    );
    assert!(flat.contains("not counted: crash-nosync"), "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    let html = report("html");
    assert!(
        html.contains("<b>Durability (fsync&#x27;d data after a power cut): ext4, wb</b> (a tie)")
            || html
                .contains("<b>Durability (fsync'd data after a power cut): ext4, wb</b> (a tie)"),
        "{html}"
    );
    assert!(
        html.contains("<li class=\"lost\">nb: lost acknowledged writes"),
        "{html}"
    );
    let j: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let d = &j["durability"];
    assert_eq!(d["best"], serde_json::json!(["ext4", "wb"]), "{d}");
    assert_eq!(d["tie"], true);
    let nb = d["setups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setup"] == "nb")
        .unwrap();
    assert_eq!(nb["kept"], false, "{nb}");
    assert!(nb["lost_states"].as_u64().unwrap() > 0, "{nb}");
}

/// The quick path: FS_IOC_SHUTDOWN (log unflushed) after fsync'd writes, remount, check.
/// ext4 and XFS keep every fsync'd file; the same oracle without its syncs loses them, so the
/// check can fail.
#[test]
fn shutdown_quick_path_keeps_fsynced_files_and_its_control_loses_some() {
    if !common::privileged("shutdown_quick_path_keeps_fsynced_files_and_its_control_loses_some")
        .loop_devices()
        .tools(&["mkfs.ext4", "e2fsck", "mkfs.xfs", "xfs_repair"])
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let plan = scratch.path().join("plan.toml");
    std::fs::write(
        &plan,
        "rounds = 1\n[[workload]]\nid = \"crash-shutdown\"\nops = 12\nstates = 2\n\
         [[workload]]\nid = \"crash-shutdown-nosync\"\nkind = \"crash\"\nmethod = \"shutdown\"\n\
         ops = 12\nstates = 2\nsync = false\n",
    )
    .unwrap();
    let r = run_crash(
        scratch.path(),
        Some("ext4,xfs"),
        &plan,
        "crash-shutdown,crash-shutdown-nosync",
    );
    for fs in ["ext4", "xfs"] {
        let m = |id, k| metric(&r, id, fs, k).unwrap_or_else(|| panic!("{id} on {fs}: no {k}"));
        assert_eq!(m("crash-shutdown", "crash_states"), 2.0, "{fs}");
        assert_eq!(m("crash-shutdown", "acked_ops"), 24.0, "{fs}");
        assert_eq!(m("crash-shutdown", "lost_acked_ops"), 0.0, "{fs}");
        assert_eq!(m("crash-shutdown", "fsck_errors"), 0.0, "{fs}");
        assert!(
            m("crash-shutdown-nosync", "lost_acked_ops") > 0.0,
            "{fs}: unsynced files must not survive a shutdown that flushes nothing"
        );
        let note = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["setup"] == fs)
            .filter_map(|n| n["message"].as_str())
            .find(|n| n.starts_with("crash-shutdown: quick path"))
            .unwrap_or_else(|| panic!("{fs}: no quick-path note"));
        assert!(note.contains("a weaker check"), "{note}");
    }
    assert_nothing_left(scratch.path());
}

/// A crash workload on a --dir target is refused before anything is created.
#[test]
fn crash_on_a_dir_target_is_refused_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let o = fsbench()
        .args(["plan", "--only", "crash-fsync", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("crash-fsync cannot run on a --dir target") && e.contains("no device to record"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// Kept states are the user's to inspect: a test removes them itself.
fn remove_kept(scratch: &Path) {
    for e in std::fs::read_dir(scratch).unwrap().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with("fsbench-crash-kept-")
        {
            std::fs::remove_dir_all(e.path()).unwrap();
        }
    }
}

/// `fsbench report --format FORMAT` of `results` at 100 columns.
fn report(results: &Path, format: &str) -> String {
    let o = fsbench()
        .args(["report", "--format", format])
        .arg(results)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// PostgreSQL itself on the recording device (seed 004): on ext4 `data=writeback` every crash
/// state recovers (the server starts) and holds every transaction whose COMMIT was
/// acknowledged; the same server with `fsync=off` loses acknowledged commits under the same
/// model, so the check can fail. The seed's claim is judged from these states, and the
/// workload is in the durability verdict and the Crash consistency table.
#[test]
fn postgres_keeps_committed_transactions_and_fsync_off_loses_some() {
    let name = "postgres_keeps_committed_transactions_and_fsync_off_loses_some";
    if !common::privileged(name)
        .loop_devices()
        .need("/dev/fuse", Path::new("/dev/fuse").exists())
        .need(
            "a PostgreSQL server (postgresql package)",
            fsbench::workload::pgbench::server::Binaries::find().is_ok(),
        )
        .tools(&["mkfs.ext4", "e2fsck"])
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let plan = scratch.path().join("plan.toml");
    std::fs::write(
        &plan,
        "rounds = 1\nfs = [\"wb=ext4:mount=data=writeback\"]\n\
         [[workload]]\nid = \"crash-pgbench\"\nops = 20\nstates = 4\n\
         [[workload]]\nid = \"crash-pgbench-nofsync\"\nkind = \"crash\"\nmode = \"pgbench\"\n\
         ops = 20\nstates = 4\nsync = false\n",
    )
    .unwrap();
    let r = run_crash(
        scratch.path(),
        None,
        &plan,
        "crash-pgbench,crash-pgbench-nofsync",
    );
    let m = |id, k| metric(&r, id, "wb", k).unwrap_or_else(|| panic!("{id}: no {k}"));
    assert_eq!(m("crash-pgbench", "crash_states"), 4.0);
    assert_eq!(m("crash-pgbench", "acked_ops"), 20.0);
    for k in [
        "lost_acked_ops",
        "lost_states",
        "corrupt_files",
        "unmountable_states",
        "fsck_errors",
    ] {
        assert_eq!(m("crash-pgbench", k), 0.0, "crash-pgbench: {k}");
    }
    assert!(
        m("crash-pgbench-nofsync", "lost_acked_ops") > 0.0,
        "fsync=off must lose acknowledged commits"
    );
    let note = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .find(|n| n.starts_with("crash-pgbench: 20 operations (PostgreSQL transactions"))
        .unwrap_or_else(|| panic!("no crash-pgbench note: {}", r["notes"]));
    assert!(note.contains("4 crash states"), "{note}");
    remove_kept(scratch.path());
    assert_nothing_left(scratch.path());
    let pg = Command::new("pgrep")
        .args(["-a", "-u", "postgres"])
        .output()
        .unwrap();
    let pg = String::from_utf8_lossy(&pg.stdout);
    assert!(!pg.contains("fsbench-crash-"), "a server is left: {pg}");
    // Its mountpoints are under fsbench's mount root (the server user must reach them).
    let left: Vec<String> = std::fs::read_dir("/run/fsbench")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fsbench-crash-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left in /run/fsbench: {left:?}");

    let results = scratch.path().join("out/results.json");
    let md = report(&results, "md");
    let claim = md
        .lines()
        .find(|l| l.contains("PostgreSQL on ext4 data=writeback keeps every committed transaction"))
        .unwrap_or_else(|| panic!("no PostgreSQL claim row:\n{md}"));
    assert!(
        claim.contains("confirmed") && claim.contains("wb crash-pgbench"),
        "{claim}"
    );
    let table = report(&results, "table");
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Durability (fsync'd data after a power cut): wb kept every acknowledged write"
        ),
        "{table}"
    );
    assert!(
        flat.contains("not counted: crash-pgbench-nofsync"),
        "{table}"
    );
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    let crash_table = md
        .split("## Crash consistency")
        .nth(1)
        .unwrap_or_else(|| panic!("no Crash consistency table:\n{md}"));
    assert!(
        crash_table.contains("| crash-pgbench — lost acknowledged operations | count ↓ | 0.00 |"),
        "{md}"
    );
}

/// Seed 004's XFS `nobarrier` is refused at plan time with the reason (the XFS driver declares
/// it removed since 4.19), before anything is created.
#[test]
fn xfs_nobarrier_is_refused_before_anything_is_made() {
    let d = tempfile::tempdir().unwrap();
    let o = fsbench()
        .args([
            "plan",
            "--fs",
            "x=xfs:mount=noatime,nobarrier",
            "--scratch-dir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("setup \"x\": mount option \"nobarrier\" was removed in Linux 4.19"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// No loop device, mount or backing file of the recorder is left in `scratch`.
fn assert_nothing_left(scratch: &Path) {
    let s = scratch.to_string_lossy().to_string();
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains(&s));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&s), "a mount under {s} is left");
    let left: Vec<_> = std::fs::read_dir(scratch)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("fsbench-"))
        .collect();
    assert!(left.is_empty(), "left in the scratch dir: {left:?}");
}
