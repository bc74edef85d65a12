//! `fsbench run --dir PATH --mpi` under mpirun: every rank runs the plan in its own
//! subdirectory of PATH ([`crate::mpi::rankdir::RankDir`]; `%r`/`%h` in PATH expand to rank and host), rounds
//! interleaved as usual, each workload started on all ranks together (the runner with
//! [`World`] as its coordinator, [`crate::runner::coordinator`]). Rank 0 writes the one
//! `results.json`, whose samples are the all-ranks figures, so `fsbench report` and `compare`
//! read it like any other run, and ends as `fsbench run` does ([`super::ending::finish`]).
//! World, seed, quiet ranks and the rank's directory are [`crate::mpi::launch`]'s.

use super::ending::{Ending, exit_code, finish};
use crate::cli::run::RunArgs;
use crate::mpi::World;
use crate::mpi::launch::Launch;
use crate::plan::Invocation;
use crate::runner::coordinator::KINDS;
use crate::{Error, Result};
use std::path::Path;

/// Run `fsbench run --mpi` on this rank; returns the exit code.
pub fn run(args: RunArgs) -> Result<i32> {
    // Refusals that do not depend on the rank come before MPI starts (exit 2 on every rank).
    if args.plan.resume.is_some() {
        return Err(Error::invalid(
            "--mpi",
            "an MPI run cannot be resumed (only rank 0 keeps a journal); start a new run",
        ));
    }
    if args.plan.install_missing {
        return Err(Error::invalid(
            "--install-missing",
            "not with --mpi (a --dir run needs no filesystem tools); drop it",
        ));
    }
    // A bad --store is bad input: every rank refuses it alike, before MPI starts.
    let history = args.history.settings().resolve()?;
    let Some(dir) = args.plan.dir.clone() else {
        return Err(Error::invalid(
            "--mpi",
            "needs --dir PATH: every rank runs in its own subdirectory of one existing \
             (usually shared) directory; a device or an image belongs to one host",
        ));
    };
    let mut launch = Launch::init()?;
    let world = &launch.world;
    let mut args = args;
    args.plan.dir = Some(crate::mpi::expand(&dir, world.rank, &world.host));
    let inv = super::prepare::prepare(&args.overrides(), std::env::args().collect())
        .and_then(|inv| refuse_unsupported(&inv, world.rank, world.size, &dir).map(|()| inv));
    // Every rank resolved the same flags. One that refused makes all refuse before anything
    // is created, so none waits for it in a barrier.
    let ok = inv.is_ok();
    if !world.all_ok(ok) {
        let rank0_ok = world.broadcast_u64(u64::from(ok)) != 0;
        // Rank 0 speaks for the ranks that refused as it did; a rank that refused alone
        // (its own %h directory missing…) says why itself, and rank 0 that another did.
        let said = match inv {
            Err(e) if world.rank == 0 || rank0_ok => Some(e),
            Err(_) => None,
            Ok(_) if world.rank == 0 => Some(Error::invalid(
                "--mpi",
                "another rank refused the options (its message says why)",
            )),
            Ok(_) => None,
        };
        return Ok(refuse_together(world, said));
    }
    let mut inv = inv.expect("every rank resolved");
    // Rank 0 speaks for all (as IOR's does); the others print only why they fail.
    let relay = launch.leader().then(crate::host::stdio::Relay::install);
    launch.quiet_others();
    // Rank 0's seed is the run's (recorded); every other rank gets its own offset stream.
    inv.options.seed = launch.seed(inv.options.seed);
    let hosts = launch.world.gather_hosts();
    if launch.leader() {
        eprint!(
            "{}",
            crate::report::plan::summary(&inv, crate::report::plan::ResultsLine::Run)
        );
    }
    // Everything this rank writes lives in its own directory of PATH (the runner's work
    // directory inside it); ranks other than 0 keep their journal and partial results there
    // too, so they write nothing to OUT. It goes when the rank ends or is interrupted.
    let parent = args.plan.dir.clone().expect("--dir checked");
    let rank_dir = launch.rank_dir(&parent, "mpi");
    inv.options.target = crate::scratch::TargetKind::Dir {
        path: rank_dir.path().to_path_buf(),
    };
    if !launch.leader() {
        inv.options.out = rank_dir.path().join("out");
    }
    launch.world.provenance = hosts
        .as_deref()
        .map(|h| provenance(h, &parent))
        .unwrap_or_default();
    // A rank that cannot even set up (its directory, OUT) ends the job: MPI_Abort.
    let outcome = launch.execute(&inv);
    let Some(hosts) = hosts else {
        // Every rank recorded the same failures (the coordinator shares them): same code.
        return Ok(exit_code(&outcome));
    };
    let out = &inv.options.out;
    let ending = Ending {
        history: history.as_ref(),
        json: args.json,
        interrupted: format!(
            "fsbench: interrupted; every rank released its files. Partial results: {}",
            out.join("results.json").display()
        ),
        preface: Some(format!(
            "fsbench: MPI: {} ranks, hosts {} (ranks each); {}\nfsbench: every sample is all \
             ranks' total over the common window (per-rank counts: the notes in results.json)",
            hosts.len(),
            outcome.results.host.extra["mpi_hosts"],
            World::library_version()
        )),
        source: "run --mpi",
    };
    finish(outcome, out, ending, relay)
}

/// End a refused job so that mpirun shows why: the ranks that speak (`said`) print their
/// message, every rank waits until all have, and only the speakers exit 2; the others leave
/// with 0 after `MPI_Finalize`. mpirun ends the job at the first rank that exits non-zero
/// and may kill the rest before it has relayed their output, so a quiet rank exiting 2
/// first could cut rank 0's message off (mpirun's own exit is the speakers' 2 either way).
fn refuse_together(world: &World, said: Option<Error>) -> i32 {
    if let Some(e) = &said {
        crate::host::stdio::note(&format!("fsbench: error: {e}"));
    }
    world.wait_for_all();
    match said {
        Some(e) => e.exit_code(),
        None => crate::error::EXIT_OK,
    }
}

/// What `--mpi` cannot run, refused with exit 2: `--until-settled` (not supported yet),
/// another engine, workloads whose figures do
/// not add up across ranks ([`KINDS`]), data files of all `ranks` that do not fit in
/// one `shared` directory (PATH as given, before `%r`/`%h`), and (rank 0) an OUT that holds
/// a run.
fn refuse_unsupported(inv: &Invocation, rank: i32, ranks: i32, shared: &Path) -> Result<()> {
    if inv.plan.settle.is_some() {
        // The extra rounds' judge reads one process's rounds; the ranks would each decide.
        return Err(Error::invalid(
            "--until-settled",
            "not with --mpi yet: the ranks would each decide when to stop; give a fixed \
             --rounds N instead",
        ));
    }
    if inv.options.engine == crate::plan::EngineChoice::Fio {
        return Err(Error::invalid(
            "--engine",
            "--mpi runs fsbench's own engine only; drop --engine fio",
        ));
    }
    let refused: Vec<&str> = inv
        .plan
        .workloads
        .iter()
        .filter(|w| w.kind != crate::plan::Kind::Mkfs && !KINDS.contains(&w.kind))
        .map(|w| w.id.as_str())
        .collect();
    if !refused.is_empty() {
        return Err(Error::invalid(
            "--only",
            format!(
                "{} cannot run under --mpi (only I/O and metadata workloads add up across \
                 ranks); choose among layout, the I/O jobs, untar, find-cold, rm-tree, \
                 smallfiles, fsmark",
                refused.join(", ")
            ),
        ));
    }
    // Ranks in one directory lay out one data file each: all must fit (each rank's own
    // check above saw one).
    let crate::scratch::TargetKind::Dir { path } = &inv.options.target else {
        return Err(Error::invalid("--mpi", "needs --dir PATH"));
    };
    let lays_out = inv
        .plan
        .workloads
        .iter()
        .any(|w| w.kind == crate::plan::Kind::Layout);
    if lays_out
        && !crate::mpi::is_per_rank(shared)
        && let Some(room) = crate::host::sys::available_bytes(path)
        && inv.plan.file_size.saturating_mul(ranks as u64) > room
    {
        return Err(Error::invalid(
            "--file-size",
            format!(
                "{ranks} ranks × {} do not fit in {} ({} available); use a smaller --file-size",
                crate::units::format_size(inv.plan.file_size),
                path.display(),
                crate::units::format_size(room)
            ),
        ));
    }
    let out = &inv.options.out;
    if rank == 0 && crate::runner::journal::Journal::path(out).exists() {
        return Err(Error::invalid(
            "--out",
            format!(
                "{} already holds a run; choose another --out",
                out.display()
            ),
        ));
    }
    Ok(())
}

/// Ranks, hosts, the MPI library and the shared directory, for the results' `host.extra`.
fn provenance(hosts: &[String], dir: &Path) -> Vec<(String, String)> {
    let mut distinct: Vec<&String> = Vec::new();
    for h in hosts {
        if !distinct.contains(&h) {
            distinct.push(h);
        }
    }
    let per_host: Vec<String> = distinct
        .iter()
        .map(|h| format!("{h} ({})", hosts.iter().filter(|x| x == h).count()))
        .collect();
    vec![
        ("mpi_ranks".into(), hosts.len().to_string()),
        ("mpi_hosts".into(), per_host.join(", ")),
        ("mpi_library".into(), World::library_version()),
        // The target is rank 0's own directory; this is the one all ranks worked in.
        ("mpi_dir".into(), dir.display().to_string()),
    ]
}
