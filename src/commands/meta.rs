//! `fsbench meta`.

use crate::cli::meta::MetaArgs;

/// Run `fsbench meta`; returns the exit code.
pub fn run(args: MetaArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench meta: not implemented yet".into(),
    ))
}
