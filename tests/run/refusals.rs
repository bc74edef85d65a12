//! Bad input and unsafe targets are refused before anything is touched.

use super::*;
use common::loopdev::LoopImage;

#[test]
fn refuses_bad_input_before_touching_anything() {
    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let mut c = bin();
        c.args(["run", "--yes", "--scratch-dir", s]).args(args);
        c.output().unwrap()
    };
    assert_refused(
        &run(&["--fs", "ext4,nosuchfs"]),
        &["unknown filesystem 'nosuchfs'"],
    );
    assert_refused(
        &run(&["--fs", "e=ext4:recordsize=16K"]),
        &[
            "ext4 does not understand \"recordsize\"",
            "valid keys for ext4: mkfs, mount, raid;",
        ],
    );
    assert_refused(&run(&["--rounds", "0"]), &["--rounds"]);
    assert_refused(&run(&["--only", "randred"]), &["--only", "randred"]);
    assert_refused(
        &run(&["--fs", "xfs", "--image-size", "100M"]),
        &["--image-size", "too small for xfs"],
    );
    assert_refused(
        &run(&["--fs", "zfs", "--image-size", "32M", "--file-size", "8M"]),
        &["too small for zfs"],
    );
    assert_refused(
        &run(&["--corpus-from", "/nonexistent/tree"]),
        &["--corpus-from", "/nonexistent/tree", "not a directory"],
    );
    assert_refused(&run(&["--corpus-scale", "0"]), &["--corpus-scale"]);
    // Nothing was created in the scratch directory.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    // The same validation serves `fsbench plan`.
    let o = bin()
        .args(["plan", "--fs", "btrfs:bogus=1"])
        .output()
        .unwrap();
    assert_refused(&o, &["btrfs does not understand \"bogus\""]);
}

#[test]
fn plan_refuses_run_only_flags_and_run_refuses_emit_fio() {
    // Flags that act on a run mean nothing to `plan`: clap refuses them (exit 2).
    for flags in [
        &["--yes"][..],
        &["--keep-image"],
        &["--yes", "--keep-image"],
        &["--json"],
    ] {
        let o = bin().arg("plan").args(flags).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "plan {flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("unexpected argument"), "{}", stderr(&o));
    }
    // `run --emit-fio` used to be ignored silently; now it is refused before anything runs.
    let scratch = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["run", "--emit-fio", "--fs", "ext4", "--scratch-dir"])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_refused(&o, &["--emit-fio", "fsbench plan --emit-fio"]);
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    // Each profile's help says what it runs, without the articles' jargon.
    let help = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("standard  the full suite at full size"),
        "{help}"
    );
    assert!(!help.to_lowercase().contains("seed 00"), "{help}");
}

#[test]
fn plan_prints_steps_eta_and_fio_commands() {
    let o = bin()
        .args([
            "plan",
            "--fs",
            "ext4,zfs-16k=zfs:recordsize=16K",
            "--rounds",
            "2",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Estimated time:"), "{text}");
    assert!(text.contains("-O recordsize=16K"), "{text}");
    // Rounds interleave: round 1 of zfs-16k comes before round 2 of ext4.
    let z1 = text.find("1      zfs-16k").expect("round 1 zfs-16k");
    let e2 = text.find("2      ext4").expect("round 2 ext4");
    assert!(z1 < e2);
    let randread = text
        .lines()
        .find(|l| l.starts_with("fio --name=randread "))
        .unwrap_or_else(|| panic!("no fio line for randread:\n{text}"));
    for part in [
        "--rw=randread",
        "--iodepth=8",
        "--numjobs=4",
        "--direct=1",
        "--bs=4k",
    ] {
        assert!(randread.contains(part), "{part} missing: {randread}");
    }
    let o = bin()
        .args(["plan", "--emit-fio", "--profile", "nvme"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fio --name=randread-qd128 ") && text.contains("--iodepth=128"),
        "{text}"
    );
    let help = bin().args(["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Examples:"));
}

#[test]
fn refuses_a_regular_file_as_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("not-a-disk.img");
    std::fs::write(&f, vec![0xabu8; 1 << 20]).unwrap();
    let o = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4",
            "--device",
            f.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_refused(&o, &["not-a-disk.img"]);
    assert!(
        std::fs::read(&f).unwrap().iter().all(|b| *b == 0xab),
        "file changed"
    );
}

/// A user's disk played by a loop device of the test's own (`common::loopdev`), with an ext4
/// filesystem holding a marker file.
struct MarkedDisk {
    lo: LoopImage,
    mnt: tempfile::TempDir,
    mounted: bool,
}

impl MarkedDisk {
    fn new() -> MarkedDisk {
        let lo = LoopImage::new(64 << 20);
        sh_ok(&["mkfs.ext4", "-F", "-q", &lo.dev]);
        let mut d = MarkedDisk {
            lo,
            mnt: tempfile::tempdir().unwrap(),
            mounted: false,
        };
        d.mount();
        std::fs::write(d.mnt.path().join("marker"), b"precious data").unwrap();
        sh_ok(&["sync"]);
        d
    }

    fn mount(&mut self) {
        sh_ok(&["mount", &self.lo.dev, self.mnt.path().to_str().unwrap()]);
        self.mounted = true;
    }

    fn umount(&mut self) {
        sh_ok(&["umount", self.mnt.path().to_str().unwrap()]);
        self.mounted = false;
    }

    fn marker_intact(&mut self) -> bool {
        let was = self.mounted;
        if !was {
            self.mount();
        }
        let ok = std::fs::read(self.mnt.path().join("marker")).is_ok_and(|d| d == b"precious data");
        if !was {
            self.umount();
        }
        ok
    }
}

impl Drop for MarkedDisk {
    fn drop(&mut self) {
        // Before the loop device (a field) is detached.
        if self.mounted {
            let _ = sh(&["umount", self.mnt.path().to_str().unwrap()]);
        }
    }
}

#[test]
fn refuses_mounted_and_signed_devices() {
    let _serial = serial();
    if !privileged(
        "refuses_mounted_and_signed_devices",
        &["mkfs.ext4", "mount"],
    ) {
        return;
    }
    let mut l = MarkedDisk::new();
    // Mounted: refused even with --force-wipe.
    let o = bin()
        .args([
            "run",
            "--yes",
            "--force-wipe",
            "--fs",
            "ext4",
            "--device",
            &l.lo.dev,
        ])
        .output()
        .unwrap();
    assert_refused(&o, &["mounted"]);
    assert!(l.marker_intact());
    // Unmounted but carrying ext4: refused without --force-wipe.
    l.umount();
    let o = bin()
        .args(["run", "--yes", "--fs", "ext4", "--device", &l.lo.dev])
        .output()
        .unwrap();
    assert_refused(&o, &["--force-wipe"]);
    assert!(l.marker_intact(), "the data on the device changed");
}
