//! Workloads: I/O jobs (through the engine), metadata and small-file work, capability probes,
//! and application workloads on real engines (PostgreSQL's pgbench, SQLite).
//!
//! Each kind is a module below (its work, and its [`api::Workload`] entry with its `Kind`
//! constant) and one line in [`REGISTRY`] here, beside its `mod` line: adding a kind edits this
//! file and no other of the registry's. What a kind speaks is [`api`] (which names no kind);
//! the lookups over the list are [`registry`]; a plan's workload is a [`spec::WorkloadSpec`].
//! Every workload returns a [`WorkloadOutput`]: named metrics plus optional histograms and
//! series. The runner turns them into `results.json` samples for its (setup, workload, round).

pub use api::{Metric, StepWarning, WarningKind, WorkloadContext, WorkloadOutput, warm_id};

pub mod age;
pub mod api;
pub mod builtin;
pub mod compress;
// Containers and VM images.
pub mod container;
pub mod corpus;
pub mod crash;
#[cfg(test)]
pub mod fake;
pub mod fiojob;
pub mod io;
pub mod job_keys;
pub mod memcap;
pub mod meta;
pub mod pgbench;
pub mod precondition;
pub mod probe;
mod recipe;
pub mod registry;
// Your own workload: a recorded trace replayed.
pub mod replay;
pub mod spec;
pub mod sqlite;
pub mod vmimage;
// Source trees, mail, logs, snapshots and backups.
pub mod backup;
pub mod step;
pub mod usecase;

/// The registry's list with the unit tests' FAKE kind (`fake.rs`) appended in test builds.
macro_rules! kinds {
    ($($entry:expr),* $(,)?) => {
        /// Every workload kind, in catalog (suite) order: one line per kind, beside its `mod`
        /// line above ([`registry`] looks kinds up here).
        #[cfg(not(test))]
        pub static REGISTRY: &[&dyn api::Workload] = &[$($entry),*];
        /// Every workload kind, in catalog (suite) order, and the FAKE kind of the unit tests.
        #[cfg(test)]
        pub static REGISTRY: &[&dyn api::Workload] = &[$($entry,)* &fake::Fake];
    };
}

kinds![
    &builtin::MKFS,
    &builtin::USABLE_SPACE,
    &builtin::LAYOUT,
    &builtin::IO,
    &builtin::MEMCAP,
    &meta::kind::UNTAR,
    &meta::kind::FIND_COLD,
    &meta::kind::RM_TREE,
    &meta::kind::SMALLFILES,
    &meta::kind::FSMARK,
    &builtin::COMPRESS,
    &pgbench::kind::Pgbench,
    &sqlite::kind::Sqlite,
    &fiojob::kind::FioJob,
    &probe::kind::Probe,
    &crash::kind::Crash,
    // Containers and VM images.
    &vmimage::kind::VmImage,
    &container::kind::Container,
    // Source trees, mail, logs, snapshots and backups.
    &usecase::kind::Git,
    &usecase::kind::Maildir,
    &usecase::kind::Postmark,
    &usecase::kind::Logs,
    &backup::kind::Backup,
    // Your own workload: a recorded trace replayed.
    &replay::kind::Replay,
];
