//! The host: caches, sync, external commands, quiescence, cgroups, provenance.

pub mod cache;
pub mod cgroup;
pub mod command;
pub mod provenance;
mod sys_freeze;

pub use cache::{drop_caches, sync_all};
