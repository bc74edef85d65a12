//! Subcommand implementations: resolve CLI flags into typed options and run them.

use crate::cli::{Cli, Command};

pub mod compare;
pub mod corpus;
pub mod io;
mod io_fio_job;
pub mod meta;
pub mod plan;
pub mod report;
pub mod run;

/// Run the parsed command line; returns the process exit code.
pub fn dispatch(cli: Cli) -> crate::Result<i32> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Io(a) => io::run(a),
        Command::Meta(a) => meta::run(a),
        Command::Corpus(a) => corpus::run(a),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => compare::run(a),
    }
}
