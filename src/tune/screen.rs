//! What screening runs for one baseline and what it finds of each value: one factor at a time
//! (each value alone in place of the baseline's, judged against the baseline), or with
//! `--screen fractional` the two-level factors together in a fractional design
//! ([`super::design`]: each main effect from every run, judged round by round with the same
//! paired statistic) and the other values one at a time.

use super::candidate::Candidate;
use super::decide::Effect;
use super::design::{self, Design};
use super::score::{self, Objective};
use super::settings::{Screen, Settings};
use crate::results::Results;
use crate::stats::paired::{self, Judgement};
use crate::stats::sequential::Rule;
use std::collections::BTreeMap;

/// The fewest two-level options `--screen auto` puts in a design: with 3 (4 runs) each main
/// effect is wholly aliased with the other two's interaction, and racing measures the 8
/// combinations of 3 options directly when they matter.
pub const AUTO_MIN_FACTORS: usize = 4;

/// Whether `--screen auto` takes `design` for `k` options: from [`AUTO_MIN_FACTORS`], and
/// only when its N − 1 new setups are no more than one at a time's k (k = 7, 11, 15…), so
/// screening costs no more per round while each effect is estimated from all N runs.
pub fn auto_pays(k: usize, design: &Design) -> bool {
    k >= AUTO_MIN_FACTORS && design.runs() - 1 <= k
}

/// Screening's runs for one baseline.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Values screened alone: (factor, value, setup).
    pub alone: Vec<(usize, usize, Candidate)>,
    /// The two-level factors screened together, when there are enough of them.
    pub fractional: Option<Fractional>,
}

/// Two-level factors in a fractional design.
#[derive(Debug, Clone)]
pub struct Fractional {
    /// Each column's (factor, changed value).
    pub columns: Vec<(usize, usize)>,
    /// The design.
    pub design: Design,
    /// Each row as a setup; row 0 is the baseline.
    pub runs: Vec<Candidate>,
}

/// One value's screening judgement.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Factor index.
    pub factor: usize,
    /// Value index.
    pub value: usize,
    /// The setup that carried it alone, or the design it was estimated from.
    pub setup: String,
    /// Its effect over the baseline's value, judged by the paired statistic.
    pub judgement: Judgement,
}

impl Plan {
    /// The runs for `base` under `s`: one at a time, or (fractional) the factors with exactly
    /// one value to screen that combine validly with each other (pairwise, and in every run)
    /// in a design when at least [`design::MIN_FACTORS`] of them do; the rest alone.
    pub fn of(base: &Candidate, s: &Settings) -> Plan {
        let all = screening(base, s);
        let one_at_a_time = |all| Plan {
            alone: all,
            fractional: None,
        };
        if s.screen == Screen::OneAtATime {
            return one_at_a_time(all);
        }
        let mut count = vec![0usize; base.space.factors.len()];
        for (i, _, _) in &all {
            count[*i] += 1;
        }
        let mut columns: Vec<(usize, usize)> = Vec::new();
        for &(i, j, _) in &all {
            let fits = columns.iter().all(|&(f, v)| {
                let mut c = base.baseline.clone();
                c[i] = j;
                c[f] = v;
                base.space.conflict(&c).is_none()
            });
            if count[i] == 1 && fits {
                columns.push((i, j));
            }
        }
        let Some(design) = design::design(columns.len()) else {
            return one_at_a_time(all);
        };
        if s.screen == Screen::Auto && !auto_pays(columns.len(), &design) {
            return one_at_a_time(all);
        }
        let runs: Vec<Candidate> = design
            .rows
            .iter()
            .map(|row| {
                let mut c = base.baseline.clone();
                for (&(f, v), on) in columns.iter().zip(row) {
                    if *on {
                        c[f] = v;
                    }
                }
                base.with(c)
            })
            .collect();
        // A conflict among three or more values (none in today's spaces): one at a time.
        if runs
            .iter()
            .any(|c| base.space.conflict(&c.choice).is_some())
        {
            return one_at_a_time(all);
        }
        let alone = all
            .into_iter()
            .filter(|(i, j, _)| !columns.contains(&(*i, *j)))
            .collect();
        Plan {
            alone,
            fractional: Some(Fractional {
                columns,
                design,
                runs,
            }),
        }
    }

    /// The setups screening runs for this baseline besides the baseline itself.
    pub fn setups(&self) -> Vec<&Candidate> {
        self.alone
            .iter()
            .map(|(_, _, c)| c)
            .chain(self.fractional.iter().flat_map(|f| f.runs.iter().skip(1)))
            .collect()
    }

    /// Each screened value's judgement under `rule` from screening's looks `looks` (the
    /// first holds every run; a later one the baseline and the values alone still open, whose
    /// rounds add to the first's).
    pub fn judge(
        &self,
        base: &Candidate,
        looks: &[Results],
        objectives: &[Objective],
        margin: f64,
        rule: &Rule,
    ) -> Vec<Judged> {
        let mut out: Vec<Judged> = self
            .alone
            .iter()
            .map(|(i, j, c)| {
                let x: Vec<f64> = looks
                    .iter()
                    .flat_map(|r| score::ratios(r, objectives, &c.name(), &base.name()))
                    .collect();
                Judged {
                    factor: *i,
                    value: *j,
                    setup: c.name(),
                    judgement: paired::judge(&x, rule, margin),
                }
            })
            .collect();
        if let (Some(f), Some(first)) = (&self.fractional, looks.first()) {
            let label = format!("fractional design, {} runs", f.design.runs());
            for (&(i, j), x) in f.columns.iter().zip(f.effects(base, first, objectives)) {
                out.push(Judged {
                    factor: i,
                    value: j,
                    setup: label.clone(),
                    judgement: paired::judge(&x, rule, margin),
                });
            }
        }
        out
    }

    /// The values alone that `judged` left not separated, as setups.
    pub fn open<'a>(&'a self, judged: &[Judged]) -> Vec<&'a Candidate> {
        self.alone
            .iter()
            .filter(|(i, j, _)| {
                judged.iter().any(|x| {
                    (x.factor, x.value) == (*i, *j) && Effect::of(&x.judgement) == Effect::Unclear
                })
            })
            .map(|(_, _, c)| c)
            .collect()
    }
}

impl Fractional {
    /// Per column, its main effect in each round where every run has a score, as a ratio
    /// (the exponential of the log contrast): what `stats::paired` judges like a setup's
    /// per-round ratio over the baseline.
    fn effects(&self, base: &Candidate, r: &Results, objectives: &[Objective]) -> Vec<Vec<f64>> {
        let per_run: Vec<BTreeMap<u32, f64>> = self
            .runs
            .iter()
            .skip(1)
            .map(|c| score::by_round(r, objectives, &c.name(), &base.name()))
            .collect();
        let rounds: Vec<u32> = per_run
            .first()
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        let mut cols = vec![Vec::new(); self.columns.len()];
        for round in rounds {
            let Some(scores) = per_run
                .iter()
                .map(|m| m.get(&round).copied())
                .collect::<Option<Vec<f64>>>()
            else {
                continue;
            };
            let logs: Vec<f64> = std::iter::once(0.0)
                .chain(scores.iter().map(|x| x.ln()))
                .collect();
            for (col, e) in cols.iter_mut().zip(self.design.main_effects(&logs)) {
                col.push(e.exp());
            }
        }
        cols
    }
}
/// Screening's setups of one baseline: each value the filter allows (and, without
/// `allow_unsafe`, that keeps durability) put in place of the baseline's, one at a time,
/// unless the baseline's other values make it an invalid combination.
fn screening(base: &Candidate, s: &Settings) -> Vec<(usize, usize, Candidate)> {
    let mut out = Vec::new();
    for (i, f) in base.space.factors.iter().enumerate() {
        for (j, v) in f.values.iter().enumerate() {
            if j == base.baseline[i]
                || (v.weakens && !s.allow_unsafe)
                || !(s.allowed)(&s.filter, base.space.fs, f.name, v.name())
            {
                continue;
            }
            let mut c = base.baseline.clone();
            c[i] = j;
            if base.space.conflict(&c).is_none() {
                out.push((i, j, base.with(c)));
            }
        }
    }
    out
}

/// The values screening leaves out because the baseline's other values make them an invalid
/// combination, each with the reason.
pub fn not_screened(base: &Candidate, s: &Settings) -> Vec<String> {
    let mut out = Vec::new();
    for (i, f) in base.space.factors.iter().enumerate() {
        for (j, v) in f.values.iter().enumerate() {
            if j == base.baseline[i] || !(s.allowed)(&s.filter, base.space.fs, f.name, v.name()) {
                continue;
            }
            let mut c = base.baseline.clone();
            c[i] = j;
            if let Some(k) = base.space.conflict(&c) {
                out.push(format!("{}: {}", v.name(), k.why));
            }
        }
    }
    out
}
