//! Flags of `fsbench corpus`.

/// Flags of `fsbench corpus`.
#[derive(Debug, Clone, clap::Args)]
pub struct CorpusArgs {}
