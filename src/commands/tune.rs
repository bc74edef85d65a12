//! `fsbench tune`: read the baselines and the option subset (bad input: exit 2, nothing
//! created), check the budget against the stages' estimates, then run the search
//! ([`crate::tune::search`]) with every stage a real fsbench run through the runner
//! (`run::prepare` ─► `runner::execute_with`, rounds by steps), and print the answer first,
//! saving it as `OUT/tune.json`.

use crate::Error;
use crate::cli::tune::TuneArgs;
use crate::plan::Overrides;
use crate::tune::candidate::{Candidate, baseline_of};
use crate::tune::search::{self, Filter, Runs, Settings, StageRun};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The search's wall time without `--budget`.
const DEFAULT_BUDGET: Duration = Duration::from_secs(3600);
/// Each stage's rounds without `--rounds`.
const DEFAULT_ROUNDS: u32 = 3;
/// Combinations raced per filesystem and durability class at most.
const RACE_CAP: usize = 8;
/// Race looks at most.
const RACE_LOOKS: u32 = 3;

/// Run `fsbench tune`; returns the exit code.
pub fn run(args: TuneArgs) -> crate::Result<i32> {
    refuse_flags(&args)?;
    let mut base = args.plan.overrides();
    base.yes = args.yes;
    let fs_words: Vec<String> = if args.plan.fs.is_empty() {
        crate::plan::resolve::default_fs(crate::host::zfs::kernel())
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        args.plan.fs.clone()
    };
    let setups = crate::plan::setup_syntax::parse_fs_list(&fs_words)?;
    let baselines: Vec<Candidate> = setups.iter().map(baseline_of).collect::<Result<_, _>>()?;
    let filter = Filter(args.options.clone());
    let unknown = search::unknown_options(&filter, &baselines);
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
    let rounds = base.values.rounds.unwrap_or(DEFAULT_ROUNDS).max(2);
    let settings = Settings {
        screen_rounds: rounds,
        race_rounds: 2,
        race_looks: RACE_LOOKS,
        confirm_rounds: rounds,
        cap: RACE_CAP,
        allow_unsafe: args.allow_unsafe,
        budget_s: base.values.budget.unwrap_or(DEFAULT_BUDGET).as_secs_f64(),
        allowed: search::allowed,
        filter,
    };
    let out = base.out.clone().unwrap_or_else(default_out);
    if out.join("tune.json").exists() {
        return Err(Error::invalid(
            "--out",
            format!(
                "{} already holds a tune; choose another --out",
                out.display()
            ),
        ));
    }
    base.values.rounds = None;
    base.values.until_settled = false;
    base.values.budget = None;
    let mut runs = Real {
        base,
        out: out.clone(),
        next: 0,
        argv: std::env::args().collect(),
    };
    // The stages and the budget check, before anything is created.
    let preview = search::preview(&mut runs, &baselines, &settings)?;
    if args.dry_run {
        print!("{preview}");
        return Ok(crate::error::EXIT_OK);
    }
    eprint!("{preview}");
    if rustix::process::geteuid().is_root() {
        crate::host::ledger::recover_and_report();
    }
    if let crate::scratch::TargetKind::Device { path, .. } =
        &runs.inv(&[], 2, out.clone())?.options.target
    {
        crate::scratch::consent::preflight(path, args.yes)?;
    }
    let relay = crate::host::stdio::Relay::install();
    let answer = search::run(&mut runs, &baselines, &settings)?;
    std::fs::create_dir_all(&out)
        .map_err(|e| Error::Other(format!("cannot create {}: {e}", out.display())))?;
    let path = out.join("tune.json");
    let text = serde_json::to_string_pretty(&answer)
        .map_err(|e| Error::Other(format!("cannot serialize the answer: {e}")))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
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

/// What tune does not take (exit 2): a resumed or sequential run, a directory (nothing to
/// format), aging, claims.
fn refuse_flags(a: &TuneArgs) -> crate::Result<()> {
    let p = &a.plan;
    let refused = [
        (
            p.resume.is_some(),
            "--resume",
            "tune cannot resume yet; run it again",
        ),
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

/// `./fsbench-results/tune-20261206T060000Z`.
fn default_out() -> PathBuf {
    let stamp: String = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    PathBuf::from("fsbench-results").join(format!("tune-{stamp}"))
}

/// Stages as real fsbench runs, each in `OUT/<n>-<stage>/`.
struct Real {
    base: Overrides,
    out: PathBuf,
    next: usize,
    argv: Vec<String>,
}

impl Real {
    /// The invocation of `variants` for `rounds` rounds (all the checks of `run`).
    fn inv(
        &self,
        variants: &[String],
        rounds: u32,
        out: PathBuf,
    ) -> crate::Result<crate::plan::Invocation> {
        let mut o = self.base.clone();
        if !variants.is_empty() {
            o.fs = variants.to_vec();
        }
        o.values.rounds = Some(rounds);
        o.out = Some(out);
        super::run::prepare(&o, self.argv.clone())
    }
}

impl Runs for Real {
    fn estimate(&mut self, variants: &[String], rounds: u32) -> crate::Result<f64> {
        let inv = self.inv(variants, rounds, self.out.clone())?;
        Ok(crate::plan::eta::total(&inv.plan, inv.options.target.formats()).as_secs_f64())
    }

    fn run(&mut self, stage: &str, variants: &[String], rounds: u32) -> crate::Result<StageRun> {
        self.next += 1;
        let out = self.out.join(format!("{}-{stage}", self.next));
        let inv = self.inv(variants, rounds, out.clone())?;
        let eta = crate::plan::eta::total(&inv.plan, inv.options.target.formats());
        crate::host::stdio::note(&format!(
            "fsbench tune: {stage}: {} setups × {rounds} rounds, ≈ {} → {}",
            variants.len(),
            crate::plan::eta::format(eta),
            out.display()
        ));
        let start = Instant::now();
        let o = crate::runner::execute_with(&inv, false, None)?;
        Ok(StageRun {
            results: o.results,
            interrupted: o.interrupted,
            out: out.display().to_string(),
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}
