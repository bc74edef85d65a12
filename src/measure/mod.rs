//! Measurement: latency histograms, per-second series, CPU and device accounting.
//!
//! Everything here is cheap on the hot path (histograms and series are plain per-thread
//! arrays merged at the end) or sampled only at the edges of the measured window (CPU and
//! device counters).

pub mod backing;
pub mod cpu;
pub mod device;
pub mod histogram;
pub mod series;
pub mod settle;
pub mod steady;

pub use cpu::{CpuSnapshot, CpuUsage};
pub use device::{DeviceCounters, QuietOutcome};
pub use histogram::LatencyHistogram;
pub use series::{SecondLatency, SecondSeries, stalls};
pub use settle::{SettleRule, Settled};
