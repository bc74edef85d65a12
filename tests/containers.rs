//! End to end through the real binary: the `container` kind's five steps on ext4 and Btrfs
//! loop images with a tiny image (real overlayfs mounts), a user's own image given by
//! `--image-archive` as an OCI image layout, the cross-check with Podman itself, and a run
//! killed with SIGKILL while its containers are mounted, whose overlays `doctor --cleanup`
//! releases; and, without root, `--image-archive`'s refusals.
//!
//! Privileged: root, loop devices, mkfs.ext4, mkfs.btrfs and overlayfs (and podman for its
//! test). Without them each test prints `skipped: …`; with `FSBENCH_REQUIRE_PRIVILEGED=1`
//! (CI) it fails instead.

use sha2::Digest;
use std::path::{Path, PathBuf};
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

/// `sha256:HEX` of `data`.
fn digest(data: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// An OCI image layout directory (`podman save --format oci-dir`'s format) of the same two
/// layers as [`docker_archive`], the index naming the manifest through a nested index as
/// multi-platform layouts do.
fn oci_layout(dir: &Path) -> PathBuf {
    let root = dir.join("oci");
    let blobs = root.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).unwrap();
    let put = |data: &[u8]| {
        let d = digest(data);
        std::fs::write(blobs.join(&d["sha256:".len()..]), data).unwrap();
        serde_json::json!({"digest": d, "size": data.len()})
    };
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
    let layer_type = "application/vnd.oci.image.layer.v1.tar";
    let mut layers = Vec::new();
    for l in [&l0, &l1] {
        let mut d = put(l);
        d["mediaType"] = layer_type.into();
        layers.push(d);
    }
    let mut config = put(br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers"}}"#);
    config["mediaType"] = "application/vnd.oci.image.config.v1+json".into();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config,
        "layers": layers,
    });
    let mut m = put(manifest.to_string().as_bytes());
    m["mediaType"] = "application/vnd.oci.image.manifest.v1+json".into();
    let inner = serde_json::json!({"schemaVersion": 2, "manifests": [m]});
    let mut i = put(inner.to_string().as_bytes());
    i["mediaType"] = "application/vnd.oci.image.index.v1+json".into();
    let index = serde_json::json!({"schemaVersion": 2, "manifests": [i]});
    std::fs::write(root.join("index.json"), index.to_string()).unwrap();
    std::fs::write(root.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    root
}

/// `--image-archive` refuses, with exit 2 and the archive's name, what it cannot read as an
/// image, and a plan with no container workload to give it to; an OCI layout directory is
/// accepted and alone selects the containers profile.
#[test]
fn image_archive_refusals_name_the_archive_and_an_oci_layout_is_planned() {
    let d = tempfile::tempdir().unwrap();
    let plan = |args: &[&str]| bin().arg("plan").args(args).output().unwrap();
    let missing = d.path().join("missing.tar");
    let not_an_image = d.path().join("empty-dir");
    std::fs::create_dir(&not_an_image).unwrap();
    let gz = d.path().join("image.tar.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).unwrap();
    let docker = docker_archive(d.path());
    for (path, want) in [
        (&missing, "no such file or directory"),
        (&not_an_image, "neither manifest.json"),
        (&gz, "gzip-compressed; decompress it first (gunzip)"),
    ] {
        let o = plan(&["--image-archive", path.to_str().unwrap()]);
        common::assert_refused(&o, &["--image-archive", path.to_str().unwrap(), want]);
    }
    let o = plan(&[
        "--profile",
        "vm",
        "--image-archive",
        docker.to_str().unwrap(),
    ]);
    common::assert_refused(&o, &["no container workload", "--profile containers"]);
    let oci = oci_layout(d.path());
    let o = plan(&["--image-archive", oci.to_str().unwrap(), "--fs", "ext4"]);
    let text = format!("{}{}", common::stdout(&o), stderr(&o));
    assert!(o.status.success(), "{text}");
    assert!(text.contains("container-pull"), "{text}");
    assert!(
        text.contains("2 layers/4 files"),
        "the image's own shape: {text}"
    );
    // A layer compressed inside an otherwise good layout.
    let blobs = oci.join("blobs/sha256");
    let manifest = std::fs::read_dir(&blobs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(".layer.v1.tar\"")))
        .unwrap();
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(".layer.v1.tar\"", ".layer.v1.tar+gzip\""),
    )
    .unwrap();
    let o = plan(&["--image-archive", oci.to_str().unwrap()]);
    common::assert_refused(&o, &["is compressed", "--dest-decompress"]);
}

/// `--image-archive DIR` with an OCI image layout: the flag alone picks the containers
/// profile, `--only` narrows it, and the pull and start read the layout's own files.
#[test]
fn an_oci_layout_given_by_flag_is_pulled_and_started() {
    let _serial = serial();
    if !gate(
        "an_oci_layout_given_by_flag_is_pulled_and_started",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let oci = oci_layout(d.path());
    let out = d.path().join("out");
    let o = bin()
        .args([
            "run",
            "--yes",
            "--no-history",
            "--image-archive",
            oci.to_str().unwrap(),
            "--only",
            "container-pull,container-start",
            "--fs",
            "ext4",
            "--rounds",
            "1",
            "--image-size",
            "1G",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            "--scratch-dir",
            d.path().to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = common::load_results(&out);
    let value = |w: &str, m: &str| {
        r["samples"].as_array().unwrap().iter().find_map(|s| {
            (s["workload"] == w && s["metric"] == m)
                .then(|| s["value"].as_f64())
                .flatten()
        })
    };
    // Four files in the layers; each of the profile's 4 containers sees two of them.
    assert_eq!(value("container-pull", "entries"), Some(4.0));
    assert_eq!(value("container-start", "entries"), Some(8.0));
    assert!(value("container-start", "seconds").unwrap() > 0.0);
    let left = common::leftovers(d.path(), None);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Podman's processes whose command line names this run's mount root.
fn podmans(pid: u32) -> Vec<String> {
    common::run_processes(pid, |c| c.contains("podman"))
}

/// The cross-check with Podman itself on ext4: the generated image loaded from its archive
/// into a storage root on the filesystem under test, a no-network container run, the image
/// removed; every part timed, and nothing Podman mounted left behind.
#[test]
fn podman_loads_and_runs_the_image_on_the_filesystem_under_test() {
    let _serial = serial();
    if !gate(
        "podman_loads_and_runs_the_image_on_the_filesystem_under_test",
        &["losetup", "mkfs.ext4", "podman"],
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("p.toml");
    std::fs::write(
        &plan,
        "name = \"p\"\n[[workload]]\nid = \"container-podman\"\nlayers = 3\nfiles = 300\n\
         image_size = \"3M\"\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let child = bin()
        .args(run_args(&plan, d.path(), &out, "ext4"))
        .args(["--only", "container-podman"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = common::load_results(&out);
    assert_eq!(
        r["failures"].as_array().map_or(0, Vec::len),
        0,
        "{}",
        r["failures"]
    );
    let value = |m: &str| {
        r["samples"].as_array().unwrap().iter().find_map(|s| {
            (s["workload"] == "container-podman" && s["metric"] == m)
                .then(|| s["value"].as_f64())
                .flatten()
        })
    };
    for m in [
        "container_podman_load_seconds",
        "container_podman_run_seconds",
        "container_podman_rmi_seconds",
    ] {
        let v = value(m).unwrap_or_else(|| panic!("no {m}: {}", r["notes"]));
        assert!(v > 0.0, "{m} = {v}");
    }
    let sum = value("container_podman_load_seconds").unwrap()
        + value("container_podman_run_seconds").unwrap()
        + value("container_podman_rmi_seconds").unwrap();
    assert!((value("seconds").unwrap() - sum).abs() < 1e-6);
    let left = common::leftovers(d.path(), Some(pid));
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(podmans(pid).is_empty(), "{:?}", podmans(pid));
}
