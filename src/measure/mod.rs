//! Measurement: latency histograms, per-second series, CPU and device accounting.

pub mod histogram;

pub use histogram::LatencyHistogram;
