//! Executes a plan: guards, signals, journal and resume, progress.
//!
//! Order of business: skip setups whose tools are missing (printed, and a warning in the
//! results) → acquire the target (safety checks happen there, before anything destructive) →
//! for every setup-round in interleaved order, unless the journal says it is done: run it
//! ([`round`]) → append `round_done` → save partial results. Ctrl-C sets
//! [`crate::cancel`]; the current step stops, guards release mount, pool, loop device and image,
//! partial results are saved and the caller exits 130.

pub mod coordinator;
pub mod journal;
pub mod progress;
mod round;
pub mod step;
mod writeback;

use crate::plan::{Invocation, SetupRound, eta};
use crate::results::{Results, SetupInfo, Warning, WorkloadInfo};
use crate::target::Target;
use journal::{Entry, Journal, RoundRecord};
use progress::Progress;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The results as saved to `OUT/results.json`.
    pub results: Results,
    /// True when the user interrupted the run (results are partial).
    pub interrupted: bool,
}

/// State of one execution.
pub(crate) struct Runner<'a> {
    inv: &'a Invocation,
    target: &'a dyn Target,
    journal: Journal,
    progress: Progress,
    /// State steps share: the corpus (built once), a fio phase's outputs, the tree state.
    shared: crate::workload::step::Shared,
    /// Host and tool versions, gathered once per run (not at every partial save).
    provenance: crate::results::HostInfo,
    warned: BTreeSet<String>,
    run_warnings: Vec<Warning>,
    run_notes: Vec<Warning>,
    host_findings: Vec<crate::doctor::Finding>,
    /// Workload ids not run because their engine is missing.
    skipped_workloads: BTreeSet<String>,
    run_id: String,
    /// Other processes running the same plan at the same time (MPI ranks), if any.
    coordinator: Option<&'a dyn coordinator::Coordinator>,
}

/// Whether a filesystem's tools are present; `Err` names what is missing.
pub fn fs_available(name: &str) -> Result<(), String> {
    if name == "dir" {
        return Ok(());
    }
    crate::fs::available(name)
}

/// Whether the machine can run workload `w` (PostgreSQL installed for pgbench…); `Err` says
/// what is missing, and the run skips the workload with that note.
pub fn workload_available(w: &crate::plan::WorkloadSpec) -> Result<(), String> {
    crate::workload::registry::of(w.kind).available(w)
}

/// Run (or resume) an invocation. `resume` keeps the journal's finished setup-rounds.
pub fn execute(inv: &Invocation, resume: bool) -> crate::Result<Outcome> {
    execute_with(inv, resume, None)
}

/// [`execute`], every workload run through `coordinator` (several processes running the
/// same plan together; see [`coordinator::Coordinator`]).
pub fn execute_with(
    inv: &Invocation,
    resume: bool,
    coordinator: Option<&dyn coordinator::Coordinator>,
) -> crate::Result<Outcome> {
    let out = &inv.options.out;
    let plan = &inv.plan;
    if !resume && Journal::path(out).exists() {
        return Err(crate::Error::invalid(
            "--out",
            format!(
                "{} already holds a run; continue it with --resume {0} or choose another --out",
                out.display()
            ),
        ));
    }
    let done = if resume {
        journal::load_done(out)?
    } else {
        BTreeMap::new()
    };

    // Setups whose tools are missing are skipped, loudly.
    let mut run_warnings = Vec::new();
    let mut skipped = BTreeSet::new();
    for s in &plan.setups {
        if let Err(why) = fs_available(&s.fs) {
            let msg = format!("setup {} skipped: {why}", s.name);
            eprintln!("fsbench: note: {msg}");
            run_warnings.push(Warning {
                setup: s.name.clone(),
                round: 0,
                message: msg,
            });
            skipped.insert(s.name.clone());
        }
        for w in &s.warnings {
            eprintln!("fsbench: warning: {w}");
            run_warnings.push(Warning {
                setup: s.name.clone(),
                round: 0,
                message: w.clone(),
            });
        }
    }
    // So are workloads whose engine is missing (no PostgreSQL server for pgbench).
    let mut skipped_workloads = BTreeSet::new();
    for w in plan.recorded() {
        if let Err(why) = workload_available(w) {
            let msg = format!("workload {} skipped: {why}", w.id);
            eprintln!("fsbench: note: {msg}");
            run_warnings.push(Warning {
                setup: String::new(),
                round: 0,
                message: msg,
            });
            skipped_workloads.insert(w.id.clone());
        }
    }
    if skipped.len() == plan.setups.len() {
        return Err(crate::Error::invalid(
            "--fs",
            "no setup can run: every chosen filesystem lacks its tools (see the notes above)",
        ));
    }

    crate::cancel::install_handlers();
    // A zfs-fuse daemon fsbench starts stays up across setups and is stopped when this
    // returns (done, failed or interrupted), after the target and every pool are released.
    let _zfs_daemon = crate::fs::zfs_daemon::hold();
    // Safety checks (mounted, holders, signatures, O_EXCL…) happen inside acquire.
    let target = crate::target::acquire(&inv.options.target, inv.options.yes)?;
    // `fsbench doctor`'s checks (tmpfs scratch dir, rotational virtual disk, scheduler, busy
    // device…) on the target as the filesystems will see it, recorded with the results.
    let diagnosis = crate::doctor::in_run::diagnose(inv, target.as_ref());
    let mut run_notes = Vec::new();
    for f in &diagnosis.findings {
        let w = crate::doctor::in_run::as_warning(f);
        let line = crate::doctor::in_run::short_line(f);
        if crate::doctor::in_run::is_warning(f) {
            eprintln!("fsbench: warning: {line}");
            run_warnings.push(w);
        } else {
            eprintln!("fsbench: note: {line}");
            run_notes.push(w);
        }
    }
    std::fs::create_dir_all(out).map_err(|e| crate::Error::io("cannot create", out, e))?;
    if !resume {
        inv.save()?;
    }
    let journal = Journal::open(out)?;

    let srs: Vec<SetupRound> = plan
        .setup_rounds()
        .into_iter()
        .filter(|sr| !skipped.contains(&plan.setups[sr.setup].name))
        .collect();
    let formats = inv.options.target.formats();
    // SNIA's workload-independent preconditioning, once per run before the first mkfs (not
    // again when resuming a run that got past it).
    let precondition_device = plan.precondition_device.is_some() && done.is_empty();
    let total_est: f64 = srs
        .iter()
        .map(|sr| eta::setup_round_seconds(plan, sr.setup, sr.round, formats))
        .sum::<f64>()
        + if precondition_device {
            eta::once_seconds(plan)
        } else {
            0.0
        };
    // Every setup-round shows mkfs (when it formats) and each workload that is not skipped.
    let per_round = {
        let skipped = skipped_workloads.clone();
        move |sr: &crate::plan::SetupRound| {
            progress::steps_per_round(
                plan,
                formats,
                &skipped,
                &plan.setups[sr.setup].name,
                sr.round,
            )
        }
    };
    let steps = srs.iter().map(&per_round).sum();
    let run_start = std::time::Instant::now();
    let mut runner = Runner {
        inv,
        target: target.as_ref(),
        journal,
        progress: Progress::new(steps, std::time::Duration::from_secs_f64(total_est)),
        shared: Default::default(),
        provenance: provenance(),
        warned: BTreeSet::new(),
        run_warnings,
        run_notes,
        host_findings: diagnosis.findings,
        skipped_workloads,
        coordinator,
        run_id: format!(
            "{}-{:x}",
            std::process::id(),
            inv.options.seed & 0xffff_ffff
        ),
    };
    let mut records: BTreeMap<(u32, usize), RoundRecord> = BTreeMap::new();
    let mut interrupted = false;
    let mut fatal = None;
    if precondition_device && let Some(dev) = target.block_device() {
        runner.target.check_identity()?;
        runner.progress.note(&format!(
            "fsbench: preconditioning {} before the first mkfs (2 × its capacity, 128 KiB \
             sequential writes, about {})",
            dev.display(),
            eta::format(std::time::Duration::from_secs_f64(eta::once_seconds(plan)))
        ));
        match crate::workload::precondition::run_device(dev) {
            Ok(note) => {
                runner.progress.note(&format!("fsbench: {note}"));
                runner.run_notes.push(Warning {
                    setup: String::new(),
                    round: 0,
                    message: note,
                });
            }
            Err(crate::Error::Interrupted) => interrupted = true,
            Err(e) => fatal = Some(e),
        }
    }
    for sr in srs.iter().filter(|_| !interrupted && fatal.is_none()) {
        let name = &plan.setups[sr.setup].name;
        if let Some(rec) = done.get(&(name.clone(), sr.round)) {
            runner.progress.note(&format!(
                "fsbench: round {} of {name} already done (journal); skipping",
                sr.round
            ));
            runner.progress.skip(
                per_round(sr),
                eta::setup_round_seconds(plan, sr.setup, sr.round, formats),
            );
            records.insert((sr.round, sr.setup), rec.clone());
            continue;
        }
        let mut rec = RoundRecord {
            setup: name.clone(),
            round: sr.round,
            ..Default::default()
        };
        runner.journal.append(&Entry::RoundStart {
            setup: name.clone(),
            round: sr.round,
        })?;
        let mut r = runner.run_setup_round(*sr, &mut rec);
        // Ctrl-C also reaches child tools (mkfs, zpool) through the process group; their
        // failure is the interrupt, not a result, and the setup-round must not count as done.
        if r.is_ok() && crate::cancel::requested() {
            r = Err(crate::Error::Interrupted);
        }
        records.insert((sr.round, sr.setup), rec);
        match r {
            Ok(()) => {
                runner.journal.append(&Entry::RoundDone {
                    setup: name.clone(),
                    round: sr.round,
                })?;
                let partial = runner.assemble(&records, true);
                partial.save(&out.join("results.json"))?;
            }
            Err(crate::Error::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(e) => {
                fatal = Some(e);
                break;
            }
        }
    }
    runner.progress.clear();
    let elapsed = run_start.elapsed().as_secs_f64();
    if !interrupted && fatal.is_none() && total_est > 0.0 {
        // Real against estimated, so the ETA's constants (src/plan/eta.rs) can be checked.
        runner.progress.note(&format!(
            "fsbench: took {} (estimated {} up front, {:+.0} %)",
            eta::format(std::time::Duration::from_secs_f64(elapsed)),
            eta::format(std::time::Duration::from_secs_f64(total_est)),
            100.0 * (elapsed - total_est) / total_est
        ));
    }
    let mut results = runner.assemble(&records, interrupted || fatal.is_some());
    results
        .host
        .extra
        .insert("estimated_s".into(), format!("{total_est:.0}"));
    results
        .host
        .extra
        .insert("elapsed_s".into(), format!("{elapsed:.0}"));
    drop(runner);
    // Release the loop device / image before writing the final file.
    drop(target);
    if let Some(e) = fatal {
        results.save(&out.join("results.json"))?;
        return Err(e);
    }
    if !interrupted {
        crate::stats::summarize(&mut results);
        results.finished_at =
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    }
    results.save(&out.join("results.json"))?;
    Ok(Outcome {
        results,
        interrupted,
    })
}

impl Runner<'_> {
    /// Record a warning once per key for the whole run.
    fn warn_once(&mut self, key: &str, setup: &str, message: &str) {
        if self.warned.insert(format!("{key}/{setup}")) {
            self.progress.note(&format!("fsbench: warning: {message}"));
            self.run_warnings.push(Warning {
                setup: setup.to_string(),
                round: 0,
                message: message.to_string(),
            });
        }
    }

    /// Build `results.json` from the setup-rounds recorded so far, in plan order, so a resumed
    /// run produces the same file as an uninterrupted one.
    fn assemble(&self, records: &BTreeMap<(u32, usize), RoundRecord>, partial: bool) -> Results {
        let inv = self.inv;
        let plan = &inv.plan;
        let mut r = Results::new();
        r.started_at = inv.started_at.clone();
        r.partial = partial;
        r.host = self.provenance.clone();
        r.host
            .extra
            .insert("fsbench_seed".into(), inv.options.seed.to_string());
        r.host.extra.insert("plan".into(), plan.name.clone());
        // The coordinator hook: who ran the plan together (MPI ranks, hosts, library).
        for (k, v) in self.coordinator.map(|c| c.provenance()).unwrap_or_default() {
            r.host.extra.insert(k, v);
        }
        r.target = self.target.info();
        let mut infos: BTreeMap<&str, SetupInfo> = BTreeMap::new();
        for sr in plan.setup_rounds() {
            if let Some(rec) = records.get(&(sr.round, sr.setup)) {
                if let Some(info) = &rec.setup_info {
                    infos
                        .entry(&plan.setups[sr.setup].name)
                        .or_insert_with(|| info.clone());
                }
                r.samples.extend(rec.samples.iter().cloned());
                r.histograms.extend(rec.histograms.iter().cloned());
                r.series.extend(rec.series.iter().cloned());
                r.failures.extend(rec.failures.iter().cloned());
                r.warnings.extend(rec.warnings.iter().cloned());
                r.notes.extend(rec.notes.iter().cloned());
            }
        }
        r.setups = plan
            .setups
            .iter()
            .filter_map(|s| infos.get(s.name.as_str()).cloned())
            .collect();
        let mut w = self.run_warnings.clone();
        w.append(&mut r.warnings);
        r.warnings = w;
        let mut n = self.run_notes.clone();
        n.append(&mut r.notes);
        r.notes = n;
        r.host_findings = self.host_findings.clone();
        r.workloads = workload_infos(inv, Path::new("$MNT/fsbench"));
        if let Some(e) = crate::host::stdio::error() {
            r.notes.push(Warning {
                setup: String::new(),
                round: 0,
                message: e.to_string(),
            });
        }
        r
    }
}

/// The host and tool versions of this run.
fn provenance() -> crate::results::HostInfo {
    let mut h = crate::host::provenance::host_info();
    h.tool_versions =
        crate::host::provenance::tool_versions(crate::host::provenance::DEFAULT_TOOLS);
    h
}

/// Name the fio job after the workload (`--name=randread`) so fio's report says which it is.
fn rename_fio_job(cmd: &str, id: &str) -> String {
    match cmd.find("--name=") {
        Some(i) => {
            let end = cmd[i..].find(' ').map_or(cmd.len(), |e| i + e);
            format!("{}--name={id}{}", &cmd[..i], &cmd[end..])
        }
        None => cmd.to_string(),
    }
}

/// Workloads and their parameters for `results.json` (and `fsbench plan`), with the
/// equivalent fio command line of each I/O job, its file under `dir`.
pub fn workload_infos(inv: &Invocation, dir: &Path) -> Vec<WorkloadInfo> {
    let plan = &inv.plan;
    let defaults = plan.job_defaults(inv.options.seed, None);
    plan.recorded()
        .map(|w| {
            let spec = w.job_spec(dir, &defaults);
            let mut params = serde_json::to_value(w).unwrap_or_default();
            if let (Some(s), Some(obj)) = (&spec, params.as_object_mut()) {
                obj.insert("job".into(), serde_json::to_value(s).unwrap_or_default());
            }
            if let (Some(j), Some(obj)) = (&w.fio_job, params.as_object_mut()) {
                // The section as fio reads it, so a reader can rerun it by hand.
                obj.insert(
                    "job_text".into(),
                    crate::fio::jobfile::render_phase(&[j], Some(&dir.join("fio"))).into(),
                );
            }
            WorkloadInfo {
                id: w.id.clone(),
                kind: w.kind.as_str().to_string(),
                params,
                fio_command: spec
                    .as_ref()
                    .map(|s| rename_fio_job(&crate::fio::command_line(s), &w.id)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_jobs_are_named_after_workloads() {
        assert_eq!(
            rename_fio_job("fio --name=fsbench --rw=read", "seqread"),
            "fio --name=seqread --rw=read"
        );
        assert_eq!(rename_fio_job("fio --name=x", "a"), "fio --name=a");
        assert_eq!(rename_fio_job("fio --rw=read", "a"), "fio --rw=read");
    }
}
