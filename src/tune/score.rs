//! What "better" means for a tuned workload: one score per round, the geometric mean over the
//! workloads of each one's headline metric, as an oriented ratio of a candidate to a
//! reference measured in the same round (the paired design of `stats::paired`: the noise a
//! round shares cancels in the ratio).

use crate::metrics::{self, Direction, MetricKey};
use crate::results::Results;
use crate::stats::paired;
use serde::Serialize;
use std::collections::BTreeMap;

/// The metric that stands for one workload in the score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Objective {
    /// Workload id.
    pub workload: String,
    /// Its headline metric (the registry's headline row, else the first ranked headline
    /// metric it recorded).
    pub metric: MetricKey,
}

/// The objectives of a run: one per workload that recorded a ranked metric, in id order.
pub fn objectives(results: &Results) -> Vec<Objective> {
    let mut by: BTreeMap<&str, Vec<&MetricKey>> = BTreeMap::new();
    for s in &results.samples {
        let v = by.entry(s.workload.as_str()).or_default();
        if !v.contains(&&s.metric) {
            v.push(&s.metric);
        }
    }
    let heads = crate::workload::registry::headlines();
    by.into_iter()
        .filter_map(|(w, ms)| {
            let from_row = heads
                .iter()
                .filter(|h| h.workload == w)
                .flat_map(|h| h.metrics.iter())
                .find_map(|id| ms.iter().find(|m| **m == id).copied());
            let ranked = |m: &&MetricKey| metrics::def(*m).direction != Direction::Neutral;
            let any = || {
                ms.iter()
                    .copied()
                    .filter(ranked)
                    .find(|m| metrics::def(*m).headline)
                    .or_else(|| ms.iter().copied().find(ranked))
            };
            from_row.or_else(any).map(|m| Objective {
                workload: w.to_string(),
                metric: m.clone(),
            })
        })
        .collect()
}

/// Per round (round order), the score of setup `a` over setup `b`: the geometric mean over
/// `objectives` of each metric's ratio oriented so that > 1 favours `a`. A round lacking a
/// value of either setup for any objective is left out (the score compares like with like).
pub fn ratios(results: &Results, objectives: &[Objective], a: &str, b: &str) -> Vec<f64> {
    by_round(results, objectives, a, b).into_values().collect()
}

/// [`ratios`] keyed by round, for scores that combine several setups round by round (a
/// fractional design's main effects).
pub fn by_round(
    results: &Results,
    objectives: &[Objective],
    a: &str,
    b: &str,
) -> BTreeMap<u32, f64> {
    let mut logs: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
    for o in objectives {
        let pa = paired::per_round(results, a, &o.workload, &o.metric);
        let pb = paired::per_round(results, b, &o.workload, &o.metric);
        let lower = metrics::def(&o.metric).direction == Direction::LowerIsBetter;
        for (r, x) in &pa {
            let Some(y) = pb.get(r) else { continue };
            let ratio = if lower { y / x } else { x / y };
            if ratio.is_finite() && ratio > 0.0 {
                let e = logs.entry(*r).or_default();
                e.0 += ratio.ln();
                e.1 += 1;
            }
        }
    }
    logs.into_iter()
        .filter(|(_, (_, n))| *n == objectives.len() && *n > 0)
        .map(|(r, (sum, n))| (r, (sum / n as f64).exp()))
        .collect()
}

/// The equivalence margin of the score: `--margin` when the run set one, else the tightest
/// of the objectives' own margins (the score is no looser than its strictest metric).
pub fn margin(results: &Results, objectives: &[Objective]) -> f64 {
    results.margin.unwrap_or_else(|| {
        objectives
            .iter()
            .map(|o| metrics::def(&o.metric).margin)
            .fold(f64::INFINITY, f64::min)
            .min(0.10)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry;
    use crate::results::Sample;

    fn sample(setup: &str, w: &str, m: MetricKey, round: u32, value: f64) -> Sample {
        Sample {
            setup: setup.into(),
            workload: w.into(),
            unit: String::new(),
            metric: m,
            round,
            value,
        }
    }

    #[test]
    fn the_score_is_the_geometric_mean_of_oriented_ratios_per_round() {
        let mut r = Results::default();
        let iops: MetricKey = registry::IOPS.into();
        let secs: MetricKey = registry::SECONDS.into();
        for round in 1..=3 {
            r.samples
                .push(sample("a", "randwrite", iops.clone(), round, 200.0));
            r.samples
                .push(sample("b", "randwrite", iops.clone(), round, 100.0));
            // Lower is better: a takes twice as long, so it is half as good.
            r.samples
                .push(sample("a", "untar", secs.clone(), round, 4.0));
            r.samples
                .push(sample("b", "untar", secs.clone(), round, 2.0));
        }
        // A round with one side missing is left out.
        r.samples
            .push(sample("a", "randwrite", iops.clone(), 4, 1.0));
        let obj = objectives(&r);
        assert_eq!(obj.len(), 2, "{obj:?}");
        let x = ratios(&r, &obj, "a", "b");
        assert_eq!(x.len(), 3);
        for v in x {
            assert!((v - 1.0).abs() < 1e-9, "{v}");
        }
        let only_io = &obj[..1];
        assert!((ratios(&r, only_io, "a", "b")[0] - 2.0).abs() < 1e-9);
        assert!((ratios(&r, only_io, "b", "a")[0] - 0.5).abs() < 1e-9);
    }
}
