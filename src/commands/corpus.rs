//! `fsbench corpus`.

use crate::cli::corpus::CorpusArgs;

/// Run `fsbench corpus`; returns the exit code.
pub fn run(args: CorpusArgs) -> crate::Result<i32> {
    let _ = args;
    Err(crate::Error::Other(
        "fsbench corpus: not implemented yet".into(),
    ))
}
