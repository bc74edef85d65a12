//! How a measuring command ends: the exit code of a runner outcome, and `fsbench run`'s
//! ending (judgements, reports, history record, table), the same for a single process and
//! rank 0 of `run --mpi`. Shared by the commands so none imports another.

use crate::error::{EXIT_FAILURE, EXIT_OK};
use crate::host::stdio::{self, note};
use std::path::Path;

/// How a run ends, for [`finish`]: where it is recorded and what is said besides the table.
pub(crate) struct Ending<'a> {
    /// The history store the run is recorded into, if any.
    pub(crate) history: Option<&'a crate::history::Location>,
    /// `--json`: the results document on stdout, the table on stderr.
    pub(crate) json: bool,
    /// What an interrupted run says (where its partial results are, how to go on).
    pub(crate) interrupted: String,
    /// Lines printed before the table (`run --mpi`: the ranks, hosts and library).
    pub(crate) preface: Option<String>,
    /// The command the history names as the run's source (`run`, `run --mpi`).
    pub(crate) source: &'a str,
}

/// The end of `fsbench run`, the same for a single process and rank 0 of `fsbench run
/// --mpi`: the judgements added to results.json, the reports, the history record, the table
/// (or JSON) and the failures, then, once `relay` (the stdout/stderr relays, dropped here)
/// has delivered everything, a write that failed noted in results.json. Returns the exit
/// code.
pub(crate) fn finish<R>(
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
    crate::history::record::after_run(end.history, &outcome.results, out, end.source);
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
pub(crate) fn exit_code(outcome: &crate::runner::Outcome) -> i32 {
    if outcome.interrupted {
        crate::cancel::exit_code()
    } else if outcome.results.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    }
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
