//! The host: caches, sync, external commands, daemons, quiescence, cgroups, provenance.

pub mod cache;
pub mod cgroup;
pub mod command;
pub mod daemon;
pub mod provenance;

pub use cache::{drop_caches, sync_all};
