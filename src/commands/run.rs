//! `fsbench run`: resolve flags (or reload `OUT/plan.json` for `--resume`), print the plan and
//! its ETA, execute it, then print the seed-style table.

use crate::cli::run::RunArgs;
use crate::error::{EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK};
use crate::plan::{Invocation, resolve::resolve};

/// Run `fsbench run`; returns the exit code.
pub fn run(args: RunArgs) -> crate::Result<i32> {
    let (inv, resume) = match &args.resume {
        Some(out) => {
            eprintln!(
                "fsbench: resuming with the options saved in {}; other flags (except --json) are ignored",
                Invocation::path(out).display()
            );
            (Invocation::load(out)?, true)
        }
        None => (resolve(&args, std::env::args().collect())?, false),
    };
    eprint!(
        "{}",
        super::plan::summary(&inv, super::plan::ResultsLine::Run)
    );
    let outcome = crate::runner::execute(&inv, resume)?;
    let out = &inv.options.out;
    // Reports are derived from results.json (re-render any time with `fsbench report`), so a
    // failure to write them is a warning, never a reason to lose the run.
    if let Err(e) = crate::report::write_run_reports(&outcome.results, out) {
        eprintln!("fsbench: warning: cannot write report.md / report.html: {e}");
    }
    if outcome.interrupted {
        eprintln!(
            "fsbench: interrupted; everything was released. Partial results: {}\n\
             fsbench: continue with: fsbench run --resume {}",
            out.join("results.json").display(),
            out.display()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    let table = crate::report::render_terminal(&outcome.results);
    if args.json {
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
        "fsbench: results: {} (reports: report.md, report.html beside it)",
        out.join("results.json").display()
    );
    Ok(if outcome.results.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}
