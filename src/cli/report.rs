//! Flags of `fsbench report`.

use crate::report::Format;
use crate::report::csv::CsvSection;
use std::path::PathBuf;

/// Flags of `fsbench report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The results.json to render.
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub results: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write to this file instead of stdout. With --format csv, the per-sample rows go to FILE
    /// and the per-summary rows to FILE with `.summary.csv` as extension.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// With --format table: after the short report, print every table (all metrics, with
    /// (min–max) across rounds) at its natural width.
    #[arg(long)]
    pub wide: bool,
    /// With --format csv on stdout: which rows to print.
    #[arg(long, value_enum, default_value = "samples")]
    pub csv_section: CsvSection,
}
