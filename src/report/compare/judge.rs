//! How `compare` judges one row (a setup's metric in A against the same in B) with the one
//! statistic: paired per-round log ratios and Student's t interval
//! ([`crate::stats::paired`]) when a round of A ran beside a round of B, else Welch's t
//! interval on log values ([`crate::stats::unpaired`]); both read into the same
//! [`crate::stats::paired::Outcome`]s, at the same α, with the metric's margin.
//!
//! With control setups, each paired round's log ratio is taken beyond the controls' average
//! log ratio of the same pair (the drift of that pair cancels), and the unpaired contrast
//! beyond the controls' average contrast.

use crate::metrics::Direction;
use crate::stats::paired::{self, Judgement};
use crate::stats::sequential::{DEFAULT_ALPHA, Rule};
use crate::stats::unpaired;
use serde::Serialize;
use std::collections::BTreeMap;

/// One setup's per-round values on one (workload, metric) in one file: round → value.
pub type Rounds = BTreeMap<u32, f64>;

/// Which rounds of A and B are judged together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// The two halves of one run (`--split-rounds`): A's k-th round with B's k-th, which ran
    /// next to each other in the interleaved run.
    Halves,
    /// One run (the same start time): A's round r with B's round r.
    SameRounds,
    /// Separate runs: no round of A ran beside one of B (Welch on log values).
    Independent,
}

impl Pairing {
    /// How the rows were judged, in words.
    pub fn words(self) -> &'static str {
        match self {
            Pairing::Halves => {
                "paired: A's k-th round with B's k-th (adjacent rounds of the one interleaved \
                 run), Student's t interval on the per-round log ratios"
            }
            Pairing::SameRounds => {
                "paired by round (one run: round r of A and B ran side by side), Student's t \
                 interval on the per-round log ratios"
            }
            Pairing::Independent => {
                "unpaired (separate runs share no rounds): Welch's t interval on log values, \
                 the paired statistic's counterpart, which drift between the runs widens"
            }
        }
    }
}

/// The outcome of judging one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judged {
    /// Judged with this pairing (a paired row with no round in common falls back to
    /// [`Pairing::Independent`]).
    Yes(Pairing, Judgement),
    /// Fewer than two pairs, or fewer than [`unpaired::MIN_ROUNDS_A_SIDE`] rounds a side.
    TooFewRounds,
    /// A zero or negative value: a ratio is meaningless.
    NotPositive,
}

/// Pairs `(a, b)` under `pairing`, keyed by round (same rounds) or position (halves).
fn pairs(pairing: Pairing, a: &Rounds, b: &Rounds) -> BTreeMap<u32, (f64, f64)> {
    match pairing {
        Pairing::Halves => a
            .values()
            .zip(b.values())
            .enumerate()
            .map(|(k, (x, y))| (k as u32, (*x, *y)))
            .collect(),
        Pairing::SameRounds => a
            .iter()
            .filter_map(|(r, x)| b.get(r).map(|y| (*r, (*x, *y))))
            .collect(),
        Pairing::Independent => BTreeMap::new(),
    }
}

/// Judge B against A of one row: `a`, `b` the setup's rounds, `controls` the control setups'
/// `(a, b)` rounds on the same test, `direction` the metric's (neutral reads as higher is
/// better: ahead means B went up), `margin` its equivalence margin. The judgement is oriented
/// as [`Judgement`] says: ratio > 1 means B is better than A.
pub fn judge(
    pairing: Pairing,
    (a, b): (&Rounds, &Rounds),
    controls: &[(Rounds, Rounds)],
    direction: Direction,
    margin: f64,
) -> Judged {
    let up = direction != Direction::LowerIsBetter;
    let positive = |v: &Rounds| v.values().all(|x| *x > 0.0);
    if !positive(a) || !positive(b) {
        return Judged::NotPositive;
    }
    let ab = pairs(pairing, a, b);
    if !ab.is_empty() {
        // Each control's log ratio per pair; a pair no control ran is not judged.
        let drift: Vec<BTreeMap<u32, f64>> = controls
            .iter()
            .map(|(ca, cb)| {
                pairs(pairing, ca, cb)
                    .into_iter()
                    .filter(|(_, (x, y))| *x > 0.0 && *y > 0.0)
                    .map(|(k, (x, y))| (k, (y / x).ln()))
                    .collect()
            })
            .collect();
        let mut ratios = Vec::new();
        for (k, (x, y)) in ab {
            let mut l = (y / x).ln();
            if !controls.is_empty() {
                let d: Vec<f64> = drift.iter().filter_map(|m| m.get(&k)).copied().collect();
                if d.is_empty() {
                    continue;
                }
                l -= crate::stats::descriptive::mean(&d);
            }
            let oriented = if up { l } else { -l };
            ratios.push(oriented.exp());
        }
        if ratios.len() < 2 {
            return Judged::TooFewRounds;
        }
        // One look at every pair: a comparison is not a sequential run.
        let rule = Rule {
            alpha: DEFAULT_ALPHA,
            min_rounds: ratios.len(),
            max_rounds: ratios.len(),
        };
        return Judged::Yes(pairing, paired::judge(&ratios, &rule, margin));
    }
    let values = |v: &Rounds| v.values().copied().collect::<Vec<f64>>();
    let (va, vb) = (values(a), values(b));
    let ctl: Vec<(Vec<f64>, Vec<f64>)> = controls
        .iter()
        .map(|(ca, cb)| (values(ca), values(cb)))
        .collect();
    let ctl: Vec<(&[f64], &[f64])> = ctl
        .iter()
        .map(|(x, y)| (x.as_slice(), y.as_slice()))
        .collect();
    match unpaired::judge(&va, &vb, &ctl, up, DEFAULT_ALPHA, margin) {
        Some(j) => Judged::Yes(Pairing::Independent, j),
        None => Judged::TooFewRounds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired::Outcome;

    fn rounds(v: &[(u32, f64)]) -> Rounds {
        v.iter().copied().collect()
    }

    #[test]
    fn shared_round_noise_cancels_when_paired_and_not_when_unpaired() {
        // Round 2 is slow for both sides; B is 15 % faster in every round.
        let a = rounds(&[(1, 100.0), (2, 60.0), (3, 101.0), (4, 99.0)]);
        let b = rounds(&[(1, 115.0), (2, 69.5), (3, 116.0), (4, 113.5)]);
        let Judged::Yes(p, j) = judge(
            Pairing::SameRounds,
            (&a, &b),
            &[],
            Direction::HigherIsBetter,
            0.1,
        ) else {
            panic!("not judged")
        };
        assert_eq!(
            (p, j.outcome),
            (Pairing::SameRounds, Outcome::Ahead),
            "{j:?}"
        );
        let Judged::Yes(p, j) = judge(
            Pairing::Independent,
            (&a, &b),
            &[],
            Direction::HigherIsBetter,
            0.1,
        ) else {
            panic!("not judged")
        };
        assert_eq!(
            (p, j.outcome),
            (Pairing::Independent, Outcome::NotSeparated),
            "{j:?}"
        );
        // Lower is better: B's higher values are behind.
        let Judged::Yes(_, j) = judge(
            Pairing::SameRounds,
            (&a, &b),
            &[],
            Direction::LowerIsBetter,
            0.1,
        ) else {
            panic!("not judged")
        };
        assert_eq!(j.outcome, Outcome::Behind);
    }

    #[test]
    fn halves_pair_by_position_and_controls_take_each_pairs_drift_out() {
        // Odd rounds against even rounds; the host got slower over the run, for both setups.
        let a = rounds(&[(1, 100.0), (3, 90.0), (5, 80.0)]);
        let b = rounds(&[(2, 97.0), (4, 87.0), (6, 77.5)]);
        let ca = rounds(&[(1, 50.0), (3, 45.0), (5, 40.0)]);
        let cb = rounds(&[(2, 48.5), (4, 43.5), (6, 38.7)]);
        let Judged::Yes(p, j) = judge(
            Pairing::Halves,
            (&a, &b),
            &[(ca, cb)],
            Direction::HigherIsBetter,
            0.1,
        ) else {
            panic!("not judged")
        };
        assert_eq!(
            (p, j.outcome, j.rounds),
            (Pairing::Halves, Outcome::Equivalent, 3),
            "{j:?}"
        );
        // One pair is too few; a paired comparison without a shared round falls back.
        let one = rounds(&[(2, 97.0)]);
        assert_eq!(
            judge(
                Pairing::Halves,
                (&a, &one),
                &[],
                Direction::HigherIsBetter,
                0.1
            ),
            Judged::TooFewRounds
        );
        let Judged::Yes(p, _) = judge(
            Pairing::SameRounds,
            (&a, &b),
            &[],
            Direction::HigherIsBetter,
            0.1,
        ) else {
            panic!("not judged")
        };
        assert_eq!(p, Pairing::Independent);
        let zero = rounds(&[(1, 0.0), (3, 1.0), (5, 2.0)]);
        assert_eq!(
            judge(
                Pairing::SameRounds,
                (&zero, &a),
                &[],
                Direction::HigherIsBetter,
                0.1
            ),
            Judged::NotPositive
        );
    }
}
