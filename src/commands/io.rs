//! `fsbench io`.

use crate::cli::io::IoArgs;

/// Run `fsbench io`; returns the exit code.
pub fn run(args: IoArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench io: not implemented yet".into(),
    ))
}
