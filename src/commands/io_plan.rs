//! `fsbench io`'s flags as a plan: the one I/O job exactly as given ([`GroupJob`]), one
//! round, in memory, that `fsbench io` and every rank of `fsbench io --mpi` run through the
//! runner; and the one report the runner hands back (`Outcome::job_reports`).

use crate::engine::{JobSpec, Slice};
use crate::runner::reduce::aggregate::MpiIoReport;
use crate::scratch::TargetKind;
use crate::workload::io::GroupJob;

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
