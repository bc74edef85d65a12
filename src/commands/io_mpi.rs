//! `fsbench io --mpi`: every rank runs the same job; rank 0 prints the one reduced result.

use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, Coordinator, Slice};
use crate::mpi::World;
use crate::runner::coordinator::gather;
use crate::runner::reduce::aggregate::{self, RankResult};
use crate::{Error, Result};

/// Run `fsbench io --mpi` on this rank; returns the exit code (a failure aborts every rank).
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
    world.check(engine::validate(&spec));
    // A shared file is laid out once, by rank 0, before anyone opens it.
    if slice.is_some() {
        if world.rank == 0 {
            world.check(engine::lay_out(&spec, slice));
        }
        world.check(world.meet());
    }
    let (report, window) = world.check(engine::run_coordinated(&spec, slice, &world, None));
    let mine = RankResult {
        rank: world.rank,
        host: world.host.clone(),
        filename: spec.filename.display().to_string(),
        report,
        start_s: window.start_s,
        end_s: window.end_s,
    };
    // Everyone is done before rank 0 reduces (as every coordinated step).
    world.check(world.meet());
    let Some(all) = world.check(gather(&world, &mine)) else {
        return Ok(crate::error::EXIT_OK);
    };
    let reduced = aggregate::reduce(&all, spec.bs, World::library_version(), args.stonewall);
    if args.json || args.output_format == OutputFormat::Json {
        super::io::emit(&world.check(crate::report::io::json(&reduced)));
    } else {
        let mut shown = spec.clone();
        shown.filename = filename.clone();
        super::io::emit(&crate::report::io::mpi_summary(&shown, &reduced));
    }
    Ok(crate::error::EXIT_OK)
}
