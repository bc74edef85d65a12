//! Memory pressure: run an I/O job inside a memory-capped cgroup (seed 003's 512 MiB
//! buffered random-write test) and report it with the same metrics as the uncapped job.
//!
//! The job runs in a child process, `fsbench io --json …`, that joins the cgroup before exec:
//! capping fsbench itself would also cap the runner, and a child is the only way to have every
//! page of the job (page cache included) charged to the cap and nothing else.

use super::{Metric, WorkloadOutput};
use crate::engine::{IoReport, JobSpec};
use crate::host::cgroup::MemoryCgroup;
use crate::metrics::registry::{MEMORY_CAP_BYTES, PEAK_MEMORY_BYTES};
use crate::{Error, Result};

use crate::host::command::OnCancel;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Workload id prefix for capped jobs (`randwrite` becomes `randwrite-mem512m` in plans).
pub const WORKLOAD: &str = "memcap";

/// `fsbench io` arguments equivalent to `job` (the stable flags of docs/ARCHITECTURE.md), `--json` last.
pub fn io_args(job: &JobSpec) -> Vec<String> {
    let mut a: Vec<String> = vec!["io".into()];
    let mut push = |k: &str, v: String| {
        a.push(k.into());
        a.push(v);
    };
    push("--filename", job.filename.to_string_lossy().into_owned());
    push("--rw", job.rw.as_str().into());
    push("--bs", job.bs.to_string());
    push("--iodepth", job.iodepth.to_string());
    push("--numjobs", job.numjobs.to_string());
    push("--ioengine", job.backend.as_str().into());
    if let Some(size) = job.size {
        push("--size", size.to_string());
    }
    if let Some(rt) = job.runtime {
        push("--runtime", format!("{}ms", rt.as_millis()));
    }
    if !job.ramp.is_zero() {
        push("--ramp", format!("{}ms", job.ramp.as_millis()));
    }
    if job.rw == crate::engine::RwMode::Randrw {
        push("--rwmixread", job.rwmixread.to_string());
    }
    if job.fsync > 0 {
        push("--fsync", job.fsync.to_string());
    }
    if job.offset_increment > 0 {
        push("--offset-increment", job.offset_increment.to_string());
    }
    if let Some(seed) = job.seed {
        push("--seed", seed.to_string());
    }
    if job.buffer_compress_percentage > 0 {
        push(
            "--buffer-compress-percentage",
            job.buffer_compress_percentage.to_string(),
        );
    }
    if let Some(s) = &job.steady {
        let c = &s.criteria;
        push(
            "--steady-state",
            format!("{},{},{}", c.windows, c.range_pct, c.slope_pct),
        );
        push("--steady-max", format!("{}ms", s.max.as_millis()));
        if s.quick {
            a.push("--steady-quick".into());
        } else {
            a.extend(["--steady-round".into(), format!("{}s", s.round_s())]);
        }
    }
    if job.direct {
        a.push("--direct".into());
    }
    if job.verify {
        a.push("--verify".into());
    }
    a.push("--json".into());
    a
}

/// Run `job` through this executable inside a cgroup capped at `cap_bytes`.
pub fn run(job: &JobSpec, cap_bytes: u64) -> Result<WorkloadOutput> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("cannot find fsbench's own executable", "/proc/self/exe", e))?;
    run_with_exe(&exe, job, cap_bytes)
}

/// [`run`] with an explicit `fsbench` executable (tests run the built binary).
pub fn run_with_exe(exe: &Path, job: &JobSpec, cap_bytes: u64) -> Result<WorkloadOutput> {
    let cg = MemoryCgroup::create(cap_bytes)?;
    let args = io_args(job);
    let mut cmd = Command::new(exe);
    cmd.args(&args);
    cg.configure(&mut cmd);
    let shown = format!("{} {}", exe.display(), crate::host::command::display(&args));
    // Generous: time-based jobs end on their own; size-based ones get ten minutes.
    let limit = job
        .steady
        .map(|s| s.limit())
        .or(job.runtime)
        .unwrap_or(Duration::from_secs(600))
        + job.ramp
        + Duration::from_secs(120);
    let out = crate::host::command::run_child(&mut cmd, &shown, limit, OnCancel::Kill)?;
    let (stdout, stderr) = (out.stdout, out.stderr);
    let peak = cg.peak_bytes();
    let ooms = cg.oom_kills().unwrap_or(0);
    if out.status != Some(0) {
        let why = if ooms > 0 {
            format!(
                "the job was OOM-killed inside its {} cgroup ({} kill(s))",
                crate::units::format_size(cap_bytes),
                ooms
            )
        } else {
            format!(
                "exit {}",
                out.status
                    .map_or("by signal".to_string(), |c| c.to_string())
            )
        };
        return Err(Error::workload(
            WORKLOAD,
            format!("{why}: {}", stderr.trim()),
        ));
    }
    let report = parse_report(&stdout).map_err(|e| Error::tool(&shown, e))?;
    let mut out = crate::workload::io::to_output(&report);
    out.metrics
        .push(Metric::new(MEMORY_CAP_BYTES, "bytes", cap_bytes as f64));
    if let Some(p) = peak {
        out.metrics
            .push(Metric::new(PEAK_MEMORY_BYTES, "bytes", p as f64));
    }
    out.notes.push(format!(
        "ran in cgroup {} ({}) capped at {}",
        cg.path().display(),
        if cg.is_v2() { "v2" } else { "v1" },
        crate::units::format_size(cap_bytes)
    ));
    Ok(out)
}

/// Parse `fsbench io --json` output (text before the first `{` is skipped).
pub fn parse_report(stdout: &str) -> std::result::Result<IoReport, String> {
    let json = stdout
        .find('{')
        .map(|i| &stdout[i..])
        .ok_or_else(|| format!("printed no JSON: {}", stdout.trim()))?;
    serde_json::from_str(json).map_err(|e| format!("printed JSON fsbench cannot read: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, RwMode};
    use crate::metrics::MetricId;
    use crate::metrics::registry::{CPU_UTIL, IOPS, LAT_P50_MS, LAT_P99_9_MS};
    use std::path::PathBuf;

    #[test]
    fn args_use_the_io_vocabulary() {
        let job = JobSpec {
            filename: PathBuf::from("/mnt/x/c.bin"),
            rw: RwMode::Randwrite,
            bs: 4096,
            iodepth: 16,
            backend: Backend::IoUring,
            size: Some(1 << 30),
            runtime: Some(Duration::from_secs(60)),
            seed: Some(7),
            ..Default::default()
        };
        let a = io_args(&job).join(" ");
        assert_eq!(
            a,
            "io --filename /mnt/x/c.bin --rw randwrite --bs 4096 --iodepth 16 --numjobs 1 \
             --ioengine io_uring --size 1073741824 --runtime 60000ms --seed 7 --json"
        );
        // Run until steady reaches the child too (its limit replaces the runtime there).
        let steady = JobSpec {
            steady: Some(crate::engine::SteadySpec::default()),
            ..job
        };
        let a = io_args(&steady).join(" ");
        assert!(
            a.ends_with("--steady-state 5,20,10 --steady-max 1500000ms --steady-round 60s --json")
                && a.contains("--seed 7"),
            "{a}"
        );
    }

    #[test]
    fn maps_a_report() {
        let text = r#"noise {"read":{"ios":0,"bytes":0,"iops":0,"bw_bytes":0,"lat_ns":{"min":0,"mean":0,"max":0,"p50":0,"p90":0,"p99":0,"p99_9":0,"p99_99":0}},
            "write":{"ios":1000,"bytes":4096000,"iops":500.0,"bw_bytes":2048000.0,"lat_ns":{"min":1,"mean":2.0,"max":3,"p50":1000000,"p90":2,"p99":3000000,"p99_9":5000000,"p99_99":9}},
            "cpu":{"user_s":0.1,"sys_s":0.3},"runtime_s":2.0}"#;
        let r = parse_report(text).unwrap();
        let out = crate::workload::io::to_output(&r);
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert_eq!(get(IOPS), 500.0);
        assert_eq!(get(LAT_P50_MS), 1.0);
        assert_eq!(get(LAT_P99_9_MS), 5.0);
        assert!(
            (get(CPU_UTIL) - 20.0).abs() < 1e-9,
            "cpu_util is % of one CPU"
        );
        assert!(parse_report("nothing").is_err());
    }
}
