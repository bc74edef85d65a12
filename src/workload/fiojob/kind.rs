//! Registry entry of `fio-job`: one section of a user's fio job file (`--fio-job`, plan kind
//! `fio-job`); the sections of a phase run together, in the step of the first one.

use crate::Error;
use crate::fio::jobfile::FioJob as Section;
use crate::metrics::MetricId;
use crate::metrics::registry::*;
use crate::workload::api::{
    Caches, Cost, Describe, Family, Kind, Needs, Question, Table, Workload, WorkloadOutput, Writes,
    io_question,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::{FioPhase, StepContext};
use std::path::{Path, PathBuf};

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// One section of a user's fio job file (`--fio-job`, plan kind `fio-job`).
    pub const FioJob: Kind = Kind::named("fio-job");
}

impl WorkloadSpec {
    /// A section of a fio job file.
    pub fn fio_job(id: &str, job: Section) -> Self {
        WorkloadSpec::simple(id, Kind::FioJob).with_params(&job)
    }

    /// This section without the runner's wait for the device to go quiet after it
    /// (`fsbench io --fio-job --no-settle`): only its phase's in-job device window is
    /// counted, as `--no-settle` does for `fsbench io`'s own job.
    pub fn without_settle(mut self) -> Self {
        self.set_param(SETTLE, &false);
        self
    }
}

/// The key beside the section (`fio_job`) that turns the runner's settle off; absent: on.
const SETTLE: &str = "settle";

/// The job-file section a `fio-job` workload runs (after rebasing and capping); `None` for a
/// workload of another kind.
pub fn job_of(w: &WorkloadSpec) -> Option<Section> {
    if w.kind == Kind::FioJob {
        w.params_of()
    } else {
        None
    }
}

/// A fio job-file section: trims, and the phase's device bytes when sections ran together.
const FIO_JOB_METRICS: &[MetricId] = crate::workload::io::io_metrics!(
    TRIM_IOPS,
    TRIM_BW_MIB_S,
    TRIM_LAT_P99_MS,
    PHASE_DEVICE_WRITE_BYTES
);

/// One section of a user's fio job file; the sections of a phase run together.
pub struct FioJob;

impl FioJob {
    fn phase_key(
        w: &WorkloadSpec,
        setup: &str,
        round: u32,
    ) -> Option<(String, u32, PathBuf, usize)> {
        let (file, phase) = job_of(w)?.phase_key();
        Some((setup.to_string(), round, file, phase))
    }

    /// Whether `w`'s phase already ran in this setup-round (its output is waiting).
    fn phase_ran(cx: &StepContext<'_>, w: &WorkloadSpec) -> bool {
        let key = Self::phase_key(w, &cx.setup.name, cx.work.round);
        cx.shared
            .fio_phase
            .as_ref()
            .is_some_and(|p| Some(&p.key) == key.as_ref() && p.outputs.contains_key(&w.id))
    }
}

impl Workload for FioJob {
    fn kind(&self) -> Kind {
        Kind::FioJob
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, params: &serde_json::Value) -> Question {
        io_question(params)
    }
    fn table(&self) -> Table {
        Table::Io
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        Needs {
            tool: job_of(w).filter(|j| !j.native).map(|_| "fio"),
            // The runner counts around the step that runs the phase; a section alone in its
            // phase gets the totals, concurrent ones only the phase's in-job bytes. Without
            // the settle the phase's own counters (`run_phase`) are all there is.
            writes: if w.param::<bool>(SETTLE) == Some(false) {
                Writes::No
            } else {
                Writes::Runner
            },
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        FIO_JOB_METRICS
    }
    fn example(&self) -> &'static str {
        "kind = \"fio-job\"\npath = \"job.fio\""
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Seconds(job_of(w).map_or(0.0, |j| j.estimate_seconds()))
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        match &job_of(w) {
            Some(j) => format!(
                "{} [{}] phase {}{}: {}",
                j.file.display(),
                j.section,
                j.phase + 1,
                if j.native {
                    " (native engine)"
                } else {
                    " (fio)"
                },
                j.options.join(" ")
            ),
            None => String::new(),
        }
    }
    /// A fio phase drops caches once, before its first section runs.
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        Ok(if Self::phase_ran(cx, w) {
            Caches::Keep
        } else {
            Caches::Drop
        })
    }
    /// Run its phase (every selected section between the same stonewalls) unless that
    /// already happened in this setup-round, then take its output.
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let job = &job_of(w)
            .ok_or_else(|| Error::workload(&w.id, "fio-job workload without a job section"))?;
        let (setup, round) = (cx.setup.name.as_str(), cx.work.round);
        let key = Self::phase_key(w, setup, round).expect("fio job");
        if !Self::phase_ran(cx, w) {
            let members: Vec<&WorkloadSpec> = cx
                .plan_workloads
                .iter()
                .filter(|x| Self::phase_key(x, setup, round).as_ref() == Some(&key))
                .collect();
            let owned: Vec<Section> = members.iter().filter_map(|m| job_of(m)).collect();
            let jobs: Vec<&Section> = owned.iter().collect();
            let stem = job
                .file
                .file_stem()
                .map(|s| crate::fio::jobfile::section_id(&s.to_string_lossy()))
                .unwrap_or_else(|| "fio".into());
            // A phase on the user's own file (`io --fio-job --filename`) stands beside it and
            // makes nothing there; otherwise the job file's own directory in the data directory.
            let own: Option<Vec<PathBuf>> = jobs.iter().map(|j| j.own_file()).collect();
            let dir = if own.is_some() {
                cx.work.dir.to_path_buf()
            } else {
                cx.work.dir.join(format!("fio-{stem}"))
            };
            // The device counted around the phase: the round's, else (a directory or the
            // user's file, no device of fsbench's) the one holding the phase's files, as the
            // runner's step counts, so concurrent sections still get the phase's total.
            let counted = cx
                .work
                .device
                .map(Path::to_path_buf)
                .or_else(|| own.and_then(|o| o.into_iter().next()))
                .unwrap_or_else(|| dir.clone());
            let outputs = match super::run_phase(&jobs, &dir, Some(&counted)) {
                Ok(per) => members.iter().map(|m| m.id.clone()).zip(per).collect(),
                Err(Error::Interrupted) => return Err(Error::Interrupted),
                // fio refused the phase: every section of it failed with fio's words.
                Err(e) => {
                    let msg = e.to_string();
                    members
                        .iter()
                        .map(|m| (m.id.clone(), Err(Error::Other(msg.clone()))))
                        .collect()
                }
            };
            cx.shared.fio_phase = Some(FioPhase { key, outputs });
        }
        let mut out = cx
            .shared
            .fio_phase
            .as_mut()
            .and_then(|p| p.outputs.remove(&w.id))
            .unwrap_or_else(|| Err(Error::workload(&w.id, "its fio phase produced no result")))?;
        // What fsbench changed in the section (rebasing, capping, overrides), said once.
        if round == 1 {
            out.notes.extend(job.notes.iter().cloned());
        }
        Ok(out)
    }
}
