//! `fsbench io --mpi`: every rank runs the same job as a one-workload plan ([`invocation`]:
//! the job of `fsbench io`'s flags as an I/O workload, [`GroupJob`], one round, the rank's
//! own DIR/fsbench-io-r<rank>-<pid> beside the file as a `--dir` target, kept in memory)
//! through the runner with the MPI world as its coordinator, as `fsbench meta --mpi` does:
//! the step is coordinated by `runner::coordinator::workload` (prepare, meet, measure, meet,
//! gather, a failure on any rank the step's on all), and inside it the engine meets once more
//! before its clocks start, lays out a shared file on rank 0 first and stonewalls through the
//! same world. Rank 0 reduces every rank's whole engine report (`Outcome::jobs`,
//! `runner::reduce::aggregate`) and prints the one result.

use super::run_mpi::{Quiet, checked};
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, JobSpec, Slice};
use crate::mpi::World;
use crate::mpi::rankdir::RankDir;
use crate::runner::reduce::aggregate;
use crate::workload::io::GroupJob;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Run `fsbench io --mpi` on this rank; returns the exit code (1 on every rank when the job
/// failed on any; bad input on a rank aborts them all).
pub fn run(args: IoArgs) -> Result<i32> {
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
    crate::cancel::install_handlers();
    let mut world = World::init()?;
    world.stonewall = args.stonewall;
    let per_rank = crate::mpi::is_per_rank(&filename);
    let mut spec = super::io::spec_from_args(&args);
    // Rank 0 draws the seed so that a run is reproducible from the one seed it reports.
    let seed = world.broadcast_u64(spec.seed.unwrap_or_else(engine::rng::fresh_seed));
    spec.seed = Some(if per_rank {
        // Own files: own offset streams too, or every rank would replay rank 0's.
        seed ^ (world.rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    } else {
        // One shared file: the jobs' global numbers already give each its own stream.
        seed
    });
    spec.filename = crate::mpi::expand(&filename, world.rank, &world.host);
    let slice = (!per_rank).then_some(Slice {
        index: world.rank as u32,
        of: world.size as u32,
    });
    // Bad input is refused before anything is created.
    world.check(engine::validate(&spec));
    // Rank 0 speaks for all; the others print only why they fail.
    let quiet = (world.rank != 0).then(Quiet::install).flatten();
    let parent = parent_of(&spec.filename);
    let rank_dir = checked(
        &world,
        quiet.as_ref(),
        RankDir::create(&parent, "io", world.rank),
    );
    rank_dir.remove_on_interrupt(world.rank != 0);
    let inv = invocation(&spec, slice, rank_dir.path().to_path_buf());
    let outcome = checked(
        &world,
        quiet.as_ref(),
        crate::runner::execute_with(&inv, false, Some(&world)),
    );
    drop(rank_dir);
    let code = super::run::exit_code(&outcome);
    if world.rank != 0 || outcome.interrupted || !outcome.results.failures.is_empty() {
        // Every rank recorded the same failure (the coordinator shares it): same code.
        return Ok(code);
    }
    let reduced = aggregate::reduce(
        &outcome.jobs,
        spec.bs,
        World::library_version(),
        args.stonewall,
    );
    if args.json || args.output_format == OutputFormat::Json {
        super::io::emit(&crate::report::io::json(&reduced)?);
    } else {
        let mut shown = spec.clone();
        shown.filename = filename.clone();
        super::io::emit(&crate::report::io::mpi_summary(&shown, &reduced));
    }
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
/// directory target, kept in memory (no OUT: the caller renders `Outcome::jobs`).
fn invocation(spec: &JobSpec, slice: Option<Slice>, dir: PathBuf) -> crate::plan::Invocation {
    let flags = crate::plan::Overrides::default();
    let runtime = spec.runtime.unwrap_or(std::time::Duration::from_secs(5));
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
    let plan = crate::plan::Plan {
        name: "io".into(),
        description: "fsbench io --mpi".into(),
        setups: vec![crate::fs::SetupSpec::plain("dir")],
        workloads: vec![workload],
        rounds: 1,
        runtime,
        ramp: spec.ramp,
        file_size: spec.size.unwrap_or(0),
        corpus: Default::default(),
        quiet: crate::plan::QuietSpec {
            window: std::time::Duration::from_secs(1),
            threshold: flags.quiet_threshold,
            timeout: flags.quiet_timeout,
        },
        steady: None,
        precondition: false,
        precondition_device: None,
        settle: None,
        error: Default::default(),
        margin: None,
        // One coordinated job across ranks: nothing to warm up.
        switches: Default::default(),
        disk_ref: false,
        by_step: false,
    };
    crate::plan::Invocation::in_memory_on_dir(plan, dir, spec.seed.unwrap_or(1), 1)
}
