//! End to end through the real binary: the `container` kind's five steps on ext4 and Btrfs
//! loop images with a tiny image (real overlayfs mounts), and a run killed with SIGKILL while
//! its containers are mounted, whose overlays `doctor --cleanup` releases.
//!
//! Privileged: root, loop devices, mkfs.ext4, mkfs.btrfs and overlayfs. Without them each
//! test prints `skipped: …`; with `FSBENCH_REQUIRE_PRIVILEGED=1` (CI) it fails instead.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use common::{bin, serial, stderr};

const STEPS: [&str; 5] = [
    "container-pull",
    "container-start",
    "container-copyup",
    "container-churn",
    "container-delete",
];

/// The tiny image every step of the test shares (the keys of `[[workload]]` tables).
const TINY: &str = "layers = 4\nfiles = 1500\nimage_size = \"12M\"\ncontainers = 3\n\
                    entry_files = 60\nthreads = 2\n";

fn gate(name: &str, tools: &[&str]) -> bool {
    let overlay = std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.ends_with("overlay"));
    common::privileged(name)
        .root()
        .loop_devices()
        .tools(tools)
        .need("overlayfs in /proc/filesystems", overlay)
        .ok()
}

fn run_args(plan: &Path, scratch: &Path, out: &Path, fs: &str) -> Vec<String> {
    [
        "run",
        "--yes",
        "--no-history",
        "--plan",
        plan.to_str().unwrap(),
        "--fs",
        fs,
        "--rounds",
        "1",
        "--image-size",
        "1G",
        "--quiet-window",
        "1s",
        "--quiet-timeout",
        "20s",
        "--scratch-dir",
        scratch.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A tar of `(path, Some(data) | None for a directory)`.
fn tar_of(entries: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in entries {
        let mut h = tar::Header::new_gnu();
        let d = data.unwrap_or(&[]);
        h.set_entry_type(if data.is_some() {
            tar::EntryType::Regular
        } else {
            tar::EntryType::Directory
        });
        h.set_size(d.len() as u64);
        h.set_mode(if data.is_some() { 0o644 } else { 0o755 });
        b.append_data(&mut h, path, d).unwrap();
    }
    b.into_inner().unwrap()
}

/// A `docker save`-style archive of two layers: the top one deletes `usr/lib/y` (a
/// whiteout) and hides `etc`'s lower contents (opaque); a container sees etc/b and usr/lib/x.
fn docker_archive(dir: &Path) -> std::path::PathBuf {
    let l0 = tar_of(&[
        ("etc/", None),
        ("etc/a", Some(b"0123456789")),
        ("usr/", None),
        ("usr/lib/", None),
        ("usr/lib/x", Some(&[7u8; 20000])),
        ("usr/lib/y", Some(b"y")),
    ]);
    let l1 = tar_of(&[
        ("etc/", None),
        ("etc/.wh..wh..opq", Some(b"")),
        ("etc/b", Some(b"bb")),
        ("usr/lib/.wh.y", Some(b"")),
    ]);
    let manifest =
        br#"[{"Config":"c.json","RepoTags":["t:1"],"Layers":["l0/layer.tar","l1/layer.tar"]}]"#;
    let path = dir.join("image.tar");
    std::fs::write(
        &path,
        tar_of(&[
            ("manifest.json", Some(&manifest[..])),
            ("l0/layer.tar", Some(&l0)),
            ("l1/layer.tar", Some(&l1)),
        ]),
    )
    .unwrap();
    path
}

fn overlays_of(pid: u32) -> Vec<String> {
    let ours = format!("/run/fsbench/{pid}-");
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("fsbench-overlay") && l.contains(&ours))
        .map(str::to_string)
        .collect()
}

#[test]
fn five_container_steps_on_ext4_and_btrfs_leave_nothing_mounted() {
    let _serial = serial();
    if !gate(
        "five_container_steps_on_ext4_and_btrfs_leave_nothing_mounted",
        &["losetup", "mkfs.ext4", "mkfs.btrfs"],
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("c.toml");
    let mut text = String::from("name = \"c\"\n");
    for id in STEPS {
        text.push_str(&format!("[[workload]]\nid = \"{id}\"\n{TINY}"));
    }
    // A user's own image (`image_archive`), pulled and started after the generated one.
    let archive = docker_archive(d.path());
    for (id, step) in [("archive-pull", "pull"), ("archive-start", "start")] {
        text.push_str(&format!(
            "[[workload]]\nid = \"{id}\"\nkind = \"container\"\nstep = \"{step}\"\n\
             image_archive = \"{}\"\ncontainers = 2\nentry_files = 5\n",
            archive.display()
        ));
    }
    std::fs::write(&plan, text).unwrap();
    let out = d.path().join("out");
    let child = bin()
        .args(run_args(&plan, d.path(), &out, "ext4,btrfs"))
        .arg("--only")
        .arg(format!("{},archive-pull,archive-start", STEPS.join(",")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let (so, err) = (common::stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "run failed:\n{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let samples = r["samples"].as_array().unwrap();
    let value = |setup: &str, w: &str, m: &str| {
        samples
            .iter()
            .find(|s| s["setup"] == setup && s["workload"] == w && s["metric"] == m)
            .and_then(|s| s["value"].as_f64())
    };
    let expected: [(&str, &[&str]); 5] = [
        (
            "container-pull",
            &[
                "seconds",
                "container_files_per_s",
                "container_mib_s",
                "entries",
                "bytes",
            ],
        ),
        (
            "container-start",
            &[
                "seconds",
                "container_files_per_s",
                "container_mib_s",
                "entries",
            ],
        ),
        (
            "container-copyup",
            &[
                "seconds",
                "container_files_per_s",
                "container_mib_s",
                "bytes",
            ],
        ),
        ("container-churn", &["seconds", "containers_per_s"]),
        (
            "container-delete",
            &[
                "seconds",
                "whiteout_seconds",
                "image_remove_seconds",
                "entries",
            ],
        ),
    ];
    for setup in ["ext4", "btrfs"] {
        for (w, metrics) in expected {
            for m in metrics {
                let v = value(setup, w, m)
                    .unwrap_or_else(|| panic!("{setup}/{w}: {m} missing; {}", r["failures"]));
                assert!(v > 0.0, "{setup}/{w}: {m} = {v}");
            }
        }
        // The generated image is the same everywhere: 1500 files, 12 MiB.
        assert_eq!(value(setup, "container-pull", "entries"), Some(1500.0));
        let bytes = value(setup, "container-pull", "bytes").unwrap();
        assert!(
            (bytes - 12.0 * 1048576.0).abs() < 0.6 * 1048576.0,
            "{bytes}"
        );
        // 3 containers × 60 entry files; 2 workers × 3 containers churned.
        assert_eq!(value(setup, "container-start", "entries"), Some(180.0));
        let churn = value(setup, "container-churn", "containers_per_s").unwrap()
            * value(setup, "container-churn", "seconds").unwrap();
        assert!((churn - 6.0).abs() < 0.01, "{churn}");
        let delete = value(setup, "container-delete", "seconds").unwrap();
        let parts = value(setup, "container-delete", "whiteout_seconds").unwrap()
            + value(setup, "container-delete", "image_remove_seconds").unwrap();
        assert!((delete - parts).abs() < 1e-6);
        // The archive's four files extracted; 2 containers each read at most what they see
        // (2 files: the whiteout and the opaque directory hide the other two).
        assert_eq!(value(setup, "archive-pull", "entries"), Some(4.0));
        assert_eq!(value(setup, "archive-start", "entries"), Some(4.0));
    }
    // ext4 counts inodes, Btrfs does not (a note says so instead of a number).
    assert!(value("ext4", "container-pull", "container_inodes_used").unwrap() > 1500.0);
    assert!(value("ext4", "container-churn", "container_inodes_used").is_some());
    assert!(value("btrfs", "container-pull", "container_inodes_used").is_none());
    assert!(so.contains("Containers (overlayfs image layers):"), "{so}");
    assert!(
        so.contains("Container image pull (overlay2 layers)"),
        "{so}"
    );
    let left = common::leftovers(d.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(overlays_of(pid).is_empty());
    common::ran("five_container_steps_on_ext4_and_btrfs_leave_nothing_mounted");
}

/// A run killed with SIGKILL while its containers are mounted leaves overlays (and the
/// filesystem, and the loop device) that only its ledger knows; `doctor --cleanup` releases
/// them, overlays first.
#[test]
fn overlays_of_a_killed_run_are_released_by_the_next_cleanup() {
    let _serial = serial();
    if !gate(
        "overlays_of_a_killed_run_are_released_by_the_next_cleanup",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("k.toml");
    // Many containers, each mounted and kept until the step ends: the kill finds them mounted.
    std::fs::write(
        &plan,
        "name = \"k\"\n[[workload]]\nid = \"container-start\"\nlayers = 2\nfiles = 200\n\
         image_size = \"2M\"\ncontainers = 10000\nentry_files = 20\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let mut child = bin()
        .args(run_args(&plan, d.path(), &out, "ext4"))
        .arg("--only")
        .arg("container-start")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    while overlays_of(pid).len() < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no overlay mounts appeared"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !overlays_of(pid).is_empty(),
        "the kill left overlays mounted"
    );
    let o = bin().args(["doctor", "--cleanup"]).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "doctor --cleanup failed:\n{err}");
    assert!(overlays_of(pid).is_empty(), "{:?}\n{err}", overlays_of(pid));
    let left = common::leftovers(d.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}\n{err}");
    common::ran("overlays_of_a_killed_run_are_released_by_the_next_cleanup");
}
