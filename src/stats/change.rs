//! How much a metric moved between two results, judged against zero or against the drift of
//! control setups, and the smallest change the rounds could have detected. `fsbench history
//! check` tests with it; `fsbench compare` reads its contrast through [`super::unpaired`] (the
//! one statistic's counterpart for two independent runs) and judges paired rounds with
//! [`super::paired`].
//!
//! Changes are measured on the log scale (a ratio: −20 % and +25 % are the same size), with
//! Welch's t test of a contrast of side means and Welch–Satterthwaite degrees of freedom:
//!
//! - against zero: `mean(log B) − mean(log A)` of the setup itself;
//! - against a control: that, minus the average of the same difference over the control setups
//!   (setups that did not change between A and B, run on the same host and target). Whatever
//!   moved all of them alike (the host got slower between two runs) cancels; what remains is
//!   what the change under test did beyond the drift. Its variance adds the controls' variance.
//!
//! Why not a rank test: with 3 rounds a side the exact Mann–Whitney p can never go below 0.1
//! and the correction across metrics ([`super::fdr`]) needs p-values that can be small. Why not
//! the bootstrap: with 3 rounds it amounts to "are the rounds separated?", which chance does in
//! 10 % of A/A pairs. A t test on logs is what the seeds' own tables implicitly assume
//! (multiplicative noise) and its calibration is checked by simulation below.

use super::descriptive::{mean, stddev};
use super::student_t;
use serde::Serialize;

/// Significance level of every comparison (before the false-discovery correction).
pub const ALPHA: f64 = 0.05;

/// Power used for the smallest detectable change: a change that large is seen 80 % of the time.
pub const POWER: f64 = 0.8;

/// Fewest rounds per side for a verdict; 2 rounds give one degree of freedom and useless tests.
pub const MIN_ROUNDS: usize = 3;

/// A linear combination Σ cᵢ·mean(xᵢ) of independent samples, with Welch–Satterthwaite df.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Contrast {
    /// Σ cᵢ·mean(xᵢ).
    pub estimate: f64,
    /// Σ cᵢ²·sᵢ²/nᵢ: the variance of the estimate.
    pub var: f64,
    /// Σ (cᵢ²·sᵢ²/nᵢ)² / (nᵢ − 1): the Satterthwaite denominator.
    df_den: f64,
}

impl Contrast {
    /// Add `coef · mean(values)`; `values` has at least two entries.
    pub fn add(&mut self, coef: f64, values: &[f64]) {
        let n = values.len() as f64;
        // Identical rounds have no spread; say so exactly rather than by rounding noise of
        // (x − mean)², which would make a test out of nothing.
        let constant = values.windows(2).all(|w| w[0] == w[1]);
        let s = if constant { 0.0 } else { stddev(values) };
        let w = coef * coef * s * s / n;
        self.estimate += coef * mean(values);
        self.var += w;
        if n > 1.0 {
            self.df_den += w * w / (n - 1.0);
        }
    }

    /// Add `coef ·` another contrast (its components are independent of this one's).
    pub fn add_contrast(&mut self, coef: f64, other: &Contrast) {
        let c2 = coef * coef;
        self.estimate += coef * other.estimate;
        self.var += c2 * other.var;
        self.df_den += c2 * c2 * other.df_den;
    }

    /// Standard error.
    pub fn se(&self) -> f64 {
        self.var.sqrt()
    }

    /// Welch–Satterthwaite degrees of freedom; NaN when there is no spread at all.
    pub fn df(&self) -> f64 {
        if self.df_den > 0.0 {
            self.var * self.var / self.df_den
        } else {
            f64::NAN
        }
    }

    /// Two-sided p-value of "the true value is 0". NaN when there is no spread to judge by
    /// (every round of every side identical) and the estimate is not 0.
    pub fn p_value(&self) -> f64 {
        if self.var <= 0.0 {
            return if self.estimate == 0.0 { 1.0 } else { f64::NAN };
        }
        student_t::two_sided_p(self.estimate / self.se(), self.df())
    }

    /// Smallest true value a test at `alpha` would detect with probability `power`:
    /// (t₁₋α/₂ + t_power)·se with the contrast's df (the usual planning formula).
    pub fn detectable(&self, alpha: f64, power: f64) -> f64 {
        let df = self.df();
        (student_t::quantile(1.0 - alpha / 2.0, df) + student_t::quantile(power, df)) * self.se()
    }
}

/// The log-scale contrast `mean(ln b) − mean(ln a)`; `None` unless every value is > 0 and each
/// side has at least two rounds.
pub fn log_difference(a: &[f64], b: &[f64]) -> Option<Contrast> {
    if a.len() < 2 || b.len() < 2 || !a.iter().chain(b).all(|x| x.is_finite() && *x > 0.0) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let mut c = Contrast::default();
    c.add(1.0, &lb);
    c.add(-1.0, &la);
    Some(c)
}

/// A contrast read for people: the change in percent, its p-value, what could be detected.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Movement {
    /// Change in percent (e^estimate − 1 on the log scale).
    pub pct: f64,
    /// Two-sided p-value against no change; NaN when there is no spread to judge by.
    pub p: f64,
    /// Smallest change (± %) these rounds detect 80 % of the time at α, before correction.
    pub detectable_pct: f64,
    /// Degrees of freedom of the test.
    pub df: f64,
    /// The (1 − α) confidence interval of the change, in percent (low, high): what a forest
    /// plot draws. It excludes 0 exactly when p < α (before the correction across metrics).
    pub ci_pct: (f64, f64),
}

impl Movement {
    /// Read a log-scale contrast.
    pub fn of(c: &Contrast) -> Self {
        let pct = |x: f64| x.exp_m1() * 100.0;
        let half = student_t::quantile(1.0 - ALPHA / 2.0, c.df()) * c.se();
        Movement {
            pct: pct(c.estimate),
            p: c.p_value(),
            detectable_pct: pct(c.detectable(ALPHA, POWER)),
            df: c.df(),
            ci_pct: (pct(c.estimate - half), pct(c.estimate + half)),
        }
    }
}

/// A metric's change from A to B, on its own and relative to the control setups.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    /// B against A of this setup (against zero).
    pub raw: Movement,
    /// Average movement of the control setups on the same metric, when there are any.
    pub drift: Option<Movement>,
    /// `raw` minus `drift`: what changed beyond the drift, when there is a control.
    pub adjusted: Option<Movement>,
}

impl Judgement {
    /// The movement the verdict is based on: beyond the drift when there is a control.
    pub fn decisive(&self) -> &Movement {
        self.adjusted.as_ref().unwrap_or(&self.raw)
    }
}

/// Judge `(a, b)` of one setup, against the average movement of `controls` (each an `(a, b)` of
/// another setup on the same workload and metric; may be empty). `None` when the values cannot
/// be judged on the log scale (fewer than [`MIN_ROUNDS`] a side, zeros or negatives).
pub fn judge(a: &[f64], b: &[f64], controls: &[(&[f64], &[f64])]) -> Option<Judgement> {
    let (raw, drift) = contrasts(a, b, controls)?;
    Some(Judgement {
        raw: Movement::of(&raw),
        drift: drift.as_ref().map(Movement::of),
        adjusted: drift.map(|d| {
            let mut adjusted = raw;
            adjusted.add_contrast(-1.0, &d);
            Movement::of(&adjusted)
        }),
    })
}

/// The contrast [`judge`] decides by, unread: `mean(ln b) − mean(ln a)`, minus the controls'
/// average of the same when there are any (`stats::unpaired` reads it as an interval).
pub fn decisive_contrast(a: &[f64], b: &[f64], controls: &[(&[f64], &[f64])]) -> Option<Contrast> {
    let (mut raw, drift) = contrasts(a, b, controls)?;
    if let Some(d) = drift {
        raw.add_contrast(-1.0, &d);
    }
    Some(raw)
}

/// The setup's own log-scale contrast and the controls' average one (`None` without a
/// usable control); `None` as [`judge`] is.
fn contrasts(
    a: &[f64],
    b: &[f64],
    controls: &[(&[f64], &[f64])],
) -> Option<(Contrast, Option<Contrast>)> {
    if a.len() < MIN_ROUNDS || b.len() < MIN_ROUNDS {
        return None;
    }
    let raw = log_difference(a, b)?;
    let drifts: Vec<Contrast> = controls
        .iter()
        .filter(|(ca, cb)| ca.len() >= MIN_ROUNDS && cb.len() >= MIN_ROUNDS)
        .filter_map(|(ca, cb)| log_difference(ca, cb))
        .collect();
    if drifts.is_empty() {
        return Some((raw, None));
    }
    let k = drifts.len() as f64;
    let mut drift = Contrast::default();
    for d in &drifts {
        drift.add_contrast(1.0 / k, d);
    }
    Some((raw, Some(drift)))
}

#[cfg(test)]
mod tests {
    use super::super::fdr::bh_adjust;
    use super::*;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
        let u =
            |r: &mut Xoshiro256PlusPlus| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (u(rng), u(rng));
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// n rounds of a metric with median `m` and multiplicative noise `cv`.
    fn rounds(rng: &mut Xoshiro256PlusPlus, n: usize, m: f64, cv: f64) -> Vec<f64> {
        (0..n).map(|_| m * (cv * normal(rng)).exp()).collect()
    }

    #[test]
    fn welch_matches_a_worked_example() {
        // Welch's test of [1,2,3] vs [2,4,6,8] by hand: means 2 and 5, variances 1 and 20/3,
        // se² = 1/3 + 5/3 = 2, t = 3/√2 = 2.1213, df = 4 / (1/18 + 25/27) = 4.0755;
        // two-sided p = 0.0998 (R: t.test(c(2,4,6,8), c(1,2,3))).
        let mut c = Contrast::default();
        c.add(1.0, &[2.0, 4.0, 6.0, 8.0]);
        c.add(-1.0, &[1.0, 2.0, 3.0]);
        assert!((c.estimate - 3.0).abs() < 1e-12);
        assert!((c.var - 2.0).abs() < 1e-12);
        assert!((c.df() - 4.075_471_7).abs() < 1e-6, "{}", c.df());
        assert!((c.p_value() - 0.099_8).abs() < 5e-4, "{}", c.p_value());
    }

    #[test]
    fn no_spread_and_non_positive_values() {
        let c = log_difference(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(c.p_value(), 1.0);
        let c = log_difference(&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0]).unwrap();
        assert!(c.p_value().is_nan());
        assert!(judge(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0], &[]).is_none());
        assert!(judge(&[1.0, 2.0], &[1.0, 2.0], &[]).is_none());
    }

    #[test]
    fn a_control_cancels_drift_shared_by_every_setup() {
        // The host got 20 % slower between the runs: both setups moved alike.
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b: Vec<f64> = a.iter().map(|x| x * 0.8).collect();
        let ctl_a = [50.0, 50.5, 49.5, 50.2, 49.8];
        let ctl_b: Vec<f64> = ctl_a.iter().map(|x| x * 0.8).collect();
        let j = judge(&a, &b, &[(&ctl_a, &ctl_b)]).unwrap();
        assert!(j.raw.p < 0.001 && (j.raw.pct + 20.0).abs() < 1e-9, "{j:?}");
        let adj = j.adjusted.unwrap();
        assert!(adj.pct.abs() < 1e-9 && adj.p > 0.5, "{adj:?}");
        assert!((j.drift.unwrap().pct + 20.0).abs() < 1e-9);
    }

    #[test]
    fn small_n_can_only_see_large_effects() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut at = |n| {
            let c = log_difference(
                &rounds(&mut rng, n, 100.0, 0.05),
                &rounds(&mut rng, n, 100.0, 0.05),
            )
            .unwrap();
            Movement::of(&c).detectable_pct
        };
        let (d3, d10) = (at(3), at(10));
        assert!(d3 > 2.0 * d10, "n=3 ±{d3:.1} %, n=10 ±{d10:.1} %");
    }

    /// Calibration: synthetic A/A pairs (nothing changed) at n = 3, 5, 10, 40 metrics per
    /// comparison with noise from 1 % to 30 %, half of them with a common host drift between A
    /// and B judged against a control setup. After Benjamini–Hochberg the fraction of metrics
    /// flagged stays at or below α, and so does the fraction of comparisons flagging anything
    /// (the false-discovery rate when nothing changed), within simulation error.
    /// `cargo test --lib change::tests::a_a_calibration -- --nocapture` prints the table.
    #[test]
    fn a_a_calibration() {
        const COMPARISONS: usize = 1_000;
        const METRICS: usize = 40;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(22);
        eprintln!("n   drift    uncorrected   BH: metrics flagged   BH: comparisons with any flag");
        for n in [3usize, 5, 10] {
            for drift in [false, true] {
                let (mut raw_flags, mut bh_flags, mut any) = (0usize, 0usize, 0usize);
                for _ in 0..COMPARISONS {
                    let mut ps = Vec::with_capacity(METRICS);
                    for m in 0..METRICS {
                        let cv = 0.01 + 0.29 * m as f64 / (METRICS - 1) as f64;
                        // Host drift: B is 15 % slower for this setup and its control alike.
                        let f = if drift { 0.85 } else { 1.0 };
                        let a = rounds(&mut rng, n, 1000.0, cv);
                        let b = rounds(&mut rng, n, 1000.0 * f, cv);
                        let j = if drift {
                            let ca = rounds(&mut rng, n, 300.0, cv);
                            let cb = rounds(&mut rng, n, 300.0 * f, cv);
                            judge(&a, &b, &[(&ca, &cb)])
                        } else {
                            judge(&a, &b, &[])
                        }
                        .unwrap();
                        ps.push(j.decisive().p);
                    }
                    raw_flags += ps.iter().filter(|p| **p < ALPHA).count();
                    let q = bh_adjust(&ps);
                    let k = q.iter().filter(|q| **q <= ALPHA).count();
                    bh_flags += k;
                    any += usize::from(k > 0);
                }
                let total = (COMPARISONS * METRICS) as f64;
                let (raw, bh, fam) = (
                    raw_flags as f64 / total,
                    bh_flags as f64 / total,
                    any as f64 / COMPARISONS as f64,
                );
                eprintln!(
                    "{n:<3} {:<8} {:>6.2} %      {:>6.3} %              {:>5.1} %",
                    if drift { "control" } else { "none" },
                    raw * 100.0,
                    bh * 100.0,
                    fam * 100.0
                );
                assert!(bh <= ALPHA, "n={n}: {bh} of metrics flagged after BH");
                // 1,000 comparisons: the standard error of a 5 % rate is 0.7 points.
                assert!(fam <= ALPHA + 0.02, "n={n}: {fam} of comparisons flagged");
            }
        }
    }

    #[test]
    fn a_real_change_is_found() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let a = rounds(&mut rng, 5, 1000.0, 0.03);
        let b = rounds(&mut rng, 5, 1300.0, 0.03);
        let j = judge(&a, &b, &[]).unwrap();
        assert!(j.raw.p < 0.001 && j.raw.pct > 20.0, "{j:?}");
        let (lo, hi) = j.raw.ci_pct;
        assert!(lo > 0.0 && lo < j.raw.pct && j.raw.pct < hi, "{j:?}");
    }
}
