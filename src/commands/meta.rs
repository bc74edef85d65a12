//! `fsbench meta`: run the metadata and small-file workloads on an existing directory.
//!
//! The workloads are the registry's metadata family ([`super::meta_plan`]), run as an
//! in-memory plan through the runner, the same door as `fsbench run --dir` and every rank
//! of `fsbench meta --mpi` (each step: prepare, drop caches, run, device totals after the
//! settle). All work happens in DIR/fsbench-meta-<pid>; a guard removes it on every exit path
//! (success, failed workload, Ctrl-C via [`crate::cancel`], panic). A failed workload is
//! reported with its error and the remaining workloads still run; the exit code is then 1.

use super::meta_plan::{record_params, resolve};
use crate::cli::meta::MetaArgs;
use crate::workload::Metric;
use crate::workload::meta::{self, Corpus};
use crate::{Error, Result};
use std::path::PathBuf;

/// Removes fsbench's working directory when dropped.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        if let Err(e) = meta::remove_all(&self.0) {
            eprintln!(
                "fsbench: warning: could not remove {}: {e}; remove it by hand",
                self.0.display()
            );
        }
    }
}

/// Run `fsbench meta`; returns the exit code.
pub fn run(args: MetaArgs) -> Result<i32> {
    if args.mpi {
        return run_mpi(args);
    }
    crate::cancel::install_handlers();
    if args.existing {
        return walk_existing(&args);
    }
    let opts = resolve(&args)?;
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // Bad corpus input is reported before anything is created (the runner builds its own).
    if let Some(c) = opts.corpus.as_ref().map(Corpus::build).transpose()? {
        for n in c.notes() {
            eprintln!("fsbench: note: {n}");
        }
    }
    let work = args
        .dir
        .join(format!("fsbench-meta-{}", std::process::id()));
    std::fs::create_dir(&work).map_err(|e| Error::io("cannot create", &work, e))?;
    let guard = WorkDir(work.clone());
    let inv = super::meta_plan::invocation(&opts, work, 1);
    let outcome = crate::runner::execute_with(&inv, false, None)?;
    drop(guard);
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let (samples, failures) = super::records::meta_rows(&outcome.results);
    for (_, msg) in &failures {
        eprintln!("fsbench: failed: {msg}");
    }
    let failed: Vec<(&str, String)> = failures
        .iter()
        .map(|(w, m)| (w.as_str(), m.clone()))
        .collect();
    print!(
        "{}",
        crate::report::meta::render(&samples, &failed, args.json)
    );
    super::records::meta(
        history.as_ref(),
        "meta",
        &started,
        &args.dir,
        record_params(&args),
        &samples,
    );
    Ok(super::ending::exit_code(&outcome))
}

#[cfg(feature = "mpi")]
fn run_mpi(args: MetaArgs) -> Result<i32> {
    super::meta_mpi::run(args)
}

/// Without the feature, `--mpi` exists but refuses, so the flag is discoverable.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: MetaArgs) -> Result<i32> {
    Err(super::output::without_mpi())
}

/// `--existing`: walk DIR itself, cold, and create nothing (no plan: the tree is the user's
/// and nothing of fsbench's may be made beside it).
fn walk_existing(args: &MetaArgs) -> Result<i32> {
    if !std::fs::metadata(&args.dir).is_ok_and(|m| m.is_dir()) {
        return Err(Error::invalid(
            "--dir",
            format!("{} is not an existing directory", args.dir.display()),
        ));
    }
    let asked: Vec<&str> = args.workload.iter().map(|w| w.trim()).collect();
    // The default list is untar,find-cold,rm-tree; with --existing only the walk makes sense.
    let default = ["untar", "find-cold", "rm-tree"];
    if asked != ["find-cold"] && asked != default {
        return Err(Error::invalid(
            "--existing",
            "walks an existing tree and runs find-cold only; drop --workload or use --workload find-cold",
        ));
    }
    if args.threads == 0 {
        return Err(Error::invalid("--threads", "must be at least 1"));
    }
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let out = meta::find_cold(&args.dir, args.threads, None, true)?;
    for n in &out.notes {
        eprintln!("fsbench: note: {n}");
    }
    let id = if out.ran_warm {
        "find-warm"
    } else {
        "find-cold"
    };
    let samples: Vec<(String, Option<Metric>)> = out
        .metrics
        .into_iter()
        .map(|m| (id.to_string(), Some(m)))
        .collect();
    print!("{}", crate::report::meta::render(&samples, &[], args.json));
    super::records::meta(
        history.as_ref(),
        "meta",
        &started,
        &args.dir,
        record_params(args),
        &samples,
    );
    Ok(crate::error::EXIT_OK)
}
