//! `fsbench io --mpi`: every rank runs the same job as a one-workload plan ([`invocation`]:
//! the job of `fsbench io`'s flags as an I/O workload, [`GroupJob`], one round, the rank's
//! own DIR/fsbench-io-r<rank>-<pid> beside the file as a `--dir` target, kept in memory)
//! through the runner with the MPI world as its coordinator, as `fsbench meta --mpi` does:
//! the step is coordinated by `runner::coordinator::workload` (prepare, meet, measure, meet,
//! gather, a failure on any rank the step's on all), and inside it the engine meets once more
//! before its clocks start, lays out a shared file on rank 0 first and stonewalls through the
//! same world. Rank 0's runner reduces every rank's whole engine report once
//! (`runner::reduce::step` by `aggregate`, kept as `Outcome::job_reports`); rank 0 prints the one result and records it in the history store.
//! World, seed, quiet ranks and the rank's directory are [`crate::mpi::launch`]'s.

use super::output::print;
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, JobSpec, Slice};
use crate::mpi::World;
use crate::mpi::launch::Launch;
use crate::workload::io::GroupJob;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Run `fsbench io --mpi` on this rank with the job of the flags (`spec`); returns the exit
/// code (1 on every rank when the job failed on any; bad input on a rank aborts them all).
pub fn run(args: IoArgs, mut spec: JobSpec) -> Result<i32> {
    if args.engine == Some(EngineChoice::Fio) {
        return Err(Error::invalid(
            "--mpi",
            "runs fsbench's own engine only; drop --engine fio",
        ));
    }
    if args.fio_job.is_some() {
        return Err(Error::invalid(
            "--mpi",
            "runs one fsbench job per rank; --fio-job is not supported with --mpi",
        ));
    }
    let Some(filename) = args.filename.clone() else {
        return Err(Error::invalid("--filename", "--mpi needs --filename"));
    };
    // A bad --store is bad input: every rank refuses it alike, before MPI starts.
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut launch = Launch::init()?;
    launch.world.stonewall = args.stonewall;
    let per_rank = crate::mpi::is_per_rank(&filename);
    // Rank 0 draws the seed so that a run is reproducible from the one seed it reports.
    let seed = spec.seed.unwrap_or_else(engine::rng::fresh_seed);
    spec.seed = Some(if per_rank {
        // Own files: own offset streams too, or every rank would replay rank 0's.
        launch.seed(seed)
    } else {
        // One shared file: the jobs' global numbers already give each its own stream.
        launch.world.broadcast_u64(seed)
    });
    let (rank, ranks) = (launch.world.rank, launch.world.size);
    spec.filename = crate::mpi::expand(&filename, rank, &launch.world.host);
    let slice = (!per_rank).then_some(Slice {
        index: rank as u32,
        of: ranks as u32,
    });
    // Bad input is refused before anything is created.
    launch.checked(engine::validate(&spec));
    launch.quiet_others();
    let rank_dir = launch.rank_dir(&parent_of(&spec.filename), "io");
    let inv = invocation(&spec, slice, rank_dir.path().to_path_buf());
    let outcome = launch.execute(&inv);
    drop(rank_dir);
    let code = super::ending::exit_code(&outcome);
    if !launch.leader() || outcome.interrupted || !outcome.results.failures.is_empty() {
        // Every rank recorded the same failure (the coordinator shares it): same code.
        return Ok(code);
    }
    // The runner reduced the ranks' runs once (`runner::reduce::step`); the library is ours.
    let Some(mut reduced) = outcome.job_reports.into_iter().next() else {
        return Err(Error::Other(
            "io --mpi: the ranks' job was not reduced (no report at rank 0)".into(),
        ));
    };
    reduced.mpi.library = World::library_version();
    if args.json || args.output_format == OutputFormat::Json {
        print(&crate::report::io::json(&reduced)?);
    } else {
        let mut shown = spec.clone();
        shown.filename = filename.clone();
        print(&crate::report::io::mpi_summary(&shown, &reduced));
    }
    super::records::io(
        history.as_ref(),
        "io --mpi",
        &started,
        &spec,
        &reduced.aggregate,
    );
    Ok(code)
}

/// The directory a job's file is in (the rank's own directory goes beside it).
fn parent_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The plan one rank runs: one I/O workload `io`, the job `spec` exactly as given (its file
/// outside `dir`, its seed set; `slice`: its part of a shared file), one round, `dir` as a
/// directory target, kept in memory (no OUT: the caller renders `Outcome::job_reports`).
fn invocation(spec: &JobSpec, slice: Option<Slice>, dir: PathBuf) -> crate::plan::Invocation {
    // What the plan's summary and estimate read (the job itself is `GroupJob`'s).
    let mut params = crate::plan::IoParams::new(spec.rw, spec.bs, spec.numjobs, spec.iodepth);
    params.size = spec.size;
    params.runtime = spec.runtime;
    params.ramp = Some(spec.ramp);
    params.direct = spec.direct;
    params.backend = spec.backend;
    // Its own file, not the plan's data file (which nothing lays out here).
    params.file = Some(spec.filename.display().to_string());
    let workload = crate::plan::WorkloadSpec::io("io", params).with_params(&GroupJob {
        job: spec.clone(),
        slice,
    });
    let mut plan = crate::plan::Plan::on_dir("io", "fsbench io --mpi", vec![workload]);
    plan.runtime = spec.runtime.unwrap_or(std::time::Duration::from_secs(5));
    plan.ramp = spec.ramp;
    plan.file_size = spec.size.unwrap_or(0);
    crate::plan::Invocation::in_memory_on_dir(plan, dir, spec.seed.unwrap_or(1), 1)
}
