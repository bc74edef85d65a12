//! fio as a cross-check backend: render a job as fio arguments, run fio, parse its JSON.

use crate::engine::{IoReport, JobSpec};

/// Run `spec` with fio and parse its JSON into an [`IoReport`].
///
/// Placeholder in this branch (the fio helper writes the real one): always fails.
pub fn run(spec: &JobSpec) -> crate::Result<IoReport> {
    let _ = spec;
    Err(crate::Error::Other("fio engine: not implemented".into()))
}
