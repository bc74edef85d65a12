//! Rank 0's reduction of one workload's outputs (one per rank) into the all-ranks output the
//! runner records (`fsbench run --mpi` and `fsbench meta --mpi`, both plans run by the runner).
//!
//! Every rank prepares the workload (untimed), then all start its measured part together (a
//! barrier right before it); each rank reports when its measured part started and ended on the
//! clock the barrier's release gives them all, so the common window of a phase is the
//! earliest rank's start to the latest rank's end of it. Totals are summed and divided by that window, latency
//! histograms are merged bucket by bucket, as `io --mpi` does ([`super::aggregate`]).

use crate::engine::{self, CpuReport, IoReport};
use crate::measure::LatencyHistogram;
use crate::metrics::registry::{BYTES, CPU_UTIL, DEVICE_WRITE_BYTES, ENTRIES, FSYNCS, IOPS};
use crate::metrics::{MetricId, MetricKey, Reduce};
use crate::workload::{Metric, WorkloadOutput};
use serde::{Deserialize, Serialize};

/// One direction's latency histogram as a rank sends it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireHistogram {
    /// `read` or `write`.
    pub direction: String,
    /// Smallest latency, ns.
    pub min_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// Sum of latencies, ns.
    pub sum_ns: u128,
    /// `[value, count]` pairs ([`LatencyHistogram::to_sparse`]).
    pub buckets: Vec<[u64; 2]>,
}

/// A rank's [`WorkloadOutput`] on the wire (the output itself is not serialisable).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Measured {
    /// `(metric, unit, value)`.
    pub metrics: Vec<(MetricKey, String, f64)>,
    /// Latency histograms by direction.
    pub histograms: Vec<WireHistogram>,
    /// Per-second series by metric.
    pub series: Vec<(String, Vec<f64>)>,
    /// Notes.
    pub notes: Vec<String>,
    /// Ran with warm caches.
    pub ran_warm: bool,
    /// When this rank's measured part started, seconds after the start barrier's release
    /// (the clock all ranks share: each reads its own monotonic clock from that release).
    #[serde(default)]
    pub start_s: f64,
    /// When it ended, on the same clock.
    #[serde(default)]
    pub end_s: f64,
    /// Its whole engine run, for an I/O job several processes run as one
    /// ([`crate::workload::io::GroupJob`]; `fsbench io --mpi`'s per-rank rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Box<crate::engine::JobRun>>,
}

impl Measured {
    /// The wire form of `out`.
    pub fn of(out: &WorkloadOutput) -> Measured {
        Measured {
            metrics: out
                .metrics
                .iter()
                .map(|m| (m.metric.into(), m.unit.clone(), m.value))
                .collect(),
            histograms: out
                .histograms
                .iter()
                .map(|(d, h)| WireHistogram {
                    direction: d.clone(),
                    min_ns: h.min(),
                    max_ns: h.max(),
                    sum_ns: h.sum(),
                    buckets: h.to_sparse(),
                })
                .collect(),
            series: out.series.clone(),
            notes: out.notes.clone(),
            ran_warm: out.ran_warm,
            start_s: 0.0,
            end_s: 0.0,
            job: out.job.clone(),
        }
    }

    /// This output, measured from `start_s` to `end_s` after the start barrier.
    pub fn started(mut self, start_s: f64, end_s: f64) -> Measured {
        self.start_s = start_s;
        self.end_s = end_s;
        self
    }

    /// This rank's value of `metric`, if it emitted one.
    pub fn get(&self, metric: MetricId) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(m, _, _)| *m == metric)
            .map(|(_, _, v)| *v)
    }

    fn histogram(&self, direction: &str) -> LatencyHistogram {
        self.histograms
            .iter()
            .filter(|h| h.direction == direction)
            .map(|h| LatencyHistogram::from_sparse(&h.buckets, h.min_ns, h.max_ns, h.sum_ns))
            .fold(LatencyHistogram::new(), |mut acc, h| {
                acc.merge(&h);
                acc
            })
    }

    /// I/Os this rank completed (its histograms hold every one).
    fn ios(&self) -> u64 {
        self.histograms
            .iter()
            .map(|h| h.buckets.iter().map(|b| b[1]).sum::<u64>())
            .sum()
    }

    /// The engine's measured time: `iops` is all I/Os over it.
    fn io_seconds(&self) -> f64 {
        match self.get(IOPS) {
            Some(iops) if iops > 0.0 => self.ios() as f64 / iops,
            _ => 0.0,
        }
    }
}

/// How a metric becomes the all-ranks value: its metric registry entry says
/// ([`crate::metrics::Reduce`]); a metric without one is left out of the aggregate.
fn rule(metric: MetricId) -> Option<Reduce> {
    metric.def().reduce
}

/// The common window of a phase: latest end − earliest start, where a rank's phase starts at
/// its measured start plus its own earlier phases.
fn window(ranks: &[Measured], metric: MetricId, after: &[MetricId]) -> f64 {
    let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in ranks {
        let Some(d) = r.get(metric) else { continue };
        let offset: f64 = r.start_s + after.iter().filter_map(|m| r.get(*m)).sum::<f64>();
        start = start.min(offset);
        end = end.max(offset + d);
    }
    if start.is_finite() {
        (end - start).max(0.0)
    } else {
        0.0
    }
}

fn reduced(ranks: &[Measured], metric: MetricId, r: Reduce) -> Option<f64> {
    let sum = |m: MetricId| ranks.iter().filter_map(|x| x.get(m)).sum::<f64>();
    Some(match r {
        Reduce::Window { after } => window(ranks, metric, after),
        Reduce::Sum => sum(metric),
        Reduce::Rate { of, over, scale } => {
            let w = reduced(ranks, over, rule(over)?)?;
            if w > 0.0 { sum(of) / w * scale } else { 0.0 }
        }
        Reduce::First => ranks.first()?.get(metric)?,
    })
}

/// Reduce the ranks' outputs (rank order) of one workload. `io_bs` is the block size of an
/// I/O job (`None` for the other kinds).
pub fn merge(ranks: &[Measured], io_bs: Option<u64>) -> WorkloadOutput {
    let mut out = match io_bs {
        Some(bs) => merge_io(ranks, bs),
        None => merge_by_rules(ranks),
    };
    // Every rank's notes once (ranks usually say the same thing).
    for r in ranks {
        for n in &r.notes {
            if !out.notes.contains(n) {
                out.notes.push(n.clone());
            }
        }
    }
    out.notes.push(per_rank_note(ranks, io_bs.is_some()));
    out.ran_warm = ranks.iter().any(|r| r.ran_warm);
    out
}

/// What each rank did, so the sum can be checked against the aggregate.
fn per_rank_note(ranks: &[Measured], io: bool) -> String {
    let (what, each): (&str, Vec<String>) = if io {
        ("I/Os", ranks.iter().map(|r| r.ios().to_string()).collect())
    } else if let Some(m) = [ENTRIES, BYTES]
        .into_iter()
        .find(|m| ranks.iter().any(|r| r.get(*m).is_some()))
    {
        (
            m.as_str(),
            ranks
                .iter()
                .map(|r| format!("{:.0}", r.get(m).unwrap_or(0.0)))
                .collect(),
        )
    } else {
        return format!("MPI: {} ranks (rank 0's statvfs figures)", ranks.len());
    };
    let by: Vec<String> = each
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{i}: {v}"))
        .collect();
    let spans: Vec<String> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{i}: {:.3}–{:.3}", r.start_s, r.end_s))
        .collect();
    format!(
        "MPI: {} ranks, started together; {what} by rank {}; the figures are all ranks' \
         totals over the common window; measured s after the start barrier by rank {}",
        ranks.len(),
        by.join(", "),
        spans.join(", ")
    )
}

fn merge_by_rules(ranks: &[Measured]) -> WorkloadOutput {
    let mut out = WorkloadOutput::default();
    let Some(first) = ranks.first() else {
        return out;
    };
    let mut dropped = Vec::new();
    for (metric, unit, _) in &first.metrics {
        // Every rank's metrics came from the registry; an id it does not know is dropped.
        let reduce = |id: MetricId| rule(id).and_then(|r| reduced(ranks, id, r));
        match metric.id().and_then(|id| reduce(id).map(|v| (id, v))) {
            Some((id, v)) => out.metrics.push(Metric::new(id, unit, v)),
            None => dropped.push(metric.as_str()),
        }
    }
    if !dropped.is_empty() {
        out.notes.push(format!(
            "not reduced across ranks, so not recorded: {} (device counters of ranks that \
             share a device cannot be summed)",
            dropped.join(", ")
        ));
    }
    out
}

/// An I/O job: the ranks' histograms merged, I/Os over the common window (earliest start to
/// latest end of the ranks' measured I/O), then
/// the same metric mapping as a single process's job ([`crate::workload::io::to_output`]).
fn merge_io(ranks: &[Measured], bs: u64) -> WorkloadOutput {
    let mut read = LatencyHistogram::new();
    let mut write = LatencyHistogram::new();
    let mut series: Vec<f64> = Vec::new();
    let (mut cpu_s, mut fsyncs) = (0.0, 0.0);
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in ranks {
        read.merge(&r.histogram("read"));
        write.merge(&r.histogram("write"));
        let secs = r.io_seconds();
        first = first.min(r.start_s);
        last = last.max(r.start_s + secs);
        cpu_s += r.get(CPU_UTIL).unwrap_or(0.0) / 100.0 * secs;
        fsyncs += r.get(FSYNCS).unwrap_or(0.0);
        if let Some((_, s)) = r.series.iter().find(|(m, _)| m == IOPS.as_str()) {
            if series.len() < s.len() {
                series.resize(s.len(), 0.0);
            }
            for (acc, v) in series.iter_mut().zip(s) {
                *acc += v;
            }
        }
    }
    let window_s = if first.is_finite() {
        (last - first).max(0.0)
    } else {
        0.0
    };
    let report = IoReport {
        read: engine::direction(&read, bs, window_s),
        write: engine::direction(&write, bs, window_s),
        cpu: CpuReport {
            user_s: cpu_s,
            sys_s: 0.0,
            system_util: 0.0,
        },
        runtime_s: window_s,
        fsyncs: fsyncs as u64,
        iops_series: series,
        // No device counters: ranks on one host share its devices (as `io --mpi`).
        device: None,
        ..Default::default()
    };
    let mut out = crate::workload::io::to_output(&report);
    if ranks.iter().any(|r| r.get(DEVICE_WRITE_BYTES).is_some()) {
        out.notes
            .push("no device counters for the aggregate: ranks on one host share devices".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::{
        BW_MIB_S, CREATE_SECONDS, ENTRIES, LAT_P99_MS, OPS_PER_S, READ_FILES_PER_S, READ_SECONDS,
        SECONDS, SYNC_SECONDS,
    };

    fn io_rank(lat_ns: u64, ios: u64, secs: f64) -> Measured {
        let mut h = LatencyHistogram::new();
        for _ in 0..ios {
            h.record(lat_ns);
        }
        let out = crate::workload::io::to_output(&IoReport {
            read: engine::direction(&h, 4096, secs),
            runtime_s: secs,
            iops_series: vec![ios as f64 / secs; secs as usize],
            ..Default::default()
        });
        Measured::of(&out)
    }

    fn metric(out: &WorkloadOutput, m: MetricId) -> f64 {
        out.metrics.iter().find(|x| x.metric == m).unwrap().value
    }

    #[test]
    fn io_totals_over_the_longest_rank_and_merged_buckets() {
        let ranks = [
            io_rank(1_000, 100, 1.0),
            io_rank(5_000, 300, 2.0),
            io_rank(100_000, 10, 1.0),
        ];
        let out = merge(&ranks, Some(4096));
        let count: u64 = out.histograms.iter().map(|(_, h)| h.count()).sum();
        assert_eq!(count, 410);
        // 410 I/Os over 2 s, not the sum of the rates (100 + 150 + 10).
        assert!((metric(&out, IOPS) - 205.0).abs() < 1e-6);
        let bw = 410.0 * 4096.0 / 2.0 / (1 << 20) as f64;
        assert!((metric(&out, BW_MIB_S) - bw).abs() < 1e-9);
        // Merged, not averaged: the 99th percentile is in the slow rank's bucket.
        assert!(metric(&out, LAT_P99_MS) >= 0.099);
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains("I/Os by rank 0: 100, 1: 300, 2: 10"))
        );
    }

    fn meta_rank(entries: f64, secs: f64) -> Measured {
        Measured {
            metrics: vec![
                (SECONDS.into(), "s".into(), secs),
                (ENTRIES.into(), "entries".into(), entries),
                (OPS_PER_S.into(), "entries/s".into(), entries / secs),
                (DEVICE_WRITE_BYTES.into(), "bytes".into(), 1.0),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn metadata_entries_over_the_common_window() {
        let out = merge(&[meta_rank(100.0, 1.0), meta_rank(300.0, 4.0)], None);
        assert_eq!(metric(&out, SECONDS), 4.0);
        assert_eq!(metric(&out, ENTRIES), 400.0);
        assert_eq!(metric(&out, OPS_PER_S), 100.0);
        assert!(!out.metrics.iter().any(|m| m.metric == DEVICE_WRITE_BYTES));
        assert!(out.notes.iter().any(|n| n.contains("device_write_bytes")));
    }

    #[test]
    fn a_rank_that_starts_late_widens_the_common_window() {
        // Rank 1 began its measured part 2 s after the start barrier: the ranks' work spans
        // [0, 1] and [2, 5], so the common window is 5 s, not the longest rank's 3 s.
        let out = merge(
            &[
                meta_rank(100.0, 1.0).started(0.0, 1.0),
                meta_rank(300.0, 3.0).started(2.0, 5.0),
            ],
            None,
        );
        assert_eq!(metric(&out, SECONDS), 5.0);
        assert_eq!(metric(&out, OPS_PER_S), 80.0);
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains("by rank 0: 0.000–1.000, 1: 2.000–5.000"))
        );
        // I/O: 410 I/Os, ranks over [0, 1] and [0.5, 2.5]: a 2.5 s window.
        let io = merge(
            &[
                io_rank(1_000, 100, 1.0).started(0.0, 1.0),
                io_rank(5_000, 310, 2.0).started(0.5, 2.5),
            ],
            Some(4096),
        );
        assert!((metric(&io, IOPS) - 410.0 / 2.5).abs() < 1e-6);
    }

    #[test]
    fn a_later_phase_window_starts_after_each_ranks_earlier_phases() {
        let rank = |create: f64, sync: f64, read: f64| Measured {
            metrics: vec![
                (CREATE_SECONDS.into(), "s".into(), create),
                (SYNC_SECONDS.into(), "s".into(), sync),
                (READ_SECONDS.into(), "s".into(), read),
                (READ_FILES_PER_S.into(), "files/s".into(), 10.0 / read),
                (ENTRIES.into(), "files".into(), 10.0),
            ],
            ..Default::default()
        };
        // Reads span [3, 4] and [1, 3]: the common read window is [1, 4].
        let out = merge(&[rank(2.0, 1.0, 1.0), rank(0.5, 0.5, 2.0)], None);
        assert_eq!(metric(&out, READ_SECONDS), 3.0);
        assert!((metric(&out, READ_FILES_PER_S) - 20.0 / 3.0).abs() < 1e-9);
        assert_eq!(metric(&out, CREATE_SECONDS), 2.0);
    }
}
