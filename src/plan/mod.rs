//! Plans: pure data. Targets × setups × workloads × rounds, expanded into interleaved steps.

pub mod setup;

pub use setup::SetupSpec;
