//! Plans: pure data. Targets × setups × workloads × rounds, expanded into interleaved steps.
//!
//! A plan comes from a profile (`quick`, `standard`, `vps`, `nvme`; TOML inside the binary) or a
//! plan file, then CLI overrides are applied ([`resolve`]). The resolved [`Plan`] is saved as
//! `OUT/plan.json` so that `--resume` repeats exactly the same run.

pub mod eta;
pub mod file;
pub mod knobs;
mod on_dir;
pub mod options;
pub mod overrides;
pub mod params;
pub mod profiles;
pub mod resolve;
pub mod setup_syntax;
pub mod steady_state;
pub mod williams;
pub mod words;
pub mod workload;

pub use crate::fs::SetupSpec;
pub use crate::host::tuning::HostSetting;
pub use knobs::PlanValues;
pub use options::{EngineChoice, Invocation, RunOptions};
pub use overrides::Overrides;
pub use workload::{IoParams, JobDefaults, Kind, WorkloadSpec, Writes};

use crate::workload::meta::CorpusSpec;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How big the data file is: fixed, or a multiple of RAM (seed 000: 4× RAM so nothing fits in
/// the page cache), capped to a share of the target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum FileSize {
    /// Exactly this many bytes.
    Fixed(u64),
    /// This multiple of the machine's RAM.
    RamMultiple(f64),
}

impl FileSize {
    /// Parse `256M`, `16G` or `4xram`.
    pub fn parse(s: &str) -> Result<FileSize, String> {
        let t = s.trim().to_ascii_lowercase();
        if let Some(f) = t.strip_suffix("xram") {
            let f: f64 = f
                .trim()
                .parse()
                .map_err(|_| format!("'{s}': write e.g. 4xram or a size such as 16G"))?;
            if f > 0.0 && f.is_finite() {
                return Ok(FileSize::RamMultiple(f));
            }
            return Err(format!("'{s}': the RAM multiple must be positive"));
        }
        crate::units::parse_size(&t).map(FileSize::Fixed)
    }
}

/// Settings of the wait-until-quiet step after mkfs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuietSpec {
    /// Observation window.
    pub window: Duration,
    /// The device is quiet when it wrote less than this over the window, bytes.
    pub threshold: u64,
    /// Give up (with a warning in the results) after this long.
    pub timeout: Duration,
}

/// A resolved plan: everything needed to run, nothing target-specific left to decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Profile or plan-file name.
    pub name: String,
    /// Description of the profile.
    #[serde(default)]
    pub description: String,
    /// Setups, in order.
    pub setups: Vec<SetupSpec>,
    /// Workloads run in every setup-round, in order (prerequisites have `record = false`).
    pub workloads: Vec<WorkloadSpec>,
    /// Rounds (≥ 1), interleaved across setups.
    pub rounds: u32,
    /// Measured time per I/O job.
    pub runtime: Duration,
    /// Warm-up per I/O job.
    pub ramp: Duration,
    /// Data file size, bytes.
    pub file_size: u64,
    /// Corpus for untar / find-cold / rm-tree.
    pub corpus: CorpusSpec,
    /// Quiet wait after mkfs.
    pub quiet: QuietSpec,
    /// Run every measured I/O job until steady, up to a limit (`--steady-state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::engine::SteadySpec>,
    /// Condition the data file before the I/O jobs of every setup-round (`--precondition`).
    #[serde(default)]
    pub precondition: bool,
    /// With `--precondition` on `--device`: the device's capacity, written twice in 128 KiB
    /// sequential writes once per run before the first mkfs (SNIA's workload-independent
    /// preconditioning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_device: Option<u64>,
    /// The switches and values that land as given (`--warmup`…), declared once in
    /// `knobs::plan_knobs!`: a new one adds no field here and no line to `resolve`.
    #[serde(flatten)]
    pub switches: knobs::PlanGiven,
    /// After the `rounds`, more interleaved rounds of the questions still open, until each is
    /// settled, the budget is spent or `max_rounds` is reached (`--until-settled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// `--error`: the error the run's decisions carry, per question (the default) or per run
    /// (familywise, [`crate::stats::family`]).
    #[serde(default)]
    pub error: crate::results::ErrorControl,
    /// `--margin`: the equivalence margin (a fraction) for every metric, instead of the
    /// metric registry's; recorded in `results.json` as `margin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// Read the disk beside the image for half a second right before each I/O job
    /// (`runner::disk_ref`), so the one statistic can take the disk's own pace out of the
    /// ratios (`stats::adjusted`): an image target on a disk, in a run by setup, of fixed
    /// rounds or `--until-settled` (whose extra rounds read it too); by steps a pair's runs
    /// are seconds apart already.
    #[serde(default)]
    pub disk_ref: bool,
    /// Each step runs on every setup back to back, each setup on an image of its own
    /// (`runner::by_step`), instead of every step of one setup, then the next setup: a
    /// setup's ratio then pairs measurements seconds apart rather than a setup's slot apart.
    /// Resolved by `plan::resolve::order`; `false` in older plan files.
    #[serde(default)]
    pub by_step: bool,
}

/// `--until-settled`: how far a run may go on past its minimum rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// Wall time the whole run may take (the minimum rounds included); no extra round starts
    /// that its estimate says would end past it.
    #[serde(with = "humantime_serde_secs")]
    pub budget: Duration,
    /// Rounds at most (the minimum is [`Plan::rounds`]).
    pub max_rounds: u32,
}

/// `Duration` as whole seconds in plan.json.
mod humantime_serde_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs(u64::deserialize(d)?))
    }
}

/// One setup-round: the unit of execution and of `--resume` (the filesystem is re-created for
/// every setup-round, so a half-done one is redone from mkfs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupRound {
    /// Round, 1-based.
    pub round: u32,
    /// Index into [`Plan::setups`].
    pub setup: usize,
}

impl QuietSpec {
    /// The rule for the wait after a writing workload: this one's threshold, a window of at
    /// most 1 s and a cap of at most 30 s.
    pub fn after_job(&self) -> crate::measure::SettleRule {
        crate::measure::SettleRule::after_job(self.window, self.threshold, self.timeout)
    }
}

impl Plan {
    /// Setup-rounds in execution order: round 1 of every setup, then round 2, … each round
    /// in [`Plan::setup_order`].
    pub fn setup_rounds(&self) -> Vec<SetupRound> {
        (1..=self.rounds)
            .flat_map(|round| {
                self.setup_order(round)
                    .into_iter()
                    .map(move |setup| SetupRound { round, setup })
            })
            .collect()
    }

    /// The order setups run in round `round` (indices into [`Plan::setups`]): a Williams
    /// design ([`williams`]), so over its period every setup runs in every place of the round
    /// and right after every other setup equally often, and a place in the round (first after
    /// the image is made, right after a heavy neighbour) is not confounded with the setup;
    /// the paired ratios of a round then carry no fixed position or carry-over effect.
    /// `results.json` records each round's order (`setup_order`).
    pub fn setup_order(&self, round: u32) -> Vec<usize> {
        williams::order(self.setups.len(), round)
    }

    /// How balanced this plan's rounds are ([`williams::balance`]); `None` for one setup.
    pub fn order_balance(&self) -> Option<williams::Balance> {
        (self.setups.len() >= 2).then(|| williams::balance(self.setups.len(), self.rounds as usize))
    }

    /// Workloads whose results are recorded.
    pub fn recorded(&self) -> impl Iterator<Item = &WorkloadSpec> {
        self.workloads.iter().filter(|w| w.record)
    }

    /// Defaults for building job specs.
    pub fn job_defaults(&self, seed: u64, device: Option<std::path::PathBuf>) -> JobDefaults {
        JobDefaults {
            file_size: self.file_size,
            runtime: self.runtime,
            ramp: self.ramp,
            seed,
            device,
            steady: self.steady,
            precondition: self.precondition,
        }
    }
}

/// Seed of one step, derived from the run seed so rounds differ but runs repeat.
pub fn step_seed(run_seed: u64, setup: &str, round: u32, workload: &str) -> u64 {
    // FNV-1a over the identifying strings; stable across platforms and Rust versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ run_seed;
    for b in setup
        .bytes()
        .chain([0u8])
        .chain(round.to_le_bytes())
        .chain(workload.bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A plan of `setups` over the whole catalog, one-second jobs, for unit tests.
#[cfg(test)]
pub(crate) fn test_plan(setups: Vec<SetupSpec>, rounds: u32) -> Plan {
    Plan {
        name: "t".into(),
        description: String::new(),
        setups,
        workloads: workload::catalog(),
        rounds,
        runtime: Duration::from_secs(1),
        ramp: Duration::ZERO,
        file_size: 1 << 20,
        corpus: CorpusSpec::default(),
        quiet: QuietSpec {
            window: Duration::from_secs(1),
            threshold: 1 << 20,
            timeout: Duration::from_secs(10),
        },
        steady: None,
        precondition: false,
        settle: None,
        error: Default::default(),
        margin: None,
        precondition_device: None,
        switches: Default::default(),
        disk_ref: false,
        by_step: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(setups: &[&str], rounds: u32) -> Plan {
        test_plan(setups.iter().map(|s| SetupSpec::plain(s)).collect(), rounds)
    }

    #[test]
    fn rounds_interleave_across_setups() {
        let p = plan(&["ext4", "xfs", "btrfs"], 2);
        let order: Vec<(u32, &str)> = p
            .setup_rounds()
            .iter()
            .map(|sr| (sr.round, p.setups[sr.setup].name.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                (1, "ext4"),
                (1, "xfs"),
                (1, "btrfs"),
                (2, "btrfs"),
                (2, "xfs"),
                (2, "ext4")
            ]
        );
        // A Williams design: the second round reverses the first, and over six rounds each
        // setup runs first twice.
        let p = plan(&["ext4", "xfs", "btrfs"], 6);
        let mut firsts: Vec<usize> = (1..=6).map(|r| p.setup_order(r)[0]).collect();
        firsts.sort_unstable();
        assert_eq!(firsts, [0, 0, 1, 1, 2, 2]);
        assert!(p.order_balance().unwrap().full());
    }

    #[test]
    fn file_size_forms() {
        assert_eq!(FileSize::parse("256M"), Ok(FileSize::Fixed(256 << 20)));
        assert_eq!(FileSize::parse("4xRAM"), Ok(FileSize::RamMultiple(4.0)));
        assert!(FileSize::parse("-1xram").is_err());
        assert!(FileSize::parse("lots").is_err());
    }

    #[test]
    fn step_seeds_differ_by_round_and_repeat() {
        let a = step_seed(1, "ext4", 1, "randread");
        assert_eq!(a, step_seed(1, "ext4", 1, "randread"));
        assert_ne!(a, step_seed(1, "ext4", 2, "randread"));
        assert_ne!(a, step_seed(2, "ext4", 1, "randread"));
    }
}
