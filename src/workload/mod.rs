//! Workloads: I/O jobs (through the engine), metadata and small-file work, capability probes.
//!
//! Every workload returns a [`WorkloadOutput`]: named metrics plus optional histograms and
//! series. The runner turns them into `results.json` samples for its (setup, workload, round).

use crate::measure::LatencyHistogram;
use std::path::Path;

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Metric name (`iops`, `seconds`, `lat_p99_ms`…; DESIGN.md lists the standard ones).
    pub metric: String,
    /// Unit (`IOPS`, `s`, `ms`, `MiB/s`, `bytes`, `files/s`, `bool`…).
    pub unit: String,
    /// Value.
    pub value: f64,
}

impl Metric {
    /// Build a metric.
    pub fn new(metric: &str, unit: &str, value: f64) -> Self {
        Metric {
            metric: metric.to_string(),
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
}

pub mod compress;
pub mod fiojob;
pub mod io;
pub mod memcap;
pub mod meta;
pub mod probe;
