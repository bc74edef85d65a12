//! Flags of `fsbench report`.

/// Flags of `fsbench report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {}
