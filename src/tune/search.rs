//! The stages of `fsbench tune` over whatever runs them ([`Runs`]: real fsbench runs in
//! `commands::tune`, synthetic results in the tests): screening one factor at a time against
//! each baseline, racing the combinations of the values that helped with elimination at every
//! look, and a confirmation of each winner against its baseline in fresh rounds, from which
//! alone the gain is reported (the winner's curse: the best of noisy measurements is biased
//! upward, TUNA EuroSys'25). Every stage's setups include the baselines, so every score is a
//! paired ratio within one run.

use super::answer::{
    Answer, Confirmed, CrashCheck, FactorRow, FsAnswer, StageRecord, Tried, ValueRow,
};
use super::candidate::Candidate;
use super::decide::{self, Effect, Standing};
use super::score;
use super::screen::{Judged, Plan, not_screened};
use super::settings::Settings;
use crate::results::Results;
use crate::stats::paired::{self, Judgement};
use crate::stats::sequential::Rule;

/// What ran a stage.
pub struct StageRun {
    /// Its results.
    pub results: Results,
    /// Whether the user interrupted it (the search stops).
    pub interrupted: bool,
    /// Its output directory.
    pub out: String,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// Runs a stage: a list of `--fs` variants for some rounds.
pub trait Runs {
    /// The estimated seconds of a stage (the plan's ETA).
    fn estimate(&mut self, variants: &[String], rounds: u32) -> crate::Result<f64>;
    /// Run a stage named `stage`.
    fn run(&mut self, stage: &str, variants: &[String], rounds: u32) -> crate::Result<StageRun>;
    /// Run the crash workload ([`CRASH_WORKLOAD`]) once on each of `variants`: what a
    /// durability-weakening winner loses, beside the safe answer.
    fn crash(&mut self, variants: &[String]) -> crate::Result<StageRun>;
    /// The estimated seconds of [`Runs::crash`] on `variants` (the plan's ETA).
    fn estimate_crash(&mut self, variants: &[String]) -> crate::Result<f64>;
}

/// What the stages are expected to take before anything runs, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Estimates {
    /// Screening's first look.
    pub screen: f64,
    /// One confirmation.
    pub confirm: f64,
    /// The crash check of a durability-weakening winner and its safe answer, every filesystem
    /// (`--allow-unsafe`; else 0).
    pub crash: f64,
}

impl Estimates {
    /// What the budget must hold: screening, one confirmation and, when a weakening setup
    /// may win, its crash check.
    pub fn required(&self) -> f64 {
        self.screen + self.confirm + self.crash
    }
}

/// The crash workload a weakening winner and the safe answer run (`workload/crash/`): fsync'd
/// writes, checked in crash states after a simulated power cut.
pub const CRASH_WORKLOAD: &str = "crash-fsync";

/// Screening's setups: each baseline and its plan's runs.
fn screening_setups(baselines: &[Candidate], s: &Settings) -> Vec<String> {
    baselines
        .iter()
        .flat_map(|b| {
            let plan = Plan::of(b, s);
            std::iter::once(b.variant())
                .chain(plan.setups().into_iter().map(|c| c.variant()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Screening's, the confirmation's and the crash check's estimated seconds (the race's bound is
/// the preview's); `Err` (exit 2) when the budget cannot hold what [`Estimates::required`]
/// names (tune's plan, [`super::preview`], shows them).
pub(super) fn estimates(
    runs: &mut dyn Runs,
    baselines: &[Candidate],
    s: &Settings,
) -> crate::Result<Estimates> {
    let screen_setups = screening_setups(baselines, s);
    // Given setups are confirmed alone: no screening, no race.
    let given = !s.given.is_empty();
    let screen = if given {
        0.0
    } else {
        runs.estimate(&screen_setups, s.screen_rounds)?
    };
    let winners = if s.allow_unsafe { 2 } else { 1 };
    let confirm = if given {
        let setups: Vec<String> = baselines
            .iter()
            .map(|b| b.variant())
            .chain(s.given.iter().map(|(_, c)| c.variant()))
            .collect();
        runs.estimate(&setups, s.confirm_rounds)?
    } else {
        runs.estimate(&stand_ins(baselines, |_| winners), s.confirm_rounds)?
    };
    // A weakening winner and its safe answer per filesystem (the safe answer may be the
    // baseline): the crash workload once on each.
    let crash = if s.allow_unsafe {
        runs.estimate_crash(&stand_ins(baselines, |_| 1))?
    } else {
        0.0
    };
    let e = Estimates {
        screen,
        confirm,
        crash,
    };
    if e.required() > s.budget_s {
        let what = if s.allow_unsafe {
            "screening, one confirmation and the crash check of a durability-weakening winner"
        } else {
            "screening and one confirmation"
        };
        return Err(crate::Error::invalid(
            "--budget",
            format!(
                "{} is too small for {what} (≈ {} here); give more (--budget), fewer options \
                 (--options), or shorter steps (--runtime, --rounds)",
                crate::units::format_duration(std::time::Duration::from_secs_f64(s.budget_s)),
                crate::units::format_duration(std::time::Duration::from_secs_f64(e.required()))
            ),
        ));
    }
    Ok(e)
}

/// Stand-ins of the baselines' filesystems for setups not known yet, `per(i)` of the `i`-th
/// after it (their options change the estimate little: mkfs and the workloads dominate it).
pub(super) fn stand_ins(baselines: &[Candidate], per: impl Fn(usize) -> usize) -> Vec<String> {
    baselines
        .iter()
        .enumerate()
        .flat_map(|(i, b)| {
            std::iter::once(b.variant())
                .chain((1..=per(i)).map(move |k| format!("{}-tune{k}={}", b.base, b.space.fs)))
        })
        .collect()
}

/// A racer: a candidate and its scores over its baseline, look by look.
struct Racer {
    fs: usize,
    cand: Candidate,
    score: Vec<f64>,
    out_at: Option<(usize, Judgement)>,
}

/// Run the search; the answer (also when a stage was interrupted: `complete` false).
pub fn run(runs: &mut dyn Runs, baselines: &[Candidate], s: &Settings) -> crate::Result<Answer> {
    let e = estimates(runs, baselines, s)?;
    let mut search = Search {
        runs,
        baselines,
        s,
        start: std::time::Instant::now(),
        est_after: e.confirm + e.crash,
        answer: empty_answer(baselines, s),
        objectives: Vec::new(),
        margin: 0.0,
        racers: Vec::new(),
    };
    // Given setups (--confirm) go straight to the confirmation.
    if !s.given.is_empty() || (search.screen()? && search.race()?) {
        search.confirm()?;
    }
    search.answer.spent_s = search.start.elapsed().as_secs_f64();
    Ok(search.answer)
}

/// The answer before any stage ran.
fn empty_answer(baselines: &[Candidate], s: &Settings) -> Answer {
    Answer {
        objectives: Vec::new(),
        margin: 0.0,
        allow_unsafe: s.allow_unsafe,
        budget_s: s.budget_s,
        spent_s: 0.0,
        stages: Vec::new(),
        current: None,
        filesystems: baselines
            .iter()
            .map(|b| FsAnswer {
                fs: b.space.fs.to_string(),
                baseline: b.written(),
                screened: Vec::new(),
                factors: Vec::new(),
                // Given setups (--confirm) screen nothing.
                not_screened: if s.given.is_empty() {
                    not_screened(b, s)
                } else {
                    Vec::new()
                },
                raced: Vec::new(),
                safe: None,
                unsafe_best: None,
                verdict: None,
            })
            .collect(),
        recommended: None,
        unsafe_best: None,
        complete: false,
        notes: Vec::new(),
    }
}

/// The search's state between its stages.
struct Search<'a> {
    runs: &'a mut dyn Runs,
    baselines: &'a [Candidate],
    s: &'a Settings,
    start: std::time::Instant,
    /// The confirmation's estimate and the crash check's (`--allow-unsafe`), kept free of
    /// screening's later looks and racing.
    est_after: f64,
    answer: Answer,
    objectives: Vec<score::Objective>,
    margin: f64,
    racers: Vec<Racer>,
}

impl Search<'_> {
    /// Run one stage and record it; `None` when it was interrupted (the answer says so).
    fn stage(
        &mut self,
        name: &str,
        setups: Vec<String>,
        rounds: u32,
    ) -> crate::Result<Option<Results>> {
        let estimate_s = self.runs.estimate(&setups, rounds)?;
        let r = self.runs.run(name, &setups, rounds)?;
        self.answer.stages.push(StageRecord {
            stage: name.to_string(),
            out: r.out.clone(),
            setups: setups
                .iter()
                .map(|v| v.split('=').next().unwrap_or(v).to_string())
                .collect(),
            rounds,
            estimate_s,
            seconds: r.seconds,
        });
        if r.interrupted {
            self.answer
                .notes
                .push(format!("interrupted during {name}; the answer is partial"));
            return Ok(None);
        }
        if !r.results.failures.is_empty() {
            self.answer.notes.push(format!(
                "{name}: {} step(s) failed (see {}/results.json); their setups have no score",
                r.results.failures.len(),
                r.out
            ));
        }
        Ok(Some(r.results))
    }

    /// The judgement of setup `a`'s score over `b`'s in `r`, one look at `rounds`.
    fn judge(&self, r: &Results, a: &str, b: &str, rounds: u32) -> Judgement {
        let x = score::ratios(r, &self.objectives, a, b);
        let rule = Rule::new(rounds as usize, rounds as usize);
        paired::judge(&x, &rule, self.margin)
    }

    /// Screening (stage 1): each value alone against its baseline, then, one round a look
    /// while the budget holds, the values not separated yet (group-sequential: the rule
    /// spends α over every look it may take, so stopping early costs no error); the racers
    /// from the values that go on. False when interrupted.
    fn screen(&mut self) -> crate::Result<bool> {
        let plans: Vec<Plan> = self.baselines.iter().map(|b| Plan::of(b, self.s)).collect();
        let setups = screening_setups(self.baselines, self.s);
        let Some(results) = self.stage("screening", setups, self.s.screen_rounds)? else {
            return Ok(false);
        };
        self.objectives = score::objectives(&results);
        self.margin = score::margin(&results, &self.objectives);
        self.answer.objectives = self.objectives.clone();
        self.answer.margin = self.margin;
        let rule = Rule::new(
            self.s.screen_rounds as usize,
            self.s.screen_max_rounds() as usize,
        );
        let mut looks = vec![results];
        let judge = |this: &Self, looks: &[Results]| -> Vec<Vec<Judged>> {
            let (o, m) = (&this.objectives, this.margin);
            let b = this.baselines;
            let each = |(fi, p): (usize, &Plan)| p.judge(&b[fi], looks, o, m, &rule);
            plans.iter().enumerate().map(each).collect()
        };
        let mut judged = judge(self, &looks);
        let mut complete = true;
        for look in 1..=self.s.screen_looks {
            let open: Vec<String> = (0..plans.len())
                .flat_map(|fi| {
                    let values = plans[fi].open(&judged[fi]);
                    let base = (!values.is_empty()).then(|| self.baselines[fi].variant());
                    base.into_iter()
                        .chain(values.into_iter().map(Candidate::variant))
                })
                .collect();
            if open.is_empty() {
                break;
            }
            if !self.another_look("screening", look as usize, &open, 1)? {
                break;
            }
            let Some(r) = self.stage(&format!("screening-{}", look + 1), open, 1)? else {
                complete = false;
                break;
            };
            looks.push(r);
            judged = judge(self, &looks);
        }
        for (fi, j) in judged.into_iter().enumerate() {
            self.screen_one(fi, j);
        }
        Ok(complete)
    }

    /// Screening's verdicts for filesystem `fi` from `results`, and its racers.
    fn screen_one(&mut self, fi: usize, judged: Vec<Judged>) {
        let b = &self.baselines[fi];
        let mut going = vec![Vec::new(); b.space.factors.len()];
        let mut gain: Vec<Vec<f64>> = b
            .space
            .factors
            .iter()
            .map(|f| vec![0.0; f.values.len()])
            .collect();
        let mut rows = Vec::new();
        for Judged {
            factor: i,
            value: j,
            setup,
            judgement: jd,
        } in judged
        {
            let effect = Effect::of(&jd);
            if effect.races() {
                going[i].push(j);
            }
            if jd.ratio.is_finite() && jd.ratio > 0.0 {
                gain[i][j] = jd.ratio.ln();
            }
            let value = &b.space.factors[i].values[j];
            rows.push(ValueRow {
                factor: b.space.factors[i].name.to_string(),
                value: value.name().to_string(),
                setup,
                weakens: value.weakens,
                effect,
                judgement: jd,
            });
        }
        let fa = &mut self.answer.filesystems[fi];
        fa.screened = rows;
        for f in b.space.factors {
            let effects: Vec<Effect> = fa
                .screened
                .iter()
                .filter(|r| r.factor == f.name)
                .map(|r| r.effect)
                .collect();
            if !effects.is_empty() {
                fa.factors.push(FactorRow {
                    factor: f.name.to_string(),
                    matters: decide::matters(&effects),
                    why: f.why.to_string(),
                });
            }
        }
        let said = |e: Effect| {
            let v: Vec<String> = fa
                .screened
                .iter()
                .filter(|r| r.effect == e)
                .map(|r| format!("{} ({})", r.value, paired::percent_text(&r.judgement)))
                .collect();
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        crate::host::stdio::note(&format!(
            "fsbench tune: {} screening: helps: {}; hurts: {}; does not matter: {}; not \
             separated: {}",
            b.space.fs,
            said(Effect::Helps),
            said(Effect::Hurts),
            said(Effect::NoMatter),
            said(Effect::Unclear)
        ));
        let effects: Vec<Effect> = fa.screened.iter().map(|r| r.effect).collect();
        if let Some(why) = decide::no_candidate(&effects) {
            // Nothing to race and nothing to confirm: the effects above are the answer.
            fa.verdict = Some(why.words().to_string());
            self.answer.notes.push(format!(
                "{}: {} (±{:.1} %); nothing raced or confirmed",
                b.space.fs,
                why.words(),
                self.margin * 100.0
            ));
        }
        let g = |f: usize, v: usize| gain[f][v];
        let combos = decide::combinations(
            b.space,
            &b.baseline,
            &going,
            &g,
            self.s.allow_unsafe,
            self.s.cap,
        );
        for c in combos {
            self.racers.push(Racer {
                fs: fi,
                cand: b.with(c),
                score: Vec::new(),
                out_at: None,
            });
        }
    }

    /// Whether a race look could still drop someone: two safe racers or two weakening ones
    /// of a filesystem, or before the first look a weakening one beside a safe one (it drops
    /// when behind the safe leader).
    fn racing_needed(&self, look: usize) -> bool {
        (0..self.baselines.len()).any(|fi| {
            let alive = || {
                self.racers
                    .iter()
                    .filter(|r| r.fs == fi && r.out_at.is_none())
            };
            let safe = alive().filter(|r| !r.cand.weakens()).count();
            let weak = alive().filter(|r| r.cand.weakens()).count();
            safe > 1 || weak > 1 || (look == 0 && weak == 1 && safe >= 1)
        })
    }

    /// Racing (stage 2), look by look while one could drop someone and the budget holds. False
    /// when interrupted.
    fn race(&mut self) -> crate::Result<bool> {
        let s = self.s;
        let rule = Rule::new(s.race_rounds as usize, s.race_max_rounds() as usize);
        let mut look = 0usize;
        while self.racing_needed(look) && look < s.race_looks as usize {
            let alive: Vec<usize> = (0..self.racers.len())
                .filter(|&k| self.racers[k].out_at.is_none())
                .collect();
            let setups: Vec<String> = self
                .baselines
                .iter()
                .map(|b| b.variant())
                .chain(alive.iter().map(|&k| self.racers[k].cand.variant()))
                .collect();
            let rounds = s.look_rounds(look + 1);
            if !self.another_look("racing", look, &setups, rounds)? {
                break;
            }
            look += 1;
            let Some(r) = self.stage(&format!("race-{look}"), setups, rounds)? else {
                self.record_racers();
                return Ok(false);
            };
            for &k in &alive {
                let b = &self.baselines[self.racers[k].fs];
                let x = score::ratios(&r, &self.objectives, &self.racers[k].cand.name(), &b.name());
                self.racers[k].score.extend(x);
            }
            for fi in 0..self.baselines.len() {
                self.eliminate(fi, &alive, look, &rule);
            }
        }
        self.record_racers();
        Ok(true)
    }

    /// Whether a look of `setups` for `rounds` leaves the budget room for the confirmation
    /// and, with `--allow-unsafe`, the crash check (the estimates scaled by how the stages so far kept to theirs: a busy machine runs
    /// behind the plan's ETA); when not, the answer says `stage` stopped after `looks`.
    fn another_look(
        &mut self,
        stage: &str,
        looks: usize,
        setups: &[String],
        rounds: u32,
    ) -> crate::Result<bool> {
        let est = self.runs.estimate(setups, rounds)?;
        let left = (est + self.est_after) * self.pace();
        let room = self.start.elapsed().as_secs_f64() + left <= self.s.budget_s;
        if !room {
            let after = if self.s.allow_unsafe {
                "the confirmation and the crash check"
            } else {
                "the confirmation"
            };
            self.answer.notes.push(format!(
                "{stage} stopped after {looks} look(s): another would not leave the budget room \
                 for {after}"
            ));
        }
        Ok(room)
    }

    /// Wall time over estimate of the stages so far (at least 1).
    fn pace(&self) -> f64 {
        let (took, est) = self
            .answer
            .stages
            .iter()
            .fold((0.0, 0.0), |(t, e), s| (t + s.seconds, e + s.estimate_s));
        if est > 0.0 {
            (took / est).max(1.0)
        } else {
            1.0
        }
    }

    /// Drop filesystem `fi`'s racers behind their class's leader at race look `look`, and
    /// say who leads.
    fn eliminate(&mut self, fi: usize, alive: &[usize], look: usize, rule: &Rule) {
        let standings: Vec<Standing> = alive
            .iter()
            .filter(|&&k| self.racers[k].fs == fi)
            .map(|&k| Standing {
                id: k,
                score: self.racers[k].score.clone(),
                weakens: self.racers[k].cand.weakens(),
            })
            .collect();
        let out = decide::eliminate(&standings, rule, self.margin);
        for (k, j) in &out {
            self.racers[*k].out_at = Some((look, *j));
        }
        if let Some(l) = decide::leader(&standings, false) {
            let dropped: Vec<String> = out
                .iter()
                .map(|(k, _)| self.racers[*k].cand.name())
                .collect();
            crate::host::stdio::note(&format!(
                "fsbench tune: {} after race look {look}: leader {} ({:+.1} % over {}); dropped: {}",
                self.baselines[fi].space.fs,
                self.racers[l].cand.name(),
                (decide::mean(&self.racers[l].score) - 1.0) * 100.0,
                self.baselines[fi].name(),
                if dropped.is_empty() {
                    "none".to_string()
                } else {
                    dropped.join(", ")
                }
            ));
        }
    }

    /// Every racer's fate into the answer.
    fn record_racers(&mut self) {
        for (fi, fa) in self.answer.filesystems.iter_mut().enumerate() {
            fa.raced = self
                .racers
                .iter()
                .filter(|r| r.fs == fi)
                .map(|r| Tried {
                    setup: r.cand.written(),
                    fate: if r.out_at.is_some() {
                        "eliminated"
                    } else {
                        "survived"
                    }
                    .into(),
                    eliminated_at: r.out_at.as_ref().map(|(l, _)| *l),
                    against_leader: r.out_at.as_ref().map(|(_, j)| *j),
                    score: decide::mean(&r.score),
                })
                .collect();
        }
    }

    /// Each filesystem's safe leader and overall leader among the racers left.
    fn winners(&self) -> Vec<(usize, Candidate)> {
        let mut winners: Vec<(usize, Candidate)> = Vec::new();
        for fi in 0..self.baselines.len() {
            let standings: Vec<Standing> = self
                .racers
                .iter()
                .enumerate()
                .filter(|(_, r)| r.fs == fi && r.out_at.is_none())
                .map(|(k, r)| Standing {
                    id: k,
                    // Without a race there is one racer per class; the gain reported comes
                    // from the confirmation either way.
                    score: if r.score.is_empty() {
                        vec![1.0]
                    } else {
                        r.score.clone()
                    },
                    weakens: r.cand.weakens(),
                })
                .collect();
            let safe = decide::leader(&standings, true);
            let all = decide::leader(&standings, false);
            for k in [safe, all].into_iter().flatten() {
                if !winners.iter().any(|(_, c)| *c == self.racers[k].cand) {
                    winners.push((fi, self.racers[k].cand.clone()));
                }
            }
        }
        winners
    }

    /// Confirmation (stage 3): the winners against their baselines in fresh rounds, the gain from
    /// these rounds alone.
    fn confirm(&mut self) -> crate::Result<()> {
        let winners = if self.s.given.is_empty() {
            self.winners()
        } else {
            self.s.given.clone()
        };
        if winners.is_empty() {
            // Screening's verdicts already say why, filesystem by filesystem.
            if self.answer.filesystems.iter().any(|f| f.verdict.is_none()) {
                self.answer
                    .notes
                    .push("no candidate other than the baseline: nothing to confirm".into());
            }
            self.answer.complete = true;
            return Ok(());
        }
        let setups: Vec<String> = self
            .baselines
            .iter()
            .map(|b| b.variant())
            .chain(winners.iter().map(|(_, c)| c.variant()))
            .collect();
        let Some(r) = self.stage("confirmation", setups, self.s.confirm_rounds)? else {
            return Ok(());
        };
        if self.objectives.is_empty() {
            // No screening ran (--confirm): the objectives and margin come from these rounds.
            self.objectives = score::objectives(&r);
            self.margin = score::margin(&r, &self.objectives);
            self.answer.objectives = self.objectives.clone();
            self.answer.margin = self.margin;
        }
        for (fi, c) in &winners {
            self.confirmed(&r, *fi, c);
        }
        self.crash_check()?;
        if self.baselines.len() > 1 {
            self.answer.notes.push(
                "each gain is over its own filesystem's baseline; compare filesystems with \
                 `fsbench compare` on the confirmation's results.json"
                    .into(),
            );
        }
        self.answer.complete = true;
        Ok(())
    }

    /// Each confirmed weakening winner and its filesystem's safe answer (the safe winner when
    /// it led beyond noise, else the baseline) through the crash workload once: what the
    /// faster setup loses, in crash states, beside what the safe one loses.
    fn crash_check(&mut self) -> crate::Result<()> {
        let mut pairs: Vec<(usize, String, String)> = Vec::new();
        let mut variants: Vec<String> = Vec::new();
        for (fi, fa) in self.answer.filesystems.iter().enumerate() {
            let Some(u) = &fa.unsafe_best else { continue };
            let safe = fa
                .safe
                .as_ref()
                .filter(|s| s.gain.outcome == paired::Outcome::Ahead)
                .map(|s| s.setup.clone())
                .unwrap_or_else(|| fa.baseline.clone());
            for v in [&u.setup.variant, &safe.variant] {
                if !variants.contains(v) {
                    variants.push(v.clone());
                }
            }
            pairs.push((fi, u.setup.name.clone(), safe.name.clone()));
        }
        if pairs.is_empty() {
            return Ok(());
        }
        let r = self.runs.crash(&variants)?;
        self.answer.stages.push(StageRecord {
            stage: "crash".into(),
            out: r.out.clone(),
            setups: variants
                .iter()
                .map(|v| v.split('=').next().unwrap_or(v).to_string())
                .collect(),
            rounds: 1,
            // Not in the budget's estimate: it runs only when a weakening winner was confirmed.
            estimate_s: 0.0,
            seconds: r.seconds,
        });
        if r.interrupted {
            self.answer.notes.push(
                "interrupted during the crash check; what the weakening setup loses is not known"
                    .into(),
            );
            return Ok(());
        }
        for (fi, weak, safe) in pairs {
            let lost = |setup: &str| crash_count(&r.results, setup);
            let check = match (lost(&weak), lost(&safe)) {
                (Some((l, n)), Some((sl, sn))) => CrashCheck {
                    workload: CRASH_WORKLOAD.into(),
                    lost_states: l,
                    states: n,
                    safe: safe.clone(),
                    safe_lost_states: sl,
                    safe_states: sn,
                    out: r.out.clone(),
                },
                _ => {
                    self.answer.notes.push(format!(
                        "the crash check of {weak} and {safe} has no data (see {}/results.json)",
                        r.out
                    ));
                    continue;
                }
            };
            if let Some(u) = self.answer.filesystems[fi].unsafe_best.as_mut() {
                u.crash = Some(check.clone());
            }
            if let Some(u) = self
                .answer
                .unsafe_best
                .as_mut()
                .filter(|u| u.setup.name == weak)
            {
                u.crash = Some(check);
            }
        }
        Ok(())
    }

    /// Winner `c` of filesystem `fi` judged in the confirmation's results `r`: kept in its
    /// filesystem's answer and, when it leads beyond noise (or weakens: reported apart), as
    /// the recommendation.
    fn confirmed(&mut self, r: &Results, fi: usize, c: &Candidate) {
        let b = &self.baselines[fi];
        let gain = self.judge(r, &c.name(), &b.name(), self.s.confirm_rounds);
        let conf = Confirmed {
            setup: c.written(),
            baseline: b.name(),
            gain,
            crash: None,
        };
        let fa = &mut self.answer.filesystems[fi];
        let slot = if c.weakens() {
            &mut fa.unsafe_best
        } else {
            &mut fa.safe
        };
        *slot = Some(conf.clone());
        let better = |o: &Option<Confirmed>| o.as_ref().is_none_or(|x| gain.ratio > x.gain.ratio);
        let ahead = gain.outcome == paired::Outcome::Ahead;
        if c.weakens() {
            if better(&self.answer.unsafe_best) {
                self.answer.unsafe_best = Some(conf);
            }
        } else if ahead {
            if better(&self.answer.recommended) {
                self.answer.recommended = Some(conf);
            }
        } else {
            let what = if self.s.given.is_empty() {
                "'s lead did not hold in the fresh rounds"
            } else {
                " was not ahead in the confirmation's rounds"
            };
            self.answer.notes.push(format!(
                "{}{what} ({} {} over {}): not recommended",
                c.name(),
                gain.outcome.words(),
                paired::percent_text(&gain),
                b.name()
            ));
        }
    }
}

/// `setup`'s crash states that lost acknowledged data, and the states tested, summed over the
/// crash run's samples; `None` when it recorded neither.
fn crash_count(r: &Results, setup: &str) -> Option<(u64, u64)> {
    use crate::metrics::registry::{CRASH_STATES, LOST_STATES};
    let sum = |m: &str| -> Option<u64> {
        let v: Vec<f64> = r
            .samples
            .iter()
            .filter(|s| s.setup == setup && s.metric.as_str() == m)
            .map(|s| s.value)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>().round() as u64)
    };
    Some((sum(LOST_STATES.as_str())?, sum(CRASH_STATES.as_str())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry;
    use crate::results::Sample;
    use crate::tune::settings::Screen;

    /// Stages on a model instead of a disk: a setup's IOPS is 1000 × the effect of each of
    /// its mount and mkfs words, times a small deterministic noise per stage, setup and round.
    struct Model {
        effects: &'static [(&'static str, f64)],
        stages: Vec<(String, Vec<String>)>,
        /// The noise's amplitude (0.01: ±1 %).
        noise: f64,
    }

    impl Runs for Model {
        fn estimate(&mut self, variants: &[String], rounds: u32) -> crate::Result<f64> {
            Ok(variants.len() as f64 * f64::from(rounds))
        }

        fn estimate_crash(&mut self, variants: &[String]) -> crate::Result<f64> {
            Ok(variants.len() as f64)
        }

        /// 10 crash states per setup; a setup with data=writeback loses 3 of them.
        fn crash(&mut self, variants: &[String]) -> crate::Result<StageRun> {
            let mut results = Results::default();
            for v in variants {
                let setup = crate::plan::setup_syntax::parse_setup(v)?;
                let lost = if setup.mount.iter().any(|m| m == "data=writeback") {
                    3.0
                } else {
                    0.0
                };
                for (m, value) in [
                    (registry::LOST_STATES, lost),
                    (registry::CRASH_STATES, 10.0),
                ] {
                    results.samples.push(Sample {
                        setup: setup.name.clone(),
                        workload: CRASH_WORKLOAD.into(),
                        metric: m.into(),
                        unit: "count".into(),
                        round: 1,
                        value,
                    });
                }
            }
            self.stages.push(("crash".to_string(), variants.to_vec()));
            Ok(StageRun {
                results,
                interrupted: false,
                out: "OUT/crash".into(),
                seconds: 1.0,
            })
        }

        fn run(
            &mut self,
            stage: &str,
            variants: &[String],
            rounds: u32,
        ) -> crate::Result<StageRun> {
            let mut results = Results::default();
            for (i, v) in variants.iter().enumerate() {
                let setup = crate::plan::setup_syntax::parse_setup(v)?;
                let words: Vec<String> = setup
                    .mount
                    .iter()
                    .cloned()
                    .chain(std::iter::once(setup.mkfs.join(" ")))
                    .collect();
                let effect: f64 = self
                    .effects
                    .iter()
                    .filter(|(w, _)| words.iter().any(|x| x == w))
                    .map(|(_, e)| e)
                    .product();
                for round in 1..=rounds {
                    let k = (self.stages.len() * 31 + i * 7 + round as usize) as f64;
                    let noise = 1.0 + self.noise * (k * 1.7).sin();
                    results.samples.push(Sample {
                        setup: setup.name.clone(),
                        workload: "randwrite".into(),
                        metric: registry::IOPS.into(),
                        unit: "IOPS".into(),
                        round,
                        value: 1000.0 * effect * noise,
                    });
                }
            }
            self.stages.push((stage.to_string(), variants.to_vec()));
            Ok(StageRun {
                results,
                interrupted: false,
                out: format!("OUT/{stage}"),
                seconds: 1.0,
            })
        }
    }

    fn settings(options: &[&str]) -> Settings {
        crate::tune::settings::of_tests(options)
    }

    fn ext4() -> Vec<Candidate> {
        let s = crate::plan::setup_syntax::parse_setup("ext4").unwrap();
        vec![super::super::candidate::baseline_of(&s).unwrap()]
    }

    /// The search of ext4's `options` on a model of `effects` with noise `noise`.
    fn search(
        effects: &'static [(&'static str, f64)],
        noise: f64,
        options: &[&str],
    ) -> (Model, Answer) {
        let mut m = Model {
            effects,
            stages: Vec::new(),
            noise,
        };
        let a = run(&mut m, &ext4(), &settings(options)).unwrap();
        (m, a)
    }

    #[test]
    fn screening_looks_again_at_what_it_did_not_separate() {
        // Noise that three rounds cannot see through: with one look, discard stays open; with
        // up to three more looks of one round each, only the baseline and the open values run
        // again, and the verdict settles.
        let effects: &[(&str, f64)] = &[("noatime", 1.0), ("discard", 0.8)];
        let options = ["atime", "discard"];
        let once = |looks: u32| {
            let mut m = Model {
                effects,
                stages: Vec::new(),
                noise: 0.16,
            };
            let s = Settings {
                screen_looks: looks,
                ..settings(&options)
            };
            let a = run(&mut m, &ext4(), &s).unwrap();
            let f = &a.filesystems[0];
            let discard = f.screened.iter().find(|r| r.value == "discard").unwrap();
            (m.stages, discard.effect)
        };
        let (stages, discard) = once(0);
        assert_eq!(stages.len(), 1, "{stages:?}");
        assert_eq!(discard, Effect::Unclear, "{stages:?}");
        let (stages, discard) = once(3);
        let later: Vec<&(String, Vec<String>)> = stages
            .iter()
            .filter(|(n, _)| n.starts_with("screening-"))
            .collect();
        assert!(!later.is_empty(), "{stages:?}");
        for (_, setups) in &later {
            // The baseline and the values still open, all of them screening's.
            assert_eq!(setups[0], "ext4", "the baseline in every look: {setups:?}");
            assert!(setups.iter().all(|v| stages[0].1.contains(v)), "{setups:?}");
        }
        assert_eq!(discard, Effect::Hurts, "{stages:?}");
    }

    #[test]
    fn screening_sorts_the_options_and_one_helper_is_confirmed_without_a_race() {
        let mut m = Model {
            effects: &[("noatime", 1.25), ("lazytime", 1.0), ("discard", 0.7)],
            stages: Vec::new(),
            noise: 0.01,
        };
        let a = run(
            &mut m,
            &ext4(),
            &settings(&["atime", "lazytime", "discard"]),
        )
        .unwrap();
        let names: Vec<&str> = m.stages.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, ["screening", "confirmation"]);
        let f = &a.filesystems[0];
        let effect = |v: &str| f.screened.iter().find(|r| r.value == v).unwrap().effect;
        assert_eq!(effect("noatime"), Effect::Helps);
        assert_eq!(effect("lazytime"), Effect::NoMatter);
        assert_eq!(effect("discard"), Effect::Hurts);
        let rec = a.recommended.as_ref().expect("noatime recommended");
        assert_eq!(rec.setup.variant, "ext4-noatime=ext4:mount=noatime");
        assert_eq!(
            rec.setup.fstab.as_deref().unwrap(),
            "/dev/DEVICE  /srv/data  ext4  noatime  0  2"
        );
        // The gain is the confirmation's: its rounds, its baseline in the same stage.
        assert_eq!(rec.gain.rounds, 3);
        assert!((rec.gain.ratio - 1.25).abs() < 0.03, "{}", rec.gain.ratio);
        assert_eq!(m.stages[1].1, ["ext4", "ext4-noatime=ext4:mount=noatime"]);
        assert!(a.complete);
        assert!(a.render().contains("Recommended: ext4-noatime"));
    }

    #[test]
    fn two_helpers_race_their_combination_and_the_weaker_single_drops() {
        let mut m = Model {
            effects: &[("noatime", 1.2), ("-I 512", 1.1)],
            stages: Vec::new(),
            noise: 0.01,
        };
        let a = run(&mut m, &ext4(), &settings(&["atime", "inode_size"])).unwrap();
        let names: Vec<&str> = m.stages.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names[0], "screening");
        assert_eq!(names[1], "race-1");
        assert_eq!(*names.last().unwrap(), "confirmation");
        let f = &a.filesystems[0];
        assert_eq!(f.raced.len(), 3, "{:?}", f.raced);
        let fate = |n: &str| f.raced.iter().find(|t| t.setup.name == n).unwrap();
        assert_eq!(fate("ext4-I-512").fate, "eliminated");
        // At a later look under the α-spending boundary (a first look demands far more
        // than one fixed look), but before the race ends.
        assert!(fate("ext4-I-512").eliminated_at.is_some());
        assert_eq!(fate("ext4-noatime-I-512").fate, "survived");
        let rec = a.recommended.as_ref().unwrap();
        assert_eq!(rec.setup.name, "ext4-noatime-I-512");
        assert!((rec.gain.ratio - 1.32).abs() < 0.03, "{}", rec.gain.ratio);
    }

    #[test]
    fn nothing_helps_keeps_the_defaults_and_unsafe_values_need_the_flag() {
        let mut m = Model {
            effects: &[("data=writeback", 1.5), ("noatime", 1.0)],
            stages: Vec::new(),
            noise: 0.01,
        };
        let a = run(&mut m, &ext4(), &settings(&["atime", "data"])).unwrap();
        assert!(a.recommended.is_none() && a.unsafe_best.is_none());
        assert!(!m.stages[0].1.iter().any(|v| v.contains("writeback")));
        assert!(a.render().contains("Recommended: keep ext4 as it is"));
        let mut m = Model {
            effects: &[("data=writeback", 1.5), ("noatime", 1.0)],
            stages: Vec::new(),
            noise: 0.01,
        };
        let s = Settings {
            allow_unsafe: true,
            ..settings(&["atime", "data"])
        };
        let a = run(&mut m, &ext4(), &s).unwrap();
        // The weakening winner is reported apart; it is never the recommendation.
        assert!(a.recommended.is_none());
        let u = a.unsafe_best.as_ref().unwrap();
        assert_eq!(u.setup.name, "ext4-data-writeback");
        assert!(u.setup.weakens);
        let text = a.render();
        assert!(
            text.contains("Less durable, never the recommendation: ext4-data-writeback"),
            "{text}"
        );
        // The crash workload ran on it and on the safe answer (the baseline: nothing safe
        // helped), and the answer says what it lost.
        assert_eq!(m.stages.last().unwrap().0, "crash");
        assert_eq!(
            m.stages.last().unwrap().1,
            ["ext4-data-writeback=ext4:mount=data=writeback", "ext4"]
        );
        let k = u.crash.as_ref().unwrap();
        assert_eq!(
            (k.lost_states, k.states, k.safe.as_str(), k.safe_lost_states),
            (3, 10, "ext4", 0)
        );
        assert!(
            text.contains("data=writeback would be +4")
                && text.contains(
                    "loses acknowledged writes in 3 of 10 crash states (ext4: 0 of 10; crash-fsync)"
                ),
            "{text}"
        );
        assert_eq!(a.stages.last().unwrap().stage, "crash");
    }

    #[test]
    fn fractional_screening_takes_the_two_level_factors_and_leaves_the_rest_alone() {
        let b = &ext4()[0];
        let s = Settings {
            allow_unsafe: true,
            screen: Screen::Fractional,
            ..settings(&[])
        };
        let p = Plan::of(b, &s);
        let f = p.fractional.as_ref().expect("a design");
        let names: Vec<&str> = f
            .columns
            .iter()
            .map(|&(i, _)| b.space.factors[i].name)
            .collect();
        // data has two values to screen (writeback, journal): alone; journal_async_commit
        // conflicts with the baseline's data=ordered: not screened at all.
        assert_eq!(
            names,
            [
                "atime",
                "commit",
                "barrier",
                "lazytime",
                "discard",
                "inode_size"
            ]
        );
        assert_eq!(f.design.runs(), 8);
        let alone: Vec<String> = p.alone.iter().map(|(_, _, c)| c.name()).collect();
        assert_eq!(alone, ["ext4-data-writeback", "ext4-data-journal"]);
        // 7 design runs and 2 alone, against one at a time's 8.
        assert_eq!(p.setups().len(), 9);
        assert_eq!(
            Plan::of(b, &settings(&["atime", "lazytime"]))
                .setups()
                .len(),
            2
        );
        let two = Settings {
            screen: Screen::Fractional,
            ..settings(&["atime", "lazytime"])
        };
        assert!(Plan::of(b, &two).fractional.is_none(), "two factors: alone");
    }

    #[test]
    fn fractional_screening_estimates_each_effect_from_every_run() {
        let mut m = Model {
            effects: &[
                ("noatime", 1.25),
                ("lazytime", 1.0),
                ("discard", 0.7),
                ("-I 512", 1.0),
            ],
            stages: Vec::new(),
            noise: 0.01,
        };
        let s = Settings {
            screen: Screen::Fractional,
            ..settings(&["atime", "lazytime", "discard", "inode_size"])
        };
        let a = run(&mut m, &ext4(), &s).unwrap();
        // The baseline and 7 runs, each changing 4 factors' worth of half of them.
        assert_eq!(m.stages[0].1.len(), 8, "{:?}", m.stages[0].1);
        let f = &a.filesystems[0];
        let row = |v: &str| f.screened.iter().find(|r| r.value == v).unwrap();
        assert_eq!(row("noatime").effect, Effect::Helps);
        assert_eq!(row("lazytime").effect, Effect::NoMatter);
        assert_eq!(row("-I 512").effect, Effect::NoMatter);
        assert_eq!(row("discard").effect, Effect::Hurts);
        assert_eq!(row("noatime").setup, "fractional design, 8 runs");
        assert!((row("noatime").judgement.ratio - 1.25).abs() < 0.01);
        assert!((row("discard").judgement.ratio - 0.7).abs() < 0.01);
        assert_eq!(
            a.recommended.as_ref().unwrap().setup.variant,
            "ext4-noatime=ext4:mount=noatime"
        );
    }

    #[test]
    fn options_leaning_ahead_within_the_noise_are_neither_raced_nor_confirmed() {
        // The quiet run's screening (docs/tune.md): small effects, none separated from the
        // noise; racing their 2^k combinations would select the luckiest noise.
        let (m, a) = search(
            &[("noatime", 1.03), ("lazytime", 1.02), ("discard", 1.06)],
            0.15,
            &["atime", "lazytime", "discard", "inode_size"],
        );
        let names: Vec<&str> = m.stages.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, ["screening"]);
        let f = &a.filesystems[0];
        assert!(
            f.screened.iter().all(|r| r.effect != Effect::Helps),
            "{:?}",
            f.screened
        );
        assert!(f.raced.is_empty());
        assert!(a.recommended.is_none() && a.complete);
        let why = f.verdict.as_deref().expect("a verdict");
        assert!(why.starts_with("no option"), "{why}");
        assert!(
            a.render()
                .contains(&format!("Recommended: keep ext4 as it is: {why}.")),
            "{}",
            a.render()
        );
    }

    #[test]
    fn only_the_separated_options_race_one_round_a_look_after_the_first() {
        let (_, a) = search(
            &[
                ("noatime", 1.25),
                ("-I 512", 1.15),
                ("lazytime", 1.0),
                ("discard", 1.0),
            ],
            0.01,
            &["atime", "lazytime", "discard", "inode_size"],
        );
        let f = &a.filesystems[0];
        // 2 options that matter: their 3 combinations, not the 15 of 4 options.
        let raced: Vec<&str> = f.raced.iter().map(|t| t.setup.name.as_str()).collect();
        assert_eq!(raced.len(), 3, "{raced:?}");
        assert!(
            raced
                .iter()
                .all(|n| !n.contains("lazytime") && !n.contains("discard"))
        );
        // The first look has the race's rounds, each later one a single round.
        let rounds: Vec<u32> = a
            .stages
            .iter()
            .filter(|s| s.stage.starts_with("race-"))
            .map(|s| s.rounds)
            .collect();
        assert!(!rounds.is_empty() && rounds[0] == 2, "{rounds:?}");
        assert!(rounds[1..].iter().all(|&r| r == 1), "{rounds:?}");
        let rec = a.recommended.as_ref().unwrap();
        assert_eq!(rec.setup.name, "ext4-noatime-I-512");
    }

    #[test]
    fn auto_screening_takes_a_design_only_where_it_costs_no_more_setups() {
        use crate::tune::design::design;
        use crate::tune::screen::auto_pays;
        // 4 options: 8 runs, 7 new setups against 4: one at a time.
        assert!(!auto_pays(4, &design(4).unwrap()));
        assert!(!auto_pays(6, &design(6).unwrap()));
        // 7 in 8 runs, 11 in 12: the same setups, every effect from every run.
        assert!(auto_pays(7, &design(7).unwrap()));
        assert!(auto_pays(11, &design(11).unwrap()));
        // 3 in 4 runs: each effect wholly aliased with the others' interaction.
        assert!(!auto_pays(3, &design(3).unwrap()));
        let s = Settings {
            screen: Screen::Auto,
            ..settings(&["atime", "lazytime", "discard", "inode_size"])
        };
        assert!(Plan::of(&ext4()[0], &s).fractional.is_none());
    }

    #[test]
    fn a_budget_short_of_screening_and_a_confirmation_is_refused() {
        let mut m = Model {
            effects: &[],
            stages: Vec::new(),
            noise: 0.01,
        };
        let s = Settings {
            budget_s: 5.0,
            ..settings(&[])
        };
        let e = run(&mut m, &ext4(), &s).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(m.stages.is_empty());
    }
}
