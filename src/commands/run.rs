//! `fsbench run`: resolve flags (or reload `OUT/plan.json` for `--resume`), release what
//! killed runs left behind (the ledger), print the plan and its ETA, execute it, then print the
//! seed-style table.

use crate::Error;
use crate::cli::run::RunArgs;
use crate::error::{EXIT_FAILURE, EXIT_OK};
use crate::host::facts::{HostFacts, Query};
use crate::host::stdio::{self, note};
use crate::plan::resolve::{Source, resolve};
use crate::plan::{Invocation, Overrides, WorkloadSpec};
use std::path::Path;

/// Resolve `run`/`plan` overrides into an invocation: read the plan and job files, gather the
/// host facts once, resolve (pure), then the checks that ask this kernel and the installed
/// tools about the resolved plan. Every refusal is exit 2 with nothing created.
pub fn prepare(o: &Overrides, argv: Vec<String>) -> crate::Result<Invocation> {
    // Traces alone ask for the setups and the traces: `usable-space` (statvfs, with `mkfs`
    // where the run formats) is the one catalog workload kept, so nothing else (a corpus, a
    // data file) is planned or checked against the target.
    let with_only;
    let replay_only =
        !o.replay.is_empty() && o.plan.is_none() && o.profile.is_none() && o.only.is_empty();
    let o = if replay_only {
        with_only = Overrides {
            only: vec!["usable-space".into()],
            ..o.clone()
        };
        &with_only
    } else {
        o
    };
    let mut source = Source::read(o)?;
    let narrowed;
    let o = if o.claims_for.is_empty() {
        o
    } else {
        let claims = crate::claims::subset::pick(&o.claims_for)?;
        let only = crate::claims::subset::narrow(&claims, &mut source.draft)?;
        narrowed = Overrides { only, ..o.clone() };
        &narrowed
    };
    let mut paths: Vec<&Path> = Vec::new();
    paths.extend(o.corpus_from.as_deref());
    paths.extend(o.corpus_file.as_deref());
    let facts = HostFacts::gather(&Query {
        device: o.device.as_deref(),
        dir: o.dir.as_deref(),
        scratch_dir: Some(&o.scratch_dir),
        tools: &["fio"],
        paths,
    });
    // A device in use (mounted, swap, a pool member, carrying data without --force-wipe) is
    // the refusal that matters most, so it comes before any complaint about sizes.
    if let (Some(dev), Some(Ok(()))) = (o.device.as_deref(), &facts.device) {
        crate::scratch::safety::check_device(dev, o.force_wipe)?;
        for more in &o.more_devices {
            crate::scratch::safety::check_device(more, o.force_wipe)?;
        }
    }
    let mut inv = resolve(&source, o, &facts, argv.clone())?;
    // Host tunings against this kernel and target: a key or value it refuses stops here. A
    // setup the user named that asks for what this kernel lacks is refused too; one a shipped
    // profile brought is left out with a note, and the plan resolved again without it, so a
    // profile runs on any kernel that can run fsbench.
    let missing = crate::host::tuning::validate(host_settings(&inv), queue_of(&inv))?;
    if !missing.is_empty() {
        let from_profile = o.fs.is_empty() && !source.from_file;
        source
            .draft
            .setups
            .retain(|s| !missing.iter().any(|m| m.setup == s.name));
        if !from_profile || source.draft.setups.is_empty() {
            return Err(missing[0].refusal());
        }
        inv = resolve(&source, o, &facts, argv)?;
        inv.options.left_out = missing
            .iter()
            .map(|m| format!("{} left out: {}", m.setup, m.why))
            .collect();
    }
    crate::plan::resolve::apply_kind_flags(o, &mut inv.plan.workloads)?;
    crate::workload::replay::kind::apply_flag(&mut inv.plan.workloads, &o.replay)?;
    check_workloads_on_host(&inv.plan.workloads)?;
    Ok(inv)
}

/// Every setup's host tunings, by name.
fn host_settings(
    inv: &Invocation,
) -> impl Iterator<Item = (&str, &[crate::host::tuning::HostSetting])> {
    inv.plan
        .setups
        .iter()
        .map(|s| (s.name.as_str(), &s.host[..]))
}

/// Whose queue a setup's queue keys would change.
fn queue_of(inv: &Invocation) -> crate::host::tuning::QueueOf<'_> {
    use crate::host::tuning::QueueOf;
    use crate::scratch::TargetKind;
    match &inv.options.target {
        TargetKind::Dir { .. } => QueueOf::Dir,
        TargetKind::Device { path, .. } => QueueOf::Device(path),
        TargetKind::Image { .. } => QueueOf::Image,
    }
}

/// Each selected workload's own checks against what is installed ([`Workload::check_host`]:
/// pgbench's PostgreSQL setting names).
///
/// [`Workload::check_host`]: crate::workload::registry::Workload::check_host
fn check_workloads_on_host(workloads: &[WorkloadSpec]) -> crate::Result<()> {
    for w in workloads.iter().filter(|w| w.record) {
        crate::workload::registry::of(w.kind)
            .check_host(w)
            .map_err(|e| Error::invalid(format!("workload '{}'", w.id), e))?;
    }
    Ok(())
}

/// Run `fsbench run`; returns the exit code.
pub fn run(args: RunArgs) -> crate::Result<i32> {
    if args.emit_fio {
        return Err(Error::invalid(
            "--emit-fio",
            "`fsbench run` runs the jobs and does not print fio commands; use `fsbench plan \
             --emit-fio` with the same flags to see them",
        ));
    }
    if args.mpi {
        return run_mpi(args);
    }
    // From here on a closed pipe or a vanished terminal cannot make a write fail (and panic).
    let relay = stdio::Relay::install();
    let (mut inv, resume) = match &args.plan.resume {
        Some(out) => {
            note(&format!(
                "fsbench: resuming with the options saved in {}; other flags (except --json \
                 and --yes) are ignored",
                Invocation::path(out).display()
            ));
            let inv = Invocation::load(out)?;
            crate::plan::resolve::check_variant_args(&inv.plan.setups, &inv.options.target)?;
            (inv, true)
        }
        None => (
            prepare(&args.overrides(), std::env::args().collect())?,
            false,
        ),
    };
    // --yes counts on resume too; a device run saved without it asks again (or refuses
    // without a terminal) before the plan is even printed.
    inv.options.yes |= args.yes;
    if let crate::scratch::TargetKind::Device { path, .. } = &inv.options.target {
        crate::scratch::consent::preflight(path, inv.options.yes)?;
    }
    if rustix::process::geteuid().is_root() {
        // What a killed fsbench held (mounts, loop devices, images, settings) goes first.
        crate::host::ledger::recover_and_report();
    }
    if args.plan.install_missing {
        // Before the summary, so its "skipped: not installed" notes reflect the new state.
        crate::doctor::in_run::install_missing(&inv, false)?;
    }
    // A bad --store is bad input: refused before anything is created.
    let history = args.history.settings().resolve()?;
    eprint!(
        "{}",
        crate::report::plan::summary(&inv, crate::report::plan::ResultsLine::Run)
    );
    // --until-settled: the claims and headline rows decide which rounds come after the minimum.
    let judge = crate::claims::open_questions::ClaimsAndHeadline;
    let outcome = crate::runner::execute_judged(&inv, resume, None, Some(&judge))?;
    let out = &inv.options.out;
    let ending = Ending {
        history: history.as_ref(),
        json: args.json,
        interrupted: format!(
            "fsbench: interrupted; everything was released. Partial results: {}\n\
             fsbench: continue with: fsbench run --resume {}",
            out.join("results.json").display(),
            out.display()
        ),
        preface: None,
    };
    finish(outcome, out, ending, relay)
}

/// How a run ends, for [`finish`]: where it is recorded and what is said besides the table.
pub(super) struct Ending<'a> {
    /// The history store the run is recorded into, if any.
    pub(super) history: Option<&'a crate::history::Location>,
    /// `--json`: the results document on stdout, the table on stderr.
    pub(super) json: bool,
    /// What an interrupted run says (where its partial results are, how to go on).
    pub(super) interrupted: String,
    /// Lines printed before the table (`run --mpi`: the ranks, hosts and library).
    pub(super) preface: Option<String>,
}

/// The end of `fsbench run`, the same for a single process and rank 0 of `fsbench run
/// --mpi`: the judgements added to results.json, the reports, the history record, the table
/// (or JSON) and the failures, then, once `relay` (the stdout/stderr relays, dropped here)
/// has delivered everything, a write that failed noted in results.json. Returns the exit
/// code.
pub(super) fn finish<R>(
    mut outcome: crate::runner::Outcome,
    out: &Path,
    end: Ending<'_>,
    relay: R,
) -> crate::Result<i32> {
    // What fsbench concluded goes into results.json beside the samples it came from, so a
    // script reads the judgements without re-implementing them; derived data, so a failure
    // to add them is a warning.
    match crate::report::json::with_judgements(&outcome.results) {
        Ok(judged) => {
            if let Err(e) = judged.save(&out.join("results.json")) {
                eprintln!("fsbench: warning: cannot add the judgements to results.json: {e}");
            }
            outcome.results = judged;
        }
        Err(e) => eprintln!("fsbench: warning: {e}"),
    }
    // Reports are derived from results.json (re-render any time with `fsbench report`), so a
    // failure to write them is a warning, never a reason to lose the run.
    if let Err(e) = crate::report::write_run_reports(&outcome.results, out) {
        eprintln!("fsbench: warning: cannot write report.md / report.html: {e}");
    }
    crate::history::record::after_run(end.history, &outcome.results, out, "run");
    if outcome.interrupted {
        eprintln!("{}", end.interrupted);
        drop(relay);
        note_output_error(&mut outcome.results, out);
        return Ok(exit_code(&outcome));
    }
    if let Some(p) = &end.preface {
        eprintln!("{p}");
    }
    let table = crate::report::render_terminal(&outcome.results);
    if end.json {
        eprint!("{table}");
        let text = serde_json::to_string_pretty(&outcome.results)
            .map_err(|e| crate::Error::Other(format!("cannot serialize results: {e}")))?;
        println!("{text}");
    } else {
        print!("{table}");
    }
    for f in &outcome.results.failures {
        eprintln!(
            "fsbench: failed: {} round {} {}: {}",
            f.setup, f.round, f.workload, f.error
        );
    }
    eprintln!(
        "fsbench: results: {}\n\
         fsbench: every metric, per-round values and charts: {} and {}",
        out.join("results.json").display(),
        out.join("report.md").display(),
        out.join("report.html").display()
    );
    // Wait for the relays to deliver everything, so a write that failed at the very end is
    // known before the process exits.
    drop(relay);
    note_output_error(&mut outcome.results, out);
    Ok(exit_code(&outcome))
}

/// A run's exit code: the signal's after Ctrl-C, failure when any step failed, else success.
pub(super) fn exit_code(outcome: &crate::runner::Outcome) -> i32 {
    if outcome.interrupted {
        crate::cancel::exit_code()
    } else if outcome.results.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    }
}

#[cfg(feature = "mpi")]
fn run_mpi(args: RunArgs) -> crate::Result<i32> {
    super::run_mpi::run(args)
}

/// Without the feature, `--mpi` exists but refuses (exit 2), as `io --mpi` does.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: RunArgs) -> crate::Result<i32> {
    Err(super::io::without_mpi())
}

/// A write to stdout/stderr that failed after results.json was saved is added to its notes.
fn note_output_error(results: &mut crate::results::Results, out: &std::path::Path) {
    let Some(e) = stdio::error() else { return };
    if results.notes.iter().any(|n| n.message == e) {
        return;
    }
    results.notes.push(crate::results::Warning {
        setup: String::new(),
        round: 0,
        message: e.to_string(),
    });
    if let Err(err) = results.save(&out.join("results.json")) {
        note(&format!("fsbench: warning: {err}"));
    }
}

#[cfg(all(test, not(feature = "mpi")))]
mod tests {
    use clap::Parser;

    #[test]
    fn mpi_without_the_feature_is_refused_with_exit_2() {
        let cli =
            crate::cli::Cli::try_parse_from(["fsbench", "run", "--mpi", "--dir", "/tmp"]).unwrap();
        let crate::cli::Command::Run(args) = cli.command else {
            panic!("not run")
        };
        let e = super::run(args).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--features mpi"), "{e}");
    }
}
