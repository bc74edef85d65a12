//! Executes a plan: guards, signals, journal and resume, progress.
//!
//! Order of business: skip setups whose tools are missing (printed, and a warning in the
//! results) → acquire the target (safety checks happen there, before anything destructive) →
//! for every setup-round in interleaved order, unless the journal says it is done: run it
//! ([`round`]) → append `round_done` → save partial results. Ctrl-C sets
//! [`crate::cancel`]; the current step stops, guards release mount, pool, loop device and image,
//! partial results are saved and the caller exits 130.

mod age;
mod by_step;
pub mod coordinator;
pub mod disk_ref;
pub mod journal;
pub mod more_rounds;
pub mod progress;
pub mod reduce;
mod redundancy;
mod round;
pub mod step;
mod writeback;

use crate::plan::{Invocation, SetupRound, eta};
use crate::results::{Results, SetupInfo, Warning, WorkloadInfo};
use crate::scratch::Target;
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
    /// The report of each I/O step run as one whole job ([`crate::workload::io::GroupJob`]):
    /// by several processes (`fsbench io --mpi`, reduced once by `runner::reduce::step`) or
    /// by this one alone (`fsbench io`, its engine's report as it is:
    /// `runner::reduce::aggregate::alone`), in step order; kept beside the results, not in
    /// them (a results file keeps each rank's values only).
    pub job_reports: Vec<reduce::aggregate::MpiIoReport>,
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
    coordinator: Option<&'a dyn crate::engine::Coordinator>,
    /// What decides which questions are open and how many a run asks (the command's), if any.
    judge: Option<&'a dyn more_rounds::Judge>,
    /// With `--error per-run`: the run's questions, fixed once (after the minimum rounds of a
    /// `--until-settled` run, so every look uses one level; else when the results are made).
    family: Option<usize>,
    /// In an extra round of `--until-settled`: per setup name, the only workloads it runs (a
    /// setup not named sits the round out).
    extra_only: Option<BTreeMap<String, BTreeSet<String>>>,
    /// How `--until-settled` went, once its extra rounds are done.
    settle_record: Option<crate::results::SettleRecord>,
    /// Seconds the minimum rounds took, when `--until-settled` added rounds after them.
    minimum_s: Option<f64>,
    /// `replicate=restore`: each aged setup's kept image, by setup name, written back in its
    /// later rounds (`age.rs`); removed when the runner goes (ledger entries).
    aged_images: BTreeMap<String, crate::workload::age::restore::KeptImage>,
    /// The reference file beside the image (`disk_ref`): made at the first I/O job of a plan
    /// that reads it, `Err` once it could not be (then no job is preceded by a reading).
    disk_ref: Option<Result<disk_ref::DiskRef, ()>>,
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
/// same plan together; see [`coordinator::workload`]).
///
/// A run's phases, in order: [`resume_state`] (what a journal says is done), [`check`]
/// (setups and workloads this machine cannot run are skipped, loudly), acquire the target
/// (every safety check happens there, before anything destructive), [`diagnose`] it (the
/// doctor's findings, recorded with the results), open the journal, [`Schedule::new`] (the
/// setup-rounds in interleaved order, the ETA and the progress count), the rounds
/// ([`Runner::rounds`]), then [`Runner::assemble_final`] and [`save_final`] (the results
/// file, written after the target is released).
pub fn execute_with(
    inv: &Invocation,
    resume: bool,
    coordinator: Option<&dyn crate::engine::Coordinator>,
) -> crate::Result<Outcome> {
    execute_judged(inv, resume, coordinator, None)
}

/// [`execute_with`], and with `judge` a plan's `--until-settled` extra rounds
/// ([`settle`]): after the minimum rounds, one more interleaved round at a time of the
/// workloads `judge` still finds open.
pub fn execute_judged(
    inv: &Invocation,
    resume: bool,
    coordinator: Option<&dyn crate::engine::Coordinator>,
    judge: Option<&dyn more_rounds::Judge>,
) -> crate::Result<Outcome> {
    let run_start = std::time::Instant::now();
    let out = &inv.options.out;
    let keep = !inv.options.in_memory;
    let done = if keep {
        resume_state(inv, resume)?
    } else {
        BTreeMap::new()
    };
    let mut checked = check(&inv.plan)?;
    crate::cancel::install_handlers();
    // What the plan's filesystems need running (a zfs-fuse daemon fsbench starts) stays up
    // across setups and is let go when this returns (done, failed or interrupted), after the
    // target and every pool are released (declared before the target, dropped after it).
    let _services = hold_services(&inv.plan);
    // Safety checks (mounted, holders, signatures, O_EXCL…) happen inside acquire.
    let target = acquire_target(inv)?;
    // On the user's own file (`fsbench io`) the job runs as it always did, at once: no doctor
    // watching the device for a second first, no tool versions its report would not carry.
    let in_place = inv.options.target.in_place();
    let findings = if in_place {
        Vec::new()
    } else {
        diagnose(inv, target.as_ref(), &mut checked)
    };
    let journal = if keep {
        std::fs::create_dir_all(out).map_err(|e| crate::Error::io("cannot create", out, e))?;
        if !resume {
            inv.save()?;
        }
        Journal::open(out)?
    } else {
        Journal::none()
    };
    let schedule = Schedule::new(inv, &checked, &done);
    let mut runner = Runner {
        inv,
        target: target.as_ref(),
        journal,
        progress: Progress::new(
            schedule.steps,
            std::time::Duration::from_secs_f64(schedule.estimate_s),
        ),
        shared: Default::default(),
        provenance: if in_place {
            Default::default()
        } else {
            provenance()
        },
        warned: BTreeSet::new(),
        run_warnings: checked.warnings,
        run_notes: checked.notes,
        host_findings: findings,
        skipped_workloads: checked.skipped_workloads,
        coordinator,
        judge,
        family: None,
        extra_only: None,
        settle_record: None,
        minimum_s: None,
        aged_images: BTreeMap::new(),
        disk_ref: None,
        run_id: format!(
            "{}-{:x}",
            std::process::id(),
            inv.options.seed & 0xffff_ffff
        ),
    };
    let ready = runner
        .precondition_device(&schedule)
        .and_then(|()| runner.warm_up(&schedule));
    let mut ended = match ready {
        Ok(()) => runner.rounds(&schedule, &done)?,
        Err(e) => Ended {
            records: BTreeMap::new(),
            interrupted: matches!(e, crate::Error::Interrupted),
            fatal: (!matches!(e, crate::Error::Interrupted)).then_some(e),
            elapsed_s: 0.0,
        },
    };
    if let (Some(judge), Some(rule)) = (judge, more_rounds::rule(&inv.plan)) {
        runner.settle_rounds(&schedule, &done, &mut ended, judge, &rule, run_start)?;
    }
    let (results, ended) = runner.assemble_final(ended, &schedule);
    let job_reports = ended
        .records
        .values()
        .flat_map(|r| r.job_reports.iter().cloned())
        .collect();
    // Release the loop device / image before the final file is written.
    drop(target);
    let mut outcome = save_final(keep.then_some(out.as_path()), results, ended)?;
    outcome.job_reports = job_reports;
    Ok(outcome)
}

/// Each driver's hold on what it needs running ([`crate::fs::Filesystem::hold_services`]),
/// once per filesystem of the plan's setups.
fn hold_services(plan: &crate::plan::Plan) -> Vec<crate::fs::ServiceHold> {
    let mut seen = BTreeSet::new();
    plan.setups
        .iter()
        .filter_map(|s| s.driver().ok())
        .filter(|d| seen.insert(d.name()))
        .filter_map(|d| d.hold_services())
        .collect()
}

/// The plan's target, every safety check done (`target::multi::acquire`); a unit test may
/// hand the runner a target of its own instead (`fake_runs.rs`: a plain file as the device
/// a fake filesystem formats).
fn acquire_target(inv: &Invocation) -> crate::Result<Box<dyn Target>> {
    #[cfg(test)]
    if let Some(t) = fake_runs::TEST_TARGET.with(|t| t.borrow_mut().take()) {
        return Ok(t);
    }
    // By steps each setup has an image of its own (`by_step`).
    let by_step = crate::scratch::multi::Multi {
        images: inv.plan.setups.len() as u32,
        ..Default::default()
    };
    let multi = if inv.plan.by_step {
        &by_step
    } else {
        &inv.options.multi
    };
    crate::scratch::multi::acquire(&inv.options.target, multi, inv.options.yes)
}

/// The last phase: the summary computed (a finished run) and `results.json` saved in `out`
/// (`None`: a run kept in memory); a fatal error is returned after the save.
fn save_final(out: Option<&Path>, mut results: Results, ended: Ended) -> crate::Result<Outcome> {
    let save = |r: &Results| match out {
        Some(out) => r.save(&out.join("results.json")),
        None => Ok(()),
    };
    if let Some(e) = ended.fatal {
        save(&results)?;
        return Err(e);
    }
    if !ended.interrupted {
        crate::stats::summarize(&mut results);
        results.finished_at =
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    }
    save(&results)?;
    Ok(Outcome {
        results,
        interrupted: ended.interrupted,
        job_reports: Vec::new(),
    })
}

/// The setup-rounds a journal says are done (`--resume`), or none; a fresh run refuses an
/// output directory that already holds one.
fn resume_state(
    inv: &Invocation,
    resume: bool,
) -> crate::Result<BTreeMap<(String, u32), RoundRecord>> {
    let out = &inv.options.out;
    if !resume && Journal::path(out).exists() {
        return Err(crate::Error::invalid(
            "--out",
            format!(
                "{} already holds a run; continue it with --resume {0} or choose another --out",
                out.display()
            ),
        ));
    }
    if resume {
        journal::load_done(out)
    } else {
        Ok(BTreeMap::new())
    }
}

/// What the machine can run of a plan, and what it said about the rest.
#[derive(Debug, Default)]
struct Checked {
    /// Setups whose filesystem tools are missing.
    skipped_setups: BTreeSet<String>,
    /// Workloads whose engine is missing (no PostgreSQL server for pgbench…).
    skipped_workloads: BTreeSet<String>,
    /// Run warnings so far (skips, setup warnings; the diagnosis adds its own).
    warnings: Vec<Warning>,
    /// Run notes (the diagnosis's findings that are not warnings).
    notes: Vec<Warning>,
}

/// Phase 1: skip, loudly, the setups whose tools are missing and the workloads whose engine
/// is; refuse a plan of which nothing can run.
fn check(plan: &crate::plan::Plan) -> crate::Result<Checked> {
    let mut c = Checked::default();
    let mut warn = |setup: &str, message: String| {
        c.warnings.push(Warning {
            setup: setup.to_string(),
            round: 0,
            message,
        })
    };
    for s in &plan.setups {
        if let Err(why) = fs_available(&s.fs) {
            let msg = format!("setup {} skipped: {why}", s.name);
            eprintln!("fsbench: note: {msg}");
            warn(&s.name, msg);
            c.skipped_setups.insert(s.name.clone());
        }
        for w in &s.warnings {
            eprintln!("fsbench: warning: {w}");
            warn(&s.name, w.clone());
        }
    }
    for w in plan.recorded() {
        if let Err(why) = workload_available(w) {
            let msg = format!("workload {} skipped: {why}", w.id);
            eprintln!("fsbench: note: {msg}");
            warn("", msg);
            c.skipped_workloads.insert(w.id.clone());
        }
    }
    if c.skipped_setups.len() == plan.setups.len() {
        return Err(crate::Error::invalid(
            "--fs",
            "no setup can run: every chosen filesystem lacks its tools (see the notes above)",
        ));
    }
    Ok(c)
}

/// `fsbench doctor`'s checks (tmpfs scratch dir, rotational virtual disk, scheduler, busy
/// device…) on the target as the filesystems will see it: printed (once per process: a
/// tune's stages say a standing finding once), and recorded with the results (warnings and
/// notes into `checked`, every finding returned).
fn diagnose(
    inv: &Invocation,
    target: &dyn Target,
    checked: &mut Checked,
) -> Vec<crate::doctor::Finding> {
    let diagnosis = crate::doctor::in_run::diagnose(inv, target);
    for f in &diagnosis.findings {
        let w = crate::doctor::in_run::as_warning(f);
        let line = crate::doctor::in_run::short_line(f);
        let say = crate::doctor::in_run::first_time(&line);
        if crate::doctor::in_run::is_warning(f) {
            if say {
                eprintln!("fsbench: warning: {line}");
            }
            checked.warnings.push(w);
        } else {
            if say {
                eprintln!("fsbench: note: {line}");
            }
            checked.notes.push(w);
        }
    }
    diagnosis.findings
}

/// The setup-rounds to run, in interleaved order, with what the progress line and the ETA
/// count for them.
struct Schedule {
    /// Every setup-round of the plan whose setup is not skipped.
    rounds: Vec<SetupRound>,
    /// Progress steps of each of `rounds` (mkfs when it formats, each workload not skipped).
    steps_of: Vec<usize>,
    /// The ETA of each of `rounds`, seconds.
    estimate_of: Vec<f64>,
    /// Their sums (and the device preconditioning's estimate).
    steps: usize,
    estimate_s: f64,
    /// SNIA's workload-independent preconditioning of the whole device is due (`--precondition`
    /// on `--device`, once per run: not again when resuming a run that got past it).
    precondition_device: bool,
    /// `--warmup`: the first setup-round run once more before it as round 0 and discarded,
    /// with its steps and estimate (not again when resuming a run that got past it).
    warmup: Option<ExtraStep>,
}

impl Schedule {
    fn new(
        inv: &Invocation,
        checked: &Checked,
        done: &BTreeMap<(String, u32), RoundRecord>,
    ) -> Schedule {
        let plan = &inv.plan;
        let precondition_device = plan.precondition_device.is_some() && done.is_empty();
        let formats = inv.options.target.formats();
        let rounds: Vec<SetupRound> = plan
            .setup_rounds()
            .into_iter()
            .filter(|sr| !checked.skipped_setups.contains(&plan.setups[sr.setup].name))
            .collect();
        let steps_of: Vec<usize> = rounds
            .iter()
            .map(|sr| {
                progress::steps_per_round(
                    plan,
                    formats,
                    &checked.skipped_workloads,
                    &plan.setups[sr.setup].name,
                    sr.round,
                )
            })
            .collect();
        let estimate_of: Vec<f64> = rounds
            .iter()
            .map(|sr| eta::setup_round_seconds(plan, sr.setup, sr.round, formats))
            .collect();
        let warmup = rounds
            .first()
            .filter(|_| plan.switches.warmup && done.is_empty())
            .map(|first| {
                let sr = SetupRound {
                    round: 0,
                    setup: first.setup,
                };
                let name = &plan.setups[sr.setup].name;
                ExtraStep {
                    sr,
                    steps: progress::steps_per_round(
                        plan,
                        formats,
                        &checked.skipped_workloads,
                        name,
                        0,
                    ),
                    est_s: eta::setup_round_seconds(plan, sr.setup, 0, formats),
                    workloads: BTreeSet::new(),
                }
            });
        Schedule {
            steps: steps_of.iter().sum::<usize>() + warmup.as_ref().map_or(0, |w| w.steps),
            estimate_s: estimate_of.iter().sum::<f64>()
                + warmup.as_ref().map_or(0.0, |w| w.est_s)
                + if precondition_device {
                    eta::once_seconds(plan)
                } else {
                    0.0
                },
            precondition_device,
            rounds,
            steps_of,
            estimate_of,
            warmup,
        }
    }
}

/// How the rounds phase ended.
/// One setup's part of an extra `--until-settled` round.
struct ExtraStep {
    sr: SetupRound,
    /// Progress steps (mkfs when the target is formatted, then each workload).
    steps: usize,
    /// Estimated seconds.
    est_s: f64,
    /// What it runs ([`more_rounds::per_setup`]).
    workloads: BTreeSet<String>,
}

struct Ended {
    records: BTreeMap<(u32, usize), RoundRecord>,
    interrupted: bool,
    /// The error that stopped the run (the results are saved before it is returned).
    fatal: Option<crate::Error>,
    elapsed_s: f64,
}

impl Runner<'_> {
    /// SNIA's workload-independent preconditioning, when due: the whole device written twice
    /// in 128 KiB sequential writes, once per run before the first mkfs.
    fn precondition_device(&mut self, schedule: &Schedule) -> crate::Result<()> {
        let Some(dev) = self
            .target
            .block_device()
            .filter(|_| schedule.precondition_device)
        else {
            return Ok(());
        };
        self.target.check_identity()?;
        self.progress.note(&format!(
            "fsbench: preconditioning {} before the first round (2 × its capacity, 128 KiB \
             sequential writes: SNIA's workload-independent part, about {})",
            dev.display(),
            eta::format(std::time::Duration::from_secs_f64(eta::once_seconds(
                &self.inv.plan
            )))
        ));
        let note = crate::workload::precondition::run_device(dev)?;
        self.progress.note(&format!("fsbench: {note}"));
        self.run_notes.push(Warning {
            setup: String::new(),
            round: 0,
            message: note,
        });
        Ok(())
    }

    /// `--warmup`: the schedule's first setup-round once, as round 0, its records discarded
    /// (failures too: round 1 meets the same ones and records them), and a note saying so.
    fn warm_up(&mut self, schedule: &Schedule) -> crate::Result<()> {
        let Some(w) = &schedule.warmup else {
            return Ok(());
        };
        let name = self.inv.plan.setups[w.sr.setup].name.clone();
        let mut rec = RoundRecord {
            setup: name.clone(),
            round: 0,
            ..Default::default()
        };
        let started = std::time::Instant::now();
        self.run_setup_round(w.sr, &mut rec)?;
        crate::cancel::check()?;
        let message = format!(
            "warm-up: {name}'s setup-round ran once before round 1 and was discarded ({}, {} \
             sample(s), {} failed step(s))",
            eta::format(started.elapsed()),
            rec.samples.len(),
            rec.failures.len()
        );
        self.progress.note(&format!("fsbench: {message}"));
        self.run_notes.push(Warning {
            setup: name,
            round: 0,
            message,
        });
        Ok(())
    }

    /// The rounds phase: every setup-round of `schedule` not already `done`, journaled and
    /// saved (partial results) as each ends; stops at an interrupt or a fatal error.
    fn rounds(
        &mut self,
        schedule: &Schedule,
        done: &BTreeMap<(String, u32), RoundRecord>,
    ) -> crate::Result<Ended> {
        let plan = &self.inv.plan;
        let out = &self.inv.options.out;
        let start = std::time::Instant::now();
        let mut ended = Ended {
            records: BTreeMap::new(),
            interrupted: false,
            fatal: None,
            elapsed_s: 0.0,
        };
        // By steps a round's setup-rounds run together; otherwise one after the other.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, sr) in schedule.rounds.iter().enumerate() {
            match groups.last_mut() {
                Some(g) if plan.by_step && schedule.rounds[g[0]].round == sr.round => g.push(i),
                _ => groups.push(vec![i]),
            }
        }
        for group in groups {
            let mut todo: Vec<usize> = Vec::new();
            for i in group {
                let sr = &schedule.rounds[i];
                let name = &plan.setups[sr.setup].name;
                if let Some(rec) = done.get(&(name.clone(), sr.round)) {
                    self.progress.note(&format!(
                        "fsbench: round {} of {name} already done (journal); skipping",
                        sr.round
                    ));
                    self.progress
                        .skip(schedule.steps_of[i], schedule.estimate_of[i]);
                    ended.records.insert((sr.round, sr.setup), rec.clone());
                    continue;
                }
                self.journal.append(&Entry::RoundStart {
                    setup: name.clone(),
                    round: sr.round,
                })?;
                todo.push(i);
            }
            if todo.is_empty() {
                continue;
            }
            let srs: Vec<SetupRound> = todo.iter().map(|&i| schedule.rounds[i]).collect();
            let mut recs: Vec<RoundRecord> = srs
                .iter()
                .map(|sr| RoundRecord {
                    setup: plan.setups[sr.setup].name.clone(),
                    round: sr.round,
                    ..Default::default()
                })
                .collect();
            let mut r = if plan.by_step {
                self.round_by_steps(&srs, &mut recs)
            } else {
                self.run_setup_round(srs[0], &mut recs[0])
            };
            // Ctrl-C also reaches child tools (mkfs, zpool) through the process group; their
            // failure is the interrupt, not a result, and the setup-round must not count as done.
            if r.is_ok() && crate::cancel::requested() {
                r = Err(crate::Error::Interrupted);
            }
            for (sr, rec) in srs.iter().zip(recs) {
                ended.records.insert((sr.round, sr.setup), rec);
            }
            match r {
                Ok(()) => {
                    for sr in &srs {
                        self.journal.append(&Entry::RoundDone {
                            setup: plan.setups[sr.setup].name.clone(),
                            round: sr.round,
                        })?;
                    }
                    if !self.inv.options.in_memory {
                        let partial = self.assemble(&ended.records, true);
                        partial.save(&out.join("results.json"))?;
                    }
                }
                Err(crate::Error::Interrupted) => {
                    ended.interrupted = true;
                    break;
                }
                Err(e) => {
                    ended.fatal = Some(e);
                    break;
                }
            }
        }
        ended.elapsed_s = start.elapsed().as_secs_f64();
        Ok(ended)
    }

    /// `--until-settled`: after the minimum rounds, one interleaved round at a time (only the
    /// setups and workloads of the questions `judge` finds open, and what they need) until
    /// none is open, the next round would end past the budget, or the round limit is reached.
    /// The looks are fixed before the first one from the time the first extra round will
    /// really take. Every finished round is kept, as in the minimum rounds; an interrupt stops
    /// it.
    fn settle_rounds(
        &mut self,
        schedule: &Schedule,
        done: &BTreeMap<(String, u32), RoundRecord>,
        ended: &mut Ended,
        judge: &dyn more_rounds::Judge,
        rule: &crate::stats::sequential::Rule,
        run_start: std::time::Instant,
    ) -> crate::Result<()> {
        let plan = &self.inv.plan;
        let Some(budget) = plan.settle.map(|s| s.budget) else {
            return Ok(());
        };
        let budget_s = budget.as_secs_f64();
        let setups: BTreeSet<usize> = schedule.rounds.iter().map(|sr| sr.setup).collect();
        // How real time ran against the estimates so far (the minimum rounds' and each extra
        // round's, not the minimum's alone, or every extra round would look like a slowdown).
        let mut estimated_so_far = schedule.estimate_s;
        let started = std::time::Instant::now();
        let pace = |estimated: f64, ended_s: f64| {
            if estimated > 0.0 {
                ((ended_s + started.elapsed().as_secs_f64()) / estimated).max(0.1)
            } else {
                1.0
            }
        };
        let configured = *rule;
        // Per run: α shared over the run's questions, counted once after the minimum rounds.
        self.family = self
            .error_record(&self.assemble(&ended.records, true))
            .map(|e| e.questions);
        let shared = self.family.map(crate::results::ErrorRecord::per_run);
        let rule = &crate::stats::sequential::Rule {
            alpha: crate::stats::family::alpha_per_question(rule.alpha, shared.as_ref()),
            ..*rule
        };
        // The looks, fixed before the first: what the first extra round would run under the
        // configured rule (the strictest boundary: no narrower rule leaves more open).
        let first = self.extra_round(
            plan.rounds + 1,
            &more_rounds::per_setup(
                plan,
                &judge.open(&self.assemble(&ended.records, true), rule),
            ),
            &setups,
        );
        let first_s: f64 =
            first.iter().map(|n| n.est_s).sum::<f64>() * pace(estimated_so_far, ended.elapsed_s);
        let rule = &more_rounds::looks_that_fit(
            rule,
            budget_s - run_start.elapsed().as_secs_f64(),
            first_s,
        );
        let mut round = plan.rounds;
        let mut extra = Vec::new();
        let (stop, open) = loop {
            let need = judge.open(&self.assemble(&ended.records, true), rule);
            let open: BTreeSet<String> = need.keys().cloned().collect();
            if ended.interrupted || ended.fatal.is_some() {
                break (crate::results::SettleStop::Interrupted, open);
            }
            if open.is_empty() {
                break (crate::results::SettleStop::Settled, open);
            }
            if round as usize >= rule.max_rounds {
                // A last look the budget set is the budget's stop, not --max-rounds'.
                break if rule.max_rounds < configured.max_rounds {
                    (crate::results::SettleStop::Budget, open)
                } else {
                    (crate::results::SettleStop::MaxRounds, open)
                };
            }
            let next = self.extra_round(round + 1, &more_rounds::per_setup(plan, &need), &setups);
            if next.is_empty() {
                // Open, yet nothing this machine can run would answer it (its workloads were
                // skipped): more rounds cannot help.
                break (crate::results::SettleStop::MaxRounds, open);
            }
            let est: f64 = next.iter().map(|n| n.est_s).sum();
            if run_start.elapsed().as_secs_f64() + est * pace(estimated_so_far, ended.elapsed_s)
                > budget_s
            {
                break (crate::results::SettleStop::Budget, open);
            }
            round += 1;
            self.progress.note(&format!(
                "fsbench: round {round} (until settled): still open: {}",
                open.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
            self.progress
                .extend(next.iter().map(|n| n.steps).sum(), est);
            estimated_so_far += est;
            let mut ran = crate::results::ExtraRound {
                round,
                ..Default::default()
            };
            // The round's setups in the rotation's order, each with its own workloads: by
            // steps (when the plan's rounds are) each step on every setup back to back, as in
            // the minimum rounds, else one setup after the other.
            let mini = Schedule {
                steps: next.iter().map(|n| n.steps).sum(),
                estimate_s: est,
                rounds: next.iter().map(|n| n.sr).collect(),
                steps_of: next.iter().map(|n| n.steps).collect(),
                estimate_of: next.iter().map(|n| n.est_s).collect(),
                precondition_device: false,
                warmup: None,
            };
            self.extra_only = Some(
                next.iter()
                    .map(|n| (plan.setups[n.sr.setup].name.clone(), n.workloads.clone()))
                    .collect(),
            );
            for n in next {
                ran.setups.push(plan.setups[n.sr.setup].name.clone());
                ran.workloads.extend(n.workloads);
            }
            let more = self.rounds(&mini, done);
            self.extra_only = None;
            let more = more?;
            ended.records.extend(more.records);
            ended.interrupted = more.interrupted;
            ended.fatal = more.fatal;
            ran.workloads.sort();
            ran.workloads.dedup();
            extra.push(ran);
        };
        self.minimum_s = Some(ended.elapsed_s);
        ended.elapsed_s += started.elapsed().as_secs_f64();
        let record = more_rounds::record(plan, &configured, rule, round, stop, &open, extra);
        self.progress.note(&format!(
            "fsbench: until settled: stopped after round {round} ({}){}",
            stop.word(),
            if open.is_empty() {
                String::new()
            } else {
                format!("; still open: {}", record.still_open.join(", "))
            }
        ));
        self.settle_record = Some(record);
        Ok(())
    }

    /// Extra round `round` as it would run: the setups of `by_setup` (setup name → its
    /// workloads, [`more_rounds::per_setup`]) among `setups`, in the round's rotated order, each
    /// with its steps and estimated seconds.
    fn extra_round(
        &self,
        round: u32,
        by_setup: &BTreeMap<String, BTreeSet<String>>,
        setups: &BTreeSet<usize>,
    ) -> Vec<ExtraStep> {
        let plan = &self.inv.plan;
        let formats = self.inv.options.target.formats();
        plan.setup_order(round)
            .into_iter()
            .filter(|s| setups.contains(s))
            .filter_map(|setup| {
                let name = &plan.setups[setup].name;
                let run = by_setup.get(name)?;
                let fs = plan.setups[setup].fs.as_str();
                let ws: Vec<_> = plan
                    .workloads
                    .iter()
                    .filter(|w| {
                        run.contains(&w.id)
                            && !self.skipped_workloads.contains(&w.id)
                            && crate::workload::registry::step_in_round(w, name, round)
                    })
                    .collect();
                if ws.is_empty() {
                    return None;
                }
                let est_s = eta::setup_overhead_seconds(plan, fs, formats)
                    + ws.iter()
                        .map(|w| eta::workload_seconds(plan, w, fs))
                        .sum::<f64>();
                Some(ExtraStep {
                    sr: SetupRound { round, setup },
                    steps: usize::from(formats) + ws.len(),
                    est_s,
                    workloads: run.clone(),
                })
            })
            .collect()
    }

    /// Real time against the estimate, and the results as the rounds left them (the runner
    /// is done: it is consumed, so the target it borrows can be released).
    fn assemble_final(self, ended: Ended, schedule: &Schedule) -> (Results, Ended) {
        self.progress.clear();
        let (elapsed, total_est) = (ended.elapsed_s, schedule.estimate_s);
        let failed = ended.interrupted || ended.fatal.is_some();
        // `fsbench io`'s one job (its own file) is timed by its report, not the plan's ETA.
        if !failed && total_est > 0.0 && !self.inv.options.target.in_place() {
            // Real against estimated, so the ETA's constants (src/plan/eta.rs) can be checked:
            // the estimate covers the minimum rounds, so a settled run compares those alone.
            let fmt = |s: f64| eta::format(std::time::Duration::from_secs_f64(s));
            let note = match (self.minimum_s, &self.settle_record) {
                (Some(min), Some(rec)) => format!(
                    "fsbench: took {} in all: the {} minimum rounds {} (estimated {} up front, \
                     {:+.0} %), then {} extra round(s) until settled within the {} budget",
                    fmt(elapsed),
                    self.inv.plan.rounds,
                    fmt(min),
                    fmt(total_est),
                    100.0 * (min - total_est) / total_est,
                    rec.extra_rounds.len(),
                    fmt(rec.budget_s as f64)
                ),
                _ => format!(
                    "fsbench: took {} (estimated {} up front, {:+.0} %)",
                    fmt(elapsed),
                    fmt(total_est),
                    100.0 * (elapsed - total_est) / total_est
                ),
            };
            self.progress.note(&note);
        }
        let mut results = self.assemble(&ended.records, failed);
        results
            .host
            .extra
            .insert("estimated_s".into(), format!("{total_est:.0}"));
        results
            .host
            .extra
            .insert("elapsed_s".into(), format!("{elapsed:.0}"));
        (results, ended)
    }

    /// Record a warning once per key for the whole run.
    fn warn_once(&mut self, kind: RunWarning, setup: &str, message: &str) {
        if self.warned.insert(format!("{}/{setup}", kind.code())) {
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
    /// The error record of `results` under the plan's control: per run, the run's questions
    /// (fixed once counted, [`Runner::family`]); per question, none.
    fn error_record(&self, results: &Results) -> Option<crate::results::ErrorRecord> {
        if self.inv.plan.error != crate::results::ErrorControl::PerRun {
            return None;
        }
        let m = match self.family {
            Some(m) => m,
            None => self.judge?.questions(results),
        };
        Some(crate::results::ErrorRecord::per_run(m))
    }

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
        // Keyed (round, setup): plan order, the extra rounds of --until-settled after it.
        for (&(_, setup), rec) in records {
            if let Some(info) = &rec.setup_info {
                infos
                    .entry(&plan.setups[setup].name)
                    .or_insert_with(|| info.clone());
            }
            r.samples.extend(rec.samples.iter().cloned());
            r.histograms.extend(rec.histograms.iter().cloned());
            r.series.extend(rec.series.iter().cloned());
            r.failures.extend(rec.failures.iter().cloned());
            r.warnings.extend(rec.warnings.iter().cloned());
            r.notes.extend(rec.notes.iter().cloned());
            r.ranks.extend(rec.ranks.iter().cloned());
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
        r.settle = self.settle_record.clone();
        r.margin = plan.margin;
        let rounds: BTreeSet<u32> = records.keys().map(|(round, _)| *round).collect();
        r.setup_order = rounds
            .into_iter()
            .map(|round| crate::results::RoundOrder {
                round,
                setups: plan
                    .setup_order(round)
                    .into_iter()
                    .filter(|s| records.contains_key(&(round, *s)))
                    .map(|s| plan.setups[s].name.clone())
                    .collect(),
            })
            .collect();
        r.workloads = workload_infos(inv, Path::new("$MNT/fsbench"));
        if let Some(e) = crate::host::stdio::error() {
            r.notes.push(Warning {
                setup: String::new(),
                round: 0,
                message: e.to_string(),
            });
        }
        // Counted on the finished results (the count does not depend on the level).
        r.error = self.error_record(&r);
        r
    }
}

/// The host and tool versions of this run.
fn provenance() -> crate::results::HostInfo {
    let mut h = crate::host::provenance::host_info();
    // fio's and every driver's programs (each driver says how they tell their version).
    h.tool_versions = crate::fs::provenance::tool_versions();
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
            if let (Some(j), Some(obj)) =
                (crate::workload::fiojob::job_of(w), params.as_object_mut())
            {
                // The section as fio reads it, so a reader can rerun it by hand.
                obj.insert(
                    "job_text".into(),
                    crate::fio::jobfile::render_phase(&[&j], Some(&dir.join("fio"))).into(),
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

/// The run-wide warnings the runner raises once per run (or per setup), by kind; `code` is
/// each one's stable name and what keeps it from repeating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunWarning {
    /// The target cannot be discarded (or the discard failed) before mkfs.
    Discard,
    /// The device counters cannot be watched for the quiet wait.
    QuietWatch,
    /// Caches could not be dropped before a cold-cache step.
    DropCaches,
    /// The disk beside the image could not be read before an I/O job (`disk_ref`).
    DiskRef,
}

impl RunWarning {
    /// The stable name of the kind (`discard`).
    pub fn code(self) -> &'static str {
        match self {
            RunWarning::Discard => "discard",
            RunWarning::QuietWatch => "quiet-watch",
            RunWarning::DropCaches => "drop-caches",
            RunWarning::DiskRef => "disk-ref",
        }
    }
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

#[cfg(test)]
mod fake_runs;
