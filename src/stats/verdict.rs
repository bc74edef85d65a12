//! Noise verdicts: when two setups tie, when a host is too noisy, and whether a change between
//! two runs is significant.

use super::bootstrap::{RESAMPLES, median_diff_ci};
use super::descriptive::median;
use super::mann_whitney::{mann_whitney, min_attainable_p};
use crate::results::Summary;
use serde::Serialize;

/// Rounds of one setup that disagree by more than this ratio (max/min) suggest a noisy host.
pub const HOST_NOISE_RATIO: f64 = 1.2;

/// Significance level of two-sample comparisons.
pub const ALPHA: f64 = 0.05;

/// Fewest rounds per side for `compare` to judge significance at all.
pub const MIN_ROUNDS: usize = 3;

/// Two setups tie on a metric when their 95 % intervals overlap, or when the gap between the
/// medians is smaller than the run-to-run spread (max − min) of either of them.
pub fn tie(a: &Summary, b: &Summary) -> bool {
    let overlap = a.ci95_low <= b.ci95_high && b.ci95_low <= a.ci95_high;
    let gap = (a.median - b.median).abs();
    let spread = (a.max - a.min).max(b.max - b.min);
    overlap || gap < spread
}

/// Whether the rounds of one setup disagree by more than [`HOST_NOISE_RATIO`].
pub fn host_noisy(s: &Summary) -> bool {
    s.n >= 2 && s.min > 0.0 && s.max / s.min > HOST_NOISE_RATIO
}

/// Outcome of comparing a metric between two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Median of the first run.
    pub median_a: f64,
    /// Median of the second run.
    pub median_b: f64,
    /// (b − a) / a in percent; NaN when a is 0.
    pub delta_pct: f64,
    /// `Some(true)` significant, `Some(false)` not, `None` too few rounds to judge.
    pub significant: Option<bool>,
    /// Which test decided: `mann-whitney` or `bootstrap` (difference of medians).
    pub method: &'static str,
    /// Mann–Whitney two-sided p-value when that test was used.
    pub p_value: Option<f64>,
    /// 95 % bootstrap interval of median(b) − median(a).
    pub diff_ci: (f64, f64),
}

/// Compare the rounds `a` (before) with `b` (after).
///
/// Mann–Whitney U decides when its exact test can reach α with these sample sizes; with 3–4
/// rounds per side it cannot (3 vs 3: the smallest possible p is 0.1), so the percentile
/// bootstrap of the difference of medians decides instead, which with so few rounds amounts to
/// asking whether the rounds of the two runs are separated. Fewer than 3 rounds: no verdict.
pub fn compare(a: &[f64], b: &[f64], seed: u64) -> Change {
    let (ma, mb) = (median(a), median(b));
    let delta_pct = if ma != 0.0 {
        (mb - ma) / ma.abs() * 100.0
    } else {
        f64::NAN
    };
    let mut c = Change {
        median_a: ma,
        median_b: mb,
        delta_pct,
        significant: None,
        method: "none",
        p_value: None,
        diff_ci: (f64::NAN, f64::NAN),
    };
    if a.len() < MIN_ROUNDS || b.len() < MIN_ROUNDS {
        return c;
    }
    let ci = median_diff_ci(a, b, seed, RESAMPLES, 1.0 - ALPHA);
    c.diff_ci = (ci.low, ci.high);
    if min_attainable_p(a.len(), b.len()) <= ALPHA {
        let t = mann_whitney(a, b);
        c.method = "mann-whitney";
        c.p_value = Some(t.p);
        c.significant = Some(t.p < ALPHA);
    } else {
        c.method = "bootstrap";
        c.significant = Some(!ci.contains(0.0));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(median: f64, min: f64, max: f64) -> Summary {
        Summary {
            n: 3,
            median,
            min,
            max,
            ci95_low: min,
            ci95_high: max,
            ..Default::default()
        }
    }

    #[test]
    fn ties_and_noise() {
        // Seed 000: ext4 random writes 77,199–95,909, XFS 74,567–93,966: a tie.
        assert!(tie(
            &s(87_983.0, 77_199.0, 95_909.0),
            &s(82_863.0, 74_567.0, 93_966.0)
        ));
        assert!(host_noisy(&s(87_983.0, 77_199.0, 95_909.0)));
        // rm -rf 1.91 s vs 4.35 s with tight rounds: not a tie.
        assert!(!tie(&s(1.91, 1.88, 1.95), &s(4.35, 4.30, 4.41)));
        assert!(!host_noisy(&s(1.91, 1.88, 1.95)));
    }

    #[test]
    fn comparisons() {
        let c = compare(&[1.0, 2.0], &[5.0, 6.0], 1);
        assert_eq!(c.significant, None);
        let c = compare(&[100.0, 101.0, 102.0], &[120.0, 121.0, 122.0], 1);
        assert_eq!(c.significant, Some(true));
        assert_eq!(c.method, "bootstrap");
        assert!((c.delta_pct - 19.80198).abs() < 1e-3);
        let c = compare(&[100.0, 110.0, 102.0], &[104.0, 101.0, 108.0], 1);
        assert_eq!(c.significant, Some(false));
        let a: Vec<f64> = (0..6).map(|x| 100.0 + f64::from(x)).collect();
        let b: Vec<f64> = (0..6).map(|x| 150.0 + f64::from(x)).collect();
        let c = compare(&a, &b, 1);
        assert_eq!(c.method, "mann-whitney");
        assert_eq!(c.significant, Some(true));
    }
}
