//! Subcommand implementations: resolve CLI flags into typed options and run them.

use crate::cli::{Cli, Command};

pub mod claims;
pub mod compare;
mod output;
pub use output::emit;
pub mod corpus;
pub mod doctor;
/// How measuring commands end (exit code, `run`'s judgements, reports and table).
mod ending;
pub mod history;
pub mod io;
mod io_fio_job;
/// `fsbench io --mpi` (rank 0 prints and records the reduced job).
#[cfg(feature = "mpi")]
mod io_mpi;
/// `fsbench io`'s flags as a plan (shared by `io` and `io --mpi`).
mod io_plan;
pub mod meta;
/// `fsbench meta --mpi` (each rank runs the metadata plan through the runner).
#[cfg(feature = "mpi")]
mod meta_mpi;
/// `fsbench meta`'s flags as a plan (shared by `meta` and `meta --mpi`).
mod meta_plan;
pub mod plan;
/// Flags to an invocation (`run`, `run --mpi`, `plan`, `tune`).
mod prepare;
pub mod record;
/// The history record of `io` and `meta`, with and without `--mpi`.
mod records;
pub mod report;
pub mod run;
/// `fsbench run --dir PATH --mpi` (rank 0 writes the results).
#[cfg(feature = "mpi")]
mod run_mpi;
pub mod shell;
pub mod tune;

/// Run the parsed command line; returns the process exit code.
pub fn dispatch(cli: Cli) -> crate::Result<i32> {
    // Recovery (in `run`, `doctor`) releases a dead run's zpool through the ZFS driver;
    // device accounting learns what lies under each filesystem's mounts.
    crate::fs::register();
    // `run` (as root) puts back what a killed run changed, `doctor` lists it as a finding;
    // the others say so.
    if !matches!(
        cli.command,
        Command::Run(_) | Command::Doctor(_) | Command::Tune(_)
    ) {
        crate::host::ledger::hint_unrestored();
    }
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Io(a) => io::run(a),
        Command::Meta(a) => meta::run(a),
        Command::Corpus(a) => corpus::run(a),
        Command::Record(a) => record::run(a),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Claims(a) => claims::run(a),
        Command::History(a) => history::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Completions(a) => shell::completions(a),
        Command::Man(a) => shell::man(a),
    }
}
