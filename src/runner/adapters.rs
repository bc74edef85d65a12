//! Adapters to functions other modules provide. TODO-merge: every function here forwards to
//! (or stands in for) an API owned by another helper; at merge, replace each body with the call
//! named in its doc comment, or delete the shim and call the real function directly.
//!
//! Shims that are *real* implementations (so the runner works before the merge) are marked
//! "local stand-in"; shims that cannot be written here are `todo!()` with the API they need.

use crate::engine::{IoReport, JobSpec};
use crate::measure::LatencyHistogram;
use crate::plan::EngineChoice;
use crate::results::HostInfo;
use crate::workload::{Metric, WorkloadContext, WorkloadOutput};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Run one I/O job with the chosen engine and turn its report into metrics.
/// TODO-merge: `Fsbench => crate::workload::io::run(ctx, spec)`,
/// `Fio => Ok(crate::workload::io::to_output(&crate::fio::run(spec)?))`.
pub fn io_run(
    ctx: &WorkloadContext<'_>,
    spec: &JobSpec,
    engine: EngineChoice,
) -> crate::Result<WorkloadOutput> {
    let _ = ctx;
    let report = match engine {
        EngineChoice::Fsbench => crate::engine::run(spec)?,
        EngineChoice::Fio => fio_run(spec)?,
    };
    Ok(to_output(&report, spec))
}

/// Write `path` sequentially to `size` bytes with incompressible data, fsync, and return the
/// seconds it took (the `layout` workload: seed 000's "write a 16 GiB file").
/// TODO-merge: `crate::engine::layout(path, size, direct)`.
pub fn layout_file(path: &Path, size: u64, direct: bool) -> crate::Result<f64> {
    let _ = (path, size, direct);
    todo!("TODO-merge: crate::engine::layout")
}

/// Runs the job with fio and parses its JSON. TODO-merge: `crate::fio::run(spec)`.
pub fn fio_run(spec: &JobSpec) -> crate::Result<IoReport> {
    let _ = spec;
    todo!("TODO-merge: crate::fio::run")
}

/// IoReport → metrics named as DESIGN.md lists them. Mixed jobs get `read_*`/`write_*`
/// metrics so the 70/30 read and write sides are reported separately.
/// TODO-merge: `crate::workload::io::to_output` (local stand-in).
pub fn to_output(r: &IoReport, spec: &JobSpec) -> WorkloadOutput {
    let mut out = WorkloadOutput::default();
    let m = &mut out.metrics;
    let mib = 1048576.0;
    let mixed = spec.rw.reads() && spec.rw.writes();
    let total_iops = r.read.iops + r.write.iops;
    let total_bw = r.read.bw_bytes + r.write.bw_bytes;
    m.push(Metric::new("iops", "IOPS", total_iops));
    m.push(Metric::new("bw_mib_s", "MiB/s", total_bw / mib));
    let dirs: Vec<(&str, &crate::engine::DirectionReport)> =
        [("read", &r.read), ("write", &r.write)]
            .into_iter()
            .filter(|(_, d)| d.ios > 0)
            .collect();
    for (name, d) in &dirs {
        let prefix = if mixed {
            format!("{name}_")
        } else {
            String::new()
        };
        if mixed {
            m.push(Metric::new(&format!("{name}_iops"), "IOPS", d.iops));
            m.push(Metric::new(
                &format!("{name}_bw_mib_s"),
                "MiB/s",
                d.bw_bytes / mib,
            ));
        }
        for (key, v) in [
            ("lat_p50_ms", d.lat_ns.p50),
            ("lat_p99_ms", d.lat_ns.p99),
            ("lat_p99_9_ms", d.lat_ns.p99_9),
        ] {
            m.push(Metric::new(&format!("{prefix}{key}"), "ms", v as f64 / 1e6));
        }
        if !d.histogram.is_empty() {
            out.histograms.push((
                name.to_string(),
                LatencyHistogram::from_sparse(
                    &d.histogram,
                    d.lat_ns.min,
                    d.lat_ns.max,
                    d.lat_sum_ns,
                ),
            ));
        }
    }
    if r.runtime_s > 0.0 {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        m.push(Metric::new(
            "cpu_util",
            "ratio",
            (r.cpu.user_s + r.cpu.sys_s) / r.runtime_s / cpus,
        ));
    }
    if let Some(dev) = &r.device {
        m.push(Metric::new(
            "device_write_bytes",
            "bytes",
            dev.write_bytes as f64,
        ));
        if let Some(wa) = dev.write_amplification {
            m.push(Metric::new("write_amplification", "ratio", wa));
        }
    }
    if !r.iops_series.is_empty() {
        out.series.push(("iops".into(), r.iops_series.clone()));
    }
    if let Some(note) = &r.backend_note {
        out.notes.push(note.clone());
    }
    out
}

/// The fio command line equivalent to a job. TODO-merge: `crate::fio::command_line(spec)`
/// (local stand-in so `fsbench plan --emit-fio` works before the merge).
pub fn fio_command_line(spec: &JobSpec) -> String {
    use crate::units::fio_size;
    let mut a = vec![
        "fio".to_string(),
        format!("--name={}", spec.rw.as_str()),
        format!("--filename={}", spec.filename.display()),
        format!("--rw={}", spec.rw.as_str()),
        format!("--bs={}", fio_size(spec.bs)),
        format!("--iodepth={}", spec.iodepth),
        format!("--numjobs={}", spec.numjobs),
        format!("--ioengine={}", spec.backend.as_str()),
        format!("--direct={}", u8::from(spec.direct)),
    ];
    if let Some(s) = spec.size {
        a.push(format!("--size={}", fio_size(s)));
    }
    if spec.offset_increment > 0 {
        a.push(format!(
            "--offset_increment={}",
            fio_size(spec.offset_increment)
        ));
    }
    if spec.rw.reads() && spec.rw.writes() {
        a.push(format!("--rwmixread={}", spec.rwmixread));
    }
    if spec.fsync > 0 {
        a.push(format!("--fsync={}", spec.fsync));
    }
    if spec.buffer_compress_percentage > 0 {
        a.push(format!(
            "--buffer_compress_percentage={}",
            spec.buffer_compress_percentage
        ));
    }
    a.push("--refill_buffers".into());
    a.push("--randrepeat=0".into());
    a.push("--norandommap".into());
    if let Some(rt) = spec.runtime {
        a.push("--time_based".into());
        a.push(format!("--runtime={}", rt.as_secs().max(1)));
        if !spec.ramp.is_zero() {
            a.push(format!("--ramp_time={}", spec.ramp.as_secs().max(1)));
        }
    }
    a.push("--group_reporting".into());
    a.join(" ")
}

/// Wait until `dev` wrote less than `threshold` bytes over `window`; `Ok(false)` when it never
/// got quiet within `timeout`. TODO-merge: `crate::measure::device::wait_quiet` (local stand-in
/// reading /sys/class/block/<dev>/stat sector counters). The real one returns a
/// `QuietOutcome`: forward as `.map(|o| o.quiet)`.
pub fn wait_quiet(
    dev: &Path,
    window: Duration,
    threshold: u64,
    timeout: Duration,
) -> crate::Result<bool> {
    let real = std::fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let name = real
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let stat = format!("/sys/class/block/{name}/stat");
    let written = || -> Option<u64> {
        let t = std::fs::read_to_string(&stat).ok()?;
        let sectors: u64 = t.split_whitespace().nth(6)?.parse().ok()?;
        Some(sectors * 512)
    };
    let start = Instant::now();
    let Some(mut prev) = written() else {
        return Ok(true); // no counters (not a block device): nothing to wait for
    };
    let mut samples: Vec<(Instant, u64)> = vec![(Instant::now(), prev)];
    loop {
        crate::cancel::check()?;
        std::thread::sleep(Duration::from_millis(250));
        let now = Instant::now();
        prev = written().unwrap_or(prev);
        samples.push((now, prev));
        // Oldest sample still inside the window.
        while samples.len() > 1 && now.duration_since(samples[1].0) >= window {
            samples.remove(0);
        }
        let (t0, b0) = samples[0];
        if now.duration_since(t0) >= window && prev.saturating_sub(b0) < threshold {
            return Ok(true);
        }
        if start.elapsed() >= timeout {
            return Ok(false);
        }
    }
}

/// Whether a filesystem's tools are present; `Err` names what is missing.
/// TODO-merge: `crate::fs::available(name)` (local stand-in over the driver's required tools).
pub fn fs_available(name: &str) -> Result<(), String> {
    if name == "dir" {
        return Ok(());
    }
    let Some(d) = crate::fs::driver(name) else {
        return Err(format!("no {name} driver in this build"));
    };
    let missing: Vec<&str> = d
        .required_tools()
        .iter()
        .copied()
        .filter(|t| !crate::host::command::available(t))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("{} not installed", missing.join(", ")))
    }
}

/// Tools whose versions go into the results.
pub const TOOLS: &[&str] = &[
    "mkfs.ext4",
    "mkfs.xfs",
    "mkfs.btrfs",
    "zpool",
    "zfs-fuse",
    "fio",
    "e2fsck",
    "xfs_repair",
    "btrfs",
];

/// Host provenance. TODO-merge: `crate::host::provenance::host_info()` (local stand-in).
pub fn host_info() -> HostInfo {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let uname = rustix::system::uname();
    HostInfo {
        kernel: uname.release().to_string_lossy().into_owned(),
        cpu,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        ram_bytes: crate::plan::resolve::ram_bytes(),
        hostname: uname.nodename().to_string_lossy().into_owned(),
        tool_versions: BTreeMap::new(),
        extra: BTreeMap::new(),
    }
}

/// Versions of the external tools.
/// TODO-merge: `crate::host::provenance::tool_versions(TOOLS)`.
pub fn tool_versions() -> BTreeMap<String, String> {
    BTreeMap::new()
}

/// An I/O job inside a memory-capped cgroup (v1 or v2).
/// TODO-merge: `crate::workload::memcap::run(spec, limit_bytes)`.
pub fn memcap_run(spec: &JobSpec, limit_bytes: u64) -> crate::Result<WorkloadOutput> {
    let _ = (spec, limit_bytes);
    todo!("TODO-merge: crate::workload::memcap::run")
}

/// Run a capability probe (`probe-reflink`…) for `setup` on a small image of its own in
/// `scratch_dir` (the filesystem under test is not touched).
/// TODO-merge: `let kind = crate::workload::probe::ProbeKind::from_id(id)` (unknown id →
/// `Error::workload`), `let fs = crate::fs::driver(&setup.fs)`, then
/// `crate::workload::probe::run(kind, fs.as_ref(), setup, scratch_dir, timeout)`.
pub fn probe_run(
    id: &str,
    setup: &crate::plan::SetupSpec,
    scratch_dir: &Path,
    timeout: Duration,
) -> crate::Result<WorkloadOutput> {
    let _ = (id, setup, scratch_dir, timeout);
    todo!("TODO-merge: crate::workload::probe::run")
}

/// Write `bytes` of text-like data in `dir`, report throughput and the on-disk compression
/// ratio the filesystem reports. TODO-merge: `crate::workload::compress::run(dir, fs,
/// &crate::workload::compress::CompressSpec { bytes, seed, ..Default::default() })`.
pub fn compress_run(dir: &Path, fs: &str, bytes: u64, seed: u64) -> crate::Result<WorkloadOutput> {
    let _ = (dir, fs, bytes, seed);
    todo!("TODO-merge: crate::workload::compress::run")
}

/// Many small files. TODO-merge:
/// `crate::workload::meta::smallfiles(dir, &crate::workload::meta::SmallFilesSpec::default())`.
pub fn smallfiles(dir: &Path) -> crate::Result<WorkloadOutput> {
    let _ = dir;
    todo!("TODO-merge: crate::workload::meta::smallfiles")
}

/// fs_mark-style creates with fsync. TODO-merge: `crate::workload::meta::fsmark(dir,
/// &crate::workload::meta::FsmarkSpec { threads, ..Default::default() })`.
pub fn fsmark(dir: &Path, threads: usize) -> crate::Result<WorkloadOutput> {
    let _ = (dir, threads);
    todo!("TODO-merge: crate::workload::meta::fsmark")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{DirectionReport, RwMode};

    #[test]
    fn mixed_jobs_report_read_and_write_separately() {
        let spec = JobSpec {
            rw: RwMode::Randrw,
            ..Default::default()
        };
        let d = |iops: f64| DirectionReport {
            ios: 10,
            iops,
            bw_bytes: iops * 4096.0,
            ..Default::default()
        };
        let r = IoReport {
            read: d(700.0),
            write: d(300.0),
            runtime_s: 1.0,
            ..Default::default()
        };
        let out = to_output(&r, &spec);
        let get = |n: &str| out.metrics.iter().find(|m| m.metric == n).map(|m| m.value);
        assert_eq!(get("iops"), Some(1000.0));
        assert_eq!(get("read_iops"), Some(700.0));
        assert_eq!(get("write_iops"), Some(300.0));
        assert!(get("read_lat_p99_ms").is_some() && get("lat_p99_ms").is_none());
    }

    #[test]
    fn fio_line_matches_seed_vocabulary() {
        let spec = JobSpec {
            filename: "/mnt/t/fio.dat".into(),
            rw: RwMode::Randread,
            bs: 4096,
            iodepth: 8,
            numjobs: 4,
            direct: true,
            size: Some(16 << 30),
            runtime: Some(Duration::from_secs(60)),
            ramp: Duration::from_secs(10),
            ..Default::default()
        };
        let l = fio_command_line(&spec);
        for part in [
            "--rw=randread",
            "--bs=4k",
            "--iodepth=8",
            "--numjobs=4",
            "--direct=1",
            "--size=16g",
            "--runtime=60",
            "--ramp_time=10",
            "--time_based",
        ] {
            assert!(l.contains(part), "{part} missing in {l}");
        }
    }
}
