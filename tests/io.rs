//! End-to-end tests of `fsbench io`: the real binary on temp files (and, as root, on a loop
//! device attached here and detached by a guard; without root those print `skipped:`, or fail
//! under `FSBENCH_REQUIRE_PRIVILEGED=1` ([`common`])).

mod common;

use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use common::assert_bin as fsbench;

/// Run `fsbench io <args> --json` and parse the report; panics with stderr on failure.
fn io_json(args: &[&str]) -> Value {
    let out = fsbench()
        .arg("io")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fsbench io {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Run `fsbench io <args>` expecting bad input: exit 2, one line on stderr naming `flag`.
fn io_rejects(args: &[&str], flag: &str) -> String {
    let out = fsbench().arg("io").args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {err}");
    assert!(err.contains(flag), "{args:?}: {err} should name {flag}");
    if !err.contains("[possible values") && !err.contains("For more information") {
        // Ours are one line; clap's own usage errors add a hint line of their own.
        assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    }
    err
}

fn u(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("{path:?} missing in {v}"))
}

use common::{LoopImage, is_root, require};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn size_based_jobs_move_exactly_size_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    for engine in ["io_uring", "psync"] {
        let _ = std::fs::remove_file(&f);
        // Missing file: laid out first, then written once, sequentially.
        let w = io_json(&[
            "--filename",
            p(&f),
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "8M",
            "--ioengine",
            engine,
            "--iodepth",
            "8",
        ]);
        assert_eq!(u(&w, &["write", "bytes"]), 8 << 20, "{engine}");
        assert_eq!(u(&w, &["write", "ios"]), 2048);
        assert_eq!(u(&w, &["read", "ios"]), 0);
        assert!(w["layout_s"].as_f64().unwrap() > 0.0);
        assert_eq!(w["backend"], engine);
        // Random reads visit every block exactly once: exactly size bytes, whole region.
        let r = io_json(&[
            "--filename",
            p(&f),
            "--rw",
            "randread",
            "--bs",
            "16k",
            "--ioengine",
            engine,
            "--iodepth",
            "4",
        ]);
        assert_eq!(u(&r, &["read", "bytes"]), 8 << 20);
        assert_eq!(r["layout_s"].as_f64().unwrap(), 0.0);
        assert_eq!(u(&r["jobs"][0], &["min_offset"]), 0);
        assert_eq!(r["jobs"][0]["max_end"], 8 << 20);
    }
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8 << 20);
}

#[test]
fn json_has_the_stable_shape() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let v = io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "randread",
        "--size",
        "4M",
        "--runtime",
        "300ms",
        "--ramp",
        "100ms",
        "--seed",
        "77",
    ]);
    for d in ["read", "write"] {
        for k in ["ios", "bytes", "iops", "bw_bytes"] {
            assert!(v[d][k].is_number(), "{d}.{k}");
        }
        for k in ["min", "mean", "max", "p50", "p90", "p99", "p99_9", "p99_99"] {
            assert!(v[d]["lat_ns"][k].is_number(), "{d}.lat_ns.{k}");
        }
    }
    assert!(v["cpu"]["user_s"].is_number() && v["cpu"]["sys_s"].is_number());
    assert!(v["runtime_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["seed"], 77);
    assert!(u(&v, &["read", "ios"]) > 0);
    let l = &v["read"]["lat_ns"];
    assert!(l["min"].as_u64() <= l["p50"].as_u64() && l["p50"].as_u64() <= l["max"].as_u64());
    assert!(!v["iops_series"].as_array().unwrap().is_empty());
    // A fresh seed per run unless --seed is given.
    let a = io_json(&["--filename", p(&f), "--size", "64k"]);
    let b = io_json(&["--filename", p(&f), "--size", "64k"]);
    assert_ne!(a["seed"], b["seed"]);
}

#[test]
fn randrw_70_lands_within_one_percent() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let v = io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--bs",
        "4k",
        "--size",
        "128M",
        "--iodepth",
        "16",
    ]);
    let (r, w) = (u(&v, &["read", "ios"]), u(&v, &["write", "ios"]));
    assert_eq!(r + w, 32768, "size-based: every block once");
    let frac = r as f64 / (r + w) as f64;
    assert!((frac - 0.70).abs() <= 0.01, "read fraction {frac}");
}

#[test]
fn fsync_1_syncs_after_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    for (engine, depth) in [("psync", "1"), ("io_uring", "8")] {
        let v = io_json(&[
            "--filename",
            p(&f),
            "--rw",
            "randwrite",
            "--size",
            "1M",
            "--fsync",
            "1",
            "--ioengine",
            engine,
            "--iodepth",
            depth,
        ]);
        assert_eq!(u(&v, &["write", "ios"]), 256, "{engine}");
        assert_eq!(u(&v, &["fsyncs"]), 256, "{engine}");
    }
    let v = io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "write",
        "--size",
        "1M",
        "--fsync",
        "10",
        "--iodepth",
        "4",
    ]);
    assert_eq!(u(&v, &["fsyncs"]), 25, "256 writes / 10");
}

#[test]
fn offset_increment_keeps_each_job_in_its_region() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    for rw in ["randwrite", "randrw", "write"] {
        let v = io_json(&[
            "--filename",
            p(&f),
            "--rw",
            rw,
            "--numjobs",
            "4",
            "--size",
            "2M",
            "--offset-increment",
            "3M",
            "--iodepth",
            "4",
            "--bs",
            "8k",
        ]);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 4);
        for (k, j) in jobs.iter().enumerate() {
            let start = k as u64 * (3 << 20);
            assert_eq!(u(j, &["region_start"]), start);
            // Size-based: each job covers exactly its own 2 MiB, nothing outside.
            assert_eq!(u(j, &["min_offset"]), start, "{rw} job {k}");
            assert_eq!(u(j, &["max_end"]), start + (2 << 20), "{rw} job {k}");
            assert_eq!(u(j, &["ios"]), 256);
        }
        let total = u(&v, &["read", "bytes"]) + u(&v, &["write", "bytes"]);
        assert_eq!(total, 4 * (2 << 20));
    }
    // Laid out up to the end of the last region.
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        3 * (3 << 20) + (2 << 20)
    );
    // Time-based jobs stay inside too.
    let v = io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "randread",
        "--numjobs",
        "2",
        "--size",
        "1M",
        "--offset-increment",
        "5M",
        "--runtime",
        "200ms",
    ]);
    for (k, j) in v["jobs"].as_array().unwrap().iter().enumerate() {
        let start = k as u64 * (5 << 20);
        assert!(u(j, &["min_offset"]) >= start && u(j, &["max_end"]) <= start + (1 << 20));
    }
}

#[test]
fn verify_catches_a_block_corrupted_behind_our_back() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let w = io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "randwrite",
        "--size",
        "1M",
        "--verify",
    ]);
    assert_eq!(u(&w, &["write", "ios"]), 256);
    // Clean read-back passes, with either backend.
    io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "randread",
        "--verify",
        "--iodepth",
        "8",
    ]);
    io_json(&[
        "--filename",
        p(&f),
        "--rw",
        "read",
        "--verify",
        "--ioengine",
        "psync",
    ]);
    // Flip bytes inside the block at 40960.
    let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
    file.write_all_at(b"garbage!", 40960 + 1000).unwrap();
    drop(file);
    for engine in ["io_uring", "psync"] {
        let out = fsbench()
            .args([
                "io",
                "--filename",
                p(&f),
                "--rw",
                "read",
                "--verify",
                "--ioengine",
                engine,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{engine}: {err}");
        assert!(err.contains("offset 40960"), "{err}");
        assert!(
            err.contains("crc32c mismatch") && err.contains("expected"),
            "{err}"
        );
        assert!(err.contains(p(&f)), "{err}");
    }
    // A file laid out with --verify is readable with --verify straight away.
    let g = dir.path().join("g");
    io_json(&[
        "--filename",
        p(&g),
        "--rw",
        "randread",
        "--size",
        "2M",
        "--verify",
    ]);
}

#[test]
fn human_summary_and_help() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let out = fsbench()
        .args(["io", "--filename", p(&f), "--rw", "randrw", "--size", "1M"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for want in ["IOPS", "MiB/s", "p50", "p99.9", "cpu", "seed", "layout"] {
        assert!(s.contains(want), "{want} missing in {s}");
    }
    let help = fsbench().args(["io", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(
        h.contains("Examples:") && h.contains("--offset-increment"),
        "{h}"
    );
    // --output-format json is --json.
    let out = fsbench()
        .args(["io", "--filename", p(&f), "--output-format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&v, &["read", "bytes"]), 1 << 20);
}

#[test]
fn bad_input_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let m = p(&missing);
    io_rejects(
        &["--filename", m, "--rw", "sideways", "--size", "1M"],
        "--rw",
    );
    io_rejects(&["--filename", m, "--rw", "randread"], "--size");
    io_rejects(
        &["--filename", m, "--size", "1M", "--iodepth", "0"],
        "--iodepth",
    );
    io_rejects(
        &["--filename", m, "--size", "1M", "--bs", "1000", "--direct"],
        "--bs",
    );
    io_rejects(
        &[
            "--filename",
            m,
            "--size",
            "1M",
            "--bs",
            "1M",
            "--rwmixread",
            "101",
        ],
        "--rwmixread",
    );
    io_rejects(&["--filename", m, "--size", "1k", "--bs", "4k"], "--size");
    let e = io_rejects(&["--filename", m, "--size", "1000T"], "--size");
    assert!(e.contains("free"), "{e}");
    let e = io_rejects(&["--filename", p(dir.path()), "--size", "1M"], "--filename");
    assert!(e.contains("directory"), "{e}");
    let nodir = dir.path().join("no/such/dir/f");
    io_rejects(&["--filename", p(&nodir), "--size", "1M"], "--filename");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );

    // A file that cannot be opened says why.
    let (path, _keep) = if is_root() && Path::new("/sys/kernel/notes").exists() {
        (PathBuf::from("/sys/kernel/notes"), None)
    } else {
        let f = dir.path().join("locked");
        std::fs::write(&f, vec![0u8; 8192]).unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
        (f.clone(), Some(f))
    };
    let e = io_rejects(
        &["--filename", p(&path), "--rw", "write", "--size", "4k"],
        "--filename",
    );
    assert!(e.contains("permission denied"), "{e}");
}

/// A loop device over a sparse image, with 4 KiB logical blocks and direct I/O; detached on
/// drop.
struct Loop;

impl Loop {
    /// For the privileged test `name`; `None` (skipped) when loop devices are not available.
    fn attach(name: &str, size: u64) -> Option<LoopImage> {
        Self::attach_with(name, size, false)
    }

    /// With `partitioned`, one MBR partition from 1 MiB to the end (`losetup -P`).
    fn attach_with(name: &str, size: u64, partitioned: bool) -> Option<LoopImage> {
        if !common::privileged(name).loop_devices().case_ok() {
            return None;
        }
        let mut spec = LoopImage::spec(size).block_size(4096).direct_io(true);
        if partitioned {
            spec = spec.partitioned();
        }
        match spec.attach() {
            Ok(l) => Some(l),
            Err(failed) => {
                require(&format!("{name}: a loop device ({failed})"), false);
                None
            }
        }
    }
}

#[test]
fn loop_device_counts_bytes_and_refuses_bad_sizes() {
    let name = "io::loop_device_counts_bytes_and_refuses_bad_sizes";
    let Some(lo) = Loop::attach(name, 64 << 20) else {
        return;
    };
    common::ran(name);
    let d = lo.dev.as_str();
    let e = io_rejects(&["--filename", d, "--size", "128M"], "--size");
    assert!(e.contains("beyond the end"), "{e}");
    io_rejects(
        &[
            "--filename",
            d,
            "--size",
            "40M",
            "--numjobs",
            "2",
            "--offset-increment",
            "32M",
        ],
        "--size",
    );
    let e = io_rejects(
        &["--filename", d, "--bs", "3k", "--direct", "--size", "1M"],
        "--bs",
    );
    assert!(e.contains("4096-byte logical block"), "{e}");
    // Direct writes: the device sees at least the job's bytes.
    let v = io_json(&[
        "--filename",
        d,
        "--rw",
        "randwrite",
        "--direct",
        "--size",
        "16M",
        "--iodepth",
        "8",
    ]);
    assert_eq!(u(&v, &["write", "bytes"]), 16 << 20);
    assert_eq!(
        v["layout_s"].as_f64().unwrap(),
        0.0,
        "devices are never laid out"
    );
    let dev = &v["device"];
    assert!(dev["name"].as_str().unwrap().starts_with("loop"), "{v}");
    assert!(u(dev, &["write_bytes"]) >= 16 << 20, "{dev}");
    let wa = dev["write_amplification"].as_f64().unwrap();
    assert!(wa >= 1.0, "{wa}");
    // Whole device by default.
    let v = io_json(&["--filename", d, "--rw", "read", "--direct", "--bs", "1M"]);
    assert_eq!(u(&v, &["read", "bytes"]), 64 << 20);
    assert!(u(&v["device"], &["read_bytes"]) >= 64 << 20);
}

#[test]
fn io_uring_refusal_falls_back_to_psync_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let out = fsbench()
        .env("FSBENCH_TEST_REFUSE_IO_URING", "1")
        .args([
            "io",
            "--filename",
            p(&f),
            "--size",
            "1M",
            "--iodepth",
            "8",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "psync");
    assert!(
        v["backend_note"]
            .as_str()
            .unwrap()
            .contains("fell back to psync")
    );
    assert_eq!(u(&v, &["read", "bytes"]), 1 << 20);
}

#[test]
fn wait_quiet_sees_quiet_and_busy_devices() {
    use fsbench::measure::device;
    use std::time::Duration;
    let name = "io::wait_quiet_sees_quiet_and_busy_devices";
    let Some(lo) = Loop::attach(name, 64 << 20) else {
        return;
    };
    common::ran(name);
    let dev = Path::new(&lo.dev);
    let before = device::counters(dev).unwrap();
    let q = device::wait_quiet(
        dev,
        Duration::from_millis(200),
        1 << 20,
        Duration::from_secs(5),
    )
    .unwrap();
    assert!(q.quiet, "{q:?}");
    // Keep the device busy with direct writes while waiting: it never becomes quiet, and the
    // wait gives up with a flag rather than an error.
    let writer = {
        let path = lo.dev.clone();
        std::thread::spawn(move || {
            io_json(&[
                "--filename",
                &path,
                "--rw",
                "write",
                "--direct",
                "--bs",
                "1M",
                "--runtime",
                "3s",
            ])
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let busy = device::wait_quiet(
        dev,
        Duration::from_millis(300),
        64 << 10,
        Duration::from_millis(600),
    )
    .unwrap();
    let written = writer.join().unwrap();
    assert!(!busy.quiet, "{busy:?}");
    assert!(busy.last_window_bytes >= 64 << 10);
    let after = device::counters(dev).unwrap();
    assert!(before.delta(&after).write_bytes >= u(&written, &["write", "bytes"]));
}

#[test]
fn a_partition_has_its_own_counters() {
    use fsbench::measure::device;
    let name = "io::a_partition_has_its_own_counters";
    let Some(lo) = Loop::attach_with(name, 64 << 20, true) else {
        return;
    };
    let base = Path::new(&lo.dev)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let sys = format!("/sys/block/{base}/{base}p1/dev");
    if !Path::new(&sys).exists() {
        // The partition scan at attach time may not run here; ask for it explicitly.
        let _ = std::process::Command::new("partx")
            .args(["-a", &lo.dev])
            .status();
    }
    let majmin = std::fs::read_to_string(&sys);
    if !require(
        &format!("{name}: the kernel did not create {base}p1"),
        majmin.is_ok(),
    ) {
        return;
    }
    common::ran(name);
    let majmin = majmin.unwrap();
    // Without udev no /dev node appears: make our own in a temp dir.
    let nodes = tempfile::tempdir().unwrap();
    let part = nodes.path().join(format!("{base}p1"));
    let (maj, min) = majmin.trim().split_once(':').unwrap();
    let c = std::ffi::CString::new(p(&part)).unwrap();
    // SAFETY: c is a valid path; mknod creates a block special file.
    let r = unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFBLK | 0o600,
            libc::makedev(maj.parse().unwrap(), min.parse().unwrap()),
        )
    };
    assert_eq!(r, 0, "mknod {}", std::io::Error::last_os_error());
    let part = p(&part).to_string();
    let bd = device::resolve(Path::new(&part)).unwrap();
    assert_eq!(
        bd.name,
        Path::new(&part).file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(device::logical_block_size(Path::new(&part)), Some(4096));
    let v = io_json(&[
        "--filename",
        &part,
        "--rw",
        "write",
        "--direct",
        "--bs",
        "64k",
        "--size",
        "4M",
    ]);
    assert_eq!(v["device"]["name"], bd.name.as_str());
    assert!(u(&v["device"], &["write_bytes"]) >= 4 << 20);
}

// `--steady-state` (rounds, the quick mode, preconditioning): tests/steady.rs.
