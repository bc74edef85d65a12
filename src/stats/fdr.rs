//! False-discovery-rate control across the many series one check judges.
//!
//! `fsbench history check` tests dozens of series at once; at α = 0.05 chance alone flags
//! about one in twenty of them (`compare` judges each metric with the one statistic,
//! [`super::paired`], and states its per-metric guarantee instead). Benjamini–Hochberg keeps
//! the expected share of false discoveries among the flagged series at or below α (valid for
//! independent tests and for positively dependent ones, which is what IOPS, bandwidth and
//! latency of one job are). When nothing really changed it also bounds the chance of flagging
//! anything at all by α.

/// Method name printed in outputs and docs.
pub const METHOD: &str = "Benjamini–Hochberg";

/// Benjamini–Hochberg adjusted p-values (q-values), in the input order. NaN entries are not
/// part of the family (they stay NaN and do not count towards m).
pub fn bh_adjust(p: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    let m = idx.len() as f64;
    idx.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut q = vec![f64::NAN; p.len()];
    // q₍ᵢ₎ = min over j ≥ i of p₍ⱼ₎·m/j, walked from the largest p down.
    let mut running = 1.0f64;
    for (rank, &i) in idx.iter().enumerate().rev() {
        running = running.min(p[i] * m / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.20, 0.005), "BH")
        //    = 0.025 0.050 0.050 0.200 0.025
        let q = bh_adjust(&[0.01, 0.04, 0.03, 0.20, 0.005]);
        let want = [0.025, 0.05, 0.05, 0.2, 0.025];
        for (a, b) in q.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{q:?}");
        }
        let q = bh_adjust(&[f64::NAN, 0.01, 0.02]);
        assert!(q[0].is_nan());
        assert!((q[1] - 0.02).abs() < 1e-12 && (q[2] - 0.02).abs() < 1e-12);
    }
}
