//! The history record every measuring command on an existing path ends with (`fsbench io`,
//! `fsbench io --fio-job`, `fsbench meta`, with and without `--mpi`; `fsbench run` records its whole results in
//! [`super::ending::finish`]): a one-setup run of the filesystem holding the path
//! ([`crate::history::record::one_setup`]), recorded by rank 0 alone under MPI.

use crate::engine::{IoReport, JobSpec};
use crate::history::Location;
use crate::units::format_size;
use crate::workload::Metric;
use std::path::Path;

/// Record an I/O job (workload `io:<rw>:<bs>:qd<N>:j<N>`, its spec as params) with the
/// figures of `report` (one process's, or all ranks' reduced report), as `command` (`io`,
/// `io --mpi`: the record's source).
pub(crate) fn io(
    loc: Option<&Location>,
    command: &str,
    started: &str,
    spec: &JobSpec,
    report: &IoReport,
) {
    let id = format!(
        "io:{}:{}:qd{}:j{}",
        serde_json::to_value(spec.rw)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        format_size(spec.bs).replace(' ', ""),
        spec.iodepth,
        spec.numjobs
    );
    let info = crate::results::WorkloadInfo {
        id: id.clone(),
        kind: "io".into(),
        params: serde_json::to_value(spec).unwrap_or_default(),
        fio_command: None,
    };
    let out = crate::workload::io::to_output(report);
    let samples = out
        .metrics
        .into_iter()
        .map(|m| (id.clone(), m.metric, m.unit, m.value));
    let r = crate::history::record::one_setup("io", started, &spec.filename, vec![info], samples);
    crate::history::record::after_run(loc, &r, &spec.filename, command);
}

/// Record `fsbench io --fio-job`'s run on `path` (its `--dir` or `--filename`) as `io
/// --fio-job`: each section that ran, as the runner recorded it (kind `fio-job`, the section
/// as its params), with its samples; a failed section leaves none.
pub(crate) fn fio_job(
    loc: Option<&Location>,
    started: &str,
    path: &Path,
    results: &crate::results::Results,
) {
    let rows: Vec<_> = results
        .samples
        .iter()
        .filter_map(|s| Some((s.workload.clone(), s.metric.id()?, s.unit.clone(), s.value)))
        .collect();
    let workloads = results
        .workloads
        .iter()
        .filter(|w| rows.iter().any(|(id, ..)| *id == w.id))
        .cloned()
        .collect();
    let r = crate::history::record::one_setup("io", started, path, workloads, rows);
    crate::history::record::after_run(loc, &r, path, "io --fio-job");
}

/// Record metadata workloads on `dir` (`params`: the flags they ran with) as `command`
/// (`meta`, `meta --mpi`); failed workloads (`None`) leave no samples.
pub(crate) fn meta(
    loc: Option<&Location>,
    command: &str,
    started: &str,
    dir: &Path,
    params: serde_json::Value,
    samples: &[(String, Option<Metric>)],
) {
    let mut ids: Vec<&str> = Vec::new();
    for (w, m) in samples {
        if m.is_some() && !ids.contains(&w.as_str()) {
            ids.push(w);
        }
    }
    let workloads = ids
        .iter()
        .map(|id| crate::results::WorkloadInfo {
            id: id.to_string(),
            kind: "meta".into(),
            params: params.clone(),
            fio_command: None,
        })
        .collect();
    let rows = samples.iter().filter_map(|(w, m)| {
        m.as_ref()
            .map(|m| (w.clone(), m.metric, m.unit.clone(), m.value))
    });
    let r = crate::history::record::one_setup("meta", started, dir, workloads, rows);
    crate::history::record::after_run(loc, &r, dir, command);
}

/// `fsbench meta`'s table rows: a workload's metric, or `None` for a failed workload.
pub(crate) type MetaRows = Vec<(String, Option<Metric>)>;

/// A runner's results as `fsbench meta`'s rows: every sample of a metric this fsbench knows,
/// then a failed workload's row (`None`), in the results' order; and each failure's message
/// by workload.
pub(crate) fn meta_rows(results: &crate::results::Results) -> (MetaRows, Vec<(String, String)>) {
    let mut rows: MetaRows = results
        .samples
        .iter()
        .filter_map(|s| {
            let id = s.metric.id()?;
            Some((s.workload.clone(), Some(Metric::new(id, &s.unit, s.value))))
        })
        .collect();
    let mut failures = Vec::new();
    for f in &results.failures {
        // Most errors already start with the workload id; name it once.
        let msg = if f.error.starts_with(&f.workload) {
            f.error.clone()
        } else {
            format!("{}: {}", f.workload, f.error)
        };
        rows.push((f.workload.clone(), None));
        failures.push((f.workload.clone(), msg));
    }
    (rows, failures)
}
