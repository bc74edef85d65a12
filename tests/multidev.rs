//! Issue 34: several devices, one filesystem (`--images N`, `--device` repeated, `raid=`).
//!
//! Plan-time refusals run anywhere; the rest needs root and loop devices (the gate of
//! `tests/common`: skipped without them, failed under `FSBENCH_REQUIRE_PRIVILEGED=1`).
//! Sizes are small and each run is one round of `usable-space` and a 1 s `randread`.

use fsbench::plan::SetupSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

mod common;

use common::{bin, sh, sh_ok, stderr};

/// `fsbench run --yes`, one round, tiny sizes, in `scratch`.
fn run(scratch: &Path, extra: &[&str]) -> Output {
    run_only(scratch, "usable-space,randread", extra)
}

/// [`run`] of the workloads `only`.
fn run_only(scratch: &Path, only: &str, extra: &[&str]) -> Output {
    bin()
        .args(["run", "--yes", "--no-history", "--rounds", "1"])
        .args(["--file-size", "32M", "--runtime", "1s", "--ramp", "0s"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .args(["--only", only])
        .arg("--scratch-dir")
        .arg(scratch)
        .arg("--out")
        .arg(scratch.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

fn results(scratch: &Path) -> Value {
    let text = std::fs::read_to_string(scratch.join("out/results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The samples of `setup`/`workload`/`metric`.
fn values(r: &Value, setup: &str, workload: &str, metric: &str) -> Vec<f64> {
    r["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["setup"] == setup && s["workload"] == workload && s["metric"] == metric)
        .map(|s| s["value"].as_f64().unwrap())
        .collect()
}

/// The notes of `setup` that start with `prefix` (`layout: per device: …`).
fn notes(r: &Value, setup: &str, prefix: &str) -> Vec<String> {
    r["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|n| n["setup"] == setup)
                .filter_map(|n| n["message"].as_str())
                .filter(|m| m.starts_with(prefix))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What device `name` wrote according to a `per device:` note (`loop3 read 0 B, wrote 32 MiB`).
fn written_by(note: &str, name: &str) -> Option<String> {
    let part = note
        .split([':', ';'])
        .find(|p| p.trim().starts_with(&format!("{name} ")))?;
    Some(part.split("wrote ").nth(1)?.trim().to_string())
}

/// The target's devices as `results.json` records them.
fn target_devices(r: &Value) -> Vec<String> {
    r["target"]["extra"]["devices"]
        .as_str()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect()
}

fn kernel_name(dev: &str) -> String {
    Path::new(dev)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn mkfs_args(r: &Value, setup: &str) -> Vec<String> {
    r["setups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == setup)
        .map(|s| {
            s["mkfs_args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Loop devices backed by images in `dir` (what a run there attached).
fn attached_in(dir: &Path) -> String {
    let all = sh_ok(&["losetup", "-a"]);
    let d = dir.display().to_string();
    all.lines()
        .filter(|l| l.contains(&d))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fsbench_pools() -> String {
    if !common::have("zpool") {
        return String::new();
    }
    let o = sh(&["zpool", "list", "-H", "-o", "name"]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("fsbench_"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn layouts_that_need_more_devices_or_md_are_refused_at_plan_time() {
    let plan = |args: &[&str]| {
        bin()
            .args(["plan", "--image-size", "4G"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = plan(&["--fs", "b=btrfs:raid=raid1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("raid=raid1 needs at least 2 devices and the target has 1"),
        "{}",
        stderr(&o)
    );
    let o = plan(&["--images", "2", "--fs", "z=zfs:raid=raidz2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("use --images 3"), "{}", stderr(&o));
    let o = plan(&[
        "--images",
        "2",
        "--fs",
        "b=btrfs:raid=raid1,z=zfs:raid=mirror",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
    assert!(out.contains("2 × 4 GiB sparse image"), "{out}");
    let o = plan(&["--images", "3", "--fs", "x=xfs:raid=raid5"]);
    if Path::new("/proc/mdstat").exists() {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    } else {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("no /proc/mdstat"), "{}", stderr(&o));
    }
    let o = plan(&["--images", "2", "--dir", "/var/tmp", "--fs", "ext4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// The final argv check of a layout: a device outside the target in the mkfs words is
/// refused before mkfs runs, on the command line (plan time) and in the driver itself (a
/// plan that got past the plan-time check, e.g. an edited plan.json).
#[test]
fn a_layouts_mkfs_argument_naming_another_device_is_refused_and_it_stays_intact() {
    if !common::privileged_loop(module_path!(), &["mkfs.ext4", "mkfs.btrfs", "cksum"]) {
        return;
    }
    let victim = common::LoopImage::new(64 << 20);
    sh_ok(&["mkfs.ext4", "-q", "-F", "-L", "victim", &victim.dev]);
    let before = sh_ok(&["cksum", &victim.dev]);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let o = run(
        s,
        &[
            "--images",
            "2",
            "--image-size",
            "256M",
            "--fs",
            &format!("b=btrfs:raid=raid1;mkfs=-L x {}", victim.dev),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&victim.dev), "{}", stderr(&o));
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));

    let a = common::LoopImage::new(256 << 20);
    let b = common::LoopImage::new(256 << 20);
    let devices = [PathBuf::from(&a.dev), PathBuf::from(&b.dev)];
    let mut setup = SetupSpec::plain("btrfs");
    setup.name = "b".into();
    setup.raid = Some("raid1".into());
    let mnt = s.join("mnt");
    for words in [
        vec![victim.dev.clone()],
        vec!["--label".into(), "x".into(), victim.dev.clone()],
        vec!["-m".into(), "raid1".into(), a.dev.clone()],
    ] {
        setup.mkfs = words.clone();
        let driver = fsbench::fs::driver("btrfs").unwrap();
        let e = match driver.create_and_mount_on(&devices, &setup, &mnt, Duration::from_secs(60)) {
            Ok(_) => panic!("{words:?} was let through"),
            Err(e) => e,
        };
        assert_eq!(e.exit_code(), 2, "{words:?}: {e}");
        assert!(e.to_string().contains("refused to run: mkfs.btrfs"), "{e}");
    }
    // With spare=yes the last device is the target's but not the layout's: a mkfs word
    // naming it is refused like any other device, and it stays blank.
    let c = common::LoopImage::new(256 << 20);
    let three = [
        PathBuf::from(&a.dev),
        PathBuf::from(&b.dev),
        PathBuf::from(&c.dev),
    ];
    setup.spare = true;
    setup.mkfs = vec!["--label".into(), "x".into(), c.dev.clone()];
    let driver = fsbench::fs::driver("btrfs").unwrap();
    match driver.create_and_mount_on(&three, &setup, &mnt, Duration::from_secs(60)) {
        Ok(_) => panic!("the spare {} was let through", c.dev),
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(
                e.to_string()
                    .contains(&format!("{}: it is a block device", c.dev)),
                "{e}"
            );
        }
    }
    assert!(
        sh(&["blkid", "-p", &c.dev]).stdout.is_empty(),
        "the spare was written"
    );
    assert_eq!(sh_ok(&["cksum", &victim.dev]), before, "the victim changed");
    assert!(!sh(&["findmnt", "-n", "-S", &victim.dev]).status.success());
    // Untouched by the refused commands: no Btrfs signature on the would-be members.
    for d in [&a.dev, &b.dev] {
        assert!(sh(&["blkid", "-p", d]).stdout.is_empty(), "{d} was written");
    }
}

/// `--device` twice: each device checked, one consent (`--yes`), one Btrfs raid1 over both.
#[test]
fn two_devices_make_one_btrfs_raid1() {
    if !common::privileged_loop(module_path!(), &["mkfs.btrfs", "btrfs", "findmnt"]) {
        return;
    }
    let a = common::LoopImage::new(320 << 20);
    let b = common::LoopImage::new(320 << 20);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    // The same device twice is refused, nothing written.
    let o = run(
        s,
        &[
            "--device",
            &a.dev,
            "--device",
            &a.dev,
            "--fs",
            "b=btrfs:raid=raid1",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("same device"), "{}", stderr(&o));
    let o = run(
        s,
        &[
            "--device",
            &a.dev,
            "--device",
            &b.dev,
            "--fs",
            "b=btrfs:raid=raid1",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = results(s);
    let args = mkfs_args(&r, "b");
    assert!(
        args.ends_with(&[a.dev.clone(), b.dev.clone()])
            && args.windows(2).any(|w| w == ["-d", "raid1"]),
        "{args:?}"
    );
    assert_eq!(r["target"]["extra"]["device_count"], "2");
    let avail = values(&r, "b", "usable-space", "avail_bytes");
    // raid1 keeps two copies: less than one device's size is usable.
    assert!(
        avail.len() == 1 && avail[0] > 0.0 && avail[0] < (320 << 20) as f64,
        "{avail:?}"
    );
    assert_eq!(values(&r, "b", "randread", "iops").len(), 1);
    for d in [&a.dev, &b.dev] {
        assert!(
            !sh(&["findmnt", "-n", "-S", d]).status.success(),
            "{d} left mounted"
        );
    }
}

/// The tests here that use ZFS, one at a time: the fsbench that started zfs-fuse stops it
/// when its own pools are gone, whatever pools another fsbench has then (one daemon per
/// machine), so two runs at once can pull the daemon from under each other.
static ZFS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Root, loop devices, Btrfs and ZFS tools (the runs with both kinds of layout).
fn btrfs_and_zfs() -> bool {
    common::privileged(module_path!())
        .loop_devices()
        .tools(&["mkfs.btrfs", "btrfs"])
        .zfs()
        .ok()
}

/// The run on three images: a Btrfs raid1 and a ZFS mirror, usable space and
/// randread per layout, nothing left attached or imported.
#[test]
fn three_images_btrfs_raid1_and_zfs_mirror() {
    if !btrfs_and_zfs() {
        return;
    }
    let _zfs = ZFS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let o = run_only(
        s,
        "usable-space,layout,randread",
        &[
            "--images",
            "3",
            "--image-size",
            "320M",
            "--fs",
            "b1=btrfs:raid=raid1,z1=zfs:raid=mirror",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = results(s);
    assert_eq!(r["target"]["extra"]["device_count"], "3");
    // The device counters cover every device: laying out the 32 MiB data file writes two
    // copies on a Btrfs raid1 and three on a three-way ZFS mirror (plus metadata), where
    // the first device alone would show about one.
    for (setup, copies) in [("b1", 2.0), ("z1", 3.0)] {
        let total = values(&r, setup, "layout", "device_write_bytes_total");
        let data = (32u64 << 20) as f64;
        assert!(
            total.len() == 1 && total[0] >= 0.9 * copies * data && total[0] < (copies + 2.0) * data,
            "{setup}: {total:?} for {copies} copies of {data}"
        );
        let per = notes(&r, setup, "layout: per device: ");
        assert_eq!(per.len(), 1, "{setup}: {:?}", r["notes"]);
    }
    let devs = target_devices(&r);
    assert_eq!(devs.len(), 3);
    let b = mkfs_args(&r, "b1");
    assert!(b.ends_with(&devs), "{b:?}");
    let z = mkfs_args(&r, "z1");
    let tail: Vec<String> = std::iter::once("mirror".to_string())
        .chain(devs.iter().cloned())
        .collect();
    assert!(z.ends_with(&tail), "{z:?}");
    for setup in ["b1", "z1"] {
        let avail = values(&r, setup, "usable-space", "avail_bytes");
        assert!(avail.len() == 1 && avail[0] > 0.0, "{setup}: {avail:?}");
        // Every layout here keeps a copy on each of two or more devices.
        assert!(avail[0] < (320 << 20) as f64, "{setup}: {avail:?}");
        assert_eq!(values(&r, setup, "randread", "iops").len(), 1, "{setup}");
        // One device failed: the reads again, as samples of their own.
        let degraded = values(&r, setup, "randread-degraded", "iops");
        assert!(
            degraded.len() == 1 && degraded[0] > 0.0,
            "{setup}: {degraded:?}"
        );
        for step in ["scrub", "rebuild"] {
            let per_gib = values(&r, setup, step, "seconds_per_gib");
            let data = values(&r, setup, step, "bytes");
            assert!(
                per_gib.len() == 1 && per_gib[0] > 0.0,
                "{setup} {step}: {per_gib:?}"
            );
            // The data file (32 MiB) is there to scrub and rebuild.
            assert!(
                data.len() == 1 && data[0] >= (32 << 20) as f64,
                "{setup} {step}: {data:?}"
            );
        }
    }
    assert!(
        r["failures"].as_array().is_none_or(|f| f.is_empty()),
        "{}",
        r["failures"]
    );
    let err = stderr(&o);
    assert!(
        err.contains("scrub") && err.contains("rebuild onto"),
        "{err}"
    );
    // The rebuild wrote onto the failed (last) device, as its per-device note says.
    for setup in ["b1", "z1"] {
        let per = notes(&r, setup, "rebuild: per device: ");
        let onto = per
            .first()
            .and_then(|n| written_by(n, &kernel_name(&devs[2])))
            .unwrap_or_default();
        assert!(!onto.is_empty() && onto != "0 B", "{setup}: {per:?}");
    }
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));
    assert!(fsbench_pools().is_empty(), "{}", fsbench_pools());
}

/// `spare=yes` on three images: each layout is built on the first two, the third stays out
/// of mkfs and the rebuild replaces the failed second device with it (`btrfs replace`,
/// `zpool replace POOL OLD NEW`), recorded as `rebuild-onto-spare`.
#[test]
fn a_spare_replaces_the_failed_device() {
    if !btrfs_and_zfs() {
        return;
    }
    let _zfs = ZFS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let fs = "bs=btrfs:raid=raid1;spare=yes,zs=zfs:raid=mirror;spare=yes";
    let o = bin()
        .args(["plan", "--images", "3", "--image-size", "320M", "--fs", fs])
        .args(["--only", "usable-space,randread"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        plan.contains("bs: btrfs raid=raid1 over devices 1–2 of 3; device 3 is the spare"),
        "{plan}"
    );
    let o = run(s, &["--images", "3", "--image-size", "320M", "--fs", fs]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = results(s);
    let devs = target_devices(&r);
    assert_eq!(devs.len(), 3);
    let b = mkfs_args(&r, "bs");
    assert!(b.ends_with(&devs[..2]) && !b.contains(&devs[2]), "{b:?}");
    let z = mkfs_args(&r, "zs");
    assert!(
        z.ends_with(&["mirror".to_string(), devs[0].clone(), devs[1].clone()])
            && !z.contains(&devs[2]),
        "{z:?}"
    );
    for setup in ["bs", "zs"] {
        assert!(
            values(&r, setup, "rebuild", "seconds").is_empty(),
            "{setup}"
        );
        let per_gib = values(&r, setup, "rebuild-onto-spare", "seconds_per_gib");
        assert!(
            per_gib.len() == 1 && per_gib[0] > 0.0,
            "{setup}: {per_gib:?}"
        );
        assert_eq!(
            values(&r, setup, "randread-degraded", "iops").len(),
            1,
            "{setup}"
        );
        // The spare received the copy; the failed device got nothing during the rebuild.
        let per = notes(&r, setup, "rebuild-onto-spare: per device: ");
        let note = per.first().cloned().unwrap_or_default();
        let spare = written_by(&note, &kernel_name(&devs[2])).unwrap_or_default();
        assert!(!spare.is_empty() && spare != "0 B", "{setup}: {note}");
        assert_eq!(
            written_by(&note, &kernel_name(&devs[1])).as_deref(),
            Some("0 B"),
            "{setup}: {note}"
        );
    }
    assert!(
        r["failures"].as_array().is_none_or(|f| f.is_empty()),
        "{}",
        r["failures"]
    );
    assert!(stderr(&o).contains("onto the spare"), "{}", stderr(&o));
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));
    assert!(fsbench_pools().is_empty(), "{}", fsbench_pools());
}

/// kill -9 in the middle of a run on three images: the next `fsbench doctor --cleanup`
/// releases the mount, the three loop devices and the images (the ledger).
#[test]
fn a_killed_multi_device_run_leaves_nothing_after_cleanup() {
    if !common::privileged_loop(module_path!(), &["mkfs.btrfs", "btrfs", "findmnt"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let mut child = bin()
        .args(["run", "--yes", "--no-history", "--rounds", "1"])
        .args(["--images", "3", "--image-size", "320M"])
        .args(["--fs", "b=btrfs:raid=raid1", "--only", "randread"])
        .args(["--file-size", "32M", "--runtime", "60s", "--ramp", "0s"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .arg("--scratch-dir")
        .arg(s)
        .arg("--out")
        .arg(s.join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mounted = |pid: u32| {
        String::from_utf8_lossy(&sh(&["findmnt", "-rn", "-o", "TARGET"]).stdout)
            .lines()
            .any(|l| l.starts_with(&format!("/run/fsbench/{pid}-")))
    };
    let t0 = std::time::Instant::now();
    while !(mounted(child.id()) && attached_in(s).lines().count() == 3) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never got going"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Into the randread: the array is mounted over all three.
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id();
    sh_ok(&["kill", "-9", &pid.to_string()]);
    child.wait().unwrap();
    assert_eq!(
        attached_in(s).lines().count(),
        3,
        "autoclear did it, not the ledger"
    );
    let o = bin().args(["doctor", "--cleanup"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t0 = std::time::Instant::now();
    while !attached_in(s).is_empty() && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(attached_in(s).is_empty(), "{}", attached_in(s));
    assert!(!mounted(pid));
    let left: Vec<_> = std::fs::read_dir(s)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".img"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
