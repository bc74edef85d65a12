//! `fsbench plan`: print what `fsbench run` would do with the same flags — the expanded steps,
//! the ETA and the equivalent fio command of every I/O job — without touching anything. The
//! text is rendered by [`crate::report::plan`]. `fsbench plan tune …` prints what
//! `fsbench tune` would do instead ([`crate::tune::preview`], the text of `tune --dry-run`).

use crate::cli::run::PlanArgs;
use crate::cli::tune::{PlanOf, PlanTuneArgs};
use crate::plan::Invocation;
use crate::report::plan::{ResultsLine, fio_script, steps_table, summary};

/// Run `fsbench plan`; returns the exit code.
pub fn run(args: PlanArgs) -> crate::Result<i32> {
    if let Some(PlanOf::Tune(t)) = args.of {
        return tune(t);
    }
    let inv = match &args.plan.resume {
        Some(out) => Invocation::load(out)?,
        None => super::prepare::prepare(&args.plan.overrides(), std::env::args().collect())?,
    };
    if args.plan.install_missing {
        // What `fsbench run --install-missing` would install; plan never changes the host.
        crate::doctor::in_run::install_missing(&inv, true)?;
    }
    let output = args.output.as_deref();
    if args.emit_fio {
        super::emit(output, fio_script(&inv).as_bytes())?;
        return Ok(0);
    }
    let results = if args.plan.out.is_some() || args.plan.resume.is_some() {
        ResultsLine::PlannedIn
    } else {
        ResultsLine::PlannedDefault
    };
    // What the history store says about this device's noise goes under the estimate; the
    // store is read here, not by the renderer (report sits below history).
    let doc = format!(
        "{}{}\n{}\n{}",
        summary(&inv, results),
        crate::report::history_noise::plan_lines(&inv),
        steps_table(&inv),
        fio_script(&inv)
    );
    super::emit(output, doc.as_bytes())?;
    Ok(0)
}

/// `fsbench plan tune`: tune's stages and budget, as text or JSON.
fn tune(args: Box<PlanTuneArgs>) -> crate::Result<i32> {
    let args = *args;
    let preview = super::tune::plan(args.tune)?;
    let doc = if args.json {
        serde_json::to_string_pretty(&preview)
            .map_err(|e| crate::Error::Other(format!("cannot serialize tune's plan: {e}")))?
            + "\n"
    } else {
        preview.render()
    };
    super::emit(args.output.as_deref(), doc.as_bytes())?;
    Ok(crate::error::EXIT_OK)
}
