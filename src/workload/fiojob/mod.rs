//! Running one phase of a user's fio job file (the sections between two stonewalls) and
//! turning fio's JSON into one [`WorkloadOutput`] per section.
//!
//! The phase runs as one fio process so that sections meant to run together do. Device
//! counters are read around it: with one section the device bytes are that section's
//! (`device_write_bytes`, `write_amplification`); with several running at once they cannot be
//! split, so each section gets the phase's total as `phase_device_write_bytes` and a note.

use super::{Metric, WorkloadOutput};
use crate::Error;
use crate::engine::{DeviceReport, DirectionReport};
use crate::fio::jobfile::{FioJob, native, render_phase};
use crate::metrics::registry::{
    BW_MIB_S, IOPS, PHASE_DEVICE_WRITE_BYTES, TRIM_BW_MIB_S, TRIM_IOPS, TRIM_LAT_P99_MS,
};
use std::path::Path;

pub mod kind;
pub use kind::job_of;

/// Run `jobs` (one phase, in file order) with their files in `dir` (fio's working directory
/// too, when they name their own file); `device` is the block
/// device whose counters are read around the phase. The outer error fails every section
/// (fio refused the file, fio missing, interrupt); the inner ones fail one section.
pub fn run_phase(
    jobs: &[&FioJob],
    dir: &Path,
    device: Option<&Path>,
) -> crate::Result<Vec<crate::Result<WorkloadOutput>>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    if let [job] = jobs
        && job.native
    {
        let mut spec = native::to_spec(&job.section, &job.opts(), dir)
            .map_err(|why| Error::workload(&job.section, why))?;
        spec.device = device.map(Path::to_path_buf);
        let report = crate::engine::run(&spec)?;
        return Ok(vec![Ok(super::io::to_output(&report))]);
    }
    // Sections given the user's own file (`io --fio-job --filename`) run without
    // `directory=`: fio would put it in front of their absolute path.
    let in_place = jobs.iter().all(|j| j.own_file().is_some());
    let text = render_phase(jobs, (!in_place).then_some(dir));
    let mut file = tempfile::Builder::new()
        .prefix("fsbench-phase-")
        .suffix(".fio")
        .tempfile()
        .map_err(|e| Error::io("cannot create", std::env::temp_dir(), e))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .map_err(|e| Error::io("cannot write", file.path(), e))?;
    let dev = device.and_then(crate::measure::device::resolve);
    let before = dev.as_ref().and_then(|d| d.counters().ok());
    let out = crate::fio::run_jobfile(file.path(), dir, timeout(jobs))?;
    let after = dev.as_ref().and_then(|d| d.counters().ok());
    let entries = match crate::fio::parse_jobs(&out.stdout) {
        // fio exits 1 when one job failed; the others' results in the same JSON still stand.
        Ok(e) if out.status == Some(0) || e.iter().any(|x| x.error.is_some()) => e,
        // fio refused the file (bad option, missing size…): its own words, for every section.
        _ => return Err(Error::tool("fio", crate::fio::failure_message(&out))),
    };
    if entries.len() != jobs.len() {
        return Err(Error::tool(
            "fio",
            format!(
                "fio reported {} job groups for {} sections ({}); cannot tell which is which",
                entries.len(),
                jobs.len(),
                entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let delta = match (&before, &after) {
        (Some(b), Some(a)) => Some(b.delta(a)),
        _ => None,
    };
    let concurrent = jobs.len() > 1;
    Ok(jobs
        .iter()
        .zip(entries)
        .map(|(job, e)| {
            if let Some(err) = e.error {
                // fio's stderr when it said something (it is shared by the phase's sections).
                let why = if out.stderr.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::fio::failure_message(&out))
                };
                return Err(Error::workload(&job.section, format!("fio's job failed with {err}{why}")));
            }
            let mut report = e.report;
            if let (Some(d), Some(dv), false) = (&dev, &delta, concurrent) {
                let written = report.write.bytes + e.trim.bytes;
                report.device = Some(DeviceReport {
                    name: d.name.clone(),
                    read_bytes: dv.read_bytes,
                    write_bytes: dv.write_bytes,
                    write_amplification: (written > 0)
                        .then(|| dv.write_bytes as f64 / report.write.bytes.max(1) as f64),
                    // No write-back window for job-file sections yet: a phase's sections share
                    // one device, so a per-section total would not be theirs alone.
                    ..Default::default()
                });
            }
            let mut o = super::io::to_output(&report);
            add_trim(&mut o, &e.trim);
            if let (Some(dv), true) = (&delta, concurrent) {
                o.metrics.push(Metric::new(PHASE_DEVICE_WRITE_BYTES, "bytes", dv.write_bytes as f64));
                o.notes.push(format!(
                    "ran concurrently with {}; device bytes are the phase's total (phase_device_write_bytes)",
                    jobs.iter()
                        .filter(|j| j.index != job.index)
                        .map(|j| format!("[{}]", j.section))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            Ok(o)
        })
        .collect())
}

/// Trims are not reads or writes: their own metrics, so `iops` keeps meaning reads + writes.
fn add_trim(o: &mut WorkloadOutput, t: &DirectionReport) {
    if t.ios == 0 {
        return;
    }
    // A trim-only section moved no reads or writes: a 0 `iops` would read as "did nothing".
    if !o.metrics.iter().any(|m| m.metric == IOPS && m.value > 0.0) {
        o.metrics
            .retain(|m| m.metric != IOPS && m.metric != BW_MIB_S);
    }
    o.metrics.push(Metric::new(TRIM_IOPS, "IOPS", t.iops));
    o.metrics.push(Metric::new(
        TRIM_BW_MIB_S,
        "MiB/s",
        t.bw_bytes / (1 << 20) as f64,
    ));
    o.metrics.push(Metric::new(
        TRIM_LAT_P99_MS,
        "ms",
        t.lat_ns.p99 as f64 / 1e6,
    ));
}

/// Pessimistic speed at which fio lays out a phase's files before it starts measuring.
const LAYOUT_BPS: u64 = 20 << 20;
/// Slack for fio's start-up and teardown.
const SLACK: std::time::Duration = std::time::Duration::from_secs(120);

/// How long a phase may take before fio counts as hung (fio itself can hang, e.g. 3.33 with
/// `io_submit_mode=offload` and `runtime=`): the longest `startdelay + ramp_time + runtime`,
/// plus laying out the phase's files at a slow disk's pace, plus slack. A size-based section
/// (no `runtime=`) gets fio's hang guard only, since its length depends on the disk.
fn timeout(jobs: &[&FioJob]) -> std::time::Duration {
    use crate::fio::jobfile::parse::duration;
    let mut longest = std::time::Duration::ZERO;
    let mut bytes = 0u64;
    for j in jobs {
        let o = j.opts();
        let get = |k: &str| {
            o.iter()
                .rev()
                .find(|x| x.key == k)
                .and_then(|x| x.value.clone())
        };
        let t = |k: &str| get(k).and_then(|v| duration(&v)).unwrap_or_default();
        if get("runtime")
            .and_then(|v| duration(&v))
            .is_none_or(|d| d.is_zero())
        {
            return crate::fio::JOBFILE_SIZE_LIMIT;
        }
        // startdelay may be a range (`1-5`): its upper end.
        let delay = get("startdelay")
            .and_then(|v| v.rsplit('-').next().and_then(duration))
            .unwrap_or_default();
        longest = longest.max(delay + t("ramp_time") + t("runtime"));
        let numjobs = o
            .iter()
            .rev()
            .find(|x| x.key == "numjobs")
            .and_then(|x| x.value.as_deref()?.trim().parse().ok())
            .unwrap_or(1);
        bytes =
            bytes.saturating_add(crate::fio::jobfile::rebase::footprint(&o, numjobs).unwrap_or(0));
    }
    longest + std::time::Duration::from_secs(bytes / LAYOUT_BPS) + SLACK
}
