//! Tail latency across rounds from merged sparse histograms.
//!
//! The median of per-round p99s says how a typical round's tail looked; the p99 of all I/Os of
//! all rounds (merged buckets) is the true tail a user would see. Both are reported, labelled.
//! This works directly on the sparse `[value_ns, count]` buckets of `results.json`, so it does
//! not depend on the in-memory histogram type: sum counts per bucket value, then walk the
//! cumulative counts. Quantiles are clamped to the exact min/max that each record keeps.

use crate::results::HistogramRecord;
use std::collections::BTreeMap;

/// The histograms of several rounds, merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// Bucket value (ns) → count.
    pub buckets: BTreeMap<u64, u64>,
    /// Total count.
    pub count: u64,
    /// Exact minimum, ns.
    pub min_ns: u64,
    /// Exact maximum, ns.
    pub max_ns: u64,
    /// Sum of latencies, ns.
    pub sum_ns: u128,
    /// How many records (rounds) went in.
    pub rounds: usize,
}

impl Merged {
    /// Merge the given records (usually every round of one setup/workload/direction).
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a HistogramRecord>) -> Self {
        let mut m = Merged {
            min_ns: u64::MAX,
            ..Default::default()
        };
        // Saturating: counts come from a results.json, which may be edited or damaged (a
        // count near u64::MAX overflowed here; found by tests/fuzz.rs).
        for r in records {
            for [v, c] in &r.buckets {
                let slot = m.buckets.entry(*v).or_default();
                *slot = slot.saturating_add(*c);
            }
            let in_buckets = r.buckets.iter().fold(0u64, |a, b| a.saturating_add(b[1]));
            m.count = m.count.saturating_add(r.count.max(in_buckets));
            if r.count > 0 {
                m.min_ns = m.min_ns.min(r.min_ns);
                m.max_ns = m.max_ns.max(r.max_ns);
            }
            m.sum_ns = m.sum_ns.saturating_add(r.sum_ns);
            m.rounds += 1;
        }
        if m.min_ns == u64::MAX {
            m.min_ns = 0;
        }
        m
    }

    /// Value at quantile `q` in [0, 1], ns: the bucket holding the ⌈q·N⌉-th smallest I/O,
    /// clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        let total = self
            .buckets
            .values()
            .fold(0u64, |a, &c| a.saturating_add(c));
        if total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (&v, &c) in &self.buckets {
            seen = c.saturating_add(seen);
            if seen >= rank {
                return v.clamp(self.min_ns, self.max_ns.max(self.min_ns));
            }
        }
        self.max_ns
    }

    /// Exact mean, ns.
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{Rng, SeedableRng};

    /// Log-linear bucketing like the engine's: 64 sub-buckets per power of two (< 1.6 % error),
    /// representative value = bucket midpoint.
    fn bucket_of(ns: u64) -> u64 {
        if ns < 64 {
            return ns;
        }
        let e = 63 - ns.leading_zeros() as u64 - 6;
        let lo = (ns >> e) << e;
        lo + (1 << e) / 2
    }

    fn record(values: &[u64]) -> HistogramRecord {
        let mut b: BTreeMap<u64, u64> = BTreeMap::new();
        for &v in values {
            *b.entry(bucket_of(v)).or_default() += 1;
        }
        HistogramRecord {
            min_ns: *values.iter().min().unwrap(),
            max_ns: *values.iter().max().unwrap(),
            count: values.len() as u64,
            sum_ns: values.iter().map(|&v| u128::from(v)).sum(),
            buckets: b.into_iter().map(|(v, c)| [v, c]).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn merged_percentiles_match_a_sorted_sample() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        // Three "rounds" with different speeds, lognormal-ish latencies around 100 µs–2 ms.
        let rounds: Vec<Vec<u64>> = (0..3)
            .map(|r| {
                (0..20_000)
                    .map(|_| {
                        let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                        let heavy = if rng.next_u64() % 100 == 0 { 20.0 } else { 1.0 };
                        ((50_000.0 + 30_000.0 * r as f64) * (-u.ln()) * heavy) as u64 + 1_000
                    })
                    .collect()
            })
            .collect();
        let records: Vec<HistogramRecord> = rounds.iter().map(|v| record(v)).collect();
        let merged = Merged::from_records(&records);
        let mut all: Vec<u64> = rounds.concat();
        all.sort_unstable();
        assert_eq!(merged.count, all.len() as u64);
        assert_eq!(merged.min_ns, all[0]);
        assert_eq!(merged.max_ns, *all.last().unwrap());
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            let rank = ((q * all.len() as f64).ceil() as usize).max(1);
            let exact = all[rank - 1] as f64;
            let got = merged.quantile(q) as f64;
            assert!(
                (got - exact).abs() / exact < 0.02,
                "q={q}: merged {got} vs sorted {exact}"
            );
        }
        assert_eq!(merged.quantile(1.0), merged.max_ns);
        let mean = all.iter().sum::<u64>() as f64 / all.len() as f64;
        assert!((merged.mean_ns() - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn empty_merge_is_zero() {
        let m = Merged::from_records(std::iter::empty());
        assert_eq!(m.quantile(0.99), 0);
        assert_eq!(m.count, 0);
    }
}
