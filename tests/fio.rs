//! fio backend against the real fio: the rendered job must do what the spec says.

mod common;

use fsbench::engine::{Backend, JobSpec, RwMode};
use std::time::Duration;

/// fio is installed, or skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1).
fn fio_test(name: &str) -> bool {
    common::privileged(&format!("fio::{name}"))
        .tools(&["fio"])
        .ok()
}

#[test]
fn size_based_jobs_move_exactly_size_bytes() {
    if !fio_test("size_based_jobs_move_exactly_size_bytes") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");

    // Sequential write lays the file out: 1 MiB in 4 KiB blocks, fsync after each.
    let write = JobSpec {
        filename: file.clone(),
        rw: RwMode::Write,
        bs: 4096,
        backend: Backend::Psync,
        size: Some(1 << 20),
        fsync: 1,
        ..JobSpec::default()
    };
    let r = fsbench::fio::run(&write).unwrap();
    assert_eq!(r.engine, "fio");
    assert_eq!(r.backend, "psync");
    assert_eq!(r.write.bytes, 1 << 20);
    assert_eq!(r.write.ios, 256);
    assert_eq!(r.read.ios, 0);
    assert!(r.fsyncs > 0, "fsync=1 must be reported: {r:?}");
    assert!(r.seed != 0, "a fresh seed is drawn and recorded");

    // Two jobs, each on its own half (offset_increment), random mix, io_uring.
    let mix = JobSpec {
        filename: file.clone(),
        rw: RwMode::Randrw,
        rwmixread: 70,
        bs: 4096,
        iodepth: 4,
        numjobs: 2,
        backend: Backend::IoUring,
        size: Some(512 << 10),
        offset_increment: 512 << 10,
        seed: Some(7),
        ..JobSpec::default()
    };
    let r = fsbench::fio::run(&mix).unwrap();
    assert_eq!(r.seed, 7);
    assert_eq!(r.read.ios + r.write.ios, 256, "{r:?}");
    assert_eq!(r.read.bytes + r.write.bytes, 1 << 20);
    assert_eq!(r.read.bytes, r.read.ios * 4096);
    assert!(r.read.ios > r.write.ios, "70 % reads: {r:?}");
    let l = &r.read.lat_ns;
    assert!(l.min > 0 && l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.p99_99);
    assert!(l.mean >= l.min as f64 && l.mean <= l.max as f64);
    // The file must not have grown: offset_increment kept both jobs inside it.
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
}

#[test]
fn time_based_job_reports_consistent_rates() {
    if !fio_test("time_based_job_reports_consistent_rates") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        filename: dir.path().join("data"),
        rw: RwMode::Randread,
        bs: 4096,
        iodepth: 8,
        backend: Backend::IoUring,
        size: Some(4 << 20),
        runtime: Some(Duration::from_millis(400)),
        ramp: Duration::from_millis(100),
        ..JobSpec::default()
    };
    let r = fsbench::fio::run(&spec).unwrap();
    assert!(r.read.ios > 0);
    // After a ramp fio may count the ≤ iodepth I/Os in flight at the reset in bytes only.
    let counted = r.read.ios * 4096;
    assert!(
        r.read.bytes >= counted && r.read.bytes <= counted + 8 * 4096,
        "{r:?}"
    );
    assert!(r.runtime_s > 0.0);
    let iops = r.read.ios as f64 / r.runtime_s;
    assert!(
        (iops - r.read.iops).abs() / r.read.iops < 0.02,
        "iops {} vs ios/runtime {iops}",
        r.read.iops
    );
    assert!(r.cpu.user_s + r.cpu.sys_s > 0.0, "{:?}", r.cpu);
}

#[test]
fn fio_failure_is_a_tool_error_naming_fio() {
    if !fio_test("fio_failure_is_a_tool_error_naming_fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A read job on a missing file with no size: fio cannot lay it out.
    let spec = JobSpec {
        filename: dir.path().join("missing"),
        rw: RwMode::Read,
        ..JobSpec::default()
    };
    let e = fsbench::fio::run(&spec).unwrap_err();
    assert!(matches!(e, fsbench::Error::Tool { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with("fio "), "{msg}");
    assert!(
        msg.contains("size"),
        "fio's own reason must reach the user: {msg}"
    );
    assert!(
        !msg.contains('\n') && msg.len() < 1000,
        "one short line: {msg}"
    );
    assert_eq!(e.exit_code(), 1);
}
