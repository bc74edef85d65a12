//! The host: caches, sync, external commands, daemons, quiescence, cgroups, provenance, the
//! ledger of held resources, output that survives a vanished terminal.

pub mod cache;
pub mod cgroup;
pub mod command;
pub mod daemon;
pub mod facts;
pub mod ledger;
pub mod mountinfo;
pub mod packages;
pub mod provenance;
pub mod recorder;
pub mod stdio;
pub mod sys;
pub mod sysfs;
pub mod tuning;
pub mod zfs;

pub use cache::{drop_caches, sync_all};

/// fsbench's runtime directory (`/run/fsbench`): mountpoints and the ledger live under it.
pub fn run_dir() -> std::path::PathBuf {
    std::path::PathBuf::from("/run/fsbench")
}
