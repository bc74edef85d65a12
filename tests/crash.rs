//! Crash consistency (issue 32): the FUSE recorder under a direct-I/O loop device, the oracle
//! workloads' crash states, the negative control, and the refusal on a `--dir` target.

mod common;

use fsbench::host::recorder::{Entry, Recorder};
use fsbench::target::fileloop::FileLoop;
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
