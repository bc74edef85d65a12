//! The host: caches, sync, quiescence, cgroups, provenance.

pub mod cache;

pub use cache::{drop_caches, sync_all};
