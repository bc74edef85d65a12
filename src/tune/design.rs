//! Two-level screening designs for `fsbench tune --screen fractional`: k two-level factors in
//! N runs (N a multiple of 4, the smallest with N ≥ k + 1), resolution III — a Sylvester
//! Hadamard matrix for N = 4, 8, 16, 32, a Plackett–Burman cyclic design for N = 12, 20, 24.
//! Every column is balanced (half the runs at each level) and every pair of columns is
//! orthogonal, so each run informs every main effect: a factor's effect is the mean of the
//! runs that change it over the mean of those that do not, N/2 against N/2, where one factor
//! at a time compares one run with the baseline. The price: a main effect is aliased with
//! two-factor interactions of the others (resolution III), which is why one at a time stays
//! the default (docs/tune.md). Pure: the runs are chosen here, measured by `super::search`.

/// A two-level design: `rows[r][f]` is true when run `r` changes factor `f` from its baseline
/// value. Row 0 changes nothing: the baseline itself is one of the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Design {
    /// The runs, each a level per factor.
    pub rows: Vec<Vec<bool>>,
}

/// Plackett–Burman generators (Plackett and Burman, Biometrika 1946): the first row of each
/// cyclic design; the others are its cyclic shifts, and a last row of all minus.
const PB_12: &str = "++-+++---+-";
const PB_20: &str = "++--++++-+-+----++-";
const PB_24: &str = "+++++-+-++--++--+-+----";

/// Runs the designs come in; the largest bounds k.
const SIZES: [usize; 7] = [4, 8, 12, 16, 20, 24, 32];

/// The largest number of factors a design screens.
pub const MAX_FACTORS: usize = 31;

/// The fewest factors a design is made for: with two, its 4 runs cost more than one at a
/// time's 2; from three on it costs no more (N − 1 new setups against k) and estimates each
/// effect from N/2 runs against N/2 instead of one against one.
pub const MIN_FACTORS: usize = 3;

/// The design of `k` two-level factors in the fewest runs; `None` outside
/// [`MIN_FACTORS`]..=[`MAX_FACTORS`].
pub fn design(k: usize) -> Option<Design> {
    if k < MIN_FACTORS {
        return None;
    }
    let n = *SIZES.iter().find(|&&n| n > k)?;
    let h = hadamard(n);
    // The all-plus row (Sylvester's first, a cyclic design's after the flip below) is the
    // baseline: a column's minus is "changed".
    let base = h
        .iter()
        .position(|r| r.iter().skip(1).all(|&x| x == r[1]))
        .expect("a constant row");
    let mut rows: Vec<Vec<bool>> = h
        .iter()
        .map(|r| (1..=k).map(|f| r[f] != h[base][f]).collect())
        .collect();
    rows.swap(0, base);
    Some(Design { rows })
}

/// A normalized Hadamard matrix of order `n` (one of [`SIZES`]): ±1 entries, first column all
/// +1, columns pairwise orthogonal.
fn hadamard(n: usize) -> Vec<Vec<i8>> {
    let generator = match n {
        12 => Some(PB_12),
        20 => Some(PB_20),
        24 => Some(PB_24),
        _ => None,
    };
    if let Some(g) = generator {
        let g: Vec<i8> = g.chars().map(|c| if c == '+' { 1 } else { -1 }).collect();
        let m = g.len();
        let mut h: Vec<Vec<i8>> = (0..m)
            .map(|i| {
                std::iter::once(1)
                    .chain((0..m).map(|j| g[(j + m - i) % m]))
                    .collect()
            })
            .collect();
        h.push(
            std::iter::once(1)
                .chain(std::iter::repeat_n(-1, m))
                .collect(),
        );
        return h;
    }
    let mut h = vec![vec![1i8]];
    while h.len() < n {
        let top: Vec<Vec<i8>> = h
            .iter()
            .map(|r| r.iter().chain(r.iter()).copied().collect())
            .collect();
        let bottom: Vec<Vec<i8>> = h
            .iter()
            .map(|r| r.iter().copied().chain(r.iter().map(|x| -x)).collect())
            .collect();
        h = top.into_iter().chain(bottom).collect();
    }
    h
}

impl Design {
    /// Runs.
    pub fn runs(&self) -> usize {
        self.rows.len()
    }

    /// Each factor's main effect from one round's log scores of the runs over the baseline
    /// (`logs[r]`, run order; the baseline's is 0): the mean of the runs that change it minus
    /// the mean of those that do not. With an additive model these are exact; an interaction
    /// of two other factors adds to it (aliasing).
    pub fn main_effects(&self, logs: &[f64]) -> Vec<f64> {
        let k = self.rows.first().map_or(0, |r| r.len());
        (0..k)
            .map(|f| {
                let (mut on, mut off, mut n_on, mut n_off) = (0.0, 0.0, 0usize, 0usize);
                for (row, y) in self.rows.iter().zip(logs) {
                    if row[f] {
                        on += y;
                        n_on += 1;
                    } else {
                        off += y;
                        n_off += 1;
                    }
                }
                on / n_on.max(1) as f64 - off / n_off.max(1) as f64
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(b: bool) -> i32 {
        if b { 1 } else { -1 }
    }

    #[test]
    fn every_design_is_balanced_orthogonal_and_starts_at_the_baseline() {
        for k in MIN_FACTORS..=MAX_FACTORS {
            let d = design(k).unwrap();
            let n = d.runs();
            assert!(n > k && n.is_multiple_of(4), "k {k}: {n} runs");
            assert!(
                d.rows[0].iter().all(|x| !x),
                "k {k}: row 0 changes something"
            );
            for f in 0..k {
                let on = d.rows.iter().filter(|r| r[f]).count();
                assert_eq!(on * 2, n, "k {k}: column {f} unbalanced");
                for g in f + 1..k {
                    let dot: i32 = d.rows.iter().map(|r| sign(r[f]) * sign(r[g])).sum();
                    assert_eq!(dot, 0, "k {k}: columns {f} and {g} not orthogonal");
                }
            }
            // Distinct runs: no setup is measured twice under two names.
            let mut rows = d.rows.clone();
            rows.sort();
            rows.dedup();
            assert_eq!(rows.len(), n, "k {k}: repeated runs");
        }
        assert!(design(2).is_none() && design(MAX_FACTORS + 1).is_none());
        assert_eq!(design(3).unwrap().runs(), 4);
        assert_eq!(design(7).unwrap().runs(), 8);
        assert_eq!(design(9).unwrap().runs(), 12);
        assert_eq!(design(19).unwrap().runs(), 20);
        assert_eq!(design(23).unwrap().runs(), 24);
    }

    #[test]
    fn main_effects_recover_an_additive_model_and_every_run_counts() {
        let d = design(5).unwrap();
        let truth = [0.20, -0.10, 0.0, 0.05, 0.0];
        let logs: Vec<f64> = d
            .rows
            .iter()
            .map(|r| (0..5).filter(|&f| r[f]).map(|f| truth[f]).sum())
            .collect();
        let e = d.main_effects(&logs);
        for f in 0..5 {
            assert!(
                (e[f] - truth[f]).abs() < 1e-12,
                "{f}: {} vs {}",
                e[f],
                truth[f]
            );
        }
        // Noise on one run moves every effect by ±noise / (N/2), not one effect by all of it.
        let mut noisy = logs.clone();
        noisy[3] += 0.08;
        let e = d.main_effects(&noisy);
        let half = d.runs() as f64 / 2.0;
        for f in 0..5 {
            assert!(
                ((e[f] - truth[f]).abs() - 0.08 / half).abs() < 1e-12,
                "{f}: {}",
                e[f]
            );
        }
    }

    #[test]
    fn for_the_same_runs_a_design_halves_the_variance_of_one_at_a_times_effects() {
        // k = 3: 4 runs either way (the baseline and 3 more). Noise only: one at a time's
        // effect is a difference of two runs (variance 2σ²), the design's a contrast of 2
        // against 2 (variance σ²).
        let d = design(3).unwrap();
        let mut seed = 0x5eed_u64;
        let mut noise = || {
            // Sum of 12 uniforms − 6: near-normal with σ = 1 (a fixed sequence, no crate).
            (0..12)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 11) as f64 / (1u64 << 53) as f64
                })
                .sum::<f64>()
                - 6.0
        };
        let (mut oat, mut frac) = (0.0, 0.0);
        let trials = 4000;
        for _ in 0..trials {
            let y: Vec<f64> = (0..4).map(|_| noise()).collect();
            oat += (y[1] - y[0]).powi(2);
            frac += d.main_effects(&y)[0].powi(2);
        }
        let ratio = oat / frac;
        assert!((1.8..2.2).contains(&ratio), "{ratio}");
    }

    #[test]
    fn an_interaction_is_aliased_into_main_effects_as_resolution_iii_says() {
        // Factors 0 and 1 gain only together: some third factor's main effect takes it.
        let d = design(3).unwrap();
        let logs: Vec<f64> = d
            .rows
            .iter()
            .map(|r| if r[0] && r[1] { 0.3 } else { 0.0 })
            .collect();
        let e = d.main_effects(&logs);
        assert!(e[2].abs() > 0.1, "{e:?}");
    }
}
