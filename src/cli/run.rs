//! Flags of `fsbench run`.

/// Flags of `fsbench run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {}
