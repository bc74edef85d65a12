//! The native I/O load generator: fio's job semantics, `io_uring` and `psync` backends.
//!
//! Entry point: [`run`] takes a validated [`JobSpec`] and returns an [`IoReport`], whose JSON
//! form is the stable `fsbench io --json` interface (DESIGN.md).

pub mod job;
pub mod report;

pub use job::{Backend, JobSpec, RwMode};
pub use report::{CpuReport, DeviceReport, DirectionReport, IoReport, LatencyNs};

/// Run one job to completion (or until [`crate::cancel`] fires) and report what was measured.
pub fn run(spec: &JobSpec) -> crate::Result<IoReport> {
    let _ = spec;
    todo!("engine::run")
}
