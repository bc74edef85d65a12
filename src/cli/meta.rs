//! Flags of `fsbench meta`.

/// Flags of `fsbench meta`.
#[derive(Debug, Clone, clap::Args)]
pub struct MetaArgs {}
