//! Statistics over samples: summaries, intervals, comparisons, noise verdicts.
//!
//! Everything here is a pure function of the samples, so any reader of a `results.json`
//! recomputes the same summary. Submodules: [`descriptive`] (median, spread),
//! [`median_interval`] (exact order-statistic interval of a median, labelled with its true
//! coverage), [`merged`] (tail latency over all rounds' histograms), [`change`] (how much a
//! metric moved between two results, against zero or a control's drift), [`student_t`] (the
//! t distribution behind it), [`fdr`] (Benjamini–Hochberg across series, for `history
//! check`), [`judged`] (which metrics may be called better or worse), [`paired`] (the one
//! judgement of two setups: ahead,
//! behind, equivalent or not separated, read by every output), [`adjusted`] (the disk's own
//! pace taken out of its ratios where the run measured it), [`unpaired`] (its counterpart
//! for two independent runs, which `compare` uses), [`verdict`] (host noise) and [`region`]
//! (the judgement of per-round values against a claim's region). What a metric means is
//! `crate::metrics`'s; how a workload is named, the workload registry's.

pub mod adjusted;
pub mod change;
pub mod descriptive;
pub mod family;
pub mod fdr;
pub mod judged;
pub mod median_interval;
pub mod merged;
pub mod paired;
pub mod region;
pub mod sequential;
#[cfg(test)]
mod simulation;
pub mod student_t;
pub mod unpaired;
pub mod verdict;

use crate::metrics::{self, MetricKey};
use crate::results::{Results, Summary};
use std::collections::BTreeMap;

/// Summary of one series of values (one (setup, workload, metric) over its rounds).
pub fn summary_of(
    setup: &str,
    workload: &str,
    metric: &MetricKey,
    unit: &str,
    v: &[f64],
) -> Summary {
    let mut sorted = v.to_vec();
    descriptive::sort(&mut sorted);
    let ci = median_interval::median_interval(&sorted, median_interval::TARGET);
    Summary {
        setup: setup.into(),
        workload: workload.into(),
        metric: metric.clone(),
        unit: unit.into(),
        n: v.len(),
        median: descriptive::median_sorted(&sorted),
        min: sorted.first().copied().unwrap_or(f64::NAN),
        max: sorted.last().copied().unwrap_or(f64::NAN),
        mean: descriptive::mean(&sorted),
        stddev: descriptive::stddev(&sorted),
        ci_low: ci.low,
        ci_high: ci.high,
        ci_coverage: ci.coverage,
    }
}

/// (setup, workload, metric).
type Key = (String, String, MetricKey);
/// A key, its unit and its (round, value) pairs.
type Group = (Key, String, Vec<(u32, f64)>);

/// Recompute `results.summary` from `results.samples` (median, min, max, mean, stddev, the
/// median's interval),
/// plus merged-histogram tail latencies (`lat_p99_ms_merged`…; `read_`/`write_` prefixed when a
/// workload has both directions) whose `n` is the number of rounds merged.
///
/// Order: setups as listed in `results.setups` (then any others), keys in first-seen order.
pub fn summarize(results: &mut Results) {
    let mut groups: Vec<Group> = Vec::new();
    let mut index: BTreeMap<Key, usize> = BTreeMap::new();
    for s in &results.samples {
        let key = (s.setup.clone(), s.workload.clone(), s.metric.clone());
        let i = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, s.unit.clone(), Vec::new()));
            groups.len() - 1
        });
        groups[i].2.push((s.round, s.value));
    }
    let setup_rank = |name: &str| {
        results
            .setups
            .iter()
            .position(|s| s.name == name)
            .unwrap_or(usize::MAX)
    };
    let mut out: Vec<(usize, usize, Summary)> = Vec::new();
    for (i, ((setup, workload, metric), unit, vals)) in groups.iter().enumerate() {
        let v: Vec<f64> = vals
            .iter()
            .map(|(_, x)| *x)
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            continue;
        }
        out.push((
            setup_rank(setup),
            i,
            summary_of(setup, workload, metric, unit, &v),
        ));
    }
    // Merged histograms, one entry per (setup, workload, direction).
    let mut hist: BTreeMap<(String, String, String), Vec<&crate::results::HistogramRecord>> =
        BTreeMap::new();
    for h in &results.histograms {
        hist.entry((h.setup.clone(), h.workload.clone(), h.direction.clone()))
            .or_default()
            .push(h);
    }
    let base = groups.len();
    for (j, ((setup, workload, dir), recs)) in hist.iter().enumerate() {
        let m = merged::Merged::from_records(recs.iter().copied());
        if m.count == 0 {
            continue;
        }
        let both = hist
            .keys()
            .filter(|(s, w, _)| s == setup && w == workload)
            .count()
            > 1;
        let side = both.then_some(dir.as_str());
        for (id, t) in metrics::merged_tails().filter(|(_, t)| t.side == side) {
            let ms = m.quantile(t.quantile) as f64 / 1e6;
            out.push((
                setup_rank(setup),
                base + j,
                Summary {
                    setup: setup.clone(),
                    workload: workload.clone(),
                    metric: id.into(),
                    unit: "ms".into(),
                    n: m.rounds,
                    median: ms,
                    min: ms,
                    max: ms,
                    mean: ms,
                    stddev: 0.0,
                    ci_low: ms,
                    ci_high: ms,
                    ci_coverage: 0.0,
                },
            ));
        }
    }
    out.sort_by_key(|(r, i, _)| (*r, *i));
    results.summary = out.into_iter().map(|(_, _, s)| s).collect();
}

/// Rounds behind the summary: the most samples of any per-round metric (a merged tail counts
/// every round's histogram, whatever rounds the samples keep).
pub fn rounds(summary: &[crate::results::Summary]) -> usize {
    summary
        .iter()
        .filter(|s| !is_merged(&s.metric))
        .map(|s| s.n)
        .max()
        .unwrap_or(0)
}

/// Whether a summary row comes from merged histograms rather than per-round samples.
pub fn is_merged(metric: &(impl AsRef<str> + ?Sized)) -> bool {
    metrics::merged_tail(metric).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::{IOPS, LAT_P99_9_MS_MERGED, LAT_P99_MS_MERGED};
    use crate::results::{HistogramRecord, Sample, SetupInfo};

    #[test]
    fn summarize_fills_summary_and_merged_tails() {
        let mut r = Results::new();
        for name in ["xfs", "ext4"] {
            r.setups.push(SetupInfo {
                name: name.into(),
                ..Default::default()
            });
        }
        for (round, v) in [(1, 10.0), (2, 14.0), (3, 12.0)] {
            for setup in ["ext4", "xfs"] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "randread".into(),
                    metric: IOPS.into(),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                });
            }
            r.histograms.push(HistogramRecord {
                setup: "ext4".into(),
                workload: "randread".into(),
                round,
                direction: "read".into(),
                min_ns: 100_000,
                max_ns: 9_000_000,
                count: 100,
                sum_ns: 100 * 200_000,
                buckets: vec![[200_000, 99], [9_000_000, 1]],
            });
        }
        summarize(&mut r);
        assert_eq!(r.summary[0].setup, "xfs");
        let s = r
            .summary
            .iter()
            .find(|s| s.setup == "ext4" && s.metric == IOPS)
            .unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (3, 12.0, 10.0, 14.0));
        assert!((s.mean - 12.0).abs() < 1e-12 && (s.stddev - 2.0).abs() < 1e-12);
        // Three rounds: the interval is min–max, and says it covers 75 %.
        assert_eq!((s.ci_low, s.ci_high, s.ci_coverage), (10.0, 14.0, 0.75));
        let p99 = r
            .summary
            .iter()
            .find(|s| s.metric == LAT_P99_MS_MERGED)
            .unwrap();
        assert_eq!(p99.n, 3);
        assert!((p99.median - 0.2).abs() < 1e-12, "{}", p99.median);
        let p999 = r
            .summary
            .iter()
            .find(|s| s.metric == LAT_P99_9_MS_MERGED)
            .unwrap();
        assert!((p999.median - 9.0).abs() < 1e-12);
        let again = {
            let mut c = r.clone();
            summarize(&mut c);
            c.summary
        };
        assert_eq!(again, r.summary, "summaries are deterministic");
    }
}
