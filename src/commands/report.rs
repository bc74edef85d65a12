//! `fsbench report`.

use crate::cli::report::ReportArgs;

/// Run `fsbench report`; returns the exit code.
pub fn run(args: ReportArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench report: not implemented yet".into(),
    ))
}
