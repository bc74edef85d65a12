//! Flags of `fsbench corpus`.

use crate::plan::params as P;
use std::path::PathBuf;

/// Flags of `fsbench corpus`: write the small-file corpus as a tarball (copy-0/ … copy-N/).
#[derive(Debug, Clone, clap::Args)]
pub struct CorpusArgs {
    /// Copies of the tree in the tarball (~35,000 entries each).
    #[arg(long, default_value_t = 3, value_parser = P::CORPUS_COPIES.count_arg::<u32>(), help = P::CORPUS_COPIES.help())]
    pub copies: u32,

    /// Seed of the synthetic tree (same seed, same bytes).
    #[arg(long, default_value_t = 1, value_parser = P::SEED.count_arg::<u64>(), help = P::SEED.help())]
    pub seed: u64,

    /// Size factor of one copy (1.0 ≈ 35,000 entries).
    #[arg(long, default_value_t = 1.0, value_name = "X", value_parser = P::CORPUS_SCALE.real_arg(), help = P::CORPUS_SCALE.help())]
    pub scale: f64,

    /// Pack this real directory instead of generating.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub from: Option<PathBuf>,

    /// Where to write the tarball.
    #[arg(long, value_name = "FILE.tar", value_hint = clap::ValueHint::FilePath)]
    pub out: PathBuf,
}
