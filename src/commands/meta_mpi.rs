//! `fsbench meta --mpi`: every rank runs the metadata workloads in its own directory; each
//! workload is one coordinated step ([`crate::runner::coordinator::workload`], as every step
//! of `fsbench run --mpi`): prepared, started on all ranks together, measured, gathered at
//! rank 0, which prints entries/s of all ranks over the common window (earliest start to
//! latest end), mdtest's way (`report::meta::mpi`).

use super::meta::{self as cmd, Steps, WorkDir};
use crate::cli::meta::MetaArgs;
use crate::mpi::World;
use crate::runner::coordinator;
use crate::runner::reduce::rank_rows;
use crate::workload::meta::Corpus;
use crate::{Error, Result};

/// Run `fsbench meta --mpi` on this rank; a failure on any rank aborts them all.
pub fn run(args: MetaArgs) -> Result<i32> {
    crate::cancel::install_handlers();
    let world = World::init()?;
    let mut args = args;
    args.dir = crate::mpi::expand(&args.dir, world.rank, &world.host);
    let opts = world.check(cmd::resolve(&args));
    let corpus = world.check(opts.corpus.as_ref().map(Corpus::build).transpose());
    // Rank and pid: pids alone may repeat across hosts sharing one directory.
    let work = args.dir.join(format!(
        "fsbench-meta-r{}-{}",
        world.rank,
        std::process::id()
    ));
    world.check(std::fs::create_dir(&work).map_err(|e| Error::io("cannot create", &work, e)));
    let guard = WorkDir(work.clone());
    // No settle: its wait for a quiet device would fall inside the ranks' common window.
    let mut steps = Steps::new(&opts, corpus, &args.dir, work.clone(), None);
    let mut rows = Vec::new();
    for (i, &wl) in opts.workloads.iter().enumerate() {
        world.check(crate::cancel::check());
        // Failure is collective: a workload that failed on any rank fails here on every one.
        let done =
            coordinator::workload(&world, wl, None, &mut steps.step(i)).map_err(|e| match e {
                Error::Interrupted => e,
                e => Error::workload(wl, e.to_string()),
            });
        let done = world.check(done);
        // Rank 0's own notes (the all-ranks output adds a per-rank line the table shows).
        if let Some(mine) = done.ranks.first() {
            for n in &mine.measured.notes {
                eprintln!("fsbench: note: {n}");
            }
        }
        rows.extend(rank_rows(wl, &done.ranks));
    }
    drop(guard);
    if world.rank == 0 {
        print!(
            "{}",
            crate::report::meta::mpi(
                &opts.workloads,
                &rows,
                &World::library_version(),
                world.size as u32,
                args.json
            )
        );
    }
    Ok(crate::error::EXIT_OK)
}
