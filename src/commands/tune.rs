//! `fsbench tune`: read the baselines and the option subset (bad input: exit 2, nothing
//! created), check the budget against the stages' estimates, then run the search
//! ([`crate::tune::search`]) with every stage a real fsbench run through the runner
//! (`prepare::prepare` ─► `runner::execute_with`, rounds by steps), and print the answer first,
//! saving it as `OUT/tune.json`.

use crate::Error;
use crate::cli::tune::TuneArgs;
use crate::plan::Overrides;
use crate::tune::candidate::{Candidate, baseline_of};
use crate::tune::journal::{Entry, Journal};
use crate::tune::preview::{Creates, Missing, Package, Preview};
use crate::tune::search::{self, Runs, StageRun};
use crate::tune::settings::{self, Filter, Settings};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The search's wall time without `--budget`.
const DEFAULT_BUDGET: Duration = Duration::from_secs(3600);
/// Each stage's rounds without `--rounds`.
const DEFAULT_ROUNDS: u32 = 3;
/// Combinations raced per filesystem and durability class at most.
const RACE_CAP: usize = 8;
/// Screening's looks after its first at most (one round each, of the values not separated).
const SCREEN_LOOKS: u32 = 3;
/// Race looks at most.
const RACE_LOOKS: u32 = 3;

/// Run `fsbench tune`; returns the exit code. `--resume OUT` runs the tune OUT was started
/// with again, reading its finished stages back from the journal ([`crate::tune::journal`]).
pub fn run(args: TuneArgs) -> crate::Result<i32> {
    let (args, resumed) = resumed(args)?;
    tune(args, resumed)
}

/// Tune's plan with these flags (`fsbench plan tune`, `tune --dry-run`): every check of the
/// tune itself (bad input: exit 2), nothing run or created.
pub fn plan(args: TuneArgs) -> crate::Result<Preview> {
    let (args, resumed) = resumed(args)?;
    let mut r = resolve(&args, resumed)?;
    r.preview()
}

/// The flags to tune with: those given, or with `--resume OUT` those of the journal in OUT
/// (and the journal).
fn resumed(args: TuneArgs) -> crate::Result<(TuneArgs, Option<(PathBuf, Journal)>)> {
    let Some(dir) = args.plan.resume.clone() else {
        return Ok((args, None));
    };
    let journal = Journal::load(&dir)?;
    let given = crate::tune::journal::args_of(&std::env::args().collect::<Vec<_>>());
    let flags = ignored_on_resume(&given);
    if !flags.is_empty() {
        eprintln!(
            "fsbench tune: --resume takes the tune's flags from its journal; ignored: {}",
            flags.join(" ")
        );
    }
    let argv = std::iter::once("fsbench".to_string()).chain(journal.args.iter().cloned());
    let saved = match <crate::cli::Cli as clap::Parser>::try_parse_from(argv) {
        Ok(crate::cli::Cli {
            command: crate::cli::Command::Tune(t),
            ..
        }) => TuneArgs {
            // A dry run of a resume stays a dry run (the journal's tune was not one).
            dry_run: args.dry_run,
            ..t
        },
        _ => {
            return Err(Error::invalid(
                "--resume",
                format!(
                    "{}: the journal's command line is not a tune's",
                    dir.display()
                ),
            ));
        }
    };
    eprintln!(
        "fsbench tune: resuming {} ({} finished stage(s) read back): fsbench {}",
        dir.display(),
        journal.stages.len(),
        journal.args.join(" ")
    );
    Ok((saved, Some((dir, journal))))
}

/// The words given after `tune` with `--resume` that the journal's command line replaces: all
/// but `--resume`'s own, `--dry-run` and `plan tune`'s `--json` and `-o/--output FILE`.
fn ignored_on_resume(given: &[String]) -> Vec<String> {
    let after = given
        .iter()
        .position(|a| a == "tune")
        .map_or(given, |i| &given[i + 1..]);
    let mut out = Vec::new();
    let mut words = after.iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "--dry-run" | "--json" => {}
            "-o" | "--output" => {
                words.next();
            }
            w if w.starts_with("--output=") => {}
            _ => out.push(w.clone()),
        }
    }
    out
}

/// A tune resolved from its flags: every check done, nothing created.
struct Resolved {
    runs: Real,
    baselines: Vec<Candidate>,
    settings: Settings,
    current: Option<crate::tune::current::Current>,
    out: PathBuf,
    history: Option<crate::history::Location>,
}

/// The flags checked and resolved (bad input: exit 2, nothing created), fresh or resumed from
/// `(OUT, its journal)`.
fn resolve(args: &TuneArgs, resumed: Option<(PathBuf, Journal)>) -> crate::Result<Resolved> {
    refuse_flags(args)?;
    let mut base = args.plan.overrides();
    base.yes = args.yes;
    // --current first: its PATH is checked before anything else is read or created.
    let current = args
        .current
        .as_deref()
        .map(crate::tune::current::read)
        .transpose()?;
    let fs_words: Vec<String> = if let Some(c) = &current {
        std::iter::once(c.variant.clone())
            .chain(args.plan.fs.iter().cloned())
            .collect()
    } else if args.plan.fs.is_empty() {
        crate::plan::resolve::default_fs(crate::host::zfs::kernel())
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        args.plan.fs.clone()
    };
    let setups = crate::plan::setup_syntax::parse_fs_list(&fs_words)?;
    // The target check before the stages (a --device's consent, the image size) is of these
    // setups, not of the default set (--current alone names none with --fs).
    base.fs = fs_words.clone();
    let baselines: Vec<Candidate> = setups.iter().map(baseline_of).collect::<Result<_, _>>()?;
    let filter = Filter(args.options.clone());
    let unknown = settings::unknown_options(&filter, &baselines);
    if !unknown.is_empty() {
        return Err(Error::invalid(
            "--options",
            format!(
                "{} named no option of {} (docs/tune.md lists them)",
                unknown.join(", "),
                baselines
                    .iter()
                    .map(|b| b.space.fs)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let given = given_setups(&args.confirm, &baselines, args.allow_unsafe)?;
    let rounds = base.values.rounds.unwrap_or(DEFAULT_ROUNDS).max(2);
    let settings = Settings {
        screen_rounds: rounds,
        screen_looks: SCREEN_LOOKS,
        race_rounds: 2,
        race_looks: RACE_LOOKS,
        confirm_rounds: rounds,
        cap: RACE_CAP,
        allow_unsafe: args.allow_unsafe,
        budget_s: base.values.budget.unwrap_or(DEFAULT_BUDGET).as_secs_f64(),
        allowed: settings::allowed,
        filter,
        given,
        screen: args.screen,
    };
    let out = match &resumed {
        Some((dir, _)) => dir.clone(),
        None => base.out.clone().unwrap_or_else(default_out),
    };
    if resumed.is_none() && out.join("tune.json").exists() {
        return Err(Error::invalid(
            "--out",
            format!(
                "{} already holds a tune; choose another --out",
                out.display()
            ),
        ));
    }
    let history = args.history.settings().resolve()?;
    base.values.rounds = None;
    base.values.until_settled = false;
    base.values.budget = None;
    let argv: Vec<String> = std::env::args().collect();
    let (old, replaying) = match resumed {
        Some((_, j)) => (j, true),
        None => (Journal::default(), false),
    };
    let journal = Journal {
        args: if replaying {
            old.args.clone()
        } else {
            crate::tune::journal::args_of(&argv)
        },
        stages: Vec::new(),
    };
    let runs = Real {
        base,
        out: out.clone(),
        next: 0,
        argv,
        read_back_s: 0.0,
        old,
        replaying,
        journal,
    };
    Ok(Resolved {
        runs,
        baselines,
        settings,
        current,
        out,
        history,
    })
}

impl Resolved {
    /// The stages and the budget check (exit 2 when short), what would be created and what
    /// is missing; nothing created.
    fn preview(&mut self) -> crate::Result<Preview> {
        let mut p = Preview::of(&mut self.runs, &self.baselines, &self.settings)?;
        p.current = self.current.clone();
        let largest = p.stages.iter().map(|st| st.setups).max().unwrap_or(1);
        let images = fit_images(&mut self.runs.base, largest);
        let inv = self.runs.inv(&self.runs.base, &[], 2, self.out.clone())?;
        p.creates = Some(Creates {
            images,
            ..creates(&self.out, &self.settings, &inv)
        });
        p.missing = Some(missing(&inv));
        Ok(p)
    }
}

/// The tune itself, fresh or resumed from `(OUT, its journal)`.
fn tune(args: TuneArgs, resumed: Option<(PathBuf, Journal)>) -> crate::Result<i32> {
    let mut r = resolve(&args, resumed)?;
    // The stages and the budget check, before anything is created.
    let preview = r.preview()?.render();
    if args.dry_run {
        print!("{preview}");
        return Ok(crate::error::EXIT_OK);
    }
    let Resolved {
        mut runs,
        baselines,
        settings,
        current,
        out,
        history,
    } = r;
    eprint!("{preview}");
    if rustix::process::geteuid().is_root() {
        crate::host::ledger::recover_and_report();
    }
    if let crate::scratch::TargetKind::Device { path, .. } =
        &runs.inv(&runs.base, &[], 2, out.clone())?.options.target
    {
        crate::scratch::consent::preflight(path, args.yes)?;
    }
    let relay = crate::host::stdio::Relay::install();
    let mut answer = search::run(&mut runs, &baselines, &settings)?;
    answer.current = current;
    // Stages read back took their time in the interrupted run: count it as spent.
    answer.spent_s += runs.read_back_s;
    std::fs::create_dir_all(&out)
        .map_err(|e| Error::Other(format!("cannot create {}: {e}", out.display())))?;
    let path = out.join("tune.json");
    let text = serde_json::to_string_pretty(&answer)
        .map_err(|e| Error::Other(format!("cannot serialize the answer: {e}")))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
    // The forest plot is derived from tune.json: a failure to write it costs a warning.
    let html = out.join("tune.html");
    if let Err(e) = std::fs::write(&html, crate::tune::forest::html(&answer)) {
        eprintln!("fsbench: warning: cannot write {}: {e}", html.display());
    }
    publish(&answer, &out, history.as_ref());
    print!("{}", answer.render());
    eprintln!(
        "fsbench: the answer: {}; each stage's results: {}/<n>-<stage>/results.json",
        path.display(),
        out.display()
    );
    drop(relay);
    Ok(if crate::cancel::requested() {
        crate::cancel::exit_code()
    } else if answer.notes.iter().any(|n| n.contains("failed")) {
        crate::error::EXIT_FAILURE
    } else {
        crate::error::EXIT_OK
    })
}

/// The `--confirm` setups as candidates of the baselines of their filesystems (the first
/// baseline of each): refused (exit 2) when a setup is not a point of its space, its
/// filesystem is not searched, or it weakens durability without `--allow-unsafe`.
fn given_setups(
    words: &[String],
    baselines: &[Candidate],
    allow_unsafe: bool,
) -> crate::Result<Vec<(usize, Candidate)>> {
    let flag = |m: String| Error::invalid("--confirm", m);
    let mut out = Vec::new();
    for setup in crate::plan::setup_syntax::parse_fs_list(words)? {
        let point = baseline_of(&setup).map_err(|e| match e {
            Error::InvalidInput { message, .. } => flag(message),
            e => e,
        })?;
        let Some(k) = baselines.iter().position(|b| b.space.fs == point.space.fs) else {
            return Err(flag(format!(
                "{} is {}, not one of the filesystems searched ({})",
                setup.name,
                point.space.fs,
                baselines
                    .iter()
                    .map(|b| b.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let c = baselines[k].with(point.choice);
        if c.is_baseline() {
            return Err(flag(format!(
                "{} is {}'s baseline itself: nothing to confirm",
                setup.name,
                baselines[k].name()
            )));
        }
        if c.weakens() && !allow_unsafe {
            return Err(flag(format!(
                "{} weakens durability; confirm it with --allow-unsafe (then its crash \
                 states are checked too)",
                setup.name
            )));
        }
        out.push((k, c));
    }
    Ok(out)
}

/// What tune does not take (exit 2): a sequential run, a directory (nothing to
/// format), aging, claims.
fn refuse_flags(a: &TuneArgs) -> crate::Result<()> {
    let p = &a.plan;
    let refused = [
        (
            p.switches.until_settled,
            "--until-settled",
            "tune decides its own rounds (--rounds per stage, --budget for all)",
        ),
        (
            p.dir.is_some(),
            "--dir",
            "tune formats every candidate; it needs an image (default) or a --device",
        ),
        (p.age.is_some(), "--age", "tune measures fresh filesystems"),
        (
            !p.claims_for.is_empty(),
            "--claims-for",
            "name the workload with --only or --profile",
        ),
    ];
    match refused.into_iter().find(|(on, _, _)| *on) {
        Some((_, flag, why)) => Err(Error::invalid(flag, why)),
        None => Ok(()),
    }
}

/// The confirmation as the tune's own result: OUT/results.json (its results with the
/// judgements, so `fsbench compare OUT/results.json …` and `fsbench report OUT` read a tune
/// like any run), the reports beside it, and the history record (source `tune`). Derived from
/// the stage's results.json, so a failure is a warning, never a lost answer.
fn publish(
    answer: &crate::tune::answer::Answer,
    out: &std::path::Path,
    loc: Option<&crate::history::Location>,
) {
    // An interrupted confirmation is no result (a resumed tune runs it again).
    let Some(stage) = answer
        .stages
        .iter()
        .rev()
        .find(|s| s.stage == "confirmation")
        .filter(|_| answer.complete)
    else {
        return;
    };
    let from = std::path::Path::new(&stage.out).join("results.json");
    let results = match crate::results::Results::load(&from) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fsbench: warning: the confirmation's results are not readable ({e})");
            return;
        }
    };
    let results = crate::report::json::with_judgements(&results).unwrap_or(results);
    if let Err(e) = results.save(&out.join("results.json")) {
        eprintln!(
            "fsbench: warning: cannot write {}/results.json: {e}",
            out.display()
        );
        return;
    }
    if let Err(e) = crate::report::write_run_reports(&results, out) {
        eprintln!("fsbench: warning: cannot write report.md / report.html: {e}");
    }
    crate::history::record::after_run(loc, &results, out, "tune");
}

/// What a tune creates: its directory, a run directory per stage, the answer's files.
fn creates(out: &std::path::Path, s: &Settings, inv: &crate::plan::Invocation) -> Creates {
    let crash = s.allow_unsafe;
    let mut stage_dirs: Vec<String> = if s.given.is_empty() {
        let mut dirs = vec!["1-screening".to_string()];
        if s.screen_looks > 0 {
            dirs.push(format!(
                "<n>-screening-2 … <n>-screening-{} (its later looks, as many as run)",
                1 + s.screen_looks
            ));
        }
        dirs.push(format!(
            "<n>-race-1 … <n>-race-{} (as many looks as run)",
            s.race_looks
        ));
        dirs.push("<n>-confirmation".into());
        dirs
    } else {
        vec!["1-confirmation".into()]
    };
    if crash {
        stage_dirs.push("<n>-crash (a durability-weakening winner)".into());
    }
    Creates {
        out: out.display().to_string(),
        stage_dirs,
        files: [
            "tune.json",
            "tune-journal.json",
            "tune.html",
            "results.json",
        ]
        .map(String::from)
        .to_vec(),
        target: if inv.plan.by_step {
            // Rounds by steps hold every setup's image at once: the disk space a stage takes.
            format!(
                "{} per setup of the stage, all made at each round's start",
                inv.options.multi.describe(&inv.options.target)
            )
        } else {
            inv.options.multi.describe(&inv.options.target)
        },
        images: None,
    }
}

/// Shrink `base`'s images so that the `largest` stage's, one per setup by steps, fit in the
/// scratch directory (`tune::images`); the sentence saying so, when they were shrunk.
fn fit_images(base: &mut Overrides, largest: usize) -> Option<String> {
    let on_image = base.device.is_none() && base.dir.is_none() && base.images <= 1;
    if !on_image || base.values.by_setup {
        return None;
    }
    let free = crate::host::sys::available_bytes(&base.scratch_dir)?;
    let size = crate::tune::images::fitted(base.image_size, largest, free);
    if size == base.image_size {
        return None;
    }
    let fmt = crate::units::format_size;
    let why = format!(
        "images of {}, not {}: the largest stage holds {largest} setups' images at once \
         (rounds by steps), and {largest} × {} would not fit in {} ({} free); --image-size \
         sets it",
        fmt(size),
        fmt(base.image_size),
        fmt(base.image_size),
        base.scratch_dir.display(),
        fmt(free)
    );
    base.image_size = size;
    Some(why)
}

/// The programs the stages need (their filesystems and workloads) that are not installed.
fn missing(inv: &crate::plan::Invocation) -> Missing {
    use crate::doctor::{in_run, install, tools};
    let p = install::plan_here(&tools::needs(&in_run::wants(inv)));
    Missing {
        packages: p
            .reasons
            .into_iter()
            .map(|(name, needed_for)| Package { name, needed_for })
            .collect(),
        unpackaged: p
            .unpackaged
            .into_iter()
            .map(|(tool, by)| format!("{tool} (for {by})"))
            .collect(),
    }
}

/// `./fsbench-results/tune-20261206T060000Z`.
fn default_out() -> PathBuf {
    let stamp: String = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    PathBuf::from("fsbench-results").join(format!("tune-{stamp}"))
}

/// Stages as real fsbench runs, each in `OUT/<n>-<stage>/`, journaled as they finish.
struct Real {
    base: Overrides,
    out: PathBuf,
    next: usize,
    argv: Vec<String>,
    /// The interrupted tune's journal (empty when fresh).
    old: Journal,
    /// Whether stages are still read back from `old` (until the first that runs for real).
    replaying: bool,
    /// This tune's journal, saved after each finished stage.
    journal: Journal,
    /// The recorded seconds of the stages read back.
    read_back_s: f64,
}

impl Real {
    /// The invocation of `variants` for `rounds` rounds (all the checks of `run`).
    fn inv(
        &self,
        base: &Overrides,
        variants: &[String],
        rounds: u32,
        out: PathBuf,
    ) -> crate::Result<crate::plan::Invocation> {
        let mut o = base.clone();
        if !variants.is_empty() {
            o.fs = variants.to_vec();
        }
        o.values.rounds = Some(rounds);
        o.out = Some(out);
        super::prepare::prepare(&o, self.argv.clone())
    }
}

impl Real {
    /// Stage `n` read back from the interrupted tune's journal when it finished there with
    /// the same setups and rounds; `None` (and no more reading back) otherwise.
    fn read_back(
        &mut self,
        n: usize,
        stage: &str,
        variants: &[String],
        rounds: u32,
    ) -> crate::Result<Option<StageRun>> {
        if !self.replaying {
            return Ok(None);
        }
        let Some(e) = self.old.replay(n, stage, variants, rounds).cloned() else {
            self.replaying = false;
            return Ok(None);
        };
        let results = crate::results::Results::load(&e.out.join("results.json"))?;
        crate::host::stdio::note(&format!(
            "fsbench tune: {stage}: finished before, read back from {}",
            e.out.display()
        ));
        self.read_back_s += e.seconds;
        self.journal.stages.push(e.clone());
        self.journal.save(&self.out)?;
        Ok(Some(StageRun {
            results,
            interrupted: false,
            out: e.out.display().to_string(),
            // Its time then: the search's pace compares it with the estimate.
            seconds: e.seconds,
        }))
    }
}

impl Runs for Real {
    fn estimate(&mut self, variants: &[String], rounds: u32) -> crate::Result<f64> {
        self.eta(&self.base, variants, rounds)
    }

    fn run(&mut self, stage: &str, variants: &[String], rounds: u32) -> crate::Result<StageRun> {
        let base = self.base.clone();
        self.staged(stage, variants, rounds, &base)
    }

    fn crash(&mut self, variants: &[String]) -> crate::Result<StageRun> {
        let base = self.crash_base();
        self.staged("crash", variants, 1, &base)
    }

    fn estimate_crash(&mut self, variants: &[String]) -> crate::Result<f64> {
        self.eta(&self.crash_base(), variants, 1)
    }
}

impl Real {
    /// The plan's ETA of `variants` for `rounds` rounds of `base`'s workload, seconds.
    fn eta(&self, base: &Overrides, variants: &[String], rounds: u32) -> crate::Result<f64> {
        let inv = self.inv(base, variants, rounds, self.out.clone())?;
        Ok(crate::plan::eta::total(&inv.plan, inv.options.target.formats()).as_secs_f64())
    }

    /// The crash check's overrides: the same target and scratch directory, the crash
    /// workload alone, once.
    fn crash_base(&self) -> Overrides {
        let mut base = self.base.clone();
        base.only = vec![search::CRASH_WORKLOAD.to_string()];
        base.skip.clear();
        base.profile = None;
        base.plan = None;
        base.fio_job.clear();
        base.replay.clear();
        base
    }
}

impl Real {
    /// Stage `stage` of `variants` for `rounds` rounds of `base`'s workload, read back from the
    /// interrupted tune's journal or run in `OUT/<n>-<stage>/` and journaled.
    fn staged(
        &mut self,
        stage: &str,
        variants: &[String],
        rounds: u32,
        base: &Overrides,
    ) -> crate::Result<StageRun> {
        let n = self.next;
        self.next += 1;
        if let Some(done) = self.read_back(n, stage, variants, rounds)? {
            return Ok(done);
        }
        // A directory of the interrupted tune (a stage it did not finish) is kept as it is.
        let mut out = self.out.join(format!("{}-{stage}", self.next));
        let mut again = 1;
        while out.exists() {
            again += 1;
            out = self.out.join(format!("{}-{stage}-{again}", self.next));
        }
        let inv = self.inv(base, variants, rounds, out.clone())?;
        let eta = crate::plan::eta::total(&inv.plan, inv.options.target.formats());
        crate::host::stdio::note(&format!(
            "fsbench tune: {stage}: {} setups × {rounds} rounds, ≈ {} → {}",
            variants.len(),
            crate::plan::eta::format(eta),
            out.display()
        ));
        let start = Instant::now();
        let o = crate::runner::execute_with(&inv, false, None)?;
        // One reading: the journal and the answer hold the same time (a resume reads it back).
        let seconds = start.elapsed().as_secs_f64();
        if !o.interrupted {
            self.journal.stages.push(Entry {
                stage: stage.to_string(),
                variants: variants.to_vec(),
                rounds,
                out: out.clone(),
                seconds,
            });
            self.journal.save(&self.out)?;
        }
        Ok(StageRun {
            results: o.results,
            interrupted: o.interrupted,
            out: out.display().to_string(),
            seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_resume_names_the_flags_it_ignores_but_not_those_it_honours() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let ignored = super::ignored_on_resume;
        assert!(ignored(&words("tune --dry-run")).is_empty());
        assert!(ignored(&words("plan tune --json -o plan.json --output=x")).is_empty());
        assert_eq!(
            ignored(&words("plan tune --budget 5m --dry-run")),
            ["--budget", "5m"]
        );
    }
}
