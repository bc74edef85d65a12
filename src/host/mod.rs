//! The host: caches, sync, external commands, quiescence, cgroups, provenance, the ledger of
//! held resources, output that survives a vanished terminal.

pub mod cache;
pub mod cgroup;
pub mod command;
pub mod ledger;
pub mod provenance;
pub mod stdio;
pub mod tuning;

pub use cache::{drop_caches, sync_all};
