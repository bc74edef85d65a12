//! `fsbench io`'s flags as a plan: the one I/O job exactly as given ([`GroupJob`]), one
//! round, in memory, that `fsbench io` and every rank of `fsbench io --mpi` run through the
//! runner, and the one report the runner hands back (`Outcome::job_reports`); or, with
//! `--fio-job`, a job file's sections as `fio-job` workloads in the same kind of plan, and
//! each section's outcome read back from the runner's results.

use crate::engine::{JobSpec, Slice};
use crate::fio::jobfile::FioJob;
use crate::runner::reduce::aggregate::MpiIoReport;
use crate::scratch::TargetKind;
use crate::workload::io::GroupJob;
use crate::workload::{Metric, WorkloadOutput};

/// Where the plan's job runs and how (what differs between one process and a rank).
pub(crate) struct Place {
    /// The target: the user's own file (`fsbench io`) or the rank's own directory.
    pub(crate) target: TargetKind,
    /// This process's part of a shared file (`io --mpi` on one file); `None`: its own.
    pub(crate) slice: Option<Slice>,
    /// Count the device's write-back after a job that writes (`false`: `--no-settle`).
    pub(crate) settle: bool,
}

/// The plan `fsbench io` runs: one I/O workload `io`, the job `spec` exactly as given (its
/// file named by the job itself, its seed set), one round on `place`, kept in memory (no
/// OUT: the caller renders `Outcome::job_reports`).
pub(crate) fn invocation(spec: &JobSpec, place: Place) -> crate::plan::Invocation {
    // What the plan's summary and estimate read (the job itself is `GroupJob`'s).
    let mut params = crate::plan::IoParams::new(spec.rw, spec.bs, spec.numjobs, spec.iodepth);
    params.size = spec.size;
    params.runtime = spec.runtime;
    params.ramp = Some(spec.ramp);
    params.direct = spec.direct;
    params.backend = spec.backend;
    // Its own file, not the plan's data file (which nothing lays out here).
    params.file = Some(spec.filename.display().to_string());
    let workload = crate::plan::WorkloadSpec::io("io", params).with_params(&GroupJob {
        job: spec.clone(),
        slice: place.slice,
        settle: place.settle,
    });
    let mut plan = crate::plan::Plan::on_dir("io", "fsbench io", vec![workload]);
    plan.runtime = spec.runtime.unwrap_or(std::time::Duration::from_secs(5));
    plan.ramp = spec.ramp;
    plan.file_size = spec.size.unwrap_or(0);
    // Never written (the run is in memory): where the run stands.
    let out = match &place.target {
        TargetKind::Dir { path } => path.clone(),
        _ => crate::engine::validate::directory_of(&spec.filename),
    };
    crate::plan::Invocation::in_memory(plan, place.target, out, spec.seed.unwrap_or(1), 1)
}

/// The plan `fsbench io --fio-job` runs: one `fio-job` workload per section of the job file
/// (`jobs`, already rebased onto `target`: the user's `--filename`, or `--dir`, where the
/// runner's own per-run directory holds them), one round, kept in memory; `settle: false`
/// (`--no-settle`) keeps only each phase's in-job device window.
pub(crate) fn fio_job_invocation(
    jobs: Vec<FioJob>,
    target: TargetKind,
    settle: bool,
) -> crate::plan::Invocation {
    let ids = crate::fio::jobfile::assign_ids(&jobs, &[]);
    let workloads = ids
        .iter()
        .zip(jobs)
        .map(|(id, job)| {
            let w = crate::plan::WorkloadSpec::fio_job(id, job);
            if settle { w } else { w.without_settle() }
        })
        .collect();
    let plan = crate::plan::Plan::on_dir("io", "fsbench io --fio-job", workloads);
    // Never written (the run is in memory): where the run stands.
    let out = match &target {
        TargetKind::File { path } => crate::engine::validate::directory_of(path),
        TargetKind::Dir { path } => path.clone(),
        other => other.describe().into(),
    };
    crate::plan::Invocation::in_memory(plan, target, out, 1, 1)
}

/// Each section of a `--fio-job` run, in the plan's order, with what the runner recorded of
/// it: its metrics and notes, or its error. A section the runner never reached says why:
/// the run's failure that stopped it, or that the run stopped before it.
pub(crate) fn fio_sections(
    plan: &crate::plan::Plan,
    results: &crate::results::Results,
) -> Vec<(FioJob, crate::Result<WorkloadOutput>)> {
    plan.workloads
        .iter()
        .filter_map(|w| Some((w.id.as_str(), crate::workload::fiojob::job_of(w)?)))
        .map(|(id, job)| {
            let outcome = section_outcome(id, &job, results);
            (job, outcome)
        })
        .collect()
}

/// One section's recorded outcome (see [`fio_sections`]).
fn section_outcome(
    id: &str,
    job: &FioJob,
    results: &crate::results::Results,
) -> crate::Result<WorkloadOutput> {
    if let Some(f) = results.failures.iter().find(|f| f.workload == id) {
        return Err(crate::Error::Other(f.error.clone()));
    }
    let metrics: Vec<Metric> = results
        .samples
        .iter()
        .filter(|s| s.workload == id)
        .filter_map(|s| Some(Metric::new(s.metric.id()?, &s.unit, s.value)))
        .collect();
    if metrics.is_empty() {
        // The runner stopped the round (or the run) before this section: say where.
        let why = match results.failures.last() {
            Some(f) => format!(
                "not run: the run could not go on after {} failed: {}",
                f.workload, f.error
            ),
            None => "not run: the run stopped before it".to_string(),
        };
        return Err(crate::Error::workload(id, why));
    }
    // The runner records a step's notes as `<id>: <note>`; the section's own notes (what
    // fsbench changed in it) are shown from the section itself.
    let prefix = format!("{id}: ");
    let notes = results
        .notes
        .iter()
        .filter_map(|n| n.message.strip_prefix(&prefix))
        .filter(|n| !job.notes.iter().any(|j| j == n))
        .map(str::to_string)
        .collect();
    Ok(WorkloadOutput {
        metrics,
        notes,
        ..Default::default()
    })
}

/// The job's one report from a finished run (rank 0's under MPI, the reduction of every
/// rank's); an error when the runner kept none (a run that failed returns before this).
pub(crate) fn the_report(
    outcome: crate::runner::Outcome,
    what: &str,
) -> crate::Result<MpiIoReport> {
    outcome
        .job_reports
        .into_iter()
        .next()
        .ok_or_else(|| crate::Error::Other(format!("{what}: the runner kept no report of the job")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RwMode;
    use std::path::Path;

    /// The job of `fsbench io --filename DIR/f --rw write --size 1M --no-settle`.
    fn job(file: &Path) -> JobSpec {
        JobSpec {
            filename: file.to_path_buf(),
            rw: RwMode::Write,
            size: Some(1 << 20),
            ..Default::default()
        }
    }

    #[test]
    fn one_job_on_the_users_file_runs_through_the_runner_and_makes_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        let spec = job(&f);
        let place = Place {
            target: TargetKind::File { path: f.clone() },
            slice: None,
            settle: false,
        };
        let inv = invocation(&spec, place);
        assert!(inv.options.in_memory);
        let outcome = crate::runner::execute_with(&inv, false, None).unwrap();
        assert!(outcome.results.failures.is_empty(), "{:?}", outcome.results);
        let report = the_report(outcome, "io").unwrap();
        // The engine's own report, whole: every byte once, the layout timed.
        assert_eq!(report.aggregate.write.bytes, 1 << 20);
        assert_eq!(report.aggregate.write.ios, 256);
        assert_eq!(report.ranks.len(), 1);
        // Only the user's file: no work or data directory of fsbench's, made or left.
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f"]);
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    }

    /// The sections of `text` (a job file in `dir`) prepared for `--dir`, natively.
    fn sections_of(dir: &Path, text: &str) -> Vec<FioJob> {
        placed(dir, text, crate::fio::jobfile::rebase::Place::DataDir)
    }

    /// The sections of `text` (a job file in `dir`) prepared for `place`, natively.
    fn placed(dir: &Path, text: &str, place: crate::fio::jobfile::rebase::Place) -> Vec<FioJob> {
        let file = dir.join("job.fio");
        std::fs::write(&file, text).unwrap();
        let opts = crate::fio::jobfile::LoadOptions {
            place,
            budget: None,
            runtime: None,
            ramp: None,
            native: true,
        };
        crate::fio::jobfile::load(&file, &opts).unwrap()
    }

    #[test]
    fn a_job_files_sections_run_through_the_runner_inside_dir_and_leave_nothing() {
        let d = tempfile::tempdir().unwrap();
        let jobs = sections_of(d.path(), "[w]\nrw=write\nsize=1m\nbs=64k\n");
        let work = d.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let target = TargetKind::Dir { path: work.clone() };
        let inv = fio_job_invocation(jobs, target, false);
        assert_eq!(inv.plan.rounds, 1);
        assert!(inv.options.in_memory);
        let outcome = crate::runner::execute_with(&inv, false, None).unwrap();
        let sections = fio_sections(&inv.plan, &outcome.results);
        assert_eq!(sections.len(), 1);
        let (job, out) = &sections[0];
        assert_eq!(job.section, "w");
        let out = out.as_ref().unwrap();
        assert!(
            out.metrics
                .iter()
                .any(|m| m.metric == crate::metrics::registry::IOPS && m.value > 0.0)
        );
        // The job's files were the runner's, inside the directory, and went with it.
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    }

    #[test]
    fn no_settle_and_the_users_own_file_reach_the_sections() {
        use crate::workload::registry::{Writes, of};
        let d = tempfile::tempdir().unwrap();
        let text = "[w]\nrw=write\nsize=1m\n";
        let writes = |settle| {
            let jobs = sections_of(d.path(), text);
            let inv = fio_job_invocation(
                jobs,
                TargetKind::Dir {
                    path: d.path().into(),
                },
                settle,
            );
            let w = &inv.plan.workloads[0];
            of(w.kind).needs(w).writes
        };
        assert_eq!(writes(true), Writes::Runner);
        assert_eq!(writes(false), Writes::No);
        assert_eq!(sections_of(d.path(), text)[0].own_file(), None);
        let own = placed(
            d.path(),
            text,
            crate::fio::jobfile::rebase::Place::File(d.path().join("f")),
        );
        assert_eq!(own[0].own_file(), Some(d.path().join("f")));
    }

    #[test]
    fn a_section_failed_or_never_reached_keeps_its_error() {
        let d = tempfile::tempdir().unwrap();
        let jobs = sections_of(
            d.path(),
            "[a]\nrw=write\nsize=1m\n[b]\nstonewall\nrw=write\nsize=1m\n[c]\nstonewall\nrw=write\nsize=1m\n",
        );
        let notes = jobs[0].notes.clone();
        let inv = fio_job_invocation(
            jobs,
            TargetKind::Dir {
                path: d.path().into(),
            },
            true,
        );
        let mut r = crate::results::Results::new();
        r.samples.push(crate::results::Sample {
            setup: "dir".into(),
            workload: "a".into(),
            metric: crate::metrics::registry::IOPS.into(),
            unit: "IOPS".into(),
            round: 1,
            value: 5.0,
        });
        r.notes.push(crate::results::Warning {
            setup: "dir".into(),
            round: 1,
            message: "a: backend fell back".into(),
        });
        r.failures.push(crate::results::Failure {
            setup: "dir".into(),
            workload: "b".into(),
            round: 1,
            error: "fio failed: no".into(),
        });
        let s = fio_sections(&inv.plan, &r);
        let ids: Vec<&str> = s.iter().map(|(j, _)| j.section.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        let a = s[0].1.as_ref().unwrap();
        assert_eq!(a.metrics[0].value, 5.0);
        assert_eq!(a.notes, ["backend fell back"]);
        assert!(notes.iter().all(|n| !a.notes.contains(n)));
        assert_eq!(s[1].1.as_ref().unwrap_err().to_string(), "fio failed: no");
        let c = s[2].1.as_ref().unwrap_err().to_string();
        assert!(
            c.contains("not run: the run could not go on after b failed"),
            "{c}"
        );
    }

    #[test]
    fn a_job_that_fails_is_the_runs_failure_and_keeps_no_report() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        let mut spec = job(&f);
        // Reading a file that is not there fails inside the step, not before the run.
        spec.rw = RwMode::Read;
        spec.size = None;
        let place = Place {
            target: TargetKind::File { path: f.clone() },
            slice: None,
            settle: false,
        };
        let outcome = crate::runner::execute_with(&invocation(&spec, place), false, None).unwrap();
        assert_eq!(outcome.results.failures.len(), 1);
        assert!(the_report(outcome, "io").is_err());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
