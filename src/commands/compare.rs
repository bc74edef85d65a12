//! `fsbench compare`.

use crate::cli::compare::CompareArgs;

/// Run `fsbench compare`; returns the exit code.
pub fn run(args: CompareArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench compare: not implemented yet".into(),
    ))
}
