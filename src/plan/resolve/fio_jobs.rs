//! fio job files (`--fio-job`, a plan's `kind = "fio-job"`) as one workload per section.

use super::Source;
use crate::Error;
use crate::host::facts::HostFacts;
use crate::plan::file::PlanDraft;
use crate::plan::overrides::Overrides;
use crate::plan::params;
use crate::plan::workload::Kind;
use crate::plan::workload::WorkloadSpec;

/// Share of the target a job file's data may take before its sizes are capped (the
/// filesystem's own metadata and reserve need the rest).
pub(super) const FIO_JOB_SHARE: f64 = 0.7;

/// Expand `--fio-job` files and plan `fio-job` entries into one workload per section. With
/// `--fio-job` and no plan file, the job files replace the profile's workloads.
pub(super) fn fio_job_workloads(
    args: &Overrides,
    source: &Source,
    draft: &mut PlanDraft,
    capacity: Option<u64>,
    formats: bool,
    host: &HostFacts,
) -> crate::Result<()> {
    let files = source.job_files(args);
    if files.is_empty() {
        return Ok(());
    }
    let native = args.engine == Some(crate::plan::EngineChoice::Fsbench);
    if !native && !host.has_tool("fio") {
        return Err(Error::invalid(
            "--fio-job",
            "fio is not installed; job files run with fio (install it) or natively with --engine native",
        ));
    }
    if !source.from_file || !draft.workloads.iter().any(|w| w.kind == Kind::Mkfs) {
        let keep: Vec<WorkloadSpec> = if !source.from_file {
            Vec::new()
        } else {
            draft.workloads.clone()
        };
        draft.workloads = crate::plan::workload::catalog()
            .into_iter()
            .filter(|w| matches!(w.kind, Kind::Mkfs | Kind::UsableSpace))
            .chain(keep)
            .collect();
    }
    let budget = capacity.map(|c| {
        let share = if formats { FIO_JOB_SHARE } else { 0.5 };
        (c as f64 * share) as u64
    });
    let opts = crate::fio::jobfile::LoadOptions {
        place: crate::fio::jobfile::rebase::Place::DataDir,
        budget,
        runtime: args.values.runtime,
        ramp: args.values.ramp,
        native,
    };
    let mut jobs = Vec::new();
    for f in &files {
        let file = source.fio_jobs.get(f).ok_or_else(|| {
            Error::invalid(
                "--fio-job",
                format!("{}: the job file was not read", f.display()),
            )
        })?;
        params::jobfile::check(file)?;
        jobs.extend(crate::fio::jobfile::prepare(f, file, &opts)?);
    }
    let taken: Vec<String> = draft.workloads.iter().map(|w| w.id.clone()).collect();
    let ids = crate::fio::jobfile::assign_ids(&jobs, &taken);
    for (id, job) in ids.into_iter().zip(jobs) {
        draft.workloads.push(WorkloadSpec::fio_job(&id, job));
    }
    Ok(())
}
