//! `fsbench plan`.

use crate::cli::run::RunArgs;

/// Run `fsbench plan`; returns the exit code.
pub fn run(args: RunArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench plan: not implemented yet".into(),
    ))
}
