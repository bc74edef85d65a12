//! The one place where several processes' results become one: what the leader (MPI rank 0)
//! does with what [`crate::engine::Coordinator::gather`] brought it.
//!
//! - [`merge`]: one workload step's outputs (every rank's [`merge::Measured`]) into the
//!   all-ranks output the runner records (`fsbench run --mpi`) — totals over the common
//!   window, histograms merged bucket by bucket, each metric by its registry `reduce` rule;
//! - [`aggregate`]: `fsbench io --mpi`'s ranks' whole engine reports (carried by their step
//!   outputs: [`aggregate::rank_results`]) into one report with per-rank and per-host rows,
//!   kept as `Outcome::job_reports`;
//! - [`rank_records`]: every rank's own measurement of a step as the results keep it
//!   (`Results::ranks`, for `run --mpi` and `meta --mpi` alike);
//! - [`rank_rows`] and [`meta_total`]: the per-rank rows of metadata steps, read from those
//!   records, and their all-ranks entries/s (`fsbench meta --mpi`, rendered by
//!   `report::meta::mpi`).
//!
//! A step's outputs are reduced once, by [`step`]: a step whose every rank ran one whole job
//! ([`crate::workload::io::GroupJob`], `io --mpi`) by [`aggregate`] alone (its recorded
//! output is the reduced report's metrics), any other by [`merge`].
//!
//! All of it is pure (no MPI), so it is tested without mpirun.

pub mod aggregate;
pub mod merge;

use crate::metrics::registry::ENTRIES;
use crate::results::{RankRecord, RankValue};
use serde::{Deserialize, Serialize};

/// One process's measured part of one workload step, as the leader received it.
#[derive(Debug, Clone)]
pub struct RankMeasured {
    /// Its rank.
    pub rank: u32,
    /// Its host.
    pub host: String,
    /// Its output on the wire, with its start and end on the ranks' common clock.
    pub measured: merge::Measured,
}

/// One step's outputs made one ([`step`]).
#[derive(Debug, Clone, Default)]
pub struct Reduced {
    /// The all-ranks output the runner records.
    pub output: crate::workload::WorkloadOutput,
    /// A whole-job step's all-ranks report with its per-rank and per-host rows (`io
    /// --mpi`); `output` is its metrics. Its `mpi.library` is the command's to fill (the
    /// runner knows no MPI library).
    pub job: Option<aggregate::MpiIoReport>,
}

/// Reduce one step's outputs (rank order) once. `io_bs`: the block size of an I/O step;
/// `stonewall`: the ranks stopped when the first finished. A step whose every rank carries
/// its whole job run is reduced by [`aggregate::reduce`] alone; any other by
/// [`merge::merge`].
pub fn step(ranks: &[RankMeasured], io_bs: Option<u64>, stonewall: bool) -> Reduced {
    let jobs = aggregate::rank_results(ranks);
    if let Some(bs) = io_bs
        && !jobs.is_empty()
        && jobs.len() == ranks.len()
    {
        let report = aggregate::reduce(&jobs, bs, String::new(), stonewall);
        let mut output = crate::workload::io::to_output(&report.aggregate);
        output.notes.push(format!(
            "MPI: {} ranks ran one job, reduced over the common window (per-rank rows: the \
             job's report)",
            ranks.len()
        ));
        return Reduced {
            output,
            job: Some(report),
        };
    }
    let measured: Vec<merge::Measured> = ranks.iter().map(|r| r.measured.clone()).collect();
    Reduced {
        output: merge::merge(&measured, io_bs),
        job: None,
    }
}

/// One metadata workload on one rank (`fsbench meta --mpi --json`'s `ranks` entries).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankStep {
    /// MPI rank.
    pub rank: i32,
    /// Host.
    pub host: String,
    /// Workload id.
    pub workload: String,
    /// Entries it created, walked or removed.
    pub entries: u64,
    /// Started, seconds after the common start barrier.
    pub start_s: f64,
    /// Ended, seconds after the common start barrier.
    pub end_s: f64,
}

/// Every rank's own measurement of workload `workload` (the id its samples carry) of
/// `setup` in `round`, as the results keep it.
pub fn rank_records(
    setup: &str,
    workload: &str,
    round: u32,
    ranks: &[RankMeasured],
) -> Vec<RankRecord> {
    ranks
        .iter()
        .map(|r| RankRecord {
            setup: setup.to_string(),
            workload: workload.to_string(),
            round,
            rank: r.rank,
            host: r.host.clone(),
            start_s: r.measured.start_s,
            end_s: r.measured.end_s,
            values: r
                .measured
                .metrics
                .iter()
                .map(|(metric, unit, value)| RankValue {
                    metric: metric.clone(),
                    unit: unit.clone(),
                    value: *value,
                })
                .collect(),
        })
        .collect()
}

/// The per-rank rows of metadata steps, from the records of a run (entries each rank
/// created, walked or removed), in the records' order.
pub fn rank_rows(records: &[RankRecord]) -> Vec<RankStep> {
    records
        .iter()
        .map(|r| RankStep {
            rank: r.rank as i32,
            host: r.host.clone(),
            workload: r.workload.clone(),
            entries: r.get(ENTRIES).unwrap_or(0.0) as u64,
            start_s: r.start_s,
            end_s: r.end_s,
        })
        .collect()
}

/// All ranks' entries of one workload, its common window (earliest start to latest end) and
/// entries/s over that window.
pub fn meta_total(steps: &[&RankStep]) -> (u64, f64, f64) {
    let entries: u64 = steps.iter().map(|s| s.entries).sum();
    let start = steps
        .iter()
        .map(|s| s.start_s)
        .fold(f64::INFINITY, f64::min);
    let end = steps.iter().map(|s| s.end_s).fold(0.0, f64::max);
    let w = (end - start).max(0.0);
    (entries, w, if w > 0.0 { entries as f64 / w } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: u32, entries: f64, start_s: f64, end_s: f64) -> RankMeasured {
        let measured = merge::Measured {
            metrics: vec![(ENTRIES.into(), "entries".into(), entries)],
            ..Default::default()
        }
        .started(start_s, end_s);
        RankMeasured {
            rank,
            host: "h".into(),
            measured,
        }
    }

    #[test]
    fn metadata_rows_add_up_over_the_common_window() {
        let records = rank_records(
            "dir",
            "smallfiles",
            1,
            &[rank(0, 300.0, 0.0, 1.0), rank(1, 300.0, 0.5, 3.0)],
        );
        assert_eq!(records[1].get(ENTRIES), Some(300.0));
        assert_eq!((records[1].setup.as_str(), records[1].round), ("dir", 1));
        let rows = rank_rows(&records);
        assert_eq!(rows[1].rank, 1);
        assert_eq!(rows[1].workload, "smallfiles");
        assert_eq!(rows[1].entries, 300);
        let refs: Vec<&RankStep> = rows.iter().collect();
        let (entries, window, rate) = meta_total(&refs);
        assert_eq!(entries, 600);
        assert!((window - 3.0).abs() < 1e-9);
        assert!((rate - 200.0).abs() < 1e-9);
    }

    /// A rank that ran one whole job: its output carries the run (as `run_group`'s does).
    fn job_rank(rank: u32, ios: u64, start_s: f64, end_s: f64) -> RankMeasured {
        let mut h = crate::measure::LatencyHistogram::new();
        for _ in 0..ios {
            h.record(1000);
        }
        let report = crate::engine::IoReport {
            read: crate::engine::direction(&h, 4096, end_s - start_s),
            ..Default::default()
        };
        let mut out = crate::workload::io::to_output(&report);
        out.job = Some(Box::new(crate::engine::JobRun {
            filename: format!("f{rank}"),
            report,
            start_s,
            end_s,
        }));
        RankMeasured {
            rank,
            host: "h".into(),
            measured: merge::Measured::of(&out).started(start_s, end_s),
        }
    }

    #[test]
    fn a_whole_job_step_is_reduced_once_and_records_that_reports_figures() {
        let ranks = [job_rank(0, 100, 0.0, 1.0), job_rank(1, 300, 0.0, 2.0)];
        let r = step(&ranks, Some(4096), false);
        let job = r.job.expect("every rank carried its job");
        assert_eq!(job.aggregate.read.ios, 400);
        assert_eq!(job.ranks.len(), 2);
        // The recorded output is the reduced report's own figures, not a second reduction.
        let iops = r
            .output
            .metrics
            .iter()
            .find(|m| m.metric == crate::metrics::registry::IOPS);
        assert_eq!(iops.map(|m| m.value), Some(job.aggregate.read.iops));
        // Other steps have no job report and go by the registry's rules.
        let plain = step(&[rank(0, 10.0, 0.0, 1.0)], None, false);
        assert!(plain.job.is_none());
    }
}
