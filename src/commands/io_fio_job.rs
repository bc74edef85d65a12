//! `fsbench io --fio-job FILE --dir PATH | --filename PATH`: one job file, once, on an
//! existing path, without a filesystem lifecycle, through the runner like `fsbench io`'s
//! own job: the file's sections become `fio-job` workloads of `io`'s in-memory plan
//! ([`super::io_plan::fio_job_invocation`]), one round; phases run in order with caches
//! dropped before each, a section fio rejects is a failed step and the next phase still
//! runs. With `--dir` the job's files go in the runner's own directory inside PATH
//! (`PATH/fsbench-<run>/fio-<file>/`, removed when the run ends); with `--filename` every
//! section uses that file and nothing else is made. The sections are rendered by
//! `report::io` and recorded in the history store (`records`).

use crate::Error;
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::fio::jobfile::{self, LoadOptions, rebase::Place};
use crate::scratch::TargetKind;
use std::path::Path;

/// Run the job file; exit 0 when every section ran, 1 when one failed.
pub fn run(args: &IoArgs, file: &Path) -> crate::Result<i32> {
    let (place, target, budget) = match (&args.dir, &args.filename) {
        (Some(d), None) => {
            if !d.is_dir() {
                return Err(Error::invalid(
                    "--dir",
                    format!("{} is not an existing directory", d.display()),
                ));
            }
            let target = TargetKind::Dir { path: d.clone() };
            (Place::DataDir, target, avail(d))
        }
        (None, Some(f)) => {
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            let budget = if crate::scratch::file::is_block_device(f) {
                None
            } else {
                avail(&crate::engine::validate::directory_of(f))
            };
            let target = TargetKind::File { path: abs.clone() };
            (Place::File(abs), target, budget)
        }
        _ => {
            return Err(Error::invalid(
                "--fio-job",
                "give --dir PATH (the job's files go in fsbench's own directory inside it) or --filename PATH (every job uses that file or device)",
            ));
        }
    };
    let native = args.engine == Some(EngineChoice::Fsbench);
    if !native && !crate::host::command::available("fio") {
        return Err(Error::invalid(
            "--fio-job",
            "fio is not installed; job files run with fio (install it) or natively with --engine native",
        ));
    }
    let opts = LoadOptions {
        place,
        budget,
        runtime: args.runtime,
        ramp: (!args.ramp.is_zero()).then_some(args.ramp),
        native,
    };
    let text = jobfile::read(file)?;
    crate::plan::params::jobfile::check(&text)?;
    let jobs = jobfile::prepare(file, &text, &opts)?;
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let inv = super::io_plan::fio_job_invocation(jobs, target, !args.no_settle);
    let outcome = crate::runner::execute_with(&inv, false, None)?;
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let sections = super::io_plan::fio_sections(&inv.plan, &outcome.results);
    if args.json || args.output_format == OutputFormat::Json {
        super::output::print(&crate::report::io::fio_job_json(&sections)?);
    } else {
        super::output::print(&crate::report::io::fio_job_summary(&sections));
    }
    let at = args
        .dir
        .as_deref()
        .or(args.filename.as_deref())
        .unwrap_or(file);
    super::records::fio_job(history.as_ref(), &started, at, &outcome.results);
    Ok(super::ending::exit_code(&outcome))
}

/// Half the space available in `dir`: an existing filesystem is usually shared, and fio
/// allocates a job's whole `size=` up front even when `runtime=` ends it early.
fn avail(dir: &Path) -> Option<u64> {
    rustix::fs::statvfs(dir)
        .ok()
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize) / 2)
}
