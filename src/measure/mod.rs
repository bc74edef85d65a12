//! Measurement: latency histograms, per-second series, CPU and device accounting.
//!
//! Everything here is cheap on the hot path (histograms and series are plain per-thread
//! arrays merged at the end) or sampled only at the edges of the measured window (CPU and
//! device counters).

pub mod backing;
pub mod cpu;
pub mod device;
pub mod histogram;
pub mod quiesce;
pub mod series;
pub mod snia_criteria;

pub use cpu::{CpuSnapshot, CpuUsage};
pub use device::{DeviceCounters, QuietOutcome};
pub use histogram::LatencyHistogram;
pub use quiesce::{SettleRule, Settled};
pub use series::{SecondLatency, SecondSeries, stalls};
