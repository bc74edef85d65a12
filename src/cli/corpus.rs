//! Flags of `fsbench corpus`.

use std::path::PathBuf;

/// Flags of `fsbench corpus`: write the small-file corpus as a tarball (copy-0/ … copy-N/).
#[derive(Debug, Clone, clap::Args)]
pub struct CorpusArgs {
    /// Copies of the tree in the tarball (~35,000 entries each).
    #[arg(long, default_value_t = 3)]
    pub copies: u32,

    /// Seed of the synthetic tree (same seed, same bytes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Size factor of one copy (1.0 ≈ 35,000 entries).
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub scale: f64,

    /// Pack this real directory instead of generating.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub from: Option<PathBuf>,

    /// Where to write the tarball.
    #[arg(long, value_name = "FILE.tar", value_hint = clap::ValueHint::FilePath)]
    pub out: PathBuf,
}
