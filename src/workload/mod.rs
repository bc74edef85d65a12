//! Workloads: I/O jobs (through the engine), metadata and small-file work, capability probes,
//! and application workloads on real engines (PostgreSQL's pgbench, SQLite).
//!
//! Each kind is one entry of [`registry::REGISTRY`] (what it needs, emits and costs, how it
//! runs); a plan's workload is a [`spec::WorkloadSpec`]. Every workload returns a [`WorkloadOutput`]: named metrics plus optional histograms and
//! series. The runner turns them into `results.json` samples for its (setup, workload, round).

use crate::measure::LatencyHistogram;
use crate::metrics::MetricId;
use std::path::Path;

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Metric id (`metrics::registry`'s constants).
    pub metric: MetricId,
    /// Unit (`IOPS`, `s`, `ms`, `MiB/s`, `bytes`, `files/s`, `bool`…).
    pub unit: String,
    /// Value.
    pub value: f64,
}

impl Metric {
    /// Build a metric from its registered id ([`crate::metrics::registry`]).
    pub fn new(metric: MetricId, unit: &str, value: f64) -> Self {
        Metric {
            metric,
            unit: unit.to_string(),
            value,
        }
    }
}

/// Everything a workload measured.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOutput {
    /// Scalar metrics.
    pub metrics: Vec<Metric>,
    /// Latency histograms by direction (`read`, `write`).
    pub histograms: Vec<(String, LatencyHistogram)>,
    /// Per-second series by metric name (`iops`).
    pub series: Vec<(String, Vec<f64>)>,
    /// Notes for the reader (backend fallback, unsupported discard…).
    pub notes: Vec<String>,
    /// A cold-cache workload ran warm (caches could not be dropped): its results are recorded
    /// under [`warm_id`] so no exporter labels them cold.
    pub ran_warm: bool,
    /// What makes this step's figures doubtful, by kind: the runner records these as the
    /// round's warnings (the report lists them) and `notes` as notes, without reading text.
    pub warnings: Vec<StepWarning>,
}

/// A warning about a step's or a round's figures: its kind, and the sentence for the reader.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWarning {
    /// What kind of doubt it is.
    pub kind: WarningKind,
    /// The sentence the results and the terminal show.
    pub message: String,
}

/// The kinds of warning a step or a round raises. `code` is each one's stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// An I/O job run until steady never met the criteria: a transient may be in its figures.
    NotSteady,
    /// A job met the steady criteria on a device that was not preconditioned: no claim.
    NotPreconditioned,
    /// The device did not go quiet after mkfs: background work may affect the round.
    NotQuiet,
}

impl WarningKind {
    /// The stable name of the kind (`not-steady`).
    pub fn code(self) -> &'static str {
        match self {
            WarningKind::NotSteady => "not-steady",
            WarningKind::NotPreconditioned => "not-preconditioned",
            WarningKind::NotQuiet => "not-quiet",
        }
    }
}

impl StepWarning {
    /// A warning of `kind` saying `message`.
    pub fn new(kind: WarningKind, message: String) -> Self {
        StepWarning { kind, message }
    }
}

/// The id a cold-cache workload is recorded under when it ran warm: `find-cold` →
/// `find-warm` (any other id gets `-warm` appended).
pub fn warm_id(id: &str) -> String {
    if id.contains("cold") {
        id.replace("cold", "warm")
    } else {
        format!("{id}-warm")
    }
}

/// What a workload may know about where it runs.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadContext<'a> {
    /// fsbench's working directory on the filesystem under test.
    pub dir: &'a Path,
    /// The block device under the filesystem, when there is one.
    pub device: Option<&'a Path>,
    /// Filesystem driver name (`ext4`, `zfs`, `dir`…).
    pub fs: &'a str,
    /// Round number (1-based).
    pub round: u32,
    /// Seed for this step (derived from the run seed, setup and round).
    pub seed: u64,
    /// After a job that writes, sync and wait for the device under this rule to count what
    /// the filesystem writes back later (`None`: the in-job window only).
    pub settle: Option<crate::measure::SettleRule>,
}

pub mod age;
pub mod builtin;
pub mod compress;
// Containers and VM images.
pub mod container;
pub mod crash;
#[cfg(test)]
pub mod fake;
pub mod fiojob;
pub mod io;
pub mod memcap;
pub mod meta;
pub mod pgbench;
pub mod precondition;
pub mod probe;
pub mod registry;
pub mod spec;
pub mod sqlite;
pub mod vmimage;
// Source trees, mail, logs, snapshots and backups.
pub mod backup;
pub mod step;
pub mod usecase;
