//! Flags of `fsbench compare`.

/// Flags of `fsbench compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {}
