//! Rank 0's reduction of the ranks' results into one report: totals over the common window
//! (earliest start to latest end), latency histograms merged bucket by bucket.

// A direction's report from a merged histogram is the engine's own summary (`direction`).
use crate::engine::JobRun;
use crate::engine::{DirectionReport, IoReport, direction};
use crate::measure::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// One rank's whole run of the job, as rank 0 reduces it: the step's own record of the run
/// ([`JobRun`]: its file, report and window) and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankResult {
    /// MPI rank.
    pub rank: i32,
    /// Host it ran on.
    pub host: String,
    /// The run itself (its fields sit beside `rank` and `host` in the journal).
    #[serde(flatten)]
    pub run: JobRun,
}

/// Every process's whole run of a [`crate::workload::io::GroupJob`] step, from what the
/// leader gathered (`fsbench io --mpi`'s ranks; none for other steps).
pub fn rank_results(ranks: &[super::RankMeasured]) -> Vec<RankResult> {
    ranks
        .iter()
        .filter_map(|r| {
            Some(RankResult {
                rank: r.rank as i32,
                host: r.host.clone(),
                run: r.measured.job.as_deref()?.clone(),
            })
        })
        .collect()
}

/// One row per rank or per host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Rank number (per-rank rows) or number of ranks (per-host rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<i32>,
    /// Host.
    pub host: String,
    /// Ranks on this host (per-host rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// File (per-rank rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// I/Os completed (reads + writes).
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// I/Os per second over this row's own window.
    pub iops: f64,
    /// Bytes per second over this row's own window.
    pub bw_bytes: f64,
    /// Window opened, seconds after the common start.
    pub start_s: f64,
    /// Window closed, seconds after the common start.
    pub end_s: f64,
    /// Median latency (reads and writes), ns.
    pub lat_p50_ns: u64,
    /// 99th percentile latency (reads and writes), ns.
    pub lat_p99_ns: u64,
}

/// MPI facts and the stonewall figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiProvenance {
    /// MPI library version string.
    pub library: String,
    /// Number of ranks.
    pub ranks: u32,
    /// Distinct hosts, in rank order of first appearance.
    pub hosts: Vec<String>,
    /// Whether all ranks stopped when the first finished.
    pub stonewall: bool,
    /// Common window, seconds: latest end − earliest start.
    pub window_s: f64,
    /// First rank done, seconds after the earliest start.
    pub first_done_s: f64,
    /// Last rank done, seconds after the earliest start.
    pub last_done_s: f64,
    /// All ranks' I/Os per second over [earliest start, first done] (IOR -D / elbencho's
    /// "first done"); with --stonewall only, where the others stop within one poll of it
    /// (without it the others keep going and this would overstate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_done_iops: Option<f64>,
    /// All ranks' bytes per second over [earliest start, first done] (with --stonewall).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_done_bw_bytes: Option<f64>,
    /// All ranks' I/Os per second over [earliest start, last done] (= the aggregate).
    pub last_done_iops: f64,
    /// All ranks' bytes per second over [earliest start, last done].
    pub last_done_bw_bytes: f64,
}

/// The reduced result: `fsbench io --json`'s fields (flattened) plus `ranks`, `hosts`, `mpi`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiIoReport {
    /// All ranks together, as one job.
    #[serde(flatten)]
    pub aggregate: IoReport,
    /// One row per rank.
    pub ranks: Vec<Row>,
    /// One row per host.
    pub hosts: Vec<Row>,
    /// Provenance and stonewall figures.
    pub mpi: MpiProvenance,
}

/// Rebuild a direction's histogram from its report.
fn histogram_of(d: &DirectionReport) -> LatencyHistogram {
    LatencyHistogram::from_sparse(&d.histogram, d.lat_ns.min, d.lat_ns.max, d.lat_sum_ns)
}

/// A row over a group of ranks: rates over the group's own window (earliest start to latest
/// end), percentiles from the group's merged histograms.
fn row(group: &[&RankResult]) -> Row {
    let mut h = LatencyHistogram::new();
    let (mut ios, mut bytes) = (0, 0);
    for r in group {
        h.merge(&histogram_of(&r.run.report.read));
        h.merge(&histogram_of(&r.run.report.write));
        ios += r.run.report.read.ios + r.run.report.write.ios;
        bytes += r.run.report.read.bytes + r.run.report.write.bytes;
    }
    let start = group
        .iter()
        .map(|r| r.run.start_s)
        .fold(f64::INFINITY, f64::min);
    let end = group.iter().map(|r| r.run.end_s).fold(0.0, f64::max);
    let w = end - start;
    let rate = |x: u64| if w > 0.0 { x as f64 / w } else { 0.0 };
    Row {
        rank: None,
        host: group[0].host.clone(),
        ranks: None,
        filename: None,
        ios,
        bytes,
        iops: rate(ios),
        bw_bytes: rate(bytes),
        start_s: start,
        end_s: end,
        lat_p50_ns: h.quantile(0.5),
        lat_p99_ns: h.quantile(0.99),
    }
}

/// Reduce the ranks' results (rank order) of a job with block size `bs`.
pub fn reduce(all: &[RankResult], bs: u64, library: String, stonewall: bool) -> MpiIoReport {
    let mut read = LatencyHistogram::new();
    let mut write = LatencyHistogram::new();
    for r in all {
        read.merge(&histogram_of(&r.run.report.read));
        write.merge(&histogram_of(&r.run.report.write));
    }
    let start = all
        .iter()
        .map(|r| r.run.start_s)
        .fold(f64::INFINITY, f64::min);
    let last = all.iter().map(|r| r.run.end_s).fold(0.0, f64::max);
    let first = all
        .iter()
        .map(|r| r.run.end_s)
        .fold(f64::INFINITY, f64::min);
    let window_s = (last - start).max(0.0);
    let first_s = (first - start).max(0.0);
    let rd = direction(&read, bs, window_s);
    let wr = direction(&write, bs, window_s);
    let (ios, bytes) = (rd.ios + wr.ios, rd.bytes + wr.bytes);
    let per = |x: u64, s: f64| if s > 0.0 { x as f64 / s } else { 0.0 };

    let mut series: Vec<(f64, f64)> = Vec::new();
    for r in all {
        let p = &r.run.report;
        if series.len() < p.iops_series.len() {
            series.resize(p.iops_series.len(), (0.0, 0.0));
        }
        for (i, v) in p.iops_series.iter().enumerate() {
            series[i].0 += v;
            series[i].1 += p.bw_series.get(i).copied().unwrap_or(0.0);
        }
    }
    let r0 = &all[0].run.report;
    let n = all.len() as f64;
    let aggregate = IoReport {
        read: rd,
        write: wr,
        cpu: crate::engine::CpuReport {
            user_s: all.iter().map(|r| r.run.report.cpu.user_s).sum(),
            sys_s: all.iter().map(|r| r.run.report.cpu.sys_s).sum(),
            system_util: all
                .iter()
                .map(|r| r.run.report.cpu.system_util)
                .sum::<f64>()
                / n,
        },
        runtime_s: window_s,
        backend: r0.backend.clone(),
        backend_note: all.iter().find_map(|r| r.run.report.backend_note.clone()),
        seed: r0.seed,
        layout_s: all
            .iter()
            .map(|r| r.run.report.layout_s)
            .fold(0.0, f64::max),
        fsyncs: all.iter().map(|r| r.run.report.fsyncs).sum(),
        iops_series: series.iter().map(|s| s.0).collect(),
        bw_series: series.iter().map(|s| s.1).collect(),
        // Per-second latency is not reduced across ranks (it would need the ranks'
        // per-second histograms); the window's merged percentiles above are exact.
        lat_p50_ms_series: Vec::new(),
        lat_p99_ms_series: Vec::new(),
        // Ranks on one host share its devices: a sum would count the same device twice.
        device: None,
        device_note: Some(
            "no device counters for the aggregate: ranks on one host share devices".into(),
        ),
        engine: r0.engine.clone(),
        jobs: all.iter().flat_map(|r| r.run.report.jobs.clone()).collect(),
        // `--steady-state` is refused with --mpi (ranks would stop at different times).
        steady: None,
    };
    let ranks = all
        .iter()
        .map(|r| Row {
            rank: Some(r.rank),
            filename: Some(r.run.filename.clone()),
            ..row(&[r])
        })
        .collect();
    let mut hosts_seen: Vec<String> = Vec::new();
    for r in all {
        if !hosts_seen.contains(&r.host) {
            hosts_seen.push(r.host.clone());
        }
    }
    let hosts = hosts_seen
        .iter()
        .map(|h| {
            let group: Vec<&RankResult> = all.iter().filter(|r| &r.host == h).collect();
            Row {
                ranks: Some(group.len() as u32),
                ..row(&group)
            }
        })
        .collect();
    MpiIoReport {
        aggregate,
        ranks,
        hosts,
        mpi: MpiProvenance {
            library,
            ranks: all.len() as u32,
            hosts: hosts_seen,
            stonewall,
            window_s,
            first_done_s: first_s,
            last_done_s: window_s,
            first_done_iops: stonewall.then(|| per(ios, first_s)),
            first_done_bw_bytes: stonewall.then(|| per(bytes, first_s)),
            last_done_iops: per(ios, window_s),
            last_done_bw_bytes: per(bytes, window_s),
        },
    }
}

/// One process's whole run of a job alone (`fsbench io`: no coordinator, nothing to
/// reduce): its engine's report as it is (device counters, steady-state verdict, latency
/// series and all, which a reduction over ranks leaves out), with its one rank and host row.
pub fn alone(run: &JobRun, bs: u64) -> MpiIoReport {
    let one = RankResult {
        rank: 0,
        // As a process alone names its host (`engine::Alone`): no other host to tell apart.
        host: String::new(),
        run: run.clone(),
    };
    let mut report = reduce(std::slice::from_ref(&one), bs, String::new(), false);
    report.aggregate = run.report.clone();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: i32, host: &str, lats: &[u64], start_s: f64, end_s: f64) -> RankResult {
        let mut h = LatencyHistogram::new();
        for &l in lats {
            h.record(l);
        }
        let report = IoReport {
            read: direction(&h, 4096, end_s - start_s),
            ..Default::default()
        };
        RankResult {
            rank,
            host: host.into(),
            run: JobRun {
                filename: format!("f{rank}"),
                report,
                start_s,
                end_s,
            },
        }
    }

    #[test]
    fn totals_over_the_common_window_and_merged_buckets() {
        let all = [
            rank(0, "a", &[1000; 100], 0.0, 1.0),
            rank(1, "a", &[5000; 300], 0.5, 2.0),
            rank(2, "b", &[100_000; 10], 0.1, 1.5),
        ];
        let m = reduce(&all, 4096, "test".into(), false);
        assert_eq!(m.aggregate.read.ios, 410);
        assert_eq!(m.aggregate.read.bytes, 410 * 4096);
        // 410 I/Os over [0, 2] s, not the sum of per-rank rates (100 + 200 + 7.1).
        assert!((m.aggregate.read.iops - 205.0).abs() < 1e-9);
        assert!((m.mpi.first_done_s - 1.0).abs() < 1e-9);
        // Merged bucket by bucket: 300 of 410 are 5 µs, so the median is ~5 µs; the 99th is
        // the 100 µs rank's bucket, which averaging per-rank p99s would not give.
        let p50 = m.aggregate.read.lat_ns.p50;
        assert!((4950..=5050).contains(&p50), "{p50}");
        assert!(
            m.aggregate.read.lat_ns.p99 >= 99_000,
            "{:?}",
            m.aggregate.read.lat_ns
        );
        assert_eq!(m.hosts.len(), 2);
        assert_eq!(m.hosts[0].ios, 400);
        assert_eq!(m.ranks[2].ios, 10);
    }
}
