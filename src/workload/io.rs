//! I/O workloads (seqread, randwrite, randrw70, fsync-write…): a [`JobSpec`] run by the
//! engine inside the filesystem under test, mapped to the standard metric names.

use super::{Metric, StepWarning, WarningKind, WorkloadContext, WorkloadOutput};
use crate::engine::{self, IoReport, JobRun, JobSpec};
use crate::measure::LatencyHistogram;
use crate::metrics::MetricId;
use crate::metrics::registry::{
    BW_MIB_S, CPU_UTIL, DEVICE_WRITE_BYTES, DEVICE_WRITE_BYTES_TOTAL, FSYNCS, IOPS, LAT_P50_MS,
    LAT_P99_9_MS, LAT_P99_MS, READ_BW_MIB_S, READ_IOPS, STALLS, STEADY_AT_S, STEADY_REACHED,
    WRITE_AMPLIFICATION, WRITE_AMPLIFICATION_TOTAL, WRITE_BW_MIB_S, WRITE_IOPS,
};

/// Run `spec` in `ctx`: a relative filename lives in `ctx.dir`, the device defaults to
/// `ctx.device`, the seed to `ctx.seed`.
pub fn run(ctx: &WorkloadContext, spec: &JobSpec) -> crate::Result<WorkloadOutput> {
    let mut spec = spec.clone();
    if spec.filename.is_relative() {
        spec.filename = ctx.dir.join(&spec.filename);
    }
    if spec.device.is_none() {
        spec.device = ctx.device.map(|d| d.to_path_buf());
    }
    if spec.seed.is_none() {
        spec.seed = Some(ctx.seed);
    }
    let report = engine::run_with(&spec, ctx.settle)?;
    Ok(to_output(&report))
}

/// An I/O job run exactly as given (`fsbench io`'s plan, and every rank's of `fsbench io
/// --mpi`: the job from its flags, the process's file and seed), the I/O workload's own
/// parameters ([`super::spec::WorkloadSpec::params_of`]). The engine runs it with the step's
/// coordinator ([`engine::run_coordinated`]): one more meeting right before the clocks start,
/// stonewall when the coordinator asks for it, and with `slice` this process's regions of one
/// shared file that the leader lays out first.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupJob {
    /// The job, its file already this process's (`%r`/`%h` expanded) and its seed set.
    pub job: JobSpec,
    /// This process's part of a shared file; `None`: a file of its own.
    pub slice: Option<engine::Slice>,
    /// After a job that writes, count the device's write-back under the step's rule
    /// (`false`: `fsbench io --no-settle`). Several processes never settle inside their
    /// window (the runner gives their steps no rule).
    #[serde(default = "settles")]
    pub settle: bool,
}

/// A job settles unless told not to.
fn settles() -> bool {
    true
}

/// Run `g` as one of the processes `coord` meets (the step's coordinator; a process alone
/// without one), the device's write-back counted under `settle` (the step's rule, when `g`
/// settles), on fio instead when `fio` (one process alone: fio has no meetings): the output
/// of [`to_output`] with the whole run in `job`. No O_DIRECT retry (a second run on one
/// process would not match the others' meetings, and `fsbench io` reports the refusal).
pub fn run_group(
    g: &GroupJob,
    coord: &dyn engine::Coordinator,
    settle: Option<crate::measure::SettleRule>,
    fio: bool,
) -> crate::Result<WorkloadOutput> {
    let settle = settle.filter(|_| g.settle);
    let (report, window) = if fio {
        let report = crate::fio::run(&g.job)?;
        let end_s = report.runtime_s;
        (
            report,
            engine::Window {
                start_s: 0.0,
                end_s,
            },
        )
    } else {
        engine::run_coordinated(&g.job, g.slice, coord, settle)?
    };
    let mut out = to_output(&report);
    out.job = Some(Box::new(JobRun {
        filename: g.job.filename.display().to_string(),
        report,
        start_s: window.start_s,
        end_s: window.end_s,
    }));
    Ok(out)
}

fn histogram(d: &engine::DirectionReport) -> LatencyHistogram {
    LatencyHistogram::from_sparse(&d.histogram, d.lat_ns.min, d.lat_ns.max, d.lat_sum_ns)
}

/// Map a report to the documented metric names (docs/design-notes.md). Latency percentiles cover every I/O of the job
/// (reads and writes together); `cpu_util` is the process's CPU time per second of the
/// measured window, in % of one CPU.
pub fn to_output(report: &IoReport) -> WorkloadOutput {
    let mut out = WorkloadOutput::default();
    let (r, w) = (&report.read, &report.write);
    throughput_and_latency(report, &mut out.metrics);
    if r.ios > 0 && w.ios > 0 {
        mixed_sides(r, w, &mut out.metrics);
    }
    if report.runtime_s > 0.0 {
        out.metrics.push(Metric::new(
            CPU_UTIL,
            "%",
            100.0 * (report.cpu.user_s + report.cpu.sys_s) / report.runtime_s,
        ));
    }
    if let Some(d) = &report.device {
        device_totals(d, &mut out);
    }
    if report.fsyncs > 0 {
        out.metrics
            .push(Metric::new(FSYNCS, "count", report.fsyncs as f64));
    }
    if r.ios > 0 {
        out.histograms.push(("read".into(), histogram(r)));
    }
    if w.ios > 0 {
        out.histograms.push(("write".into(), histogram(w)));
    }
    if !report.iops_series.is_empty() {
        per_second(report, &mut out);
    }
    for (name, v) in [
        ("lat_p50_ms", &report.lat_p50_ms_series),
        ("lat_p99_ms", &report.lat_p99_ms_series),
    ] {
        if !v.is_empty() {
            out.series.push((name.into(), v.clone()));
        }
    }
    if let Some(note) = &report.backend_note {
        out.notes.push(note.clone());
    }
    if let Some(s) = &report.steady {
        steady_window(s, report, &mut out);
    }
    out
}

/// IOPS (and each side's for a mix), MiB/s, and the latency percentiles over every I/O.
fn throughput_and_latency(report: &IoReport, m: &mut Vec<Metric>) {
    let (r, w) = (&report.read, &report.write);
    m.push(Metric::new(IOPS, "IOPS", r.iops + w.iops));
    if r.ios > 0 && w.ios > 0 {
        m.push(Metric::new(READ_IOPS, "IOPS", r.iops));
        m.push(Metric::new(WRITE_IOPS, "IOPS", w.iops));
    }
    m.push(Metric::new(
        BW_MIB_S,
        "MiB/s",
        (r.bw_bytes + w.bw_bytes) / (1 << 20) as f64,
    ));
    let mut all = histogram(r);
    all.merge(&histogram(w));
    if all.count() > 0 {
        m.push(Metric::new(
            LAT_P50_MS,
            "ms",
            all.quantile(0.50) as f64 / 1e6,
        ));
        m.push(Metric::new(
            LAT_P99_MS,
            "ms",
            all.quantile(0.99) as f64 / 1e6,
        ));
        m.push(Metric::new(
            LAT_P99_9_MS,
            "ms",
            all.quantile(0.999) as f64 / 1e6,
        ));
    } else if r.ios + w.ios > 0 {
        // No histogram (a report parsed from fio or an older fsbench): use the reported
        // percentiles of the direction that did most of the I/O.
        let d = if w.ios > r.ios { &w.lat_ns } else { &r.lat_ns };
        m.push(Metric::new(LAT_P50_MS, "ms", d.p50 as f64 / 1e6));
        m.push(Metric::new(LAT_P99_MS, "ms", d.p99 as f64 / 1e6));
        m.push(Metric::new(LAT_P99_9_MS, "ms", d.p99_9 as f64 / 1e6));
    }
}

/// A mix (randrw70) read per side too, as seed 000 reports its 70/30 job.
fn mixed_sides(r: &engine::DirectionReport, w: &engine::DirectionReport, m: &mut Vec<Metric>) {
    for (side, d) in [("read", r), ("write", w)] {
        m.push(Metric::new(
            MetricId::registered(&format!("{side}_bw_mib_s")),
            "MiB/s",
            d.bw_bytes / (1 << 20) as f64,
        ));
        let h = histogram(d);
        let q = |p: f64, reported: u64| {
            (if h.count() > 0 {
                h.quantile(p)
            } else {
                reported
            }) as f64
                / 1e6
        };
        // Spelled out (not `{side}_{name}`) so the registry's test checks every id.
        for (id, p, reported) in [
            (format!("{side}_lat_p50_ms"), 0.50, d.lat_ns.p50),
            (format!("{side}_lat_p99_ms"), 0.99, d.lat_ns.p99),
            (format!("{side}_lat_p99_9_ms"), 0.999, d.lat_ns.p99_9),
        ] {
            m.push(Metric::new(MetricId::registered(&id), "ms", q(p, reported)));
        }
    }
}

/// What the device wrote during the job (and with its write-back), with its notes.
fn device_totals(d: &engine::DeviceReport, out: &mut WorkloadOutput) {
    let m = &mut out.metrics;
    m.push(Metric::new(
        DEVICE_WRITE_BYTES,
        "bytes",
        d.write_bytes as f64,
    ));
    if let Some(wa) = d.write_amplification {
        m.push(Metric::new(WRITE_AMPLIFICATION, "ratio", wa));
    }
    if let Some(t) = d.write_bytes_total {
        m.push(Metric::new(DEVICE_WRITE_BYTES_TOTAL, "bytes", t as f64));
    }
    if let Some(wa) = d.write_amplification_total {
        m.push(Metric::new(WRITE_AMPLIFICATION_TOTAL, "ratio", wa));
    }
    if let Some(n) = &d.settle_note {
        out.notes.push(n.clone());
    }
    out.notes
        .extend(crate::measure::device::per_member_note(&d.per_device));
}

/// The per-second IOPS series, its stalls, and whether (and after how many measured seconds)
/// five one-second IOPS values met the 20 %/10 % criteria (a quick look, not SNIA's rounds);
/// a job that never did measured a transient. A job run until steady (`--steady-state`)
/// carries the engine's own verdict over its rounds.
fn per_second(report: &IoReport, out: &mut WorkloadOutput) {
    out.series.push(("iops".into(), report.iops_series.clone()));
    let m = &mut out.metrics;
    m.push(Metric::new(
        STALLS,
        "s",
        crate::measure::stalls(&report.iops_series) as f64,
    ));
    let at = match &report.steady {
        // A device that was not preconditioned is not claimed steady (its rounds may sit on
        // the fresh drive's plateau before the write cliff).
        Some(s) if s.conditioning == engine::until_steady::Conditioning::NotPreconditioned => None,
        Some(s) => s.at_s.map(|a| a as usize),
        None => crate::measure::snia_criteria::steady_at(
            &report.iops_series,
            &crate::measure::snia_criteria::SteadyCriteria::default(),
        ),
    };
    m.push(Metric::new(
        STEADY_REACHED,
        "bool",
        f64::from(u8::from(at.is_some())),
    ));
    if let Some(at) = at {
        m.push(Metric::new(STEADY_AT_S, "s", at as f64));
    }
}

/// The start of the warning of a job that never became steady ([`WarningKind::NotSteady`]:
/// the figures are the whole run's, a transient may be in them).
pub const NOT_STEADY: &str = "steady state not reached";

/// The start of the warning of a job on a device that met the criteria without
/// preconditioning ([`WarningKind::NotPreconditioned`]).
pub const NOT_PRECONDITIONED: &str = "not preconditioned";

/// The start of the note of a job whose rounds met the criteria (a preconditioned device).
pub const STEADY: &str = "steady state over";

/// The start of the note of a job whose rounds met the criteria on a file or image.
pub const STABLE: &str = "stable (";

/// Whether a workload note is the verdict of `--steady-state` (the runner prints it, so the
/// terminal says which rounds formed the window; the verdicts that doubt the figures are
/// warnings, which it prints too).
pub fn is_steady_note(note: &str) -> bool {
    [STEADY, STABLE].iter().any(|p| note.starts_with(p))
}

/// The series of a job run until steady: one value per steady-state round (IOPS), for the
/// report's steady-state plot (the per-second values stay in `iops`).
pub const ROUND_SERIES: &str = "steady_round_iops";

/// `rounds 4–8 of 9` (the window, 1-based, and how many rounds ran).
pub fn rounds_text(s: &engine::SteadyReport) -> String {
    let unit = if s.quick { "seconds" } else { "rounds" };
    match s.window_rounds {
        Some([a, b]) => format!("{unit} {a}–{b} of {}", s.rounds.len()),
        None => format!("{} {unit}", s.rounds.len()),
    }
}

/// A job run until steady: when the criteria held (and, on a device, after preconditioning),
/// the headline figures (IOPS, MiB/s, latency percentiles) become the window's; otherwise they
/// stay the whole run's and a [`NOT_STEADY`] or [`NOT_PRECONDITIONED`] note says why.
fn steady_window(s: &engine::SteadyReport, report: &IoReport, out: &mut WorkloadOutput) {
    if !s.rounds.is_empty() && !s.quick {
        out.series.push((ROUND_SERIES.into(), s.rounds.clone()));
    }
    let rule = if s.quick {
        format!(
            "{} one-second windows within {} % range / {} % slope, quick mode, not SNIA",
            s.criteria.windows, s.criteria.range_pct, s.criteria.slope_pct
        )
    } else {
        format!(
            "{} rounds of {} s within {} % range / {} % slope",
            s.criteria.windows, s.round_s, s.criteria.range_pct, s.criteria.slope_pct
        )
    };
    let how = match (s.range_pct, s.slope_pct) {
        (Some(r), Some(sl)) => format!("range {r:.1} %, slope {sl:.1} %"),
        _ => "fewer rounds than the window".into(),
    };
    let Some(w) = &s.window else {
        out.warnings.push(StepWarning::new(
            WarningKind::NotSteady,
            format!(
                "{NOT_STEADY} within {} ({rule}; {}: {how}): IOPS, MiB/s and latency are the whole run's",
                crate::units::format_duration(std::time::Duration::from_secs_f64(s.max_s)),
                rounds_text(s),
            ),
        ));
        return;
    };
    if s.conditioning == engine::until_steady::Conditioning::NotPreconditioned {
        out.warnings.push(StepWarning::new(
            WarningKind::NotPreconditioned,
            format!(
                "{NOT_PRECONDITIONED}: the device met the criteria over {} ({rule}: {how}) but \
                 was not preconditioned (--precondition), so steady state is not claimed: a \
                 fresh SSD can hold its burst speed for rounds before its write cliff; IOPS, \
                 MiB/s and latency are the whole run's",
                rounds_text(s)
            ),
        ));
        return;
    }
    let mib = (1 << 20) as f64;
    let ios = w.read_ios + w.write_ios;
    let bs = if ios > 0 {
        w.bytes as f64 / ios as f64
    } else {
        0.0
    };
    let mixed = report.read.ios > 0 && report.write.ios > 0;
    let mut set = |id: MetricId, v: f64| {
        if let Some(x) = out.metrics.iter_mut().find(|x| x.metric == id) {
            x.value = v;
        }
    };
    set(IOPS, w.iops);
    set(BW_MIB_S, w.bw_bytes / mib);
    set(READ_IOPS, w.read_iops);
    set(WRITE_IOPS, w.write_iops);
    set(READ_BW_MIB_S, w.read_iops * bs / mib);
    set(WRITE_BW_MIB_S, w.write_iops * bs / mib);
    if ios > 0 {
        set(LAT_P50_MS, w.lat_ns.p50 as f64 / 1e6);
        set(LAT_P99_MS, w.lat_ns.p99 as f64 / 1e6);
        set(LAT_P99_9_MS, w.lat_ns.p99_9 as f64 / 1e6);
    }
    let what = match s.conditioning {
        engine::until_steady::Conditioning::Preconditioned => STEADY.to_string(),
        // A file, an image, a directory: caches underneath (the doctor says so).
        _ => format!("{STABLE}a file or image: its caches make this no steady state) over"),
    };
    out.notes.push(format!(
        "{what} {} ({rule}: {how}), after {} s: IOPS, MiB/s and latency are over seconds {}–{} of the measured window{}",
        rounds_text(s),
        s.at_s.unwrap_or(w.end_s),
        w.start_s,
        w.end_s,
        if mixed {
            "; the per-side latencies (read_lat_*, write_lat_*) are the whole run's"
        } else {
            ""
        }
    ));
}

/// Metrics of an I/O job (native engine or fio: `workload::io::to_output`), then `$extra`.
macro_rules! io_metrics {
    ($($extra:expr),*) => {
        &[
            $crate::metrics::registry::IOPS,
            $crate::metrics::registry::READ_IOPS,
            $crate::metrics::registry::WRITE_IOPS,
            $crate::metrics::registry::BW_MIB_S,
            $crate::metrics::registry::READ_BW_MIB_S,
            $crate::metrics::registry::WRITE_BW_MIB_S,
            $crate::metrics::registry::LAT_P50_MS,
            $crate::metrics::registry::LAT_P99_MS,
            $crate::metrics::registry::LAT_P99_9_MS,
            $crate::metrics::registry::READ_LAT_P50_MS,
            $crate::metrics::registry::READ_LAT_P99_MS,
            $crate::metrics::registry::READ_LAT_P99_9_MS,
            $crate::metrics::registry::WRITE_LAT_P50_MS,
            $crate::metrics::registry::WRITE_LAT_P99_MS,
            $crate::metrics::registry::WRITE_LAT_P99_9_MS,
            $crate::metrics::registry::CPU_UTIL,
            $crate::metrics::registry::DEVICE_WRITE_BYTES,
            $crate::metrics::registry::WRITE_AMPLIFICATION,
            $crate::metrics::registry::DEVICE_WRITE_BYTES_TOTAL,
            $crate::metrics::registry::WRITE_AMPLIFICATION_TOTAL,
            $crate::metrics::registry::FSYNCS,
            $crate::metrics::registry::STALLS,
            $crate::metrics::registry::STEADY_REACHED,
            $crate::metrics::registry::STEADY_AT_S,
            $($extra),*
        ]
    };
}
pub(crate) use io_metrics;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricId;
    use crate::metrics::registry::{
        BW_MIB_S, CPU_UTIL, DEVICE_WRITE_BYTES, DEVICE_WRITE_BYTES_TOTAL, FSYNCS, IOPS, LAT_P50_MS,
        LAT_P99_MS, READ_IOPS, READ_LAT_P50_MS, READ_LAT_P99_MS, STEADY_AT_S, STEADY_REACHED,
        WRITE_AMPLIFICATION_TOTAL, WRITE_IOPS, WRITE_LAT_P99_MS,
    };

    #[test]
    fn runs_relative_to_the_workload_dir() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = WorkloadContext {
            dir: dir.path(),
            device: None,
            fs: "dir",
            round: 1,
            seed: 99,
            settle: None,
        };
        let spec = JobSpec {
            filename: "data".into(),
            rw: engine::RwMode::Randrw,
            rwmixread: 70,
            size: Some(1 << 20),
            iodepth: 4,
            ..Default::default()
        };
        let out = run(&ctx, &spec).unwrap();
        assert!(dir.path().join("data").exists());
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).map(|m| m.value);
        assert!(get(IOPS).unwrap() > 0.0);
        assert!(get(READ_IOPS).is_some() && get(WRITE_IOPS).is_some());
        assert!(get(LAT_P99_MS).unwrap() >= get(LAT_P50_MS).unwrap());
        assert!(get(READ_LAT_P99_MS).unwrap() >= get(READ_LAT_P50_MS).unwrap());
        assert!(get(WRITE_LAT_P99_MS).is_some());
        let total: u64 = out.histograms.iter().map(|(_, h)| h.count()).sum();
        assert_eq!(total, 256, "1 MiB in 4 KiB blocks, each once");
    }

    #[test]
    fn maps_a_mixed_report() {
        let mut h = LatencyHistogram::new();
        for v in [1_000_000u64, 2_000_000, 3_000_000] {
            h.record(v);
        }
        let dir = |iops: f64| engine::DirectionReport {
            ios: 3,
            bytes: 3 * 4096,
            iops,
            bw_bytes: iops * 4096.0,
            lat_ns: engine::LatencyNs {
                min: h.min(),
                max: h.max(),
                mean: h.mean(),
                ..Default::default()
            },
            histogram: h.to_sparse(),
            lat_sum_ns: h.sum(),
        };
        let report = IoReport {
            read: dir(700.0),
            write: dir(300.0),
            runtime_s: 2.0,
            cpu: engine::CpuReport {
                user_s: 0.5,
                sys_s: 0.5,
                system_util: 0.1,
            },
            fsyncs: 3,
            device: Some(engine::DeviceReport {
                name: "loop9".into(),
                read_bytes: 0,
                write_bytes: 8192,
                write_amplification: Some(2.0 / 3.0),
                write_bytes_total: Some(16384),
                write_amplification_total: Some(4.0 / 3.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let out = to_output(&report);
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert_eq!(get(IOPS), 1000.0);
        assert_eq!(get(READ_IOPS), 700.0);
        assert_eq!(get(WRITE_IOPS), 300.0);
        assert_eq!(get(CPU_UTIL), 50.0);
        assert_eq!(get(FSYNCS), 3.0);
        assert_eq!(get(DEVICE_WRITE_BYTES), 8192.0);
        assert_eq!(get(DEVICE_WRITE_BYTES_TOTAL), 16384.0);
        assert_eq!(get(WRITE_AMPLIFICATION_TOTAL), 4.0 / 3.0);
        assert!((get(LAT_P50_MS) - 2.0).abs() < 0.02);
        assert_eq!(out.histograms.len(), 2);
    }

    #[test]
    fn a_steady_window_replaces_the_headline_figures_and_a_missed_one_is_flagged() {
        let whole = engine::DirectionReport {
            ios: 1000,
            bytes: 1000 * 4096,
            iops: 100.0,
            bw_bytes: 100.0 * 4096.0,
            ..Default::default()
        };
        let window = engine::SteadyWindow {
            start_s: 4,
            end_s: 9,
            write_ios: 400,
            bytes: 400 * 4096,
            iops: 80.0,
            write_iops: 80.0,
            bw_bytes: 80.0 * 4096.0,
            lat_ns: engine::LatencyNs {
                p50: 2_000_000,
                p99: 5_000_000,
                p99_9: 9_000_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut report = IoReport {
            write: whole,
            runtime_s: 10.0,
            iops_series: vec![100.0; 10],
            steady: Some(engine::SteadyReport {
                reached: true,
                at_s: Some(9),
                window: Some(window),
                range_pct: Some(3.0),
                slope_pct: Some(1.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let get = |o: &WorkloadOutput, n: MetricId| {
            o.metrics.iter().find(|m| m.metric == n).map(|m| m.value)
        };
        let out = to_output(&report);
        assert_eq!(get(&out, IOPS), Some(80.0));
        assert_eq!(get(&out, BW_MIB_S), Some(80.0 * 4096.0 / 1048576.0));
        assert_eq!(get(&out, LAT_P99_MS), Some(5.0));
        assert_eq!(get(&out, STEADY_REACHED), Some(1.0));
        assert_eq!(get(&out, STEADY_AT_S), Some(9.0));
        assert!(
            out.notes.iter().any(|n| n.contains("seconds 4–9")),
            "{:?}",
            out.notes
        );

        assert!(
            out.series.iter().all(|(n, _)| n != ROUND_SERIES),
            "no rounds, no series"
        );

        // The same window on a device that was not preconditioned: no claim, whole-run figures.
        let s = report.steady.as_mut().unwrap();
        s.conditioning = engine::until_steady::Conditioning::NotPreconditioned;
        (s.round_s, s.rounds, s.window_rounds) = (2.0, vec![90.0, 80.0, 80.0], Some([1, 3]));
        let out = to_output(&report);
        assert_eq!(get(&out, IOPS), Some(100.0));
        assert_eq!(get(&out, STEADY_REACHED), Some(0.0));
        let note = &out
            .warnings
            .iter()
            .find(|n| n.kind == WarningKind::NotPreconditioned)
            .expect("a not-preconditioned warning")
            .message;
        assert!(note.contains("rounds 1–3 of 3"), "{note}");
        assert!(
            out.series
                .iter()
                .any(|(n, v)| n == ROUND_SERIES && v.len() == 3)
        );

        let s = report.steady.as_mut().unwrap();
        (s.reached, s.at_s, s.window) = (false, None, None);
        let out = to_output(&report);
        assert_eq!(get(&out, IOPS), Some(100.0), "the whole run's figure");
        assert_eq!(get(&out, STEADY_REACHED), Some(0.0));
        assert_eq!(get(&out, STEADY_AT_S), None);
        assert!(
            out.warnings
                .iter()
                .any(|n| n.kind == WarningKind::NotSteady && n.message.contains("whole run")),
            "{:?}",
            out.warnings
        );
    }
}
