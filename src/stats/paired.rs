//! The one judgement of two setups on one metric, read by every output (headline marks,
//! verdict lines, the "Until settled" lines, the JSON report) so they cannot disagree.
//!
//! Rounds are interleaved: round r of both setups ran side by side, so the noise a round
//! shares (the host's state, the image's place on the disk) cancels in the per-round ratio.
//! The log of each paired ratio is one observation, and Student's t interval on those logs
//! ([`super::sequential::interval_at`]) is the statistic, in a run of fixed rounds (one look at
//! error rate α) and in a `--until-settled` run (a look after every round, α spent over the
//! looks by [`super::sequential::Rule`]) alike. Three outcomes:
//!
//! - **equivalent**: the look's interval (the one every output prints) lies within ±m (the
//!   metric registry's margin, [`crate::metrics::MetricDef::margin`]): two one-sided tests at
//!   α/2 each, the level a claim of a tie is tested at too, even when the gap is beyond
//!   noise: a difference smaller than the margin is not a lead;
//! - **ahead** / **behind**: otherwise, the interval lies wholly above / below 1 (beyond
//!   noise);
//! - **not separated**: neither; the interval and the rounds that would tell ±10 % apart at
//!   this noise say what it would take.
//!
//! In a sequential run a question is decided at the first look whose interval settles it
//! (the stopping rule's guarantee covers every look), else it is open at the last.

use super::sequential::{DEFAULT_ALPHA, Rule};
use crate::metrics::{self, Direction, MetricKey};
use crate::results::Results;
use serde::Serialize;
use std::collections::BTreeMap;

/// How the one statistic reads a comparison of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `a` is better than `b` beyond noise.
    Ahead,
    /// `a` is worse than `b` beyond noise.
    Behind,
    /// Shown to lie within ±margin of each other.
    Equivalent,
    /// Neither: the interval straddles 1 and reaches past the margin (or too few rounds).
    NotSeparated,
}

impl Outcome {
    /// Whether the question is answered (ahead, behind or equivalent).
    pub fn decided(self) -> bool {
        self != Outcome::NotSeparated
    }

    /// The words for the outcome.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Ahead => "ahead",
            Outcome::Behind => "behind",
            Outcome::Equivalent => "equivalent",
            Outcome::NotSeparated => "not separated",
        }
    }
}

/// One comparison's judgement: `ratio` > 1 always means `a` is better (for a lower-is-better
/// metric it is b / a).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    /// The outcome.
    pub outcome: Outcome,
    /// Geometric mean of the oriented paired ratios over the rounds judged.
    pub ratio: f64,
    /// The interval of `ratio` at the deciding look (`None`: fewer than two rounds).
    pub interval: Option<(f64, f64)>,
    /// The rounds judged (the deciding look's, or every paired round when open).
    pub rounds: usize,
    /// The equivalence margin used (a fraction: 0.10 is ±10 %).
    pub margin: f64,
    /// Two-sided error rate of the interval at that look.
    pub alpha: f64,
    /// Paired noise: the standard deviation of the log ratios (≈ the ratio's cv per round).
    pub noise: Option<f64>,
    /// Rounds that would find a true 10 % difference beyond noise 4 times in 5 at this noise
    /// (80 % power, fixed rounds, one look: [`rounds_to_resolve`]).
    pub rounds_for_10pct: Option<usize>,
    /// The slope β̂ the ratios were adjusted with for the disk's own pace
    /// ([`super::adjusted`]); absent when the plain ratios were judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<f64>,
}

/// The stopping rule behind a results file's judgements: the run's own for a
/// `--until-settled` run (its looks end at the last look the budget fitted, `last_look`),
/// else one look at `rounds` with the default error rate; per run, at α/m
/// ([`super::family`]).
pub fn rule_for(results: &Results, rounds: usize) -> Rule {
    let rule = match &results.settle {
        Some(s) => Rule {
            alpha: s.alpha,
            min_rounds: s.min_rounds.max(2) as usize,
            max_rounds: s.last_look.unwrap_or(s.max_rounds) as usize,
        },
        None => Rule {
            alpha: DEFAULT_ALPHA,
            min_rounds: rounds.max(2),
            max_rounds: rounds.max(2),
        },
    };
    // Per run (`--error per-run`): α shared over the run's questions.
    Rule {
        alpha: super::family::alpha_per_question(rule.alpha, results.error.as_ref()),
        ..rule
    }
}

/// The equivalence margin of `metric` in `results`: the run's `--margin` when it set one, else
/// the metric registry's.
pub fn margin_of(results: &Results, metric: &MetricKey) -> f64 {
    results
        .margin
        .unwrap_or_else(|| metrics::def(metric).margin)
}

/// What one look at every value of `ratios` says: outcome and its interval.
pub fn look(ratios: &[f64], rule: &Rule, margin: f64) -> (Outcome, Option<(f64, f64)>) {
    let Some(iv) = rule.interval(ratios) else {
        return (Outcome::NotSeparated, None);
    };
    (classify(iv, margin), Some(iv))
}

/// The outcome of an oriented ratio's interval `iv` (> 1 favours `a`) against ±`margin`: the
/// one rule the paired statistic and its unpaired counterpart ([`super::unpaired`]) share.
/// One interval decides every outcome and is the one printed: a "=" never shows an interval
/// that reaches past its margin.
///
/// Equivalence first: a gap measured precisely but smaller than the margin (1.001 against
/// 1.003, both "beyond noise") is a tie that matters to nobody, and marking one side ★ and
/// the other ▽ would say the opposite.
pub fn classify((lo, hi): (f64, f64), margin: f64) -> Outcome {
    if lo >= 1.0 / (1.0 + margin) && hi <= 1.0 + margin {
        Outcome::Equivalent
    } else if lo > 1.0 {
        Outcome::Ahead
    } else if hi < 1.0 {
        Outcome::Behind
    } else {
        Outcome::NotSeparated
    }
}

/// Judge oriented paired `ratios` (round order, > 1 favours `a`) under `rule` with
/// equivalence `margin`, each look on a prefix.
pub fn judge(ratios: &[f64], rule: &Rule, margin: f64) -> Judgement {
    judge_looks(
        &super::adjusted::Ratios::plain(ratios.to_vec()),
        rule,
        margin,
    )
}

/// [`judge`] with each look on the ratios it judged ([`super::adjusted::Ratios::at`]: in a
/// `--until-settled` run with readings, adjusted on the rounds up to it).
pub fn judge_looks(ratios: &super::adjusted::Ratios, rule: &Rule, margin: f64) -> Judgement {
    let n = ratios.len();
    let first = rule.min_rounds.max(2);
    // The first look that decides, else the last one (every paired round).
    let decided = (first..n)
        .map(|k| (k, look(ratios.at(k), rule, margin)))
        .find(|(_, (o, _))| o.decided());
    let (k, (outcome, interval)) = decided.unwrap_or((n, look(ratios.at(n), rule, margin)));
    let logs: Vec<f64> = ratios
        .at(k)
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    let noise = (logs.len() >= 2).then(|| super::descriptive::stddev(&logs));
    Judgement {
        outcome,
        ratio: if logs.is_empty() {
            f64::NAN
        } else {
            super::descriptive::mean(&logs).exp()
        },
        interval,
        rounds: k,
        margin,
        alpha: rule.alpha_at(k),
        noise,
        rounds_for_10pct: noise.and_then(|sd| rounds_to_resolve(sd, rule.alpha, 0.10)),
        adjusted: None,
    }
}

/// The power [`rounds_to_resolve`] plans for: a true difference of the size asked is found
/// beyond noise in 4 runs of 5.
pub const POWER: f64 = 0.80;

/// The fewest rounds at which one look at error rate `alpha` finds a true difference of
/// `diff` (a ratio of 1 + `diff`) beyond noise with probability [`POWER`] (80 %), at paired
/// noise `sd` (log scale), up to 100; `None` beyond. The usual t approximation:
/// `(t(n−1, 1 − α/2) + t(n−1, POWER)) · sd/√n ≤ ln(1 + diff)`. (The interval's half-width
/// alone reaching `diff` is only the 50 % point: a coin flip.)
pub fn rounds_to_resolve(sd: f64, alpha: f64, diff: f64) -> Option<usize> {
    let target = (1.0 + diff).ln();
    (2..=100usize).find(|&n| {
        let df = (n - 1) as f64;
        let t = super::student_t::quantile(1.0 - alpha / 2.0, df)
            + super::student_t::quantile(POWER, df);
        t * sd / (n as f64).sqrt() < target
    })
}

/// One setup's per-round values of `workload`'s `metric`.
pub fn per_round(
    results: &Results,
    setup: &str,
    workload: &str,
    metric: &MetricKey,
) -> BTreeMap<u32, f64> {
    results
        .samples
        .iter()
        .filter(|s| s.setup == setup && s.workload == workload && s.metric == *metric)
        .filter(|s| s.value.is_finite())
        .map(|s| (s.round, s.value))
        .collect()
}

/// Paired ratios a/b of the rounds both have (b non-zero), round order.
pub fn paired(a: &BTreeMap<u32, f64>, b: &BTreeMap<u32, f64>) -> Vec<f64> {
    a.iter()
        .filter_map(|(r, x)| b.get(r).map(|y| (*x, *y)))
        .filter(|(_, y)| *y != 0.0)
        .map(|(x, y)| x / y)
        .collect()
}

/// The error rate each comparison of a row's leader with another setup is judged at, when the
/// row has `setups` setups: `2α/k` (α itself for two). The leader is chosen by the data from
/// k setups, so its comparisons are the extreme ones: with four equal setups and α judged per
/// comparison, 13 % of them were wrongly called "ahead" in simulation
/// (`report/simulation.rs`). Over the k(k−1)/2 pairs the leader could have been compared in,
/// at most α·k(k−1)/2 wrong decisions are expected at α per pair; judging at 2α/k keeps that
/// at α for each of the k − 1 questions a row asks.
pub fn leader_alpha(alpha: f64, setups: usize) -> f64 {
    if setups <= 2 {
        alpha
    } else {
        alpha * 2.0 / setups as f64
    }
}

/// [`compare`] of a row's leader `a` with setup `b` when the row has `setups` setups, at
/// [`leader_alpha`]: what the marks, the verdict lines and the "Until settled" questions read.
pub fn compare_with_leader(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    a: &str,
    b: &str,
    setups: usize,
) -> Judgement {
    compare_at(results, workload, metric, a, b, setups)
}

/// The judgement of setup `a` against setup `b` on `metric` of `workload`: ratios oriented by
/// the metric's direction (> 1: `a` better) with the disk's pace taken out where the run
/// measured it ([`super::adjusted::ratios`]), the run's rule, the metric's margin. A merged
/// tail is judged on its per-round counterpart (it has one value per setup, no rounds). A
/// fixed pair (a claim's); a row's leader against another setup is
/// [`compare_with_leader`].
pub fn compare(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    a: &str,
    b: &str,
) -> Judgement {
    compare_at(results, workload, metric, a, b, 2)
}

/// The per-round ratios [`compare`] judges `a` against `b` on: oriented by the metric's
/// direction (> 1: `a` better), a merged tail read on its per-round counterpart, the disk's
/// pace taken out where the run measured it ([`super::adjusted::ratios`]). The "until
/// settled" questions read these too, so a look and a mark judge the same numbers.
pub fn oriented_ratios(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    a: &str,
    b: &str,
) -> super::adjusted::Ratios {
    let per: MetricKey = match metrics::merged_tail(metric) {
        Some(t) => t.per_round.into(),
        None => metric.clone(),
    };
    let (num, den) = match metrics::def(metric).direction {
        Direction::LowerIsBetter => (b, a),
        _ => (a, b),
    };
    super::adjusted::ratios(results, workload, &per, num, den)
}

fn compare_at(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    a: &str,
    b: &str,
    setups: usize,
) -> Judgement {
    let r = oriented_ratios(results, workload, metric, a, b);
    let rule = rule_for(results, r.ratios.len());
    let rule = Rule {
        alpha: leader_alpha(rule.alpha, setups),
        ..rule
    };
    Judgement {
        adjusted: r.beta,
        ..judge_looks(&r, &rule, margin_of(results, metric))
    }
}

/// "+5 % (−12 % … +25 %)": a judgement's ratio and interval as percentages.
pub fn percent_text(j: &Judgement) -> String {
    let pct = |r: f64| {
        let p = (r - 1.0) * 100.0;
        if p.abs() < 0.5 {
            "0 %".to_string()
        } else {
            format!("{}{:.0} %", if p > 0.0 { "+" } else { "−" }, p.abs())
        }
    };
    match j.interval {
        Some((lo, hi)) => format!("{} ({} … {})", pct(j.ratio), pct(lo), pct(hi)),
        None => pct(j.ratio),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(n: usize) -> Rule {
        Rule {
            alpha: DEFAULT_ALPHA,
            min_rounds: n,
            max_rounds: n,
        }
    }

    #[test]
    fn a_paired_lead_is_ahead_where_the_ranges_overlap() {
        // Shared round noise: both setups slow in round 3, a 1.2× lead in every round.
        let a = [120.0, 125.0, 60.0];
        let b = [100.0, 104.0, 50.0];
        let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
        let j = judge(&r, &fixed(3), 0.10);
        assert_eq!(j.outcome, Outcome::Ahead, "{j:?}");
        let (lo, hi) = j.interval.unwrap();
        assert!(
            lo > 1.0 && hi < 1.3 && (j.ratio - 1.2).abs() < 0.01,
            "{j:?}"
        );
        let back: Vec<f64> = r.iter().map(|x| 1.0 / x).collect();
        assert_eq!(judge(&back, &fixed(3), 0.10).outcome, Outcome::Behind);
    }

    #[test]
    fn equivalent_within_the_margin_and_not_separated_beyond_it() {
        let close = [1.01, 0.99, 1.02, 0.98, 1.0];
        assert_eq!(judge(&close, &fixed(5), 0.10).outcome, Outcome::Equivalent);
        let loose = [1.15, 0.85, 1.1, 0.9];
        let j = judge(&loose, &fixed(4), 0.10);
        assert_eq!(j.outcome, Outcome::NotSeparated);
        assert!(j.rounds_for_10pct.unwrap() > 4, "{j:?}");
        assert_eq!(
            percent_text(&judge(&[1.0, 1.0], &fixed(2), 0.1)),
            "0 % (0 % … 0 %)"
        );
        // One round: no interval, not separated.
        let one = judge(&[2.0], &fixed(1), 0.10);
        assert_eq!((one.outcome, one.interval), (Outcome::NotSeparated, None));
    }

    #[test]
    fn a_sequential_run_decides_at_the_first_settling_look() {
        let rule = Rule::new(3, 6);
        let r = [1.5, 1.52, 1.49, 0.7, 0.6, 2.5];
        let j = judge(&r, &rule, 0.10);
        assert_eq!((j.outcome, j.rounds), (Outcome::Ahead, 3));
        // The look's own nominal rate under the α-spending boundary: below the run's α.
        assert!(j.alpha > 0.0 && j.alpha < 0.10, "{}", j.alpha);
    }

    #[test]
    fn the_runs_margin_replaces_the_registrys() {
        use crate::results::Sample;
        let mut r = Results::new();
        // xfs 6–8 % behind every round: not equivalent within ±5 %, equivalent within ±10 %.
        for (round, e, x) in [(1, 100.0, 93.0), (2, 100.0, 94.0), (3, 100.0, 93.5)] {
            for (setup, v) in [("ext4", e), ("xfs", x)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "randread".into(),
                    metric: MetricKey::parse("iops"),
                    unit: String::new(),
                    round,
                    value: v,
                });
            }
        }
        let iops = MetricKey::parse("iops");
        let j = |r: &Results| compare(r, "randread", &iops, "ext4", "xfs");
        assert_eq!(margin_of(&r, &iops), 0.10);
        // A 1.07 lead with tight rounds: within ±10 %, so equivalent (checked first: a
        // gap under the margin is no lead even beyond noise); with a 5 % margin, ahead.
        assert_eq!(j(&r).outcome, Outcome::Equivalent);
        r.margin = Some(0.05);
        assert_eq!((j(&r).margin, j(&r).outcome), (0.05, Outcome::Ahead));
        let close = [1.01, 0.99, 1.02, 0.98, 1.0];
        assert_eq!(
            judge(&close, &fixed(5), 0.01).outcome,
            Outcome::NotSeparated
        );
        assert_eq!(judge(&close, &fixed(5), 0.05).outcome, Outcome::Equivalent);
    }

    /// Simulated: at the rounds it names, a true 10 % difference is found beyond noise in
    /// about 80 % of runs (not 50 %).
    #[test]
    fn rounds_to_resolve_plans_for_80_percent_power() {
        use rand_core::Rng;
        use rand_xoshiro::rand_core::SeedableRng;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(80);
        let mut normal = || {
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let v = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        for sd in [0.05, 0.12] {
            let n = rounds_to_resolve(sd, 0.10, 0.10).unwrap();
            let trials = 4000;
            let found = (0..trials)
                .filter(|_| {
                    let r: Vec<f64> = (0..n)
                        .map(|_| (1.1f64.ln() + sd * normal()).exp())
                        .collect();
                    super::super::sequential::interval_at(&r, 0.10).is_some_and(|iv| iv.0 > 1.0)
                })
                .count() as f64
                / trials as f64;
            // The first n reaching 80 %: at least 80 % (less two simulation standard errors).
            assert!(
                found >= POWER - 0.013,
                "sd {sd}: {n} rounds find it in {found}"
            );
            assert!(
                found < 0.95,
                "sd {sd}: {n} rounds find it in {found}: too many rounds"
            );
        }
    }

    #[test]
    fn rounds_to_resolve_grow_with_the_noise() {
        let few = rounds_to_resolve(0.03, 0.1, 0.10).unwrap();
        let many = rounds_to_resolve(0.10, 0.1, 0.10).unwrap();
        assert!(few < many, "{few} {many}");
        assert_eq!(rounds_to_resolve(5.0, 0.1, 0.10), None);
    }
}
