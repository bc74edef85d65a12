//! The decisions of tune's stages from judgements, pure: what screening says of each value
//! (helps, hurts, does not matter, unclear), which combinations race, which racer drops out.
//! The judgements themselves are `stats::paired`'s, on the score of `super::score`.

use crate::fs::options::Space;
use crate::stats::paired::{self, Judgement, Outcome};
use crate::stats::sequential::Rule;
use serde::Serialize;

/// What screening found of one value tried alone against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Better than the baseline beyond noise (and beyond the margin's equivalence).
    Helps,
    /// Worse beyond noise.
    Hurts,
    /// Shown equivalent within the margin: it does not matter for this workload.
    NoMatter,
    /// Not separated: the rounds did not tell.
    Unclear,
    /// No paired round to judge (its steps failed).
    NoData,
}

impl Effect {
    /// Of a screening judgement (the value against the baseline).
    pub fn of(j: &Judgement) -> Effect {
        if !j.ratio.is_finite() {
            return Effect::NoData;
        }
        match j.outcome {
            Outcome::Ahead => Effect::Helps,
            Outcome::Behind => Effect::Hurts,
            Outcome::Equivalent => Effect::NoMatter,
            Outcome::NotSeparated => Effect::Unclear,
        }
    }

    /// Whether the value goes on to racing: only when it helped, its interval's lower bound
    /// above no change (and the interval not inside the margin). A value merely leaning ahead
    /// is not raced: among k values with no effect about half lean ahead by chance, and a
    /// race of their 2^k combinations selects the luckiest of noise (the winner's curse),
    /// at a cost that outgrows the exhaustive grid it was meant to save (docs/tune.md).
    pub fn races(self) -> bool {
        self == Effect::Helps
    }
}

/// What screening says of a whole factor from its values' effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matters {
    /// Some value helped or hurt beyond noise.
    Yes,
    /// Every value was shown equivalent to the default within the margin.
    No,
    /// Neither: some value was not separated.
    Unclear,
}

/// A factor's verdict from its values' effects.
pub fn matters(effects: &[Effect]) -> Matters {
    if effects
        .iter()
        .any(|e| matches!(e, Effect::Helps | Effect::Hurts))
    {
        Matters::Yes
    } else if !effects.is_empty() && effects.iter().all(|e| *e == Effect::NoMatter) {
        Matters::No
    } else {
        Matters::Unclear
    }
}

/// Why screening leaves nothing to race or confirm: no value helped beyond noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoCandidate {
    /// Every value was shown equivalent to the baseline's within the margin.
    NothingMatters,
    /// Some value hurt beyond noise; the others were equivalent.
    NothingHelps,
    /// Some value was not separated from no change: its effect, if any, is below what
    /// these rounds resolve.
    NotSeparated,
}

impl NoCandidate {
    /// The answer's words for it.
    pub fn words(self) -> &'static str {
        match self {
            NoCandidate::NothingMatters => "no option matters at this margin",
            NoCandidate::NothingHelps => "no option helps; some hurt",
            NoCandidate::NotSeparated => "no option helps beyond noise at this margin",
        }
    }
}

/// Whether screening's `effects` leave nothing to race or confirm (`None`: some value helped,
/// or there were no effects at all).
pub fn no_candidate(effects: &[Effect]) -> Option<NoCandidate> {
    if effects.is_empty() || effects.iter().any(|e| e.races()) {
        None
    } else if effects.iter().all(|e| *e == Effect::NoMatter) {
        Some(NoCandidate::NothingMatters)
    } else if effects
        .iter()
        .all(|e| matches!(e, Effect::NoMatter | Effect::Hurts))
    {
        Some(NoCandidate::NothingHelps)
    } else {
        Some(NoCandidate::NotSeparated)
    }
}

/// The combinations that race: each factor at its baseline value or one of the values that
/// go on (`going[f]`: value indices), every combination the space allows except the baseline
/// itself, at most `cap` of each durability class, those with the largest predicted gain
/// first (the sum of their values' screening log-ratios, `gain(f, v)`, as if effects added
/// up: Carver's few factors rarely interact much, and racing measures what they do).
pub fn combinations(
    space: &Space,
    baseline: &[usize],
    going: &[Vec<usize>],
    gain: &dyn Fn(usize, usize) -> f64,
    allow_unsafe: bool,
    cap: usize,
) -> Vec<Vec<usize>> {
    let mut all: Vec<Vec<usize>> = vec![baseline.to_vec()];
    for (f, vals) in going.iter().enumerate() {
        if vals.is_empty() {
            continue;
        }
        let mut next = Vec::new();
        for c in &all {
            next.push(c.clone());
            for &v in vals {
                let mut d = c.clone();
                d[f] = v;
                next.push(d);
            }
        }
        all = next;
    }
    let mut out: Vec<(f64, Vec<usize>)> = all
        .into_iter()
        .filter(|c| c != baseline)
        .filter(|c| space.conflict(c).is_none())
        .filter(|c| allow_unsafe || !space.weakens(c))
        .map(|c| {
            let g: f64 = (0..c.len())
                .filter(|&f| c[f] != baseline[f])
                .map(|f| gain(f, c[f]))
                .sum();
            (g, c)
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    // The cap holds for each durability class apart, so weakening combinations (whose
    // predicted gains are often the largest) never crowd the safe answer out of the race.
    let (mut safe, mut weak) = (0, 0);
    out.into_iter()
        .filter(|(_, c)| {
            let n = if space.weakens(c) {
                &mut weak
            } else {
                &mut safe
            };
            *n += 1;
            *n <= cap
        })
        .map(|(_, c)| c)
        .collect()
}

/// One racer's standing after a look: its score against the baseline so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// Racer index.
    pub id: usize,
    /// Its per-round score over the baseline (every race round so far, round order).
    pub score: Vec<f64>,
    /// Whether it weakens durability (then it races against the overall leader; a safe
    /// racer only against the safe leader, so the safe answer survives an unsafe leader).
    pub weakens: bool,
}

/// Geometric mean of a score.
pub fn mean(score: &[f64]) -> f64 {
    if score.is_empty() {
        return f64::NAN;
    }
    (score.iter().map(|r| r.ln()).sum::<f64>() / score.len() as f64).exp()
}

/// The leader of `standings` (highest mean score), among the safe ones when `safe_only`.
pub fn leader(standings: &[Standing], safe_only: bool) -> Option<usize> {
    standings
        .iter()
        .filter(|s| !safe_only || !s.weakens)
        .max_by(|a, b| mean(&a.score).total_cmp(&mean(&b.score)))
        .map(|s| s.id)
}

/// The racers that drop out at this look: each one behind its class's leader beyond noise
/// (the paired statistic on the ratio of their scores, round by round, at the look's share
/// of α under `rule`), with the leader's judgement of it.
pub fn eliminate(standings: &[Standing], rule: &Rule, margin: f64) -> Vec<(usize, Judgement)> {
    let overall = leader(standings, false);
    let safe = leader(standings, true);
    let by_id = |id: usize| standings.iter().find(|s| s.id == id);
    let mut out = Vec::new();
    for s in standings {
        let lead = if s.weakens { overall } else { safe };
        let Some(l) = lead.and_then(by_id) else {
            continue;
        };
        if l.id == s.id {
            continue;
        }
        let ratios: Vec<f64> = s.score.iter().zip(&l.score).map(|(a, b)| a / b).collect();
        let (outcome, interval) = paired::look(&ratios, rule, margin);
        if outcome == Outcome::Behind {
            let j = Judgement {
                outcome,
                interval,
                ..paired::judge(&ratios, rule, margin)
            };
            out.push((s.id, j));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(outcome: Outcome, ratio: f64) -> Judgement {
        Judgement {
            outcome,
            ratio,
            interval: None,
            rounds: 3,
            margin: 0.05,
            alpha: 0.1,
            noise: None,
            rounds_for_10pct: None,
            adjusted: None,
        }
    }

    #[test]
    fn screening_reads_the_one_statistic() {
        assert_eq!(Effect::of(&j(Outcome::Ahead, 1.2)), Effect::Helps);
        assert_eq!(Effect::of(&j(Outcome::Equivalent, 1.01)), Effect::NoMatter);
        assert_eq!(
            Effect::of(&j(Outcome::NotSeparated, f64::NAN)),
            Effect::NoData
        );
        assert!(!Effect::NoData.races());
        assert!(Effect::Helps.races());
        // Leaning ahead is not separated from noise: no race.
        assert!(!Effect::Unclear.races());
        assert!(!Effect::NoMatter.races());
        assert!(!Effect::Hurts.races());
        assert_eq!(matters(&[Effect::NoMatter, Effect::Hurts]), Matters::Yes);
        assert_eq!(matters(&[Effect::NoMatter, Effect::NoMatter]), Matters::No);
        assert_eq!(
            matters(&[Effect::NoMatter, Effect::Unclear]),
            Matters::Unclear
        );
    }

    #[test]
    fn nothing_separated_leaves_nothing_to_race() {
        use Effect::*;
        assert_eq!(
            no_candidate(&[NoMatter, NoMatter]),
            Some(NoCandidate::NothingMatters)
        );
        assert_eq!(
            no_candidate(&[NoMatter, Hurts]),
            Some(NoCandidate::NothingHelps)
        );
        // The quiet run's screening: every value leaning or not, none separated.
        assert_eq!(
            no_candidate(&[Unclear, Unclear, Unclear, NoMatter]),
            Some(NoCandidate::NotSeparated)
        );
        assert_eq!(no_candidate(&[Unclear, Helps, Hurts]), None);
        assert_eq!(no_candidate(&[]), None);
    }

    #[test]
    fn combinations_leave_out_the_baseline_conflicts_and_unsafe_values() {
        let s = crate::fs::options::space("btrfs").unwrap();
        let base = vec![0; s.factors.len()];
        let (a, _) = s.factor("atime").unwrap();
        let (c, _) = s.factor("compress").unwrap();
        let (n, _) = s.factor("datacow").unwrap();
        let mut going = vec![Vec::new(); s.factors.len()];
        going[a] = vec![1];
        going[c] = vec![1, 2];
        going[n] = vec![1];
        let gain = |f: usize, v: usize| if f == c { 0.1 * v as f64 } else { 0.05 };
        let safe = combinations(s, &base, &going, &gain, false, 100);
        // atime × compress: 2 × 3 − the baseline = 5; nodatacow ones are unsafe.
        assert_eq!(safe.len(), 5, "{safe:?}");
        assert!(safe.iter().all(|x| x[n] == 0));
        // The largest predicted gain first: noatime with zstd:3.
        assert_eq!(safe[0][a], 1);
        assert_eq!(safe[0][c], 2);
        let all = combinations(s, &base, &going, &gain, true, 100);
        // + nodatacow alone and with noatime; never with compression (a conflict).
        assert_eq!(all.len(), 7, "{all:?}");
        assert!(all.iter().all(|x| !(x[n] == 1 && x[c] != 0)));
        // The cap holds per class: 3 safe ones and both weakening ones.
        let capped = combinations(s, &base, &going, &gain, true, 3);
        assert_eq!(capped.iter().filter(|x| !s.weakens(x)).count(), 3);
        assert_eq!(capped.iter().filter(|x| s.weakens(x)).count(), 2);
        assert_eq!(combinations(s, &base, &going, &gain, true, 1).len(), 2);
    }

    #[test]
    fn a_racer_behind_its_leader_beyond_noise_drops_and_a_close_one_stays() {
        let rule = Rule::new(4, 4);
        let st = |id, k: f64, weakens| Standing {
            id,
            score: vec![k * 1.00, k * 1.02, k * 0.99, k * 1.01],
            weakens,
        };
        let standings = vec![
            st(0, 1.30, false),
            st(1, 1.29, false),
            st(2, 1.00, false),
            st(3, 1.60, true),
        ];
        let out: Vec<usize> = eliminate(&standings, &rule, 0.05)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        // 2 is far behind the safe leader 0; 1 is within noise of it; 0 races only the safe
        // class, so the unsafe leader 3 does not knock the safe answer out.
        assert_eq!(out, vec![2]);
        assert_eq!(leader(&standings, false), Some(3));
        assert_eq!(leader(&standings, true), Some(0));
        // Noisy scores separate nothing.
        let noisy = vec![
            Standing {
                id: 0,
                score: vec![1.5, 0.7, 1.4, 0.8],
                weakens: false,
            },
            Standing {
                id: 1,
                score: vec![0.8, 1.3, 0.9, 1.2],
                weakens: false,
            },
        ];
        assert!(eliminate(&noisy, &rule, 0.05).is_empty());
    }
}
