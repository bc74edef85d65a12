//! fsbench: which Linux filesystem, with which options, is best for my workload on this disk?
//!
//! The crate follows the flow `CLI → Plan → Runner → Results → Stats → Report/Compare`
//! described in `docs/ARCHITECTURE.md`. `main.rs` only parses arguments and maps errors to exit codes;
//! everything else lives here so that integration tests and benches can reach it.

pub mod cancel;
pub mod claims;
pub mod cli;
pub mod commands;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod fio;
pub mod fs;
pub mod history;
pub mod host;
pub mod measure;
pub mod metrics;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod scratch;
pub mod stats;
pub mod tune;
pub mod units;
pub mod workload;

pub use error::{Error, Result};
