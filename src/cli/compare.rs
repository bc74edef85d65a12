//! Flags of `fsbench compare`.

use std::path::PathBuf;

/// Output format of `fsbench compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Plain-text table.
    Table,
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// Flags of `fsbench compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The earlier (baseline) results.json.
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub a: PathBuf,
    /// The later results.json.
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub b: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
}
