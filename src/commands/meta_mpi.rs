//! `fsbench meta --mpi`: every rank runs the metadata plan ([`super::meta_plan::invocation`]:
//! the chosen workloads, one round, a directory target that is the rank's own
//! DIR/fsbench-meta-r<rank>-<pid>) through the runner with the MPI world as its coordinator
//! ([`crate::mpi::launch`]), as `fsbench run --mpi` does: each workload one coordinated step
//! ([`crate::runner::coordinator::workload`]: prepared, started on all ranks together,
//! measured, gathered and reduced at rank 0, a failure on any rank the step's failure on all).
//! The run is kept in memory (no OUT); rank 0 renders every rank's own measurement
//! (`Results::ranks`, as rows by [`rank_rows`]) as entries/s of all ranks over the common
//! window (earliest start to latest end), mdtest's way (`report::meta::mpi`), and records the
//! all-ranks figures in the history store.

use super::meta_plan::{record_params, resolve};
use crate::Result;
use crate::cli::meta::MetaArgs;
use crate::mpi::World;
use crate::mpi::launch::Launch;
use crate::runner::reduce::rank_rows;
use crate::workload::meta::Corpus;

/// Run `fsbench meta --mpi` on this rank; returns the exit code (1 on every rank when a
/// workload failed; a rank that cannot even set up aborts them all).
pub fn run(args: MetaArgs) -> Result<i32> {
    // A bad --store is bad input: every rank refuses it alike, before MPI starts.
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut launch = Launch::init()?;
    let world = &launch.world;
    let mut args = args;
    args.dir = crate::mpi::expand(&args.dir, world.rank, &world.host);
    let opts = launch.checked(resolve(&args));
    // Bad corpus input is refused before anything is created (the runner builds its own).
    launch.checked(opts.corpus.as_ref().map(Corpus::build).transpose());
    launch.quiet_others();
    let seed = launch.seed(1);
    let rank_dir = launch.rank_dir(&args.dir, "meta");
    let inv = super::meta_plan::invocation(&opts, rank_dir.path().to_path_buf(), seed);
    let outcome = launch.execute(&inv);
    drop(rank_dir);
    if launch.leader() && !outcome.interrupted {
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
                launch.world.size as u32,
                args.json
            )
        );
        let (samples, _) = super::records::meta_rows(r);
        let mut params = record_params(&args);
        params["mpi_ranks"] = launch.world.size.into();
        super::records::meta(
            history.as_ref(),
            "meta --mpi",
            &started,
            &args.dir,
            params,
            &samples,
        );
    }
    // Every rank recorded the same failures (the coordinator shares them): same code.
    Ok(super::ending::exit_code(&outcome))
}
