//! One setup-round: check the device's identity → host tunings → discard → mkfs + mount
//! (timed) → wait quiet → the data directory (`chattr +C` for nocow) → each timed workload
//! ([`super::step`]: prepare and drop caches, untimed; then measure and settle) → in the first
//! round, the capability phase (probes on images of their own) → release, tunings put back.
//!
//! Every step's outcome is journaled as soon as it finishes. A failing workload becomes a
//! `Failure` and the round goes on; an interrupt unwinds through the guards (unmount, pool
//! destroy, data directory removal) and is passed up.

use super::Runner;
use super::journal::{Entry, RoundRecord};
use crate::Error;
use crate::fs::Mounted;
use crate::metrics::registry::{BW_MIB_S, SCALING_FACTOR, SECONDS};
use crate::plan::{SetupRound, SetupSpec, WorkloadSpec, step_seed};
use crate::results::{Failure, HistogramRecord, Sample, SeriesRecord, SetupInfo, Warning};
use crate::workload::registry::{self, Phase, step_in_round};
use crate::workload::step::StepContext;
use crate::workload::{Metric, WorkloadContext, WorkloadOutput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Unmounts (or destroys the pool) and removes the mountpoint when dropped: on success, error,
/// panic or interrupt alike.
pub(super) struct MountGuard {
    pub(super) mounted: Option<Box<dyn Mounted>>,
    mountpoint: PathBuf,
    /// The mountpoint directory's ledger entry; dropped (after Drop removed the directory).
    _dir: crate::host::ledger::Held,
}

impl MountGuard {
    fn release(mut self) -> crate::Result<()> {
        let r = self.mounted.take().map_or(Ok(()), |m| m.release());
        let _ = std::fs::remove_dir(&self.mountpoint);
        r
    }
}

impl Drop for MountGuard {
    fn drop(&mut self) {
        drop(self.mounted.take());
        let _ = std::fs::remove_dir(&self.mountpoint);
    }
}

/// Removes fsbench's own working directory in `--dir` mode (never anything else).
struct DirGuard(Option<PathBuf>);

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(d) = self.0.take()
            && let Err(e) = std::fs::remove_dir_all(&d)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("fsbench: warning: cannot remove {}: {e}", d.display());
        }
    }
}

/// Where a workload step runs: its setup-round and directories.
pub(super) struct StepAt<'a> {
    pub(super) setup: &'a SetupSpec,
    pub(super) round: u32,
    /// The mounted filesystem (or the `--dir` target).
    pub(super) work_root: &'a Path,
    /// fsbench's own directory on it.
    pub(super) data_dir: &'a Path,
}

/// A step as a [`super::coordinator::Coordinator`] drives it.
struct CoordinatedStep<'r, 'a, 'w> {
    runner: &'r mut Runner<'a>,
    w: &'w WorkloadSpec,
    at: &'w StepAt<'w>,
    prepared: Option<super::step::Prepared>,
}

impl super::coordinator::Step for CoordinatedStep<'_, '_, '_> {
    fn prepare(&mut self) -> crate::Result<()> {
        let w = self.w;
        self.prepared = Some(
            self.runner
                .in_step(w, self.at, |cx| super::step::prepare(cx, w))?,
        );
        Ok(())
    }

    fn measure(&mut self) -> crate::Result<WorkloadOutput> {
        let prepared = self.prepared.take().unwrap_or_default();
        self.runner.measure(self.w, self.at, prepared)
    }
}

impl Runner<'_> {
    /// Run one setup-round, adding everything it records to `rec`.
    pub(super) fn run_setup_round(
        &mut self,
        sr: SetupRound,
        rec: &mut RoundRecord,
    ) -> crate::Result<()> {
        let plan = &self.inv.plan;
        let setup = plan.setups[sr.setup].clone();
        let round = sr.round;
        let formats = self.inv.options.target.formats();
        let mut mount_guard = None;
        // Host tunings, put back when this guard goes (round end, error, interrupt, panic).
        let mut tuned: Option<crate::host::tuning::Applied> = None;
        let work_root: PathBuf;
        if formats {
            let Some(dev) = self.target.block_device().map(Path::to_path_buf) else {
                return Err(Error::Other("target has no block device to format".into()));
            };
            // Safety: the device must still be the one that passed the checks.
            self.target.check_identity()?;
            if !setup.host.is_empty() {
                match crate::host::tuning::apply(&setup.host, Some(&dev)) {
                    Ok(a) => tuned = Some(a),
                    Err(e) => {
                        self.fail(rec, &setup, round, "host-settings", &e.to_string())?;
                        return Ok(());
                    }
                }
            }
            // The device was preconditioned once for the run (SNIA's 2 × capacity): a
            // discard now would hand its blocks back and undo that.
            let discard = if plan.precondition_device.is_some() {
                Ok(true)
            } else {
                self.target.discard()
            };
            match discard {
                Ok(true) => {}
                Ok(false) => self.warn_once("discard", "", "BLKDISCARD is not supported by the target; filesystems start on a device that was not discarded"),
                Err(e) => self.warn_once("discard", "", &format!("discard failed: {e}")),
            }
            let Some(driver) = crate::fs::driver(&setup.fs) else {
                self.fail(
                    rec,
                    &setup,
                    round,
                    "mkfs",
                    &format!("no driver for {}", setup.fs),
                )?;
                let est = self.step_estimate_overhead(&setup);
                self.progress.skip(1, est);
                self.skip_workload_steps(&setup, round);
                return Ok(());
            };
            let mountpoint =
                crate::fs::mount_root().join(format!("{}-{}", self.run_id, setup.name));
            let dir_held = crate::host::ledger::hold(crate::host::ledger::Item::Dir {
                path: mountpoint.clone(),
            })?;
            std::fs::create_dir_all(&mountpoint)
                .map_err(|e| Error::io("cannot create mountpoint", &mountpoint, e))?;
            let est = self.step_estimate_overhead(&setup);
            self.progress.start(round, plan.rounds, &setup.name, "mkfs");
            // All the target's devices: a raid= layout uses them, other setups the first.
            let devices = self.target.block_devices();
            let created = driver.create_and_mount_on(
                &devices,
                &setup,
                &mountpoint,
                self.inv.options.tool_timeout,
            );
            let (mkfs, mounted) = match created {
                Ok(x) => x,
                Err(e) if matches!(e, Error::Interrupted) || crate::cancel::requested() => {
                    let _ = std::fs::remove_dir(&mountpoint);
                    return Err(Error::Interrupted);
                }
                // A command that named another device was refused: stop the run (exit 2).
                Err(e @ Error::Refused { .. }) => {
                    let _ = std::fs::remove_dir(&mountpoint);
                    return Err(e);
                }
                Err(e) => {
                    let _ = std::fs::remove_dir(&mountpoint);
                    self.fail(rec, &setup, round, "mkfs", &e.to_string())?;
                    self.progress.finish(est);
                    self.skip_workload_steps(&setup, round);
                    return Ok(());
                }
            };
            let guard = MountGuard {
                mounted: Some(mounted),
                mountpoint,
                _dir: dir_held,
            };
            let m = guard.mounted.as_ref().expect("just set");
            work_root = m.path().to_path_buf();
            let info = SetupInfo {
                name: setup.name.clone(),
                fs: setup.fs.clone(),
                implementation: m.implementation(),
                mkfs_args: mkfs.args.clone(),
                mount_opts: m.mount_options(),
                properties: m.properties(),
                mkfs_output: mkfs.output.clone(),
                warnings: setup.warnings.clone(),
                options: setup.raw.clone(),
                host: tuned.as_ref().map(|t| t.live.clone()).unwrap_or_default(),
            };
            mount_guard = Some(guard);
            let mut step = self.empty(&setup, round);
            step.setup_info = Some(info);
            if self.recorded("mkfs") {
                step.samples.push(sample(
                    &setup.name,
                    "mkfs",
                    round,
                    &Metric::new(SECONDS, "s", mkfs.seconds),
                ));
            }
            self.commit(rec, "mkfs", step)?;
            // Wait for lazy init, commits and discards to settle before measuring.
            let q = plan.quiet;
            self.progress.doing(&format!(
                "round {round}/{} · {} · waiting for the device to go quiet",
                plan.rounds, setup.name
            ));
            let watched = self.counted_device(&setup, &work_root).unwrap_or(dev);
            match crate::measure::device::wait_quiet(&watched, q.window, q.threshold, q.timeout)
                .map(|o| o.quiet)
            {
                Ok(true) => {}
                Ok(false) => {
                    let mut step = self.empty(&setup, round);
                    step.warnings.push(Warning {
                        setup: setup.name.clone(),
                        round,
                        message: format!(
                            "the device did not go quiet (< {} written per {:?}) within {:?} after mkfs; background work may affect this round",
                            crate::units::format_size(q.threshold), q.window, q.timeout
                        ),
                    });
                    self.progress.note(&format!(
                        "fsbench: warning: {}: device never went quiet in round {round}",
                        setup.name
                    ));
                    self.commit(rec, "quiet", step)?;
                }
                Err(Error::Interrupted) => return Err(Error::Interrupted),
                Err(e) => self.warn_once(
                    "quiet",
                    &setup.name,
                    &format!("cannot watch the device for quiet: {e}"),
                ),
            }
            self.progress.finish(est);
        } else {
            work_root = self
                .target
                .directory()
                .map(Path::to_path_buf)
                .ok_or_else(|| Error::Other("directory target without a directory".into()))?;
            let mut step = self.empty(&setup, round);
            let m = std::fs::canonicalize(&work_root).ok().and_then(|real| {
                let entries = crate::host::mountinfo::read().ok()?;
                crate::host::mountinfo::containing(&entries, &real)
            });
            let mut properties = BTreeMap::new();
            if let Some(m) = &m {
                properties.insert(
                    "mount_point".to_string(),
                    m.mount_point.display().to_string(),
                );
                properties.insert("source".to_string(), m.source.clone());
            }
            step.setup_info = Some(SetupInfo {
                name: setup.name.clone(),
                fs: m.as_ref().map_or("dir".into(), |m| m.fs_type.clone()),
                implementation: "existing directory (no mkfs)".into(),
                mount_opts: m.map(|m| m.all_options()).unwrap_or_default(),
                properties,
                ..Default::default()
            });
            self.commit(rec, "setup", step)?;
        }

        // fsbench's own directory on the filesystem under test.
        let data_dir = if formats {
            work_root.join("fsbench")
        } else {
            work_root.join(format!("fsbench-{}", self.run_id))
        };
        std::fs::create_dir_all(&data_dir).map_err(|e| Error::io("cannot create", &data_dir, e))?;
        let _dir_guard = DirGuard((!formats).then(|| data_dir.clone()));
        if setup.nocow() {
            let argv = crate::host::command::argv(&[
                "chattr",
                "+C",
                data_dir.to_str().unwrap_or_default(),
            ]);
            if let Err(e) = crate::host::command::run(&argv, self.inv.options.tool_timeout) {
                // Without +C the setup is not the variant it claims to be: measure nothing.
                self.fail(rec, &setup, round, "nocow", &e.to_string())?;
                if let Some(guard) = mount_guard.take()
                    && let Err(e) = guard.release()
                {
                    self.fail(rec, &setup, round, "release", &e.to_string())?;
                }
                self.skip_workload_steps(&setup, round);
                return Ok(());
            }
        }

        // Aging (setups with age=): after mkfs, mount and the quiet wait, before the workloads.
        self.age_step(rec, &setup, round, &work_root)?;

        let mut bandwidth: BTreeMap<String, f64> = BTreeMap::new();
        self.shared.new_round();
        // The timed workloads, then the capability phase (probes: the first round only).
        let (timed, capability): (Vec<WorkloadSpec>, Vec<WorkloadSpec>) = plan
            .workloads
            .iter()
            .filter(|w| {
                !self.skipped_workloads.contains(&w.id)
                    && step_in_round(w, &setup.name, round)
                    && self
                        .extra_only
                        .as_ref()
                        .is_none_or(|only| only.contains(&w.id))
            })
            .cloned()
            .partition(|w| registry::of(w.kind).needs(w).phase == Phase::Timed);
        for w in timed.iter().chain(&capability) {
            crate::cancel::check()?;
            let est = crate::plan::eta::workload_seconds(plan, w, &setup.fs);
            self.progress.start(round, plan.rounds, &setup.name, &w.id);
            let at = StepAt {
                setup: &setup,
                round,
                work_root: &work_root,
                data_dir: &data_dir,
            };
            let result = self.run_workload(w, &at);
            let mut step = self.empty(&setup, round);
            match result {
                Ok(mut out) => {
                    // Caches that could not be dropped make a cold-cache workload warm: record it
                    // under its warm name so no report calls it cold.
                    let id = if out.ran_warm {
                        crate::workload::warm_id(&w.id)
                    } else {
                        w.id.clone()
                    };
                    if let Some(bw) = out.metrics.iter().find(|m| m.metric == BW_MIB_S) {
                        bandwidth.insert(w.id.clone(), bw.value);
                    }
                    if let Some(base) = &w.baseline
                        && let (Some(b), Some(x)) = (bandwidth.get(base), bandwidth.get(&w.id))
                        && *b > 0.0
                    {
                        out.metrics.push(Metric::new(SCALING_FACTOR, "x", x / b));
                    }
                    for n in &out.notes {
                        if crate::workload::io::is_steady_note(n) {
                            self.progress
                                .note(&format!("fsbench: {} round {round}: {id}: {n}", setup.name));
                        }
                        let w = Warning {
                            setup: setup.name.clone(),
                            round,
                            message: format!("{id}: {n}"),
                        };
                        // A job that never became steady: its figures may hold a transient.
                        if n.starts_with(crate::workload::io::NOT_STEADY)
                            || n.starts_with(crate::workload::io::NOT_PRECONDITIONED)
                        {
                            step.warnings.push(w);
                        } else {
                            step.notes.push(w);
                        }
                    }
                    if w.record {
                        add_output(&mut step, &setup.name, &id, round, out);
                    }
                }
                Err(e) if matches!(e, Error::Interrupted) || crate::cancel::requested() => {
                    return Err(Error::Interrupted);
                }
                Err(e) => {
                    self.progress.note(&format!(
                        "fsbench: {} round {round}: {} failed: {e}",
                        setup.name, w.id
                    ));
                    step.failures.push(Failure {
                        setup: setup.name.clone(),
                        workload: w.id.clone(),
                        round,
                        error: e.to_string(),
                    });
                }
            }
            self.commit(rec, &w.id, step)?;
            self.progress.finish(est);
        }

        // A redundant layout, once per run: scrub, one device failed, reads again, rebuild.
        if round == 1
            && let Some(guard) = mount_guard.as_mut()
            && let Some(layout) = crate::fs::layout::of_setup(&setup)
            && layout.redundancy > 0
        {
            let at = StepAt {
                setup: &setup,
                round,
                work_root: &work_root,
                data_dir: &data_dir,
            };
            self.redundancy_phase(rec, layout, guard, &at, &timed)?;
        }
        if let Some(guard) = mount_guard.take()
            && let Err(e) = guard.release()
        {
            self.fail(rec, &setup, round, "release", &e.to_string())?;
        }
        if let Some(t) = tuned.take()
            && let Err(e) = t.restore()
        {
            self.fail(rec, &setup, round, "restore", &e.to_string())?;
        }
        Ok(())
    }

    /// Run one workload step through the registry ([`super::step`]): prepare, then measure;
    /// with a coordinator, its start barrier between the two (every process prepared, so no
    /// preparation or cache drop falls inside the ranks' common measured window).
    pub(super) fn run_workload(
        &mut self,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
    ) -> crate::Result<WorkloadOutput> {
        let Some(c) = self.coordinator else {
            let prepared = self.in_step(w, at, |cx| super::step::prepare(cx, w))?;
            return self.measure(w, at, prepared);
        };
        let mut step = CoordinatedStep {
            runner: self,
            w,
            at,
            prepared: None,
        };
        c.workload(&w.id, &mut step)
    }

    /// The measured part of a prepared step; a failed cache drop becomes a run warning.
    fn measure(
        &mut self,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
        prepared: super::step::Prepared,
    ) -> crate::Result<WorkloadOutput> {
        let done = self.in_step(w, at, |cx| super::step::measure(cx, w, prepared))?;
        if let Some(msg) = done.cache_warning {
            self.warn_once("drop_caches", "", &msg);
        }
        Ok(done.output)
    }

    /// Call `f` with the step context of `w` at `at` (seed, device, probe scratch dir…).
    fn in_step<R>(
        &mut self,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
        f: impl FnOnce(&mut StepContext<'_>) -> crate::Result<R>,
    ) -> crate::Result<R> {
        let inv = self.inv;
        let (plan, opts) = (&inv.plan, &inv.options);
        let setup = at.setup;
        let seed = step_seed(opts.seed, &setup.name, at.round, &w.id);
        let device = self.counted_device(setup, at.work_root);
        // Probes build a small filesystem of their own next to the image (or in /var/tmp for
        // device and directory targets); the one under test is untouched.
        let scratch = match &opts.target {
            crate::target::TargetKind::Image { scratch_dir, .. } => scratch_dir.clone(),
            _ => PathBuf::from("/var/tmp"),
        };
        let mut cx = StepContext {
            work: WorkloadContext {
                dir: at.data_dir,
                device: device.as_deref(),
                fs: &setup.fs,
                round: at.round,
                seed,
                settle: Some(plan.quiet.after_job()),
            },
            root: at.work_root,
            setup,
            defaults: plan.job_defaults(seed, device.clone()),
            plan_workloads: &plan.workloads,
            corpus: &plan.corpus,
            threads: opts.threads,
            tool_timeout: opts.tool_timeout,
            fio_engine: opts.engine == crate::plan::EngineChoice::Fio,
            scratch: &scratch,
            shared: &mut self.shared,
        };
        f(&mut cx)
    }

    /// Where the device counters of `setup` are read (and the quiet wait watches): its
    /// device alone, or for a `raid=` layout the filesystem's mount at `work_root`, which
    /// `measure::device` resolves to every member (Btrfs through sysfs, ZFS through the
    /// pool's vdevs). So a layout's figures sum every device it writes to, a rebuild's new
    /// member included and a spare not yet in use left out.
    fn counted_device(&self, setup: &SetupSpec, work_root: &Path) -> Option<PathBuf> {
        if self.inv.options.target.formats() && crate::fs::layout::of_setup(setup).is_some() {
            return Some(work_root.to_path_buf());
        }
        self.target.block_device().map(Path::to_path_buf)
    }

    /// This setup-round's workloads will not run: count them done for the progress line.
    fn skip_workload_steps(&mut self, setup: &SetupSpec, round: u32) {
        let plan = &self.inv.plan;
        let fs = setup.fs.as_str();
        let ws: Vec<&WorkloadSpec> = plan
            .workloads
            .iter()
            .filter(|w| {
                step_in_round(w, &setup.name, round)
                    && self
                        .extra_only
                        .as_ref()
                        .is_none_or(|only| only.contains(&w.id))
            })
            .collect();
        let formats = self.inv.options.target.formats();
        // A redundant layout's round-1 phase will not run either.
        let array = crate::plan::eta::array_phase(plan, setup, round, formats)
            .map_or(0.0, |a| a.total())
            + crate::plan::eta::degraded_reruns(plan, setup, round, formats)
                .filter(|w| !self.skipped_workloads.contains(&w.id))
                .map(|w| crate::plan::eta::workload_seconds(plan, w, fs))
                .sum::<f64>();
        let array_steps = super::progress::array_steps(
            plan,
            formats,
            &self.skipped_workloads,
            &setup.name,
            round,
        );
        let weight: f64 = ws
            .iter()
            .map(|w| crate::plan::eta::workload_seconds(plan, w, fs))
            .sum();
        let n = ws.len();
        self.progress.skip(n + array_steps, weight + array);
    }

    fn recorded(&self, id: &str) -> bool {
        self.inv
            .plan
            .workloads
            .iter()
            .any(|w| w.id == id && w.record)
    }

    fn step_estimate_overhead(&self, setup: &SetupSpec) -> f64 {
        crate::plan::eta::setup_overhead_seconds(&self.inv.plan, &setup.fs, true)
    }

    pub(super) fn empty(&self, setup: &SetupSpec, round: u32) -> RoundRecord {
        RoundRecord {
            setup: setup.name.clone(),
            round,
            ..Default::default()
        }
    }

    /// Journal one step (fsync'd) and fold it into the setup-round's record.
    pub(super) fn commit(
        &mut self,
        rec: &mut RoundRecord,
        workload: &str,
        step: RoundRecord,
    ) -> crate::Result<()> {
        self.journal.append(&Entry::Step {
            workload: workload.to_string(),
            record: Box::new(step.clone()),
        })?;
        rec.absorb(step);
        Ok(())
    }

    pub(super) fn fail(
        &mut self,
        rec: &mut RoundRecord,
        setup: &SetupSpec,
        round: u32,
        workload: &str,
        error: &str,
    ) -> crate::Result<()> {
        self.progress.note(&format!(
            "fsbench: {} round {round}: {workload} failed: {error}",
            setup.name
        ));
        let mut step = self.empty(setup, round);
        step.failures.push(Failure {
            setup: setup.name.clone(),
            workload: workload.to_string(),
            round,
            error: error.to_string(),
        });
        self.commit(rec, workload, step)
    }
}

pub(super) fn sample(setup: &str, workload: &str, round: u32, m: &Metric) -> Sample {
    Sample {
        setup: setup.to_string(),
        workload: workload.to_string(),
        metric: m.metric.into(),
        unit: m.unit.clone(),
        round,
        value: m.value,
    }
}

/// Turn a workload's output into results rows.
pub(super) fn add_output(
    step: &mut RoundRecord,
    setup: &str,
    workload: &str,
    round: u32,
    out: WorkloadOutput,
) {
    for m in out.metrics.iter().filter(|m| m.value.is_finite()) {
        step.samples.push(sample(setup, workload, round, m));
    }
    for (direction, h) in out.histograms {
        step.histograms.push(HistogramRecord {
            setup: setup.to_string(),
            workload: workload.to_string(),
            round,
            direction,
            min_ns: h.min(),
            max_ns: h.max(),
            count: h.count(),
            sum_ns: h.sum(),
            buckets: h.to_sparse(),
        });
    }
    for (metric, values) in out.series {
        step.series.push(SeriesRecord {
            setup: setup.to_string(),
            workload: workload.to_string(),
            round,
            metric,
            values,
        });
    }
}
