//! End-to-end tests of `fsbench meta` and `fsbench corpus` (the real binary).
//!
//! The privileged tests make their own loop images in a temp dir, format and mount them inside
//! a guard that unmounts and detaches on drop, and print `skipped: <reason>` when not root or a
//! tool is missing (under `FSBENCH_REQUIRE_PRIVILEGED=1` they fail instead, see [`common`]).

mod common;

use fsbench::workload::meta::{Corpus, CorpusSpec};
use std::path::{Path, PathBuf};
use std::process::Command as Sys;

use common::loopdev::LoopImage;
use common::require;

/// A loop-attached (`common::loopdev`), formatted, mounted image; everything is released on
/// drop.
struct Mounted {
    img: PathBuf,
    dev: String,
    mnt: PathBuf,
    _mnt_dir: tempfile::TempDir,
    /// Detached after the unmount in `Drop` (fields drop after it).
    _lo: LoopImage,
}

impl Mounted {
    /// `Err(why not)` when it cannot be set up here (prerequisites missing, losetup/mkfs/mount
    /// failing); callers pass that to [`require`].
    fn new(fs: &str, size_mib: u64) -> Result<Mounted, String> {
        let mkfs = format!("mkfs.{fs}");
        if let Some(missing) = common::privileged(fs)
            .loop_devices()
            .tools(&[&mkfs, "mount"])
            .missing()
        {
            return Err(missing);
        }
        let lo = LoopImage::spec(size_mib << 20)
            .file_name(&format!("{fs}.img"))
            .attach()?;
        let force = if fs == "xfs" { "-f" } else { "-F" };
        common::sh_result(&[&mkfs, "-q", force, &lo.dev]).map_err(|e| format!("{mkfs}: {e}"))?;
        let mnt_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mnt = mnt_dir.path().to_path_buf();
        common::sh_result(&["mount", &lo.dev, mnt.to_str().unwrap()])
            .map_err(|e| format!("mount: {e}"))?;
        Ok(Mounted {
            img: lo.image.clone(),
            dev: lo.dev.clone(),
            mnt,
            _mnt_dir: mnt_dir,
            _lo: lo,
        })
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Sys::new("umount").arg(&self.mnt).status();
    }
}

use common::assert_bin as fsbench;

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("fsbench-meta-"))
        .collect()
}

fn value(json: &serde_json::Value, workload: &str, metric: &str) -> f64 {
    json["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["workload"] == workload && s["metric"] == metric)
        .unwrap_or_else(|| panic!("no {workload}/{metric} in {json}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn all_workloads_on_ext4_and_xfs_verify_their_counts() {
    let corpus = Corpus::build(&CorpusSpec {
        copies: 3,
        seed: 1,
        scale: 0.05,
        ..Default::default()
    })
    .unwrap();
    let test = "meta::all_workloads_on_ext4_and_xfs_verify_their_counts";
    let mut ran = 0;
    for fs in ["ext4", "xfs"] {
        let m = match Mounted::new(fs, 512) {
            Ok(m) => m,
            Err(reason) => {
                require(&format!("{test}: {reason}"), false);
                continue;
            }
        };
        ran += 1;
        let out = fsbench()
            .args(["meta", "--dir"])
            .arg(&m.mnt)
            .args([
                "--workload",
                "untar,find-cold,rm-tree,smallfiles,fsmark",
                "--corpus-scale",
                "0.05",
                "--fsmark-files",
                "200",
                "--json",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{fs}: {stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["failures"].as_array().unwrap().len(), 0, "{json}");
        let entries = corpus.entries() as f64;
        assert!(entries > 5000.0);
        assert_eq!(value(&json, "untar", "entries"), entries, "{fs}");
        assert_eq!(
            value(&json, "untar", "bytes"),
            corpus.bytes() as f64,
            "{fs}"
        );
        assert_eq!(value(&json, "find-cold", "entries"), entries, "{fs}");
        assert_eq!(value(&json, "rm-tree", "entries"), entries, "{fs}");
        assert_eq!(value(&json, "smallfiles", "entries"), 2500.0, "{fs}");
        assert_eq!(value(&json, "fsmark", "entries"), 800.0, "{fs}");
        for (w, metric) in [
            ("untar", "seconds"),
            ("find-cold", "seconds"),
            ("rm-tree", "seconds"),
            ("smallfiles", "create_seconds"),
            ("smallfiles", "read_seconds"),
            ("fsmark", "ops_per_s"),
        ] {
            assert!(value(&json, w, metric) > 0.0, "{fs} {w} {metric}");
        }
        assert!(leftovers(&m.mnt).is_empty(), "{fs}: work dir left behind");
    }
    common::ran_cases(test, ran, 2);
}

#[test]
fn enospc_during_untar_fails_that_step_and_the_run_goes_on() {
    let (img, dev, mnt);
    {
        let test = "meta::enospc_during_untar_fails_that_step_and_the_run_goes_on";
        let m = match Mounted::new("ext4", 16) {
            Ok(m) => m,
            Err(reason) => {
                require(&format!("{test}: {reason}"), false);
                return;
            }
        };
        common::ran(test);
        // ~3 × 0.2 × 187 MB of files cannot fit in 16 MiB.
        let out = fsbench()
            .args(["meta", "--dir"])
            .arg(&m.mnt)
            .args([
                "--workload",
                "untar,smallfiles",
                "--corpus-scale",
                "0.2",
                "--smallfiles",
                "200",
                "--json",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("No space left on device"), "{stderr}");
        assert!(stderr.contains("untar"), "{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let failures = json["failures"].as_array().unwrap();
        assert_eq!(failures.len(), 1, "{json}");
        assert_eq!(failures[0]["workload"], "untar");
        // The partial tree was removed, so the next step had room and ran.
        assert_eq!(value(&json, "smallfiles", "entries"), 200.0);
        assert!(leftovers(&m.mnt).is_empty(), "work dir left behind");
        img = m.img.clone();
        dev = m.dev.clone();
        mnt = m.mnt.clone();
    }
    // The guard released everything: not mounted, loop device detached.
    let mounted = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(!mounted.contains(&*mnt.to_string_lossy()), "still mounted");
    let lo = Sys::new("losetup").arg("-j").arg(&img).output().unwrap();
    assert!(
        String::from_utf8_lossy(&lo.stdout).trim().is_empty(),
        "{dev} still attached"
    );
}

#[test]
fn bad_input_exits_2_with_the_flag_named() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--corpus-from", "/nonexistent/fsbench"], "--corpus-from"),
        (&["--workload", "untar,bogus"], "--workload"),
        (&["--fsync", "sometimes", "--workload", "fsmark"], "--fsync"),
        (&["--corpus-file", "/nonexistent/c.tar"], "--corpus-file"),
    ];
    for (extra, flag) in cases {
        let out = fsbench()
            .args(["meta", "--dir"])
            .arg(d.path())
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(flag), "{extra:?}: {stderr}");
        assert!(leftovers(d.path()).is_empty());
    }
    let out = fsbench()
        .args(["meta", "--dir", "/nonexistent/fsbench-dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dir"));
}

#[test]
fn corpus_tarball_extracts_with_gnu_tar_to_the_same_tree() {
    if !common::privileged("meta::corpus_tarball_extracts_with_gnu_tar_to_the_same_tree")
        .tools(&["tar"])
        .ok()
    {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tarball = d.path().join("c.tar");
    let out = fsbench()
        .args([
            "corpus", "--copies", "2", "--scale", "0.02", "--seed", "9", "--out",
        ])
        .arg(&tarball)
        .output()
        .unwrap();
    assert!(out.status.success());
    let corpus = Corpus::build(&CorpusSpec {
        copies: 2,
        seed: 9,
        scale: 0.02,
        ..Default::default()
    })
    .unwrap();
    let dest = d.path().join("x");
    std::fs::create_dir(&dest).unwrap();
    let st = Sys::new("tar")
        .arg("-xf")
        .arg(&tarball)
        .arg("-C")
        .arg(&dest)
        .status()
        .unwrap();
    assert!(st.success());
    let (mut entries, mut bytes) = (0u64, 0u64);
    let mut stack = vec![dest.clone()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            entries += 1;
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file() {
                bytes += md.len();
            }
        }
    }
    assert_eq!((entries, bytes), (corpus.entries(), corpus.bytes()));
    // And fsbench itself extracts the tarball to the same counts.
    let out = fsbench()
        .args(["meta", "--dir"])
        .arg(d.path())
        .args(["--workload", "untar", "--json", "--corpus-file"])
        .arg(&tarball)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value(&json, "untar", "entries"), entries as f64);
}

#[test]
fn ctrl_c_mid_untar_exits_130_and_removes_the_work_dir() {
    let d = tempfile::tempdir().unwrap();
    let bin = std::path::PathBuf::from(common::BIN);
    let child = Sys::new(bin)
        .args(["meta", "--dir"])
        .arg(d.path())
        .args([
            "--workload",
            "untar",
            "--corpus-copies",
            "20",
            "--corpus-scale",
            "0.2",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the work directory exists (the corpus is built), then interrupt.
    let t0 = std::time::Instant::now();
    while leftovers(d.path()).is_empty() {
        assert!(t0.elapsed().as_secs() < 60, "fsbench never started working");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(leftovers(d.path()).is_empty(), "work dir left behind");
}

/// `--existing` walks the given tree itself: the count equals `find DIR | wc -l` and nothing is
/// created or removed (the listing of the tree is the same before and after).
#[test]
fn existing_walks_what_find_counts_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data");
    for d in ["a/b/c", "a/d", "e"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (i, f) in ["a/x", "a/b/y", "a/b/c/z", "e/w", "top"].iter().enumerate() {
        std::fs::write(root.join(f), vec![b'x'; i * 100]).unwrap();
    }
    std::os::unix::fs::symlink("a/x", root.join("link")).unwrap();
    let listing = || {
        let out = Sys::new("find").arg(&root).output().unwrap();
        assert!(out.status.success());
        let mut v: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let out = fsbench()
        .args(["meta", "--existing", "--json", "--dir"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "entries")
        .expect("an entries sample")["value"]
        .as_f64()
        .unwrap();
    assert_eq!(entries as usize, before.len(), "find counts {before:?}");
    assert_eq!(
        listing(),
        before,
        "--existing must not create or remove anything"
    );

    // Asking for anything but the walk with --existing is bad input.
    fsbench()
        .args(["meta", "--existing", "--workload", "untar", "--dir"])
        .arg(&root)
        .assert()
        .code(2);
}
