//! Flags of `fsbench io`.

/// Flags of `fsbench io`.
#[derive(Debug, Clone, clap::Args)]
pub struct IoArgs {}
