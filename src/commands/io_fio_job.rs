//! `fsbench io --fio-job FILE --dir PATH | --filename PATH`: one job file, once, on an
//! existing path, without a filesystem lifecycle. Phases run in order with caches dropped
//! before each; a phase fio rejects is reported and the next one still runs.

use crate::Error;
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::fio::jobfile::{self, FioJob, LoadOptions, rebase::Place};
use crate::workload::WorkloadOutput;
use std::path::Path;

/// Run the job file; exit 0 when every section ran, 1 when one failed.
pub fn run(args: &IoArgs, file: &Path) -> crate::Result<i32> {
    let (place, dir, budget) = match (&args.dir, &args.filename) {
        (Some(d), None) => {
            if !d.is_dir() {
                return Err(Error::invalid(
                    "--dir",
                    format!("{} is not an existing directory", d.display()),
                ));
            }
            (Place::DataDir, d.clone(), avail(d))
        }
        (None, Some(f)) => {
            let parent = crate::engine::validate::directory_of(f);
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            (
                Place::File(abs),
                parent.clone(),
                if crate::scratch::file::is_block_device(f) {
                    None
                } else {
                    avail(&parent)
                },
            )
        }
        _ => {
            return Err(Error::invalid(
                "--fio-job",
                "give --dir PATH (the job's files go there) or --filename PATH (every job uses that file or device)",
            ));
        }
    };
    let native = args.engine == Some(EngineChoice::Fsbench);
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
    let mut phases: Vec<Vec<&FioJob>> = Vec::new();
    for j in &jobs {
        match phases.last_mut() {
            Some(p) if p[0].phase == j.phase => p.push(j),
            _ => phases.push(vec![j]),
        }
    }
    let mut results: Vec<(&FioJob, crate::Result<WorkloadOutput>)> = Vec::new();
    for phase in phases {
        crate::cancel::check()?;
        if let Err(e) = crate::host::drop_caches() {
            eprintln!("fsbench: warning: caches were not dropped before the phase: {e}");
        }
        match crate::workload::fiojob::run_phase(&phase, &dir, Some(&dir)) {
            Ok(per) => results.extend(phase.iter().copied().zip(per)),
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => {
                let msg = e.to_string();
                results.extend(phase.iter().map(|j| (*j, Err(Error::Other(msg.clone())))));
            }
        }
    }
    let failed = results.iter().any(|(_, r)| r.is_err());
    if args.json || args.output_format == OutputFormat::Json {
        super::output::print(&crate::report::io::fio_job_json(&results)?);
    } else {
        super::output::print(&crate::report::io::fio_job_summary(&results));
    }
    Ok(if failed {
        crate::error::EXIT_FAILURE
    } else {
        crate::error::EXIT_OK
    })
}

/// Half the space available in `dir`: an existing filesystem is usually shared, and fio
/// allocates a job's whole `size=` up front even when `runtime=` ends it early.
fn avail(dir: &Path) -> Option<u64> {
    rustix::fs::statvfs(dir)
        .ok()
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize) / 2)
}
