//! The one statistic's counterpart for two independent runs: no round of one ran beside a
//! round of the other, so there is nothing to pair, and the interval of the ratio is Welch's t
//! interval on log values ([`super::change::decisive_contrast`]: `mean(ln b) − mean(ln a)`,
//! beyond the control setups' average of the same when there are any, Welch–Satterthwaite
//! degrees of freedom). It is read exactly as the paired interval is
//! ([`super::paired::classify`]): the same [`super::paired::Outcome`]s at the same α, the
//! same equivalence test (the 1 − 2α interval within ±margin) and the same margins. Whatever
//! drifted on the
//! host between the runs is in every value and widens the interval; pairing would have
//! cancelled the part shared by a round.

use super::change::{self, MIN_ROUNDS};
use super::paired::{self, Judgement};

/// Judge the change from `a` to `b` (one setup's per-round values in two independent runs),
/// against the average movement of `controls` (each an `(a, b)` of another setup on the same
/// workload and metric), at two-sided error rate `alpha` with equivalence `margin`. The
/// judgement's ratio is `b / a` when `b_up_is_better`, else `a / b` (> 1: `b` is better, as
/// [`Judgement`] orients); `rounds` is the smaller side's, and `noise` the standard deviation
/// one round of each side would give their log ratio (the interval's half-width is
/// `t · noise / √rounds`). `None` with fewer than [`MIN_ROUNDS`] rounds a side or a value
/// that is not positive.
pub fn judge(
    a: &[f64],
    b: &[f64],
    controls: &[(&[f64], &[f64])],
    b_up_is_better: bool,
    alpha: f64,
    margin: f64,
) -> Option<Judgement> {
    let c = change::decisive_contrast(a, b, controls)?;
    let est = if b_up_is_better {
        c.estimate
    } else {
        -c.estimate
    };
    let at = |alpha: f64| {
        // Identical rounds everywhere: no spread, the interval is the point itself.
        let half = if c.var > 0.0 {
            super::student_t::quantile(1.0 - alpha / 2.0, c.df()) * c.se()
        } else {
            0.0
        };
        ((est - half).exp(), (est + half).exp())
    };
    let iv = at(alpha);
    let rounds = a.len().min(b.len());
    let noise = c.se() * (rounds as f64).sqrt();
    Some(Judgement {
        outcome: paired::classify(iv, margin),
        ratio: est.exp(),
        interval: Some(iv),
        rounds,
        margin,
        alpha,
        noise: Some(noise),
        rounds_for_10pct: paired::rounds_to_resolve(noise, alpha, 0.10),
        adjusted: None,
    })
}

/// Fewest rounds a side [`judge`] reads (Welch's test with fewer has one degree of freedom or
/// none).
pub const MIN_ROUNDS_A_SIDE: usize = MIN_ROUNDS;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired::Outcome;

    #[test]
    fn the_unpaired_interval_reads_like_the_paired_one() {
        let a = [100.0, 102.0, 98.0, 101.0];
        // 30 % faster: ahead when higher is better, behind when lower is.
        let b: Vec<f64> = a.iter().map(|x| x * 1.3).collect();
        let up = judge(&a, &b, &[], true, 0.10, 0.10).unwrap();
        assert_eq!(up.outcome, Outcome::Ahead, "{up:?}");
        assert!((up.ratio - 1.3).abs() < 1e-9 && up.rounds == 4);
        let down = judge(&a, &b, &[], false, 0.10, 0.10).unwrap();
        assert_eq!(down.outcome, Outcome::Behind);
        // The same values in a different order: equivalent within ±10 %.
        let same = [101.0, 98.0, 100.0, 102.0];
        assert_eq!(
            judge(&a, &same, &[], true, 0.10, 0.10).unwrap().outcome,
            Outcome::Equivalent
        );
        // Noisy and 5 % apart: not separated, and more rounds would tell.
        let noisy_a = [100.0, 130.0, 80.0];
        let noisy_b = [90.0, 125.0, 110.0];
        let j = judge(&noisy_a, &noisy_b, &[], true, 0.10, 0.10).unwrap();
        assert_eq!(j.outcome, Outcome::NotSeparated, "{j:?}");
        assert!(j.rounds_for_10pct.is_none_or(|n| n > 3), "{j:?}");
        // Too few rounds, or a value that is not positive: no judgement.
        assert!(judge(&a[..2], &b[..2], &[], true, 0.10, 0.10).is_none());
        assert!(judge(&[0.0, 1.0, 2.0], &a[..3], &[], true, 0.10, 0.10).is_none());
    }

    #[test]
    fn a_control_takes_the_drift_out() {
        // Everything 20 % slower in B: the setup's own 20 % is the drift, equivalent beyond it.
        let a = [100.0, 101.0, 99.0, 100.5];
        let b: Vec<f64> = a.iter().map(|x| x * 0.8).collect();
        let ca = [50.0, 50.5, 49.5, 50.2];
        let cb: Vec<f64> = ca.iter().map(|x| x * 0.8).collect();
        assert_eq!(
            judge(&a, &b, &[], true, 0.10, 0.10).unwrap().outcome,
            Outcome::Behind
        );
        let j = judge(&a, &b, &[(&ca, &cb)], true, 0.10, 0.10).unwrap();
        assert_eq!(j.outcome, Outcome::Equivalent, "{j:?}");
    }
}
