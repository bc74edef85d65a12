//! Flags of `fsbench claims`.

use std::path::PathBuf;

/// Flags of `fsbench claims`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClaimsArgs {
    /// A results.json whose verdicts to show beside each claim (without one, the list says
    /// which claims exist and why the other statements have none).
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub results: Option<PathBuf>,
    /// Print JSON (coverage, every statement, contradiction groups) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
}
