//! What `fsbench tune` would do, before anything runs: its stages with their setups, rounds
//! and estimated seconds, the budget against them, what it would create and what it would
//! need installed. One model, two renderings: the text of `fsbench tune --dry-run` and of
//! `fsbench plan tune` ([`Preview::render`]), and `fsbench plan tune --json` (serde), so the
//! two commands cannot drift apart.

use super::candidate::Candidate;
use super::current::Current;
use super::screen::{Plan, not_screened};
use super::search::{Runs, estimates, stand_ins};
use super::settings::Settings;
use serde::Serialize;
use std::fmt::Write;

/// Tune's plan: the stages, the budget, the setups screened.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    /// Screening and racing skipped: the setups given with `--confirm` are confirmed alone.
    pub confirm_only: bool,
    /// The stages in the order they run.
    pub stages: Vec<Stage>,
    /// The whole search's wall time (`--budget`), seconds.
    pub budget_s: f64,
    /// What the budget must hold (screening, one confirmation and, with `--allow-unsafe`, the
    /// crash check; more: exit 2), seconds.
    pub required_s: f64,
    /// Every stage at its estimate, racing at its bound, seconds; above the budget, racing
    /// stops early (it gets what screening and the confirmation leave).
    pub total_s: f64,
    /// Per filesystem searched: its baseline and what screening measures.
    pub filesystems: Vec<FsPreview>,
    /// The setups given with `--confirm`.
    pub given: Vec<Setup>,
    /// What `--current PATH` read, the baseline of the machine in front of the user.
    pub current: Option<Current>,
    /// What the tune would create (set by the command, which knows the target).
    pub creates: Option<Creates>,
    /// What the stages need that is not installed (set by the command).
    pub missing: Option<Missing>,
}

/// One stage of the search.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// `screening`, `racing`, `confirmation` or `crash` (the crash check of a
    /// durability-weakening winner, with `--allow-unsafe`).
    pub stage: &'static str,
    /// Setups per run of the stage (racing and a searched confirmation: at most, since their
    /// setups are known only once screening has run).
    pub setups: usize,
    /// The setups' names when known before anything runs (screening, a `--confirm`
    /// confirmation); empty otherwise.
    pub names: Vec<String>,
    /// Rounds of each run (each race look).
    pub rounds: u32,
    /// Runs of the stage at most: race looks, screening's first look and its later ones, else 1.
    pub looks: u32,
    /// Combinations raced per filesystem at most (racing only).
    pub combinations: Option<usize>,
    /// The estimated seconds of the whole stage (the plan's ETA of its runs).
    pub estimate_s: f64,
    /// Whether the estimate is a bound (racing) rather than what the stage should take.
    pub at_most: bool,
}

/// A filesystem's screening.
#[derive(Debug, Clone, Serialize)]
pub struct FsPreview {
    /// The baseline's name (`ext4`).
    pub fs: String,
    /// The baseline as a `--fs` variant.
    pub baseline: String,
    /// The two-level options screened together in a fractional design (`--screen fractional`).
    pub fractional: Option<Fractional>,
    /// The values screened one at a time, each a setup.
    pub alone: Vec<Setup>,
    /// Options of the space not screened, with why.
    pub not_screened: Vec<String>,
}

/// The runs of a fractional design.
#[derive(Debug, Clone, Serialize)]
pub struct Fractional {
    /// Runs, the baseline one of them.
    pub runs: usize,
    /// The values whose main effects the design estimates.
    pub values: Vec<String>,
    /// The runs besides the baseline.
    pub setups: Vec<Setup>,
}

/// A setup the tune would run.
#[derive(Debug, Clone, Serialize)]
pub struct Setup {
    /// The setup as a `--fs` variant.
    pub variant: String,
    /// Whether it weakens durability (searched only with `--allow-unsafe`).
    pub weakens: bool,
}

/// What the tune would create.
#[derive(Debug, Clone, Serialize)]
pub struct Creates {
    /// The tune's directory (`--out`).
    pub out: String,
    /// Each stage's run directory, `<n>-<stage>` under `out` (`<n>` counts the stages run).
    pub stage_dirs: Vec<String>,
    /// The answer's files in `out`.
    pub files: Vec<String>,
    /// What every stage formats (the target's one line, as `fsbench plan` prints it).
    pub target: String,
    /// Why the images are smaller than `--image-size` (`tune::images`), when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<String>,
}

/// Programs the stages need that are not on this machine.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Missing {
    /// Packages to install (`--install-missing` of `fsbench run`), with what needs each.
    pub packages: Vec<Package>,
    /// Missing programs no package brings here: `tool (for what)`.
    pub unpackaged: Vec<String>,
}

/// A package and what needs it.
#[derive(Debug, Clone, Serialize)]
pub struct Package {
    /// The package name.
    pub name: String,
    /// The programs it brings and what needs them (`mkfs.xfs for xfs`).
    pub needed_for: Vec<String>,
}

impl Setup {
    fn of(c: &Candidate) -> Setup {
        Setup {
            variant: c.variant(),
            weakens: c.weakens(),
        }
    }
}

impl Preview {
    /// The stages and their estimates over `runs`; `Err` (exit 2) when the budget cannot hold
    /// screening and one confirmation, exactly as the tune itself refuses.
    pub fn of(
        runs: &mut dyn Runs,
        baselines: &[Candidate],
        s: &Settings,
    ) -> crate::Result<Preview> {
        let e = estimates(runs, baselines, s)?;
        let (screen, confirm) = (e.screen, e.confirm);
        let confirm_only = !s.given.is_empty();
        let n_fs = baselines.len();
        let winners = if s.allow_unsafe { 2 } else { 1 };
        let mut stages = Vec::new();
        let mut filesystems = Vec::new();
        if confirm_only {
            stages.push(Stage {
                stage: "confirmation",
                setups: n_fs + s.given.len(),
                names: baselines
                    .iter()
                    .map(Candidate::name)
                    .chain(s.given.iter().map(|(_, c)| c.name()))
                    .collect(),
                rounds: s.confirm_rounds,
                looks: 1,
                combinations: None,
                estimate_s: confirm,
                at_most: false,
            });
        } else {
            let plans: Vec<Plan> = baselines.iter().map(|b| Plan::of(b, s)).collect();
            let names: Vec<String> = baselines
                .iter()
                .zip(&plans)
                .flat_map(|(b, p)| {
                    std::iter::once(b.name()).chain(p.setups().into_iter().map(Candidate::name))
                })
                .collect();
            // Racing's bound from what screening measures: fewer combinations than the cap
            // when few values are screened, none when no filesystem can have two racers.
            let bounds: Vec<usize> = plans
                .iter()
                .map(|p| race_bound(p, s.cap * winners))
                .collect();
            let racing = bounds.iter().any(|&n| n > 1);
            let race = if racing {
                let stand_ins = stand_ins(baselines, |i| bounds[i]);
                // The first look's rounds, then one round a look (Settings::look_rounds).
                runs.estimate(&stand_ins, s.race_rounds)?
                    + runs.estimate(&stand_ins, 1)? * f64::from(s.race_looks.saturating_sub(1))
            } else {
                0.0
            };
            stages.push(Stage {
                stage: "screening",
                setups: names.len(),
                names,
                rounds: s.screen_rounds,
                looks: 1 + s.screen_looks,
                combinations: None,
                estimate_s: screen,
                at_most: false,
            });
            stages.push(Stage {
                stage: "racing",
                setups: if racing {
                    n_fs + bounds.iter().sum::<usize>()
                } else {
                    0
                },
                names: Vec::new(),
                rounds: s.race_rounds,
                looks: if racing { s.race_looks } else { 0 },
                combinations: Some(bounds.iter().copied().max().unwrap_or(0)),
                estimate_s: race,
                at_most: true,
            });
            stages.push(Stage {
                stage: "confirmation",
                setups: n_fs * (1 + winners),
                names: Vec::new(),
                rounds: s.confirm_rounds,
                looks: 1,
                combinations: None,
                estimate_s: confirm,
                at_most: true,
            });
            filesystems = baselines
                .iter()
                .zip(&plans)
                .map(|(b, p)| fs_preview(b, p, s))
                .collect();
        }
        if s.allow_unsafe {
            // Runs only when a weakening setup wins: its estimate is a bound.
            stages.push(Stage {
                stage: "crash",
                setups: 2 * n_fs,
                names: Vec::new(),
                rounds: 1,
                looks: 1,
                combinations: None,
                estimate_s: e.crash,
                at_most: true,
            });
        }
        Ok(Preview {
            confirm_only,
            total_s: stages.iter().map(|st| st.estimate_s).sum(),
            stages,
            budget_s: s.budget_s,
            required_s: e.required(),
            filesystems,
            given: s.given.iter().map(|(_, c)| Setup::of(c)).collect(),
            current: None,
            creates: None,
            missing: None,
        })
    }

    /// The text `fsbench tune --dry-run` and `fsbench plan tune` print.
    pub fn render(&self) -> String {
        let mut o = String::new();
        if let Some(c) = &self.current {
            current_lines(&mut o, c);
        }
        let _ = writeln!(
            o,
            "fsbench tune: stages (each a fsbench run, rounds by steps, the baselines in every one)"
        );
        let find = |name: &str| self.stages.iter().find(|st| st.stage == name);
        let confirm = find("confirmation").map_or(0.0, |st| st.estimate_s);
        if self.confirm_only {
            let _ = writeln!(
                o,
                "  screening and racing skipped (--confirm)\n  confirmation  baselines + {} given \
                 × {} fresh rounds   ≈ {}\n  budget {}",
                self.given.len(),
                find("confirmation").map_or(0, |st| st.rounds),
                fmt(confirm),
                fmt(self.budget_s)
            );
            for g in &self.given {
                setup_line(&mut o, g);
            }
            crash_line(&mut o, find("crash"), "");
        } else {
            if let Some(st) = find("screening") {
                let _ = writeln!(
                    o,
                    "  1 screening     {} setups × {} rounds   ≈ {}",
                    st.setups,
                    st.rounds,
                    fmt(st.estimate_s)
                );
                if st.looks > 1 {
                    let _ = writeln!(
                        o,
                        "                  then ≤ {} more looks of 1 round: the baselines and the \
                     values not separated yet, while the budget holds",
                        st.looks - 1
                    );
                }
            }
            if find("racing").is_some_and(|st| st.looks == 0) {
                let _ = writeln!(
                    o,
                    "  2 racing        none: no filesystem screens values enough for two \
                     combinations"
                );
            }
            if let Some(st) = find("racing").filter(|st| st.looks > 0) {
                let _ = writeln!(
                    o,
                    "  2 racing        ≤ {} combinations per filesystem, ≤ {} looks ({} rounds, \
                     then 1 each), only when screening separates a helping option   ≤ {}",
                    st.combinations.unwrap_or(0),
                    st.looks,
                    st.rounds,
                    fmt(st.estimate_s)
                );
            }
            if let Some(st) = find("confirmation") {
                let _ = writeln!(
                    o,
                    "  3 confirmation  baselines + winners × {} fresh rounds   ≈ {}",
                    st.rounds,
                    fmt(st.estimate_s)
                );
            }
            crash_line(&mut o, find("crash"), "4 ");
            let _ = writeln!(
                o,
                "  budget {}: screening{} ≈ {}; screening's later looks and racing get the rest",
                fmt(self.budget_s),
                if find("crash").is_some() {
                    ", confirmation and crash check"
                } else {
                    " and confirmation"
                },
                fmt(self.required_s)
            );
            for f in &self.filesystems {
                fs_lines(&mut o, f);
            }
        }
        if let Some(c) = &self.creates {
            let _ = writeln!(
                o,
                "  creates {}/ ({}; {}), every stage on {}",
                c.out,
                c.stage_dirs.join(", "),
                c.files.join(", "),
                c.target
            );
            if let Some(why) = &c.images {
                let _ = writeln!(o, "  {why}");
            }
        }
        if let Some(m) = &self.missing {
            missing_lines(&mut o, m);
        }
        o
    }
}

/// Combinations racing can hold on one filesystem at most ([`super::decide::combinations`]):
/// each factor at its baseline or one of its values screened, less the baseline, within `cap`.
fn race_bound(p: &Plan, cap: usize) -> usize {
    let mut per_factor = std::collections::BTreeMap::<usize, usize>::new();
    let screened = p.alone.iter().map(|&(f, _, _)| f);
    let designed = p
        .fractional
        .iter()
        .flat_map(|d| d.columns.iter().map(|&(f, _)| f));
    for f in screened.chain(designed) {
        *per_factor.entry(f).or_default() += 1;
    }
    let all = per_factor
        .values()
        .fold(1usize, |a, n| a.saturating_mul(1 + n));
    (all - 1).min(cap)
}

/// A filesystem's screening, for the preview.
fn fs_preview(b: &Candidate, p: &Plan, s: &Settings) -> FsPreview {
    FsPreview {
        fs: b.name(),
        baseline: b.variant(),
        fractional: p.fractional.as_ref().map(|f| Fractional {
            runs: f.design.runs(),
            values: f
                .columns
                .iter()
                .map(|&(i, j)| b.space.factors[i].values[j].name().to_string())
                .collect(),
            setups: f.runs[1..].iter().map(Setup::of).collect(),
        }),
        alone: p.alone.iter().map(|(_, _, c)| Setup::of(c)).collect(),
        not_screened: not_screened(b, s),
    }
}

/// Seconds as `1 min 05 s`.
fn fmt(x: f64) -> String {
    crate::units::format_duration(std::time::Duration::from_secs_f64(x.max(0.0)))
}

/// The crash check's line, when the tune has one (`--allow-unsafe`); `n` numbers the stage.
fn crash_line(o: &mut String, st: Option<&Stage>, n: &str) {
    if let Some(st) = st {
        let _ = writeln!(
            o,
            "  {n}crash check   ≤ {} setups, the crash workload once, only when a setup that \
             weakens durability wins   ≤ {}",
            st.setups,
            fmt(st.estimate_s)
        );
    }
}

/// One setup line, a durability-weakening one marked.
fn setup_line(o: &mut String, s: &Setup) {
    let note = if s.weakens {
        "   (weakens durability)"
    } else {
        ""
    };
    let _ = writeln!(o, "    {}{note}", s.variant);
}

/// What screening measures on one filesystem.
fn fs_lines(o: &mut String, f: &FsPreview) {
    if let Some(d) = &f.fractional {
        let _ = writeln!(
            o,
            "  {} screened in a fractional design ({} runs, the baseline one of them): {}",
            f.fs,
            d.runs,
            d.values.join(", ")
        );
        for s in &d.setups {
            setup_line(o, s);
        }
    }
    if !f.alone.is_empty() {
        let _ = writeln!(o, "  {} screened one at a time:", f.fs);
    }
    for s in &f.alone {
        setup_line(o, s);
    }
    for n in &f.not_screened {
        let _ = writeln!(o, "    not screened: {n}");
    }
}

/// What would have to be installed first.
fn missing_lines(o: &mut String, m: &Missing) {
    if m.packages.is_empty() && m.unpackaged.is_empty() {
        let _ = writeln!(
            o,
            "  installs nothing: every program the stages need is present"
        );
        return;
    }
    for p in &m.packages {
        let _ = writeln!(
            o,
            "  needs package {} ({}): fsbench run --install-missing installs it",
            p.name,
            p.needed_for.join(", ")
        );
    }
    for u in &m.unpackaged {
        let _ = writeln!(o, "  needs {u}, which no package here brings");
    }
}

/// What `--current` read, shown before the stages.
fn current_lines(o: &mut String, c: &Current) {
    let _ = writeln!(
        o,
        "baseline from {} ({} on {}, {}): {}",
        c.path.display(),
        c.fs,
        c.source,
        c.options,
        c.variant
    );
    if !c.superblock.is_empty() {
        let _ = writeln!(o, "  superblock: {}", c.superblock.join(", "));
    }
    if !c.kept_out.is_empty() {
        let _ = writeln!(
            o,
            "  not in tune's {} space, measured at fsbench's default: {}",
            c.fs,
            c.kept_out.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::search::StageRun;

    /// Estimates only: a second per setup and round.
    struct Clock;

    impl Runs for Clock {
        fn estimate(&mut self, variants: &[String], rounds: u32) -> crate::Result<f64> {
            Ok(variants.len() as f64 * f64::from(rounds))
        }
        fn run(&mut self, _: &str, _: &[String], _: u32) -> crate::Result<StageRun> {
            unreachable!("a preview runs nothing")
        }
        fn crash(&mut self, _: &[String]) -> crate::Result<StageRun> {
            unreachable!("a preview runs nothing")
        }
        fn estimate_crash(&mut self, variants: &[String]) -> crate::Result<f64> {
            Ok(variants.len() as f64)
        }
    }

    fn settings(options: &[&str], budget_s: f64) -> Settings {
        Settings {
            budget_s,
            ..crate::tune::settings::of_tests(options)
        }
    }

    fn ext4() -> Vec<Candidate> {
        let s = crate::plan::setup_syntax::parse_setup("ext4").unwrap();
        vec![super::super::candidate::baseline_of(&s).unwrap()]
    }

    #[test]
    fn the_stages_their_setups_and_estimates_add_up_against_the_budget() {
        let three = settings(&["atime", "lazytime", "discard"], 1000.0);
        let p = Preview::of(&mut Clock, &ext4(), &three).unwrap();
        let stage = |n: &str| p.stages.iter().find(|s| s.stage == n).unwrap();
        // Screening: the baseline and each value alone, 3 rounds.
        let screen = stage("screening");
        assert_eq!(
            screen.names,
            ["ext4", "ext4-noatime", "ext4-lazytime", "ext4-discard"]
        );
        assert_eq!((screen.setups, screen.estimate_s), (4, 4.0 * 3.0));
        // Racing: three values make 2³ − 1 = 7 combinations (under the cap of 8); with the
        // baseline 8 setups, 2 rounds a look, 3 looks at most.
        let race = stage("racing");
        assert!(race.at_most);
        assert_eq!(
            (race.setups, race.looks, race.combinations),
            (8, 3, Some(7))
        );
        // The first look's 2 rounds, then one round for each of the 2 looks left.
        assert_eq!(race.estimate_s, 8.0 * 2.0 + 8.0 * 2.0);
        // The confirmation: the baseline and its winner.
        assert_eq!(stage("confirmation").estimate_s, 2.0 * 3.0);
        assert_eq!(p.required_s, 12.0 + 6.0);
        assert_eq!(p.total_s, 12.0 + 32.0 + 6.0);
        assert_eq!(p.budget_s, 1000.0);
        // The text and the JSON say the same.
        let text = p.render();
        for want in [
            "1 screening     4 setups × 3 rounds   ≈ 12 s",
            "2 racing        ≤ 7 combinations per filesystem, ≤ 3 looks (2 rounds, then 1 each), only when screening separates a helping option   ≤ 32 s",
            "    ext4-noatime=ext4:mount=noatime\n",
        ] {
            assert!(text.contains(want), "lacks {want}:\n{text}");
        }
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["stages"][0]["stage"], "screening");
        assert_eq!(json["stages"][1]["combinations"], 7);
        assert_eq!(json["stages"][1]["estimate_s"], 32.0);
        assert_eq!(json["filesystems"][0]["fs"], "ext4");
        assert_eq!(
            json["filesystems"][0]["alone"][2]["variant"],
            "ext4-discard=ext4:mount=discard"
        );
    }

    #[test]
    fn with_allow_unsafe_the_crash_check_is_estimated_and_held_in_the_budget() {
        let safe = Preview::of(&mut Clock, &ext4(), &settings(&["noatime"], 1000.0)).unwrap();
        assert!(safe.stages.iter().all(|s| s.stage != "crash"));
        let unsafe_ = Settings {
            allow_unsafe: true,
            ..settings(&["noatime"], 1000.0)
        };
        let p = Preview::of(&mut Clock, &ext4(), &unsafe_).unwrap();
        let crash = p.stages.iter().find(|s| s.stage == "crash").unwrap();
        // The weakening winner and the safe answer, once each: a bound, as it runs only when
        // a weakening setup wins.
        assert_eq!((crash.setups, crash.rounds, crash.estimate_s), (2, 1, 2.0));
        assert!(crash.at_most);
        let confirm = p.stages.iter().find(|s| s.stage == "confirmation").unwrap();
        let screen = p.stages.iter().find(|s| s.stage == "screening").unwrap();
        assert_eq!(
            p.required_s,
            screen.estimate_s + confirm.estimate_s + crash.estimate_s
        );
        let text = p.render();
        for want in [
            "  4 crash check   ≤ 2 setups, the crash workload once, only when a setup that weakens durability wins   ≤ 2 s",
            "screening, confirmation and crash check ≈",
        ] {
            assert!(text.contains(want), "lacks {want}:\n{text}");
        }
        // A budget that holds screening and a confirmation but not the crash check: refused.
        let tight = Settings {
            budget_s: p.required_s - 1.0,
            ..unsafe_
        };
        let err = Preview::of(&mut Clock, &ext4(), &tight)
            .unwrap_err()
            .to_string();
        assert!(err.contains("the crash check"), "{err}");
    }

    #[test]
    fn one_value_screened_leaves_nothing_to_race() {
        let p = Preview::of(&mut Clock, &ext4(), &settings(&["noatime"], 1000.0)).unwrap();
        let race = p.stages.iter().find(|s| s.stage == "racing").unwrap();
        assert_eq!((race.setups, race.looks, race.estimate_s), (0, 0, 0.0));
        assert_eq!(p.total_s, p.required_s);
        assert!(
            p.render().contains("2 racing        none"),
            "{}",
            p.render()
        );
    }

    #[test]
    fn a_budget_short_of_screening_and_one_confirmation_is_refused() {
        let e = Preview::of(&mut Clock, &ext4(), &settings(&["atime"], 5.0)).unwrap_err();
        assert!(e.to_string().contains("too small"), "{e}");
    }

    #[test]
    fn what_is_created_and_missing_is_shown_when_the_command_sets_it() {
        let mut p = Preview::of(&mut Clock, &ext4(), &settings(&["atime"], 1000.0)).unwrap();
        assert!(!p.render().contains("creates"));
        p.creates = Some(Creates {
            out: "o".into(),
            stage_dirs: vec!["1-screening".into()],
            files: vec!["tune.json".into()],
            target: "an image".into(),
            images: Some("images of 2 GiB, not 8 GiB".into()),
        });
        p.missing = Some(Missing {
            packages: vec![Package {
                name: "xfsprogs".into(),
                needed_for: vec!["mkfs.xfs for xfs".into()],
            }],
            unpackaged: Vec::new(),
        });
        let text = p.render();
        assert!(
            text.contains(
                "creates o/ (1-screening; tune.json), every stage on an image\n  images of 2 GiB"
            ),
            "{text}"
        );
        assert!(
            text.contains("needs package xfsprogs (mkfs.xfs for xfs)"),
            "{text}"
        );
    }
}
