//! Flags of `fsbench compare`.

use std::path::PathBuf;

/// Output format of `fsbench compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Plain-text table.
    Table,
    /// Markdown (with a text forest plot above the table).
    Md,
    /// JSON.
    Json,
    /// Self-contained HTML page: a forest plot of the changes above the table.
    Html,
}

/// Flags of `fsbench compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The earlier (baseline) results.json; with --against, the later one (B).
    #[arg(required_unless_present_any = ["split_rounds", "against"], value_hint = clap::ValueHint::FilePath)]
    pub a: Option<PathBuf>,
    /// The later results.json.
    #[arg(required_unless_present_any = ["split_rounds", "against"], value_hint = clap::ValueHint::FilePath)]
    pub b: Option<PathBuf>,
    /// Compare the odd rounds of one results.json with its even rounds: an A/A check of how
    /// often chance alone is flagged (the rounds were interleaved, so drift hits both halves).
    #[arg(long, value_name = "RESULTS.json", value_hint = clap::ValueHint::FilePath, conflicts_with_all = ["a", "b"])]
    pub split_rounds: Option<PathBuf>,
    /// Setups to use as the control: their movement between A and B is taken as drift and the
    /// other setups are judged against it. Default: the setups whose configuration did not
    /// change, when some did.
    #[arg(long, value_name = "SETUPS", value_delimiter = ',')]
    pub control: Vec<String>,
    /// Compare B (the one results file given, or the newest run in the history store) with
    /// a recorded run: `last` (the newest earlier run of the same device and setups) or a run
    /// id from `fsbench history`.
    #[arg(long, value_name = "last|RUN", conflicts_with = "split_rounds")]
    pub against: Option<String>,
    /// The history store --against reads.
    #[command(flatten)]
    pub store: crate::cli::history::StoreArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Write the comparison to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
}
