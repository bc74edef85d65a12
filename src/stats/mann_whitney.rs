//! Mann–Whitney U test (Wilcoxon rank-sum), two-sided.
//!
//! Exact p-values come from enumerating every way to split the pooled midranks, which is exact
//! even with ties and cheap for benchmark-sized samples; beyond [`EXACT_LIMIT`] splits the
//! normal approximation with tie correction and continuity correction takes over.

/// Largest number of splits (N choose n1) enumerated exactly.
pub const EXACT_LIMIT: u64 = 200_000;

/// Outcome of a Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample (number of pairs where a > b, ties count ½).
    pub u1: f64,
    /// U statistic of the second sample (`n1·n2 − u1`).
    pub u2: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` is exact (enumeration) or from the normal approximation.
    pub exact: bool,
}

/// Number of ways to choose k of n, saturating.
pub fn choose(n: u64, k: u64) -> u64 {
    let k = k.min(n - k.min(n));
    let mut c: u128 = 1;
    for i in 0..k {
        c = c * u128::from(n - i) / u128::from(i + 1);
        if c > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    c as u64
}

/// The smallest two-sided p-value an exact test can reach with these sample sizes; when it is
/// above α, no data could ever be called significant by this test (e.g. 3 vs 3 rounds: 0.1).
pub fn min_attainable_p(n1: usize, n2: usize) -> f64 {
    (2.0 / choose((n1 + n2) as u64, n1 as u64) as f64).min(1.0)
}

/// Twice the midranks of the pooled sample (integers, so sums compare exactly).
fn doubled_midranks(pooled: &[f64]) -> Vec<u64> {
    let mut idx: Vec<usize> = (0..pooled.len()).collect();
    idx.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut r = vec![0u64; pooled.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && pooled[idx[j + 1]] == pooled[idx[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their mean; doubled: (i+1)+(j+1).
        for &k in &idx[i..=j] {
            r[k] = (i + j + 2) as u64;
        }
        i = j + 1;
    }
    r
}

/// Two-sided Mann–Whitney U test of `a` against `b`. Panics on an empty sample.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "Mann–Whitney needs two non-empty samples"
    );
    let (n1, n2) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let r2 = doubled_midranks(&pooled);
    let rank_sum2: u64 = r2[..n1].iter().sum();
    let nn = (n1 * n2) as f64;
    let u1 = rank_sum2 as f64 / 2.0 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = nn - u1;
    let mean_u = nn / 2.0;

    if choose((n1 + n2) as u64, n1 as u64) <= EXACT_LIMIT {
        // Count splits whose rank sum is at least as far from its mean as the observed one.
        let mean2 = (n1 as u64) * (n1 + n2 + 1) as u64; // doubled mean of rank sum
        let obs_dev = rank_sum2.abs_diff(mean2);
        let (mut extreme, mut total) = (0u64, 0u64);
        enumerate(&r2, n1, 0, 0, &mut |s| {
            total += 1;
            if s.abs_diff(mean2) >= obs_dev {
                extreme += 1;
            }
        });
        return MannWhitney {
            u1,
            u2,
            p: (extreme as f64 / total as f64).min(1.0),
            exact: true,
        };
    }

    // Normal approximation with tie correction (Σ(t³ − t)) and continuity correction.
    let n = (n1 + n2) as f64;
    let mut sorted = pooled.clone();
    super::descriptive::sort(&mut sorted);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let var = nn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    let p = if var <= 0.0 {
        1.0
    } else {
        let z = ((u1 - mean_u).abs() - 0.5).max(0.0) / var.sqrt();
        (2.0 * normal_sf(z)).min(1.0)
    };
    MannWhitney {
        u1,
        u2,
        p,
        exact: false,
    }
}

/// Visit the doubled rank sum of every k-subset of `r[start..]`, added to `acc`.
fn enumerate(r: &[u64], k: usize, start: usize, acc: u64, f: &mut impl FnMut(u64)) {
    if k == 0 {
        f(acc);
        return;
    }
    for i in start..=r.len() - k {
        enumerate(r, k - 1, i + 1, acc + r[i], f);
    }
}

/// Upper tail of the standard normal, P(Z > z), via erfc.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of SciPy's `scipy.stats.mannwhitneyu` documentation (ages of male and
    /// female participants, after Conover, "Practical Nonparametric Statistics"): U1 = 17,
    /// exact two-sided p = 0.1111 (= 14/126), asymptotic p = 0.11134688653314041.
    #[test]
    fn textbook_example() {
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let r = mann_whitney(&males, &females);
        assert_eq!(r.u1, 17.0);
        assert_eq!(r.u2, 3.0);
        assert!(r.exact);
        assert!((r.p - 14.0 / 126.0).abs() < 1e-12, "{}", r.p);
    }

    #[test]
    fn normal_approximation_matches_textbook_value() {
        // Same data through the asymptotic branch: force it by repeating the formula here.
        let (u1, n1, n2) = (17.0_f64, 5.0_f64, 4.0_f64);
        let var = n1 * n2 * (n1 + n2 + 1.0) / 12.0;
        let z = ((u1 - n1 * n2 / 2.0).abs() - 0.5) / var.sqrt();
        assert!((2.0 * normal_sf(z) - 0.111_346_886_533_140_41).abs() < 1e-6);
    }

    #[test]
    fn large_samples_use_the_approximation() {
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|x| f64::from(x) + 20.0).collect();
        let r = mann_whitney(&a, &b);
        assert!(!r.exact);
        assert!(r.p < 1e-4, "{}", r.p);
        let same = mann_whitney(&a, &a);
        assert!(same.p > 0.9, "{}", same.p);
    }

    #[test]
    fn three_rounds_cannot_reach_five_percent() {
        assert!((min_attainable_p(3, 3) - 0.1).abs() < 1e-12);
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]);
        assert!((r.p - 0.1).abs() < 1e-12);
        assert!(min_attainable_p(5, 5) < 0.05);
    }

    #[test]
    fn ties_are_handled_exactly() {
        let r = mann_whitney(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]);
        assert!(r.exact);
        assert!(r.p > 0.3 && r.p <= 1.0);
        assert_eq!(r.u1 + r.u2, 9.0);
    }
}
