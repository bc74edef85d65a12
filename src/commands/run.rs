//! `fsbench run`.

use crate::cli::run::RunArgs;

/// Run `fsbench run`; returns the exit code.
pub fn run(args: RunArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench run: not implemented yet".into(),
    ))
}
