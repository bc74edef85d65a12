//! Flags of `fsbench history` and the store flags `run`, `io` and `meta` share.

use crate::plan::knobs as K;
use std::path::PathBuf;

/// Which history store (every command that reads or writes one).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArgs {
    /// [`K::STORE`]: its help, values and plan-file key.
    #[arg(long, help = K::STORE.help(), value_name = "URL", global = true)]
    pub store: Option<String>,

    /// [`K::STORE_PASSWORD_FILE`]: its help, values and plan-file key.
    #[arg(long, help = K::STORE_PASSWORD_FILE.help(), value_name = "FILE", global = true, value_hint = clap::ValueHint::FilePath)]
    pub store_password_file: Option<PathBuf>,
}

/// The recording flags of `run`, `io` and `meta`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RecordArgs {
    /// Where the run is recorded.
    #[command(flatten)]
    pub store: StoreArgs,

    /// [`K::NO_HISTORY`]: its help, values and plan-file key.
    #[arg(long, help = K::NO_HISTORY.help())]
    pub no_history: bool,
}

impl RecordArgs {
    /// As the library takes them.
    pub fn settings(&self) -> crate::history::record::Settings {
        crate::history::record::Settings {
            store: self.store.store.clone(),
            password_file: self.store.store_password_file.clone(),
            disabled: self.no_history,
        }
    }
}

/// Which runs (list, trend, check).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FilterArgs {
    /// Only runs on this device: part of its key or label (`fsbench history` shows them).
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Only runs on this host (part of its name).
    #[arg(long, value_name = "TEXT")]
    pub host: Option<String>,
    /// Only runs with this setup.
    #[arg(long, value_name = "NAME")]
    pub setup: Option<String>,
    /// Only runs of this profile or plan.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

impl FilterArgs {
    /// As the library takes it.
    pub fn filter(&self) -> crate::history::Filter {
        crate::history::Filter {
            device: self.device.clone(),
            host: self.host.clone(),
            setup: self.setup.clone(),
            profile: self.profile.clone(),
        }
    }
}

const EXAMPLES: &str = "\
Examples:
  fsbench history                                  # every run, newest first
  fsbench history --device image --setup ext4      # filtered
  fsbench history show 12                          # one run: host, device, setups, medians
  fsbench history trend --setup ext4 --workload randread --metric iops --html trend.html
  fsbench history check                            # exit 3 when something regressed
  fsbench history import fsbench-results/*         # results from before the store
  fsbench history export 12 > results.json
  fsbench compare --against last                   # newest run against the one before it

The store: --store or FSBENCH_STORE (a SQLite path, postgresql://…, or `off`), else
/var/lib/fsbench/history.db (root) or $XDG_DATA_HOME/fsbench/history.db.
Exit codes: 0 ok, 1 the store failed, 2 bad input, 3 `check` found a regression.";

/// Flags of `fsbench history`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = EXAMPLES, args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    /// Which store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The list's flags (when no subcommand is given).
    #[command(flatten)]
    pub list: ListArgs,
}

/// `fsbench history` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum HistoryCommand {
    /// List runs, newest first.
    List(ListArgs),
    /// One run: host, device, versions, setups with their settings, medians.
    Show(ShowArgs),
    /// One setup's workload metric over the runs: a sparkline, and with --html a chart.
    Trend(TrendArgs),
    /// Judge the newest run of every (device, setup, workload, metric) against its history;
    /// exit 3 when one regressed beyond noise.
    Check(CheckArgs),
    /// Record results directories (or results.json files) written before the store.
    Import(ImportArgs),
    /// Print a recorded run's results.json.
    Export(ExportArgs),
}

/// Flags of `fsbench history list`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ListArgs {
    /// Which runs.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many runs.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = crate::plan::params::HISTORY_LIMIT.count_arg::<usize>(), help = crate::plan::params::HISTORY_LIMIT.help())]
    pub limit: usize,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `fsbench history show`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// The run's id (as `fsbench history` lists it) or `last`.
    pub run: String,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `fsbench history trend`.
#[derive(Debug, Clone, clap::Args)]
pub struct TrendArgs {
    /// Setup name (`ext4`, `xfs-noatime`).
    #[arg(long)]
    pub setup: String,
    /// Workload id (`randread`, `untar`).
    #[arg(long)]
    pub workload: String,
    /// Metric id (`iops`, `seconds`, `lat_p99_ms`).
    #[arg(long)]
    pub metric: String,
    /// Only runs on this device (default: the device of the newest run with this series).
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Write the chart as a self-contained HTML page here.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub html: Option<PathBuf>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `fsbench history check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Only runs on this device (part of its key or label).
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Smallest change that counts, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub threshold: f64,
    /// False-discovery rate over all series checked.
    #[arg(long, value_name = "Q", default_value_t = 0.05)]
    pub alpha: f64,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `fsbench history import`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Results directories (holding results.json) or results.json files.
    #[arg(required = true, value_hint = clap::ValueHint::AnyPath)]
    pub paths: Vec<PathBuf>,
}

/// Flags of `fsbench history export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The run's id or `last`.
    pub run: String,
    /// Write here instead of stdout.
    #[arg(short, long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,
}
