//! Issue 20: a variant's `mkfs=` or `mount=` arguments must never reach another device.
//!
//! Each test attaches its own "victim" loop device carrying an ext4 filesystem (a user's disk
//! in miniature), points a variant at it in every form a user might write, and checks that
//! fsbench refuses with exit 2, mounts nothing and leaves the victim's bytes as they were.
//! Legitimate variants still run. As root with the tools present; otherwise `skipped: …`, or
//! a failure when `FSBENCH_REQUIRE_PRIVILEGED=1` (CI).

use fsbench::fs::{self, Filesystem};
use fsbench::plan::SetupSpec;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

mod common;

use common::{bin, sh, sh_ok, stderr};

/// `true` when the test can run: root, loop devices and `tools`; otherwise `tests/common`
/// prints `skipped: …`, or fails under `FSBENCH_REQUIRE_PRIVILEGED=1`.
#[track_caller]
fn privileged(tools: &[&str]) -> bool {
    common::privileged_loop(module_path!(), tools)
}

/// A loop device this test attached itself, over an image in its own directory; detached
/// (and the image removed) on drop.
struct Loop {
    dev: String,
    _img: common::LoopImage,
}

impl Loop {
    fn new(size: u64) -> Loop {
        let img = common::LoopImage::new(size);
        Loop {
            dev: img.dev.clone(),
            _img: img,
        }
    }

    /// A loop device carrying an ext4 filesystem with a file on it: the disk to protect.
    fn victim() -> Loop {
        let l = Loop::new(64 << 20);
        sh_ok(&["mkfs.ext4", "-q", "-F", "-L", "victim", &l.dev]);
        l
    }

    fn uuid(&self) -> String {
        sh_ok(&["blkid", "-s", "UUID", "-o", "value", &self.dev])
    }

    /// Checksum of every byte of the device, read through the block device itself.
    fn checksum(&self) -> String {
        sh_ok(&["cksum", &self.dev])
    }

    /// Whether anything is mounted from this device.
    fn mounted(&self) -> bool {
        sh(&["findmnt", "-n", "-S", &self.dev]).status.success()
    }
}

/// `fsbench run --yes` with tiny sizes, one short workload, in `scratch`.
fn run(scratch: &Path, extra: &[&str]) -> Output {
    common::quick_run(1)
        .args(["--file-size", "8M", "--only", "usable-space"])
        .arg("--scratch-dir")
        .arg(scratch)
        .arg("--out")
        .arg(scratch.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

/// The refusal line fsbench printed (`fsbench: error: …`).
fn refusal_line(o: &Output) -> String {
    stderr(o)
        .lines()
        .find(|l| l.starts_with("fsbench: error:"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn variants_naming_another_device_are_refused_and_it_stays_untouched() {
    if !privileged(&[
        "losetup",
        "mkfs.ext4",
        "mkfs.btrfs",
        "blkid",
        "findmnt",
        "cksum",
    ]) {
        return;
    }
    let victim = Loop::victim();
    let before = victim.checksum();
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    // A symlink inside the scratch area that leads to the victim.
    let link = s.join("innocent-looking");
    std::os::unix::fs::symlink(&victim.dev, &link).unwrap();
    let link = link.display().to_string();
    let v = victim.dev.as_str();
    let uuid = victim.uuid();
    assert!(!uuid.is_empty());
    let target = Loop::new(512 << 20);
    let cases: Vec<(Vec<String>, Vec<String>)> = vec![
        // The case on the default image target, then on a --device target.
        (
            vec![
                "--fs".into(),
                format!("b=btrfs:mkfs={v}"),
                "--image-size".into(),
                "512M".into(),
            ],
            vec![
                format!("\"{v}\""),
                "positional".into(),
                "multi-device".into(),
            ],
        ),
        (
            vec![
                "--fs".into(),
                format!("b=btrfs:mkfs={v}"),
                "--device".into(),
                target.dev.clone(),
            ],
            vec![format!("\"{v}\""), "multi-device".into()],
        ),
        (
            vec![
                "--fs".into(),
                format!("b=btrfs:mkfs=-m raid1 -d raid1 {v} {v}"),
            ],
            vec![format!("\"{v}\""), "not supported yet".into()],
        ),
        (
            vec!["--fs".into(), format!("e=ext4:mkfs=-J device={v}")],
            vec!["-J device=".into(), "external journal device".into()],
        ),
        (
            vec![
                "--fs".into(),
                format!("e=ext4:mount=noatime,journal_path={v}"),
            ],
            vec![format!("journal_path={v}"), "not supported yet".into()],
        ),
        (
            vec!["--fs".into(), format!("x=xfs:mount=logdev={v}")],
            vec![format!("logdev={v}"), "not supported yet".into()],
        ),
        (
            vec!["--fs".into(), format!("e=ext4:mkfs=-d {link}")],
            vec![link.clone(), format!("resolves to {v}")],
        ),
        (
            vec!["--fs".into(), format!("b=btrfs:mkfs={link}")],
            vec![format!("resolves to {v}"), "positional".into()],
        ),
        (
            vec!["--fs".into(), format!("e=ext4:mkfs=-J device=UUID={uuid}")],
            vec![format!("UUID={uuid}"), "external journal device".into()],
        ),
        (
            vec!["--fs".into(), format!("b=btrfs:mkfs=UUID={uuid}")],
            vec!["by UUID".into()],
        ),
        (
            vec!["--fs".into(), "e=ext4:mkfs=-m 1 /var/tmp/some-file".into()],
            vec!["\"/var/tmp/some-file\"".into(), "positional".into()],
        ),
    ];
    // Relative words are judged where mkfs and mount run (`/`), not in the user's working
    // directory: a symlink to the victim beside the user is not what mkfs would open, while
    // one in `/` is refused wherever it appears (here as a label: conservative, and the
    // message says why).
    let cwd = tempfile::tempdir_in("/var/tmp").unwrap();
    std::os::unix::fs::symlink(&victim.dev, cwd.path().join("disk")).unwrap();
    let o = bin()
        .current_dir(cwd.path())
        .args(["plan", "--fs", "e=ext4:mkfs=-L disk"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let at_root = format!("fsbench-test-disk-{}", std::process::id());
    let link = std::path::Path::new("/").join(&at_root);
    std::os::unix::fs::symlink(&victim.dev, &link).unwrap();
    let o = bin()
        .current_dir(cwd.path())
        .args(["plan", "--fs", &format!("e=ext4:mkfs=-L {at_root}")])
        .output()
        .unwrap();
    std::fs::remove_file(&link).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        refusal_line(&o).contains("a block device, relative to the directory mkfs runs in"),
        "{}",
        stderr(&o)
    );
    for (args, needles) in &cases {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        if !a.contains(&"--image-size") && !a.contains(&"--device") {
            a.extend(["--image-size", "512M"]);
        }
        let o = run(s, &a);
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: expected exit 2:\n{err}"
        );
        let line = refusal_line(&o);
        for n in needles {
            assert!(
                line.contains(n.as_str()),
                "{args:?}: refusal lacks {n:?}:\n{err}"
            );
        }
        println!("{args:?}\n  {line}");
        assert_eq!(victim.checksum(), before, "{args:?} changed the victim");
        assert!(!victim.mounted(), "{args:?} mounted the victim");
        // Nothing was created: no image, no output directory.
        let left: Vec<_> = std::fs::read_dir(s)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "innocent-looking")
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
    // The victim still carries its filesystem.
    assert_eq!(sh_ok(&["blkid", "-s", "LABEL", "-o", "value", v]), "victim");
}

#[test]
fn the_final_argv_may_name_no_device_but_the_target() {
    if !privileged(&["losetup", "mkfs.ext4", "mkfs.btrfs", "findmnt", "cksum"]) {
        return;
    }
    // Bypass the plan-time checks, as a bug in them would: the guard before mkfs and mount
    // must still refuse.
    let victim = Loop::victim();
    let before = victim.checksum();
    let target = Loop::new(256 << 20);
    let mnt = tempfile::tempdir_in("/var/tmp").unwrap();
    let t = Duration::from_secs(60);
    let mut s = SetupSpec::plain("btrfs");
    s.mkfs = vec![victim.dev.clone()];
    let e = fs::BTRFS
        .create_and_mount(Path::new(&target.dev), &s, mnt.path(), t)
        .err()
        .expect("mkfs naming the victim must be refused");
    assert_eq!(e.exit_code(), 2, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("refusing to use {}", victim.dev))
            && msg.contains(&format!(
                "refused to run: mkfs.btrfs -f -q {} {}",
                victim.dev, target.dev
            )),
        "{msg}"
    );
    println!("{msg}");
    // A mount option naming the victim, through an ext4 that mkfs made properly.
    let mut s = SetupSpec::plain("ext4");
    s.mount = vec![format!("journal_path={}", victim.dev)];
    let e = fs::EXT4
        .create_and_mount(Path::new(&target.dev), &s, mnt.path(), t)
        .err()
        .expect("mount naming the victim must be refused");
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(
        e.to_string()
            .contains("refused to run: mount -t ext4 -o journal_path="),
        "{e}"
    );
    assert!(!victim.mounted() && !Loop::mounted_at(mnt.path()));
    assert_eq!(victim.checksum(), before);
}

impl Loop {
    fn mounted_at(p: &Path) -> bool {
        sh(&["findmnt", "-n", p.to_str().unwrap()]).status.success()
    }
}

#[test]
fn legitimate_variants_still_run() {
    if !privileged(&["losetup", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let s = scratch.path();
    let o = run(
        s,
        &[
            "--image-size",
            "512M",
            "--fs",
            "e=ext4:mkfs=-m 1 -E lazy_itable_init=0;mount=noatime,commit=60",
            "--fs",
            "x=xfs:mkfs=-K",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("out/results.json")).unwrap())
            .unwrap();
    let setup = |name: &str| {
        r["setups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no setup {name}: {r}"))
            .clone()
    };
    let words = |v: &serde_json::Value| -> Vec<String> {
        v["mkfs_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    let e = setup("e");
    let ew = words(&e);
    assert!(ew.windows(2).any(|w| w == ["-m", "1"]), "{ew:?}");
    assert!(
        ew.windows(2).any(|w| w == ["-E", "lazy_itable_init=0"]),
        "{ew:?}"
    );
    let opts = e["mount_opts"].as_str().unwrap();
    assert!(
        opts.contains("noatime") && opts.contains("commit=60"),
        "{opts}"
    );
    assert!(words(&setup("x")).contains(&"-K".to_string()));
    // A plan.json edited to name a device is refused on --resume too.
    let saved = s.join("out/plan.json");
    let mut inv: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    inv["plan"]["setups"][0]["mkfs"] = serde_json::json!(["/dev/fsbench-no-such-disk"]);
    std::fs::write(&saved, serde_json::to_vec(&inv).unwrap()).unwrap();
    let o = bin()
        .args(["run", "--resume"])
        .arg(s.join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        refusal_line(&o).contains("\"/dev/fsbench-no-such-disk\" is a positional"),
        "{}",
        stderr(&o)
    );
    // Only the image is gone, the output stays.
    let left: Vec<PathBuf> = std::fs::read_dir(s)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left, [s.join("out")], "image not deleted");
}
