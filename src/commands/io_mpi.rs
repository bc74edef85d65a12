//! `fsbench io --mpi`: every rank runs the same job as `fsbench io`'s one-workload plan
//! ([`super::io_plan::invocation`]: the job of the flags as an I/O workload, one round, kept
//! in memory) with the rank's own DIR/fsbench-io-r<rank>-<pid> beside the file as a `--dir`
//! target, through the runner with the MPI world as its coordinator, as `fsbench meta --mpi`
//! does:
//! the step is coordinated by `runner::coordinator::workload` (prepare, meet, measure, meet,
//! gather, a failure on any rank the step's on all), and inside it the engine meets once more
//! before its clocks start, lays out a shared file on rank 0 first and stonewalls through the
//! same world. Rank 0's runner reduces every rank's whole engine report once
//! (`runner::reduce::step` by `aggregate`, kept as `Outcome::job_reports`); rank 0 prints
//! the one result and records it in the history store.
//! World, seed, quiet ranks and the rank's directory are [`crate::mpi::launch`]'s.

use super::io_plan;
use super::output::print;
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, JobSpec, Slice};
use crate::mpi::World;
use crate::mpi::launch::Launch;
use crate::{Error, Result};

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
    // The rank's own directory goes beside the file.
    let rank_dir = launch.rank_dir(&engine::validate::directory_of(&spec.filename), "io");
    let place = io_plan::Place {
        target: crate::scratch::TargetKind::Dir {
            path: rank_dir.path().to_path_buf(),
        },
        slice,
        // The runner settles nothing inside the ranks' common window anyway.
        settle: true,
    };
    let outcome = launch.execute(&io_plan::invocation(&spec, place));
    drop(rank_dir);
    let code = super::ending::exit_code(&outcome);
    if !launch.leader() || outcome.interrupted || !outcome.results.failures.is_empty() {
        // Every rank recorded the same failure (the coordinator shares it): same code.
        return Ok(code);
    }
    // The runner reduced the ranks' runs once (`runner::reduce::step`); the library is ours.
    let mut reduced = io_plan::the_report(outcome, "io --mpi")?;
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
