//! The doctor inside `fsbench run`: once the target exists (the loop device attached), the
//! same checks run over the run's own target, setups, data file and I/O jobs, and their
//! findings go into the results: warnings as warnings, context as notes, and all of them,
//! structured, as `host_findings`.

use super::facts::{IoJobFact, Request};
use super::tools::Wants;
use super::{Diagnosis, Finding, Severity};
use crate::plan::{EngineChoice, Invocation};
use crate::results::Warning;
use crate::scratch::{Target, TargetKind};
use std::path::Path;
use std::time::Duration;

/// How long `fsbench run` watches the devices for other I/O before it starts.
const SAMPLE: Duration = Duration::from_secs(1);

/// Checks the run leaves out because the run already says it: the runner notes each setup
/// it skips for missing tools, and the reports label every zfs-fuse setup.
const NOT_IN_RUN: &[&str] = &["missing-tools", "zfs-fuse"];

/// What to look at for this run.
pub fn request(inv: &Invocation, target: &dyn Target) -> Request {
    let plan = &inv.plan;
    let mut req = Request {
        sample: SAMPLE,
        file_size: Some(plan.file_size),
        steady_state: plan.steady.is_some(),
        ..Default::default()
    };
    if let Some(dev) = target.block_device() {
        req.devices.push((dev.to_path_buf(), "target".into()));
    }
    match &inv.options.target {
        TargetKind::Image { scratch_dir, .. } => {
            req.dirs.push((scratch_dir.clone(), "scratch".into()))
        }
        TargetKind::Dir { path } => req.dirs.push((path.clone(), "target".into())),
        // The job's own file or device: the device is checked as one above.
        TargetKind::Device { .. } | TargetKind::File { .. } => {}
    }
    let defaults = plan.job_defaults(inv.options.seed, None);
    for w in plan.recorded() {
        let Some(spec) = w.job_spec(Path::new("/"), &defaults) else {
            continue;
        };
        req.buffered_io |= !spec.direct;
        if inv.options.engine == EngineChoice::Fio {
            req.io_jobs.push(IoJobFact {
                id: w.id.clone(),
                ioengine: spec.backend.as_str().to_string(),
                iodepth: spec.iodepth,
                numjobs: spec.numjobs,
            });
        }
    }
    req.wants = wants(inv);
    req
}

/// The programs' point of view of a run: its setups, engine and workloads.
pub fn wants(inv: &Invocation) -> Wants {
    let plan = &inv.plan;
    Wants {
        setups: plan
            .setups
            .iter()
            .map(|s| (s.name.clone(), s.fs.clone()))
            .collect(),
        fio: inv.options.engine == EngineChoice::Fio,
        workloads: plan.recorded().map(|w| w.id.clone()).collect(),
        kernel_zfs: crate::host::zfs::kernel(),
    }
}

/// `--install-missing` for `fsbench run` (and, with `dry_run`, `fsbench plan`): print what
/// the run needs and is missing, then install it.
pub fn install_missing(inv: &Invocation, dry_run: bool) -> crate::Result<()> {
    let needs = super::tools::needs(&wants(inv));
    super::install::install(&super::install::plan_here(&needs), dry_run)
}

/// Gather and check for this run.
pub fn diagnose(inv: &Invocation, target: &dyn Target) -> Diagnosis {
    let mut d = super::diagnose(super::facts::gather(&request(inv, target)));
    d.findings
        .retain(|f| !NOT_IN_RUN.contains(&f.code.as_str()));
    d
}

/// A finding as a run-wide warning or note of `results.json`.
pub fn as_warning(f: &Finding) -> Warning {
    Warning {
        setup: String::new(),
        round: 0,
        message: f.one_line(),
    }
}

/// The short form printed when the run starts: what and the fix (the why is in the results).
pub fn short_line(f: &Finding) -> String {
    format!("doctor {}: {}; fix: {}", f.code, f.finding, f.fix)
}

/// Whether a finding is a warning (else a note).
pub fn is_warning(f: &Finding) -> bool {
    f.severity == Severity::Warn
}

/// Whether this process has not printed `line` yet (and, from now on, has). `fsbench tune`
/// runs its stages as runs of one process: a finding that holds for every stage (a loop
/// device that inherits rotational=1) is said once on the terminal, and recorded with each
/// stage's results all the same.
pub fn first_time(line: &str) -> bool {
    static PRINTED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    PRINTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(line.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_is_said_once_per_process() {
        let line = "doctor test-only: a finding every stage has";
        assert!(super::first_time(line));
        assert!(!super::first_time(line), "the second stage stays quiet");
        assert!(super::first_time("doctor test-only: another finding"));
    }
}
