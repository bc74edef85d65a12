//! The runner's calls into the workloads, the engine and the host, in one place, so that
//! `round.rs` reads as the sequence of steps and not as a list of module paths.

use crate::engine::JobSpec;
use crate::plan::{EngineChoice, Kind, WorkloadSpec};
use crate::workload::{WorkloadContext, WorkloadOutput};
use std::path::Path;
use std::time::Duration;

/// Run one I/O job with the chosen engine and turn its report into metrics.
pub fn io_run(
    ctx: &WorkloadContext<'_>,
    spec: &JobSpec,
    engine: EngineChoice,
) -> crate::Result<WorkloadOutput> {
    match engine {
        EngineChoice::Fsbench => crate::workload::io::run(ctx, spec),
        EngineChoice::Fio => Ok(crate::workload::io::to_output(&crate::fio::run(spec)?)),
    }
}

/// Write `path` sequentially to `size` bytes with incompressible data, fsync, and return the
/// seconds it took (the `layout` workload: seed 000's "write a 16 GiB file").
pub fn layout_file(path: &Path, size: u64, direct: bool) -> crate::Result<f64> {
    crate::engine::layout(path, size, direct)
}

/// The fio command line equivalent to a job.
pub fn fio_command_line(spec: &JobSpec) -> String {
    crate::fio::command_line(spec)
}

/// Wait until `dev` wrote less than `threshold` bytes over `window`; `Ok(false)` when it never
/// got quiet within `timeout`.
pub fn wait_quiet(
    dev: &Path,
    window: Duration,
    threshold: u64,
    timeout: Duration,
) -> crate::Result<bool> {
    crate::measure::device::wait_quiet(dev, window, threshold, timeout).map(|o| o.quiet)
}

/// Whether a filesystem's tools are present; `Err` names what is missing.
pub fn fs_available(name: &str) -> Result<(), String> {
    if name == "dir" {
        return Ok(());
    }
    crate::fs::available(name)
}

/// An I/O job inside a memory-capped cgroup (v1 or v2).
pub fn memcap_run(spec: &JobSpec, limit_bytes: u64) -> crate::Result<WorkloadOutput> {
    crate::workload::memcap::run(spec, limit_bytes)
}

/// Run a capability probe (`probe-reflink`…) for `setup` on a small image of its own in
/// `scratch_dir` (the filesystem under test is not touched).
pub fn probe_run(
    id: &str,
    setup: &crate::plan::SetupSpec,
    scratch_dir: &Path,
    timeout: Duration,
) -> crate::Result<WorkloadOutput> {
    let kind = crate::workload::probe::ProbeKind::from_id(id)
        .ok_or_else(|| crate::Error::workload(id, "unknown probe"))?;
    let fs = crate::fs::driver(&setup.fs)
        .ok_or_else(|| crate::Error::workload(id, format!("no driver for {}", setup.fs)))?;
    crate::workload::probe::run(kind, fs.as_ref(), setup, scratch_dir, timeout)
}

/// Write `bytes` of text-like data in `dir`, report throughput and the on-disk compression
/// ratio the filesystem reports.
pub fn compress_run(dir: &Path, fs: &str, bytes: u64, seed: u64) -> crate::Result<WorkloadOutput> {
    crate::workload::compress::run(
        dir,
        fs,
        &crate::workload::compress::CompressSpec {
            bytes,
            seed,
            ..Default::default()
        },
    )
}

/// Whether the machine can run workload `w` (PostgreSQL installed for pgbench…); `Err` says
/// what is missing, and the runner skips the workload with that note.
pub fn workload_available(w: &WorkloadSpec) -> Result<(), String> {
    match w.kind {
        Kind::Pgbench => crate::workload::pgbench::available(),
        _ => Ok(()),
    }
}

/// One pgbench step on a private server in `ctx.dir`; `-T` is the workload's duration or the
/// plan's runtime.
pub fn pgbench_run(
    ctx: &WorkloadContext<'_>,
    w: &WorkloadSpec,
    runtime: Duration,
    timeout: Duration,
) -> crate::Result<WorkloadOutput> {
    let p = w
        .pgbench
        .as_ref()
        .ok_or_else(|| crate::Error::workload(&w.id, "no pgbench parameters"))?;
    crate::workload::pgbench::run(
        ctx,
        &crate::workload::pgbench::RunSpec {
            id: &w.id,
            params: p,
            duration: p.duration.unwrap_or(runtime),
            timeout,
        },
    )
}

/// One SQLite step in `ctx.dir`.
pub fn sqlite_run(ctx: &WorkloadContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
    let p = w
        .sqlite
        .as_ref()
        .ok_or_else(|| crate::Error::workload(&w.id, "no sqlite parameters"))?;
    crate::workload::sqlite::run(ctx, &w.id, p)
}

/// Many small files.
pub fn smallfiles(dir: &Path) -> crate::Result<WorkloadOutput> {
    crate::workload::meta::smallfiles(dir, &crate::workload::meta::SmallFilesSpec::default())
}

/// fs_mark-style creates with fsync.
pub fn fsmark(dir: &Path, threads: usize) -> crate::Result<WorkloadOutput> {
    crate::workload::meta::fsmark(
        dir,
        &crate::workload::meta::FsmarkSpec {
            threads,
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RwMode;

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
