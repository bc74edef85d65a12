//! Flags of `fsbench tune`: the workload and target as `run` takes them ([`PlanFlags`]), plus
//! what the search needs. `--budget` is the whole search's wall time here, `--margin` the
//! equivalence margin of "does not matter", `--rounds` the rounds of each stage.

use super::run::PlanFlags;

// One literal per line where the flag's name is, so the source scan for the `unsafe` keyword
// (tests/layering.rs) sees it inside a string.
const EXAMPLES: &str = concat!(
    "\
Examples:
  # Which ext4 and XFS options make random writes faster here, in at most 30 minutes:
  sudo fsbench tune --fs ext4,xfs --only randwrite --budget 30m

  # The stages and their estimated time, nothing run:
  fsbench tune --profile db --fs ext4,xfs,btrfs --dry-run

  # Only some options (factor names or values), and durability-weakening ones too
  # (data=writeback, barrier=0, commit=60, nodatacow: reported apart from the safe answer):
",
    "  sudo fsbench tune --fs ext4 --options atime,data,lazytime --allow-unsafe\n",
    "
  # Start from the options in use (each must be in the space, docs/tune.md):
  sudo fsbench tune --fs 'mine=ext4:mount=noatime'

  # Confirm one setup you already have against the defaults, and what it loses in crash
  # states (no screening, no racing):
",
    "  sudo fsbench tune --fs ext4 --only fsync-write --allow-unsafe --confirm 'w=ext4:mount=barrier=0'\n",
    "
  # Start from what /srv/db is mounted with now (mountinfo and superblock):
  sudo fsbench tune --current /srv/db --profile db

Every stage is a fsbench run in OUT/<n>-<stage>/ (results.json); the answer is OUT/tune.json.
Exit codes: 0 ok, 1 a step failed, 2 bad input (an unknown option, an invalid combination, a
budget too small for screening and one confirmation: nothing was created), 128 + signal when
interrupted (the partial answer is in tune.json)."
);

/// Flags of `fsbench tune`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct TuneArgs {
    /// The workload, target and step lengths, as `fsbench run` takes them; `--fs` names the
    /// baselines (default: the default set), `--budget` the whole search's wall time
    /// (default 1 h), `--rounds` each stage's rounds (default 3).
    #[command(flatten)]
    pub plan: PlanFlags,

    /// Search durability-weakening values too (data=writeback, barrier=0, commit= above the
    /// default, nodatacow, sync=disabled); the best of them is reported apart from the safe
    /// answer, never as it.
    #[arg(long)]
    pub allow_unsafe: bool,

    /// Search only these options: factor names (atime, compress) or values (noatime,
    /// compress=zstd:1), comma-separated [default: every option of each space].
    #[arg(long, value_name = "OPTIONS", value_delimiter = ',')]
    pub options: Vec<String>,

    /// The baseline is the filesystem mounted at PATH as it is now: its type and mount
    /// options (mountinfo) and mkfs values (superblock), so the answer reads "change X to Y
    /// and gain Z"; searched besides any --fs setups (without --fs, alone). Candidates still
    /// run on fresh images, never on PATH.
    #[arg(long, value_name = "PATH")]
    pub current: Option<std::path::PathBuf>,

    /// Skip screening and racing: confirm these setups (`--fs` variants of the filesystems
    /// searched, each a point of its option space) against their baselines in fresh rounds;
    /// a durability-weakening one (needs --allow-unsafe) then goes through the crash check.
    /// For a candidate you already have: a seed's advice, an earlier tune's winner.
    #[arg(long, value_name = "SETUP")]
    pub confirm: Vec<String>,

    /// How screening measures the options: each value alone against the baseline, or the
    /// two-level options (from three of them) together in a fractional design whose every run
    /// informs every option's effect, the others alone; auto: the design when it costs no
    /// more setups than one at a time (docs/tune.md says when each fits).
    #[arg(long, value_enum, default_value_t = crate::tune::settings::Screen::Auto)]
    pub screen: crate::tune::settings::Screen,

    /// Print the stages, the setups screened and the estimated time; run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Where the confirmation is recorded (`fsbench history`), as `run` records.
    #[command(flatten)]
    pub history: super::history::RecordArgs,

    /// Do not ask before wiping a --device.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// What `fsbench plan` plans besides a run (`fsbench plan tune …`).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PlanOf {
    /// Print the stages of `fsbench tune` with the same flags: the setups and rounds of each,
    /// its estimated time against the budget, what it would create and need installed; run and
    /// create nothing (the text of `tune --dry-run`).
    Tune(Box<PlanTuneArgs>),
}

/// Flags of `fsbench plan tune`: `tune`'s own, and how to print the plan.
#[derive(Debug, Clone, clap::Args)]
pub struct PlanTuneArgs {
    /// The tune to plan, flags exactly as `fsbench tune` takes them.
    #[command(flatten)]
    pub tune: TuneArgs,

    /// Print the plan as JSON (stages, setups, rounds, estimated seconds, the budget, what
    /// would be created and installed) instead of text.
    #[arg(long)]
    pub json: bool,

    /// Write the plan to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<std::path::PathBuf>,
}
