//! `fsbench run`: resolve flags (or reload `OUT/plan.json` for `--resume`), release what
//! killed runs left behind (the ledger), print the plan and its ETA, execute it, then print the
//! seed-style table.

use crate::Error;
use crate::cli::run::RunArgs;
use crate::host::stdio::{self, note};
use crate::plan::Invocation;

/// `fsbench tune` resolves its stages as `run` does.
use super::prepare::prepare;

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
    let judge = crate::report::open_questions::ClaimsAndHeadline;
    let outcome = crate::runner::execute_judged(&inv, resume, None, Some(&judge))?;
    let out = &inv.options.out;
    let ending = super::ending::Ending {
        history: history.as_ref(),
        json: args.json,
        interrupted: format!(
            "fsbench: interrupted; everything was released. Partial results: {}\n\
             fsbench: continue with: fsbench run --resume {}",
            out.join("results.json").display(),
            out.display()
        ),
        preface: None,
        source: "run",
    };
    super::ending::finish(outcome, out, ending, relay)
}

#[cfg(feature = "mpi")]
fn run_mpi(args: RunArgs) -> crate::Result<i32> {
    super::run_mpi::run(args)
}

/// Without the feature, `--mpi` exists but refuses (exit 2), as `io --mpi` does.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: RunArgs) -> crate::Result<i32> {
    Err(super::output::without_mpi())
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
