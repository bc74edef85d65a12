//! `fsbench meta --mpi`: every rank runs the metadata plan ([`cmd::invocation`]: the chosen
//! workloads, one round, a directory target that is the rank's own
//! DIR/fsbench-meta-r<rank>-<pid>) through the runner with the MPI world as its coordinator,
//! as `fsbench run --mpi` does: each workload one coordinated step
//! ([`crate::runner::coordinator::workload`]: prepared, started on all ranks together,
//! measured, gathered and reduced at rank 0, a failure on any rank the step's failure on all).
//! The run is kept in memory (no OUT); rank 0 renders every rank's own measurement
//! (`Results::ranks`, as rows by [`rank_rows`]) as entries/s of all ranks over the common
//! window (earliest start to latest end), mdtest's way (`report::meta::mpi`).

use super::meta as cmd;
use super::run_mpi::{Quiet, checked};
use crate::Result;
use crate::cli::meta::MetaArgs;
use crate::mpi::World;
use crate::mpi::rankdir::RankDir;
use crate::runner::reduce::rank_rows;
use crate::workload::meta::Corpus;

/// Run `fsbench meta --mpi` on this rank; returns the exit code (1 on every rank when a
/// workload failed; a rank that cannot even set up aborts them all).
pub fn run(args: MetaArgs) -> Result<i32> {
    crate::cancel::install_handlers();
    let world = World::init()?;
    let mut args = args;
    args.dir = crate::mpi::expand(&args.dir, world.rank, &world.host);
    let opts = world.check(cmd::resolve(&args));
    // Bad corpus input is refused before anything is created (the runner builds its own).
    world.check(opts.corpus.as_ref().map(Corpus::build).transpose());
    // Rank 0 speaks for all; the others print only why they fail.
    let quiet = (world.rank != 0).then(Quiet::install).flatten();
    let rank_dir = checked(
        &world,
        quiet.as_ref(),
        RankDir::create(&args.dir, "meta", world.rank),
    );
    rank_dir.remove_on_interrupt(world.rank != 0);
    let inv = cmd::invocation(&opts, rank_dir.path().to_path_buf());
    let outcome = checked(
        &world,
        quiet.as_ref(),
        crate::runner::execute_with(&inv, false, Some(&world)),
    );
    drop(rank_dir);
    if world.rank == 0 && !outcome.interrupted {
        let r = &outcome.results;
        let failures: Vec<(&str, String)> = r
            .failures
            .iter()
            .map(|f| (f.workload.as_str(), f.error.clone()))
            .collect();
        print!(
            "{}",
            crate::report::meta::mpi(
                &rank_rows(&r.ranks),
                &failures,
                &World::library_version(),
                world.size as u32,
                args.json
            )
        );
    }
    // Every rank recorded the same failures (the coordinator shares them): same code.
    Ok(super::run::exit_code(&outcome))
}
