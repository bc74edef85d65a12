//! What `fsbench tune` found, as data (tune.json) and as the text shown first on screen: the
//! recommended setup and its confirmed gain, the options that matter and those that do not,
//! what was tried and eliminated, and the time spent against the budget.

use super::candidate::Written;
use super::decide::{Effect, Matters};
use super::score::Objective;
use crate::stats::paired::{Judgement, percent_text};
use serde::Serialize;

/// The whole answer, saved as `OUT/tune.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The metric standing for each workload in the score (geometric mean of their ratios).
    pub objectives: Vec<Objective>,
    /// The equivalence margin of the score (a fraction).
    pub margin: f64,
    /// Whether durability-weakening values were searched (`--allow-unsafe`).
    pub allow_unsafe: bool,
    /// The wall-time budget, seconds.
    pub budget_s: f64,
    /// The wall time spent, seconds.
    pub spent_s: f64,
    /// Each stage that ran, in order.
    pub stages: Vec<StageRecord>,
    /// The mount `--current PATH` read the baseline from (`None` without the flag).
    pub current: Option<super::current::Current>,
    /// Each filesystem searched.
    pub filesystems: Vec<FsAnswer>,
    /// The recommended setup (safe), from the confirmation rounds only; `None` when the
    /// defaults won or no confirmation ran.
    pub recommended: Option<Confirmed>,
    /// The best setup that weakens durability, reported apart (`--allow-unsafe`).
    pub unsafe_best: Option<Confirmed>,
    /// False when the run stopped early (interrupted, a stage failed, the budget ran out).
    pub complete: bool,
    /// What a reader must know (a stage skipped for the budget, a failure…).
    pub notes: Vec<String>,
}

/// One stage's run.
#[derive(Debug, Clone, Serialize)]
pub struct StageRecord {
    /// `screening`, `race-1`, `confirmation`.
    pub stage: String,
    /// Its output directory (a full fsbench run: results.json).
    pub out: String,
    /// The setups it ran.
    pub setups: Vec<String>,
    /// Rounds.
    pub rounds: u32,
    /// Its estimate before it ran, seconds.
    pub estimate_s: f64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// What tune found for one filesystem.
#[derive(Debug, Clone, Serialize)]
pub struct FsAnswer {
    /// The filesystem.
    pub fs: String,
    /// Its baseline (the defaults, or the `--fs` variant given).
    pub baseline: Written,
    /// Each value screened against the baseline: alone, or as a main effect of a fractional
    /// design (`--screen fractional`).
    pub screened: Vec<ValueRow>,
    /// Each factor's verdict from its values.
    pub factors: Vec<FactorRow>,
    /// Values not screened alone, and why (the baseline's other values make them an
    /// invalid combination).
    pub not_screened: Vec<String>,
    /// Every configuration tried after screening, and its fate.
    pub raced: Vec<Tried>,
    /// The winner among the safe configurations, confirmed (or the defaults).
    pub safe: Option<Confirmed>,
    /// The winner among all, when it weakens durability.
    pub unsafe_best: Option<Confirmed>,
    /// Why nothing was raced or confirmed, when screening separated no helping value ("no
    /// option matters at this margin"…); absent when something was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// One value against the baseline in screening.
#[derive(Debug, Clone, Serialize)]
pub struct ValueRow {
    /// The factor.
    pub factor: String,
    /// The value.
    pub value: String,
    /// The setup that carried it alone, or `fractional design, N runs` for a main effect
    /// estimated from a design's runs.
    pub setup: String,
    /// Whether it weakens durability.
    pub weakens: bool,
    /// What screening found.
    pub effect: Effect,
    /// The judgement of its score over the baseline's.
    pub judgement: Judgement,
}

/// One factor's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct FactorRow {
    /// The factor.
    pub factor: String,
    /// Whether it matters for this workload.
    pub matters: Matters,
    /// Why it might (the option space's sentence).
    pub why: String,
}

/// A configuration raced, and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct Tried {
    /// How it is written.
    pub setup: Written,
    /// `eliminated`, `survived`, `winner`.
    pub fate: String,
    /// The race look (1-based) it was eliminated at.
    pub eliminated_at: Option<usize>,
    /// Its judgement against its leader when eliminated.
    pub against_leader: Option<Judgement>,
    /// Its mean score over the baseline over the race rounds it ran.
    pub score: f64,
}

/// A winner measured again against its baseline in fresh rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Confirmed {
    /// The winner.
    pub setup: Written,
    /// Its baseline's name.
    pub baseline: String,
    /// Its gain over the baseline from the confirmation rounds only.
    pub gain: Judgement,
    /// A weakening winner: what it lost in the crash workload, beside the safe answer.
    pub crash: Option<CrashCheck>,
}

/// What a durability-weakening winner lost in crash states, beside the safe answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CrashCheck {
    /// The crash workload (`crash-fsync`).
    pub workload: String,
    /// Crash states of the weakening setup that lost acknowledged data.
    pub lost_states: u64,
    /// Crash states tested on it.
    pub states: u64,
    /// The safe answer it was checked beside (the safe winner, else the baseline).
    pub safe: String,
    /// The safe answer's crash states that lost acknowledged data.
    pub safe_lost_states: u64,
    /// Crash states tested on the safe answer.
    pub safe_states: u64,
    /// The crash run's directory (its failing states are kept there).
    pub out: String,
}

/// A percentage of a ratio: "+12 %".
fn pct(r: f64) -> String {
    let p = (r - 1.0) * 100.0;
    format!("{}{:.1} %", if p >= 0.0 { "+" } else { "−" }, p.abs())
}

/// The interval's confidence in words: "90 % interval".
fn level(j: &Judgement) -> String {
    format!("{:.0} % interval", (1.0 - j.alpha) * 100.0)
}

impl Answer {
    /// The text shown first on screen.
    pub fn render(&self) -> String {
        let mut o = String::new();
        self.header(&mut o);
        self.answer(&mut o);
        for f in &self.filesystems {
            self.options(&mut o, f);
        }
        self.time(&mut o);
        o
    }

    /// What was searched, on what, judged how.
    fn header(&self, o: &mut String) {
        use std::fmt::Write;
        let work: Vec<String> = self
            .objectives
            .iter()
            .map(|x| format!("{} ({})", x.workload, crate::metrics::def(&x.metric).label))
            .collect();
        let fs: Vec<&str> = self.filesystems.iter().map(|f| f.fs.as_str()).collect();
        if work.is_empty() {
            let _ = writeln!(
                o,
                "fsbench tune: {}: no score yet (nothing measured)\n",
                fs.join(", ")
            );
            return;
        }
        let _ = writeln!(
            o,
            "fsbench tune: {} on {}; score: {}; margin ±{:.0} %\n",
            fs.join(", "),
            work.join(", "),
            if self.objectives.len() > 1 {
                "geometric mean of the workloads' ratios"
            } else {
                "the workload's ratio"
            },
            self.margin * 100.0
        );
    }

    /// The recommendation (or the defaults) and the weakening setup apart.
    fn answer(&self, o: &mut String) {
        use std::fmt::Write;
        match &self.recommended {
            Some(c) => {
                let _ = writeln!(
                    o,
                    "Recommended: {}  ({} over {} as it is, {} fresh rounds)",
                    c.setup.name,
                    gain_text(&c.gain),
                    c.baseline,
                    c.gain.rounds
                );
                write_setup(o, &c.setup);
                self.for_current(o, c);
            }
            None => {
                let bases: Vec<&str> = self
                    .filesystems
                    .iter()
                    .map(|f| f.baseline.name.as_str())
                    .collect();
                // Screening's own verdict when it stopped the search for every filesystem
                // alike (the effects follow, per filesystem).
                let verdicts: Vec<Option<&str>> = self
                    .filesystems
                    .iter()
                    .map(|f| f.verdict.as_deref())
                    .collect();
                let why = match verdicts.first() {
                    Some(Some(v)) if verdicts.iter().all(|x| x == &Some(*v)) => v.to_string(),
                    _ => format!(
                        "no safe option beat {} beyond noise",
                        if bases.len() > 1 { "them" } else { "it" }
                    ),
                };
                let _ = writeln!(
                    o,
                    "Recommended: keep {} as {}: {why}{}.",
                    bases.join(", "),
                    if bases.len() > 1 { "they are" } else { "it is" },
                    if self.complete {
                        ""
                    } else {
                        " (the search did not finish)"
                    }
                );
            }
        }
        if let Some(c) = &self.unsafe_best {
            let _ = writeln!(
                o,
                "\nLess durable, never the recommendation: {}  ({} over {}: {})",
                c.setup.name,
                gain_text(&c.gain),
                c.baseline,
                c.gain.outcome.words()
            );
            write_setup(o, &c.setup);
            if let Some(k) = &c.crash {
                let _ = writeln!(
                    o,
                    "  {} would be {} and loses acknowledged writes in {} of {} crash states \
                     ({}: {} of {}; {})",
                    c.setup.changes.join(", "),
                    pct(c.gain.ratio),
                    k.lost_states,
                    k.states,
                    k.safe,
                    k.safe_lost_states,
                    k.safe_states,
                    k.workload
                );
            }
        }
    }

    /// "For /srv/db: change relatime to noatime and gain …" when the winner's baseline is the
    /// mount `--current` read, and what of that mount the baseline could not reproduce.
    fn for_current(&self, o: &mut String, c: &Confirmed) {
        use std::fmt::Write;
        let Some(cur) = self
            .current
            .as_ref()
            .filter(|_| c.baseline == super::current::NAME)
        else {
            return;
        };
        let changes: Vec<String> = c
            .setup
            .was
            .iter()
            .zip(&c.setup.changes)
            .map(|(a, b)| format!("{a} to {b}"))
            .collect();
        let _ = writeln!(
            o,
            "  For {} ({} on {}): change {} and gain {}",
            cur.path.display(),
            cur.fs,
            cur.source,
            changes.join(", "),
            gain_text(&c.gain)
        );
        if !cur.kept_out.is_empty() {
            let _ = writeln!(
                o,
                "  (measured without {}: not in tune's {} space)",
                cur.kept_out.join(", "),
                cur.fs
            );
        }
    }

    /// One filesystem's options by verdict, and its race.
    fn options(&self, o: &mut String, f: &FsAnswer) {
        use std::fmt::Write;
        // Nothing screened or raced (--confirm): nothing to say per option.
        if f.screened.is_empty() && f.not_screened.is_empty() && f.raced.is_empty() {
            return;
        }
        let how = if f.screened.iter().any(|r| r.setup.starts_with("fractional")) {
            "options screened (a fractional design's main effects, the rest one at a time)"
        } else {
            "options one at a time"
        };
        let _ = writeln!(o, "\n{}: {how} against {}", f.fs, f.baseline.name);
        let groups: [(&[Effect], String); 3] = [
            (
                &[Effect::Helps, Effect::Hurts],
                "matter (beyond noise):".into(),
            ),
            (
                &[Effect::NoMatter],
                format!(
                    "do not matter (equivalent within ±{:.0} %):",
                    self.margin * 100.0
                ),
            ),
            (
                &[Effect::Unclear],
                "not separated (more rounds would tell):".into(),
            ),
        ];
        for (effects, title) in groups {
            let rows: Vec<&ValueRow> = f
                .screened
                .iter()
                .filter(|r| effects.contains(&r.effect))
                .collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(o, "  {title}");
            for r in rows {
                let _ = writeln!(
                    o,
                    "    {:<22} {:<28}{}",
                    r.value,
                    percent_text(&r.judgement),
                    if r.weakens {
                        "  weakens durability"
                    } else {
                        ""
                    }
                );
            }
        }
        let failed: Vec<&str> = f
            .screened
            .iter()
            .filter(|r| r.effect == Effect::NoData)
            .map(|r| r.value.as_str())
            .collect();
        if !failed.is_empty() {
            let _ = writeln!(o, "  no data (their steps failed): {}", failed.join(", "));
        }
        for n in &f.not_screened {
            let _ = writeln!(o, "  not screened: {n}");
        }
        let out: Vec<String> = f
            .raced
            .iter()
            .filter(|t| t.fate == "eliminated")
            .map(|t| format!("{} (look {})", t.setup.name, t.eliminated_at.unwrap_or(0)))
            .collect();
        match f.raced.len() {
            0 => {}
            1 => {
                let _ = writeln!(
                    o,
                    "  one combination went on ({}): confirmed without a race",
                    f.raced[0].setup.name
                );
            }
            n => {
                let _ = writeln!(
                    o,
                    "  raced {n} combinations; eliminated {}{}",
                    out.len(),
                    if out.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", out.join(", "))
                    }
                );
            }
        }
    }

    /// The time against the budget, and the notes.
    fn time(&self, o: &mut String) {
        use std::fmt::Write;
        let d = |s: f64| crate::units::format_duration(std::time::Duration::from_secs_f64(s));
        let stages: Vec<String> = self
            .stages
            .iter()
            .map(|s| format!("{} {}", s.stage, d(s.seconds)))
            .collect();
        let _ = writeln!(
            o,
            "\nTime: {} of the {} budget ({})",
            d(self.spent_s),
            d(self.budget_s),
            stages.join(", ")
        );
        for n in &self.notes {
            let _ = writeln!(o, "note: {n}");
        }
    }
}

/// "+12.0 % (90 % interval +8.1 % … +16.0 %)".
fn gain_text(j: &Judgement) -> String {
    match j.interval {
        Some((a, b)) => format!("{}, {} {} … {}", pct(j.ratio), level(j), pct(a), pct(b)),
        None => pct(j.ratio),
    }
}

fn write_setup(o: &mut String, w: &Written) {
    use std::fmt::Write;
    let _ = writeln!(o, "  --fs '{}'", w.variant);
    let _ = writeln!(o, "  {}", w.mkfs);
    if let Some(f) = &w.fstab {
        let _ = writeln!(o, "  /etc/fstab: {f}");
    }
}
