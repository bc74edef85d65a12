//! One setup-round: check the device's identity → host tunings → discard → mkfs + mount
//! (timed) → wait quiet → the data directory (`chattr +C` for nocow) → each timed workload
//! ([`super::step`]: prepare and drop caches, untimed; then measure and settle) → in the first
//! round, the capability phase (probes on images of their own) → release, tunings put back.
//!
//! In three parts, `open_round` (up to the data directory), `step_of_round` (one workload)
//! and `close_round` (the array phase, release), so that a round by steps
//! ([`super::by_step`]) can hold every setup's setup-round open at once.
//!
//! Every step's outcome is journaled as soon as it finishes. A failing workload becomes a
//! `Failure` and the round goes on; an interrupt unwinds through the guards (unmount, pool
//! destroy, data directory removal) and is passed up.

use super::RunWarning;
use super::Runner;
use super::journal::{Entry, RoundRecord};
use crate::Error;
use crate::fs::Mounted;
use crate::metrics::registry::{BW_MIB_S, SCALING_FACTOR, SECONDS};
use crate::plan::{SetupRound, SetupSpec, WorkloadSpec, step_seed};
use crate::results::{Failure, HistogramRecord, Sample, SeriesRecord, SetupInfo, Warning};
use crate::workload::registry::{self, Phase, step_in_round};
use crate::workload::step::StepContext;
use crate::workload::{Metric, StepWarning, WarningKind, WorkloadContext, WorkloadOutput};
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
    /// A new mountpoint directory (in the ledger first), nothing mounted on it yet.
    pub(super) fn create(mountpoint: PathBuf) -> crate::Result<MountGuard> {
        let held = crate::host::ledger::hold(crate::host::ledger::Item::Dir {
            path: mountpoint.clone(),
        })?;
        std::fs::create_dir_all(&mountpoint)
            .map_err(|e| Error::io("cannot create mountpoint", &mountpoint, e))?;
        Ok(MountGuard {
            mounted: None,
            mountpoint,
            _dir: held,
        })
    }

    /// The guard, now releasing `mounted` too.
    pub(super) fn holding(mut self, mounted: Box<dyn Mounted>) -> MountGuard {
        self.mounted = Some(mounted);
        self
    }

    /// The mountpoint directory.
    pub(super) fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

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
    /// Its filesystem's driver, as the round resolved it (`None` on a directory target).
    pub(super) driver: Option<&'static dyn crate::fs::Filesystem>,
    pub(super) round: u32,
    /// The setup-round's block device (`None` on a directory target).
    pub(super) dev: Option<&'a Path>,
    /// The mounted filesystem (or the `--dir` target).
    pub(super) work_root: &'a Path,
    /// fsbench's own directory on it.
    pub(super) data_dir: &'a Path,
}

/// A step as [`super::coordinator::workload`] drives it.
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

/// What a setup-round holds while it runs, released by [`Runner::release_round`] (and, on an
/// error or interrupt, by the guards' `Drop`).
pub(super) struct Round {
    pub(super) setup: SetupSpec,
    /// Its filesystem's driver, resolved once for the round (`None`: a directory target's
    /// setup, or a name without a driver, which the make step records as its failure).
    pub(super) driver: Option<&'static dyn crate::fs::Filesystem>,
    pub(super) round: u32,
    /// The target's block device, when the round formats one.
    pub(super) dev: Option<PathBuf>,
    /// Host tunings, put back when this guard goes (round end, error, interrupt, panic).
    tuned: Option<crate::host::tuning::Applied>,
    /// The filesystem made this round, unmounted (or its pool destroyed) on release.
    pub(super) mount: Option<MountGuard>,
    /// The mounted filesystem, or the `--dir` target.
    pub(super) work_root: PathBuf,
    /// Set when the round restored a kept aged image instead of mkfs and aging
    /// (`replicate=restore`, `runner/age.rs`).
    pub(super) restored: Option<crate::workload::age::restore::WrittenBack>,
}

/// `Ok(Some(x))`: go on with `x`; `Ok(None)`: the round stopped (its failure is recorded and
/// its remaining steps counted as skipped); `Err`: the run stops (interrupt, refusal, journal).
type Flow<T> = crate::Result<Option<T>>;

/// A setup-round made and ready for its workload steps ([`Runner::open_round`]); several are
/// open at once when a round runs by steps (`super::by_step`).
pub(super) struct Open {
    pub(super) r: Round,
    data_dir: PathBuf,
    /// Removes the data directory on a directory target, after the round is released.
    _dir_guard: DirGuard,
    /// The timed workloads this setup-round runs, in the plan's order.
    pub(super) timed: Vec<WorkloadSpec>,
    /// The capability phase's probes (the first round only), after the timed ones.
    pub(super) capability: Vec<WorkloadSpec>,
    /// Bandwidth by workload id, for the scaling factor against a baseline.
    bandwidth: BTreeMap<String, f64>,
    /// Its extraction of the corpus failed (`Shared::tree_failed`, kept per open setup-round).
    tree_failed: bool,
}

/// The block size of I/O step `w` (an I/O job's bytes are its I/Os × it); `None` for the
/// other kinds.
fn io_bs(w: &WorkloadSpec) -> Option<u64> {
    w.io_job()
        .filter(|_| w.kind == crate::plan::Kind::Io)
        .map(|j| j.bs)
}

/// Where the steps of `r` run.
fn step_at<'a>(r: &'a Round, data_dir: &'a Path) -> StepAt<'a> {
    StepAt {
        setup: &r.setup,
        driver: r.driver,
        round: r.round,
        dev: r.dev.as_deref(),
        work_root: &r.work_root,
        data_dir,
    }
}

impl Runner<'_> {
    /// Run one setup-round, adding everything it records to `rec`: named steps in order,
    /// each of which may end the round early.
    pub(super) fn run_setup_round(
        &mut self,
        sr: SetupRound,
        rec: &mut RoundRecord,
    ) -> crate::Result<()> {
        let dev = self.prepare_target()?;
        let Some(mut open) = self.open_round(sr, dev, rec)? else {
            return Ok(());
        };
        let steps: Vec<WorkloadSpec> = open.timed.iter().chain(&open.capability).cloned().collect();
        for w in &steps {
            self.step_of_round(rec, &mut open, w)?;
        }
        self.close_round(rec, open)
    }

    /// Open a setup-round on `dev` (`None` on a directory target): host settings, then
    /// discard, mkfs + mount (or the aged image restored, or the directory adopted),
    /// aging, and the data directory. `None`: the round stopped at one of them (its failure
    /// recorded, its steps counted as skipped, what it held released).
    pub(super) fn open_round(
        &mut self,
        sr: SetupRound,
        dev: Option<PathBuf>,
        rec: &mut RoundRecord,
    ) -> Flow<Open> {
        let setup = self.inv.plan.setups[sr.setup].clone();
        let mut r = Round {
            driver: setup.driver().ok(),
            setup,
            round: sr.round,
            dev,
            tuned: None,
            mount: None,
            work_root: PathBuf::new(),
            restored: None,
        };
        if !self.tune(rec, &mut r)? {
            self.release_round(rec, r)?;
            return Ok(None);
        }
        let made = if r.dev.is_some() && self.aged_images.contains_key(&r.setup.name) {
            // replicate=restore: the image aged in an earlier round, written back.
            self.restore_aged(rec, &mut r)?.then_some(())
        } else if r.dev.is_some() {
            // By steps the round discarded every image before the first was made.
            if !self.inv.plan.by_step {
                self.discard();
            }
            self.make(rec, &mut r)?
        } else {
            self.adopt_directory(rec, &mut r)?
        };
        if made.is_none() {
            self.release_round(rec, r)?;
            return Ok(None);
        }
        // Setup steps that shape the new filesystem before it is measured go here: after
        // make + quiesce, before the data directory and the workloads. Aging (age=): a
        // failure unwinds through the round's guards like any other step's.
        self.age_step(rec, &mut r)?;
        if r.mount.as_ref().is_some_and(|m| m.mounted.is_none()) {
            // Keeping an aged image unmounted it and it could not be mounted again (the
            // failure is recorded): nothing to run the workloads on.
            self.skip_workload_steps(&r.setup, r.round);
            self.release_round(rec, r)?;
            return Ok(None);
        }
        let Some((data_dir, dir_guard)) = self.data_directory(rec, &r)? else {
            self.release_round(rec, r)?;
            return Ok(None);
        };
        let (timed, capability) = self.round_workloads(&r.setup, r.round);
        Ok(Some(Open {
            r,
            data_dir,
            _dir_guard: dir_guard,
            timed,
            capability,
            bandwidth: BTreeMap::new(),
            tree_failed: false,
        }))
    }

    /// Close an open setup-round: the array phase of a redundant layout (round 1), then
    /// release.
    pub(super) fn close_round(&mut self, rec: &mut RoundRecord, open: Open) -> crate::Result<()> {
        let Open {
            mut r,
            data_dir,
            _dir_guard,
            timed,
            ..
        } = open;
        self.array_phase(rec, &mut r, &data_dir, &timed)?;
        self.release_round(rec, r)
    }

    /// Prepare: the block device this round formats (after checking it is still the one that
    /// passed the safety checks), or `None` on a directory target.
    fn prepare_target(&mut self) -> crate::Result<Option<PathBuf>> {
        if !self.inv.options.target.formats() {
            return Ok(None);
        }
        let Some(dev) = self.target.block_device().map(Path::to_path_buf) else {
            return Err(Error::Other("target has no block device to format".into()));
        };
        self.target.check_identity()?;
        Ok(Some(dev))
    }

    /// Tune: the setup's host settings on the device (`false`: they failed, round over).
    fn tune(&mut self, rec: &mut RoundRecord, r: &mut Round) -> crate::Result<bool> {
        let Some(dev) = &r.dev else { return Ok(true) };
        if r.setup.host.is_empty() {
            return Ok(true);
        }
        match crate::host::tuning::apply(&r.setup.host, Some(dev)) {
            Ok(a) => {
                r.tuned = Some(a);
                Ok(true)
            }
            Err(e) => {
                self.fail(rec, &r.setup, r.round, "host-settings", &e.to_string())?;
                Ok(false)
            }
        }
    }

    /// Make (on a device the caller discarded): the driver's mkfs + mount (timed, journaled as the
    /// `mkfs` step with the setup's description), then quiesce.
    fn make(&mut self, rec: &mut RoundRecord, r: &mut Round) -> Flow<()> {
        let (setup, round) = (&r.setup, r.round);
        let Some(driver) = r.driver else {
            let why = format!("no driver for {}", setup.fs);
            self.fail(rec, setup, round, "mkfs", &why)?;
            let est = self.step_estimate_overhead(setup);
            self.progress.skip(1, est);
            self.skip_workload_steps(setup, round);
            return Ok(None);
        };
        let mountpoint = crate::fs::mount_root().join(format!("{}-{}", self.run_id, setup.name));
        let dir_held = crate::host::ledger::hold(crate::host::ledger::Item::Dir {
            path: mountpoint.clone(),
        })?;
        std::fs::create_dir_all(&mountpoint)
            .map_err(|e| Error::io("cannot create mountpoint", &mountpoint, e))?;
        let est = self.step_estimate_overhead(setup);
        let plan = &self.inv.plan;
        self.progress.start(round, plan.rounds, &setup.name, "mkfs");
        // All the target's devices: a raid= layout uses them, other setups the first. By
        // steps each setup has an image of its own: the round's.
        let devices = if self.inv.plan.by_step {
            r.dev.iter().cloned().collect()
        } else {
            self.target.block_devices()
        };
        let created =
            driver.create_and_mount_on(&devices, setup, &mountpoint, self.inv.options.tool_timeout);
        let (mkfs, mounted) = match created {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir(&mountpoint);
                if matches!(e, Error::Interrupted) || crate::cancel::requested() {
                    return Err(Error::Interrupted);
                }
                // A command that named another device was refused: stop the run (exit 2).
                if matches!(e, Error::Refused { .. }) {
                    return Err(e);
                }
                self.fail(rec, setup, round, "mkfs", &e.to_string())?;
                self.progress.finish(est);
                self.skip_workload_steps(setup, round);
                return Ok(None);
            }
        };
        r.work_root = mounted.path().to_path_buf();
        let info = SetupInfo {
            name: setup.name.clone(),
            fs: setup.fs.clone(),
            implementation: mounted.implementation(),
            mkfs_args: mkfs.args.clone(),
            mount_opts: mounted.mount_options(),
            properties: mounted.properties(),
            mkfs_output: mkfs.output.clone(),
            warnings: setup.warnings.clone(),
            options: setup.raw.clone(),
            host: r.tuned.as_ref().map(|t| t.live.clone()).unwrap_or_default(),
            substitute: mounted.substitute(),
        };
        r.mount = Some(MountGuard {
            mounted: Some(mounted),
            mountpoint,
            _dir: dir_held,
        });
        let mut step = self.empty(setup, round);
        step.setup_info = Some(info);
        if self.recorded("mkfs") {
            let m = Metric::new(SECONDS, "s", mkfs.seconds);
            step.samples.push(sample(&setup.name, "mkfs", round, &m));
        }
        self.commit(rec, "mkfs", step)?;
        self.quiesce(rec, r)?;
        self.progress.finish(est);
        Ok(Some(()))
    }

    /// The device blank before mkfs, unless `--precondition` filled it for the run (SNIA's
    /// 2 × capacity: a discard would hand its blocks back and undo that).
    pub(super) fn discard(&mut self) {
        if self.inv.plan.precondition_device.is_some() {
            return;
        }
        match self.target.discard() {
            Ok(true) => {}
            Ok(false) => self.warn_once(
                RunWarning::Discard,
                "",
                "BLKDISCARD is not supported by the target; filesystems start on a device that was not discarded",
            ),
            Err(e) => self.warn_once(RunWarning::Discard, "", &format!("discard failed: {e}")),
        }
    }

    /// Quiesce: wait for lazy init, commits and discards to settle before measuring (a
    /// [`WarningKind::NotQuiet`] warning when they do not within the timeout).
    pub(super) fn quiesce(&mut self, rec: &mut RoundRecord, r: &Round) -> crate::Result<()> {
        let (setup, round) = (&r.setup, r.round);
        let q = self.inv.plan.quiet;
        self.progress.doing(&format!(
            "round {round}/{} · {} · waiting for the device to go quiet",
            self.inv.plan.rounds, setup.name
        ));
        let Some(watched) = self.counted_device(setup, &r.work_root, r.dev.as_deref()) else {
            return Ok(());
        };
        match crate::measure::device::wait_quiet(&watched, q.window, q.threshold, q.timeout) {
            Ok(o) if o.quiet => Ok(()),
            Ok(_) => {
                let message = format!(
                    "the device did not go quiet (< {} written per {:?}) within {:?} after mkfs; background work may affect this round",
                    crate::units::format_size(q.threshold),
                    q.window,
                    q.timeout
                );
                self.progress.note(&format!(
                    "fsbench: warning: {}: device never went quiet in round {round}",
                    setup.name
                ));
                let mut step = self.empty(setup, round);
                let w = StepWarning::new(WarningKind::NotQuiet, message);
                step.warnings
                    .push(round_warning(&setup.name, round, None, &w));
                self.commit(rec, "quiet", step)
            }
            Err(Error::Interrupted) => Err(Error::Interrupted),
            Err(e) => {
                let msg = format!("cannot watch the device for quiet: {e}");
                self.warn_once(RunWarning::QuietWatch, &setup.name, &msg);
                Ok(())
            }
        }
    }

    /// Make, on a directory target: no mkfs; the setup is described by the mount the
    /// directory is on.
    fn adopt_directory(&mut self, rec: &mut RoundRecord, r: &mut Round) -> Flow<()> {
        r.work_root = self
            .target
            .directory()
            .map(Path::to_path_buf)
            .ok_or_else(|| Error::Other("directory target without a directory".into()))?;
        let mut step = self.empty(&r.setup, r.round);
        let m = std::fs::canonicalize(&r.work_root).ok().and_then(|real| {
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
            name: r.setup.name.clone(),
            fs: m.as_ref().map_or("dir".into(), |m| m.fs_type.clone()),
            implementation: "existing directory (no mkfs)".into(),
            mount_opts: m.map(|m| m.all_options()).unwrap_or_default(),
            properties,
            ..Default::default()
        });
        self.commit(rec, "setup", step)?;
        Ok(Some(()))
    }

    /// fsbench's own directory on the filesystem under test (removed at the round's end on
    /// a directory target), `chattr +C` for a nocow setup.
    fn data_directory(&mut self, rec: &mut RoundRecord, r: &Round) -> Flow<(PathBuf, DirGuard)> {
        if self.inv.options.target.in_place() {
            // The job names the user's own file: the steps stand in the directory holding
            // it, and nothing of fsbench's is made there (nor removed).
            return Ok(Some((r.work_root.clone(), DirGuard(None))));
        }
        let formats = r.dev.is_some();
        let data_dir = if formats {
            r.work_root.join("fsbench")
        } else {
            r.work_root.join(format!("fsbench-{}", self.run_id))
        };
        std::fs::create_dir_all(&data_dir).map_err(|e| Error::io("cannot create", &data_dir, e))?;
        let guard = DirGuard((!formats).then(|| data_dir.clone()));
        if r.setup.nocow() {
            let argv = crate::host::command::argv(&[
                "chattr",
                "+C",
                data_dir.to_str().unwrap_or_default(),
            ]);
            if let Err(e) = crate::host::command::run(&argv, self.inv.options.tool_timeout) {
                // Without +C the setup is not the variant it claims to be: measure nothing.
                self.fail(rec, &r.setup, r.round, "nocow", &e.to_string())?;
                self.skip_workload_steps(&r.setup, r.round);
                return Ok(None);
            }
        }
        Ok(Some((data_dir, guard)))
    }

    /// The workloads of `setup`'s round `round`: the timed ones, then the capability
    /// phase's probes (the first round only), each in the plan's order.
    fn round_workloads(
        &self,
        setup: &SetupSpec,
        round: u32,
    ) -> (Vec<WorkloadSpec>, Vec<WorkloadSpec>) {
        self.inv
            .plan
            .workloads
            .iter()
            .filter(|w| {
                !self.skipped_workloads.contains(&w.id)
                    && step_in_round(w, &setup.name, round)
                    && self.extra_only.as_ref().is_none_or(|only| {
                        only.get(&setup.name).is_some_and(|ws| ws.contains(&w.id))
                    })
            })
            .cloned()
            .partition(|w| registry::of(w.kind).needs(w).phase == Phase::Timed)
    }

    /// One workload step of an open setup-round, journaled as it finishes; a failure is
    /// recorded and the round goes on, an interrupt is passed up.
    pub(super) fn step_of_round(
        &mut self,
        rec: &mut RoundRecord,
        open: &mut Open,
        w: &WorkloadSpec,
    ) -> crate::Result<()> {
        crate::cancel::check()?;
        let plan = &self.inv.plan;
        let at = step_at(&open.r, &open.data_dir);
        let (setup, round) = (at.setup, at.round);
        let est = crate::plan::eta::workload_seconds(plan, w, &setup.fs);
        self.progress.start(round, plan.rounds, &setup.name, &w.id);
        // The corpus' state is this setup-round's, also when others are open beside it.
        self.shared.tree_failed = open.tree_failed;
        let result = self.run_step(w, &at);
        open.tree_failed = self.shared.tree_failed;
        let mut step = self.empty(setup, round);
        match result {
            Ok(done) => self.record_output(&mut step, w, &at, done, &mut open.bandwidth),
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
        Ok(())
    }

    /// One workload's output into its step's record: the scaling factor against its
    /// baseline's bandwidth, its notes and (typed) warnings, its samples under the id it ran
    /// as (a cold-cache workload that ran warm under its warm name, so no report calls it cold),
    /// and with them every process's own measurement when several ran it together.
    fn record_output(
        &mut self,
        step: &mut RoundRecord,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
        done: super::coordinator::Coordinated,
        bandwidth: &mut BTreeMap<String, f64>,
    ) {
        let mut out = done.output;
        let (setup, round) = (&at.setup.name, at.round);
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
                    .note(&format!("fsbench: {setup} round {round}: {id}: {n}"));
            }
            step.notes.push(Warning {
                setup: setup.clone(),
                round,
                message: format!("{id}: {n}"),
            });
        }
        for wa in &out.warnings {
            self.progress.note(&format!(
                "fsbench: {setup} round {round}: {id}: {}",
                wa.message
            ));
            step.warnings
                .push(round_warning(setup, round, Some(&id), wa));
        }
        if w.record {
            add_output(step, setup, &id, round, out);
            step.ranks
                .extend(super::reduce::rank_records(setup, &id, round, &done.ranks));
            step.job_reports.extend(done.job.map(|j| *j));
        }
    }

    /// Array phase: a redundant layout, once per run (round 1): scrub, one device failed,
    /// reads again, rebuild.
    fn array_phase(
        &mut self,
        rec: &mut RoundRecord,
        r: &mut Round,
        data_dir: &Path,
        timed: &[WorkloadSpec],
    ) -> crate::Result<()> {
        if r.round != 1 {
            return Ok(());
        }
        let (Some(guard), Some(driver)) = (r.mount.as_mut(), r.driver) else {
            return Ok(());
        };
        if crate::fs::layout::of_setup(&r.setup).is_none_or(|l| l.redundancy == 0) {
            return Ok(());
        }
        let at = StepAt {
            setup: &r.setup,
            driver: r.driver,
            round: r.round,
            dev: r.dev.as_deref(),
            work_root: &r.work_root,
            data_dir,
        };
        self.redundancy_phase(rec, driver, guard, &at, timed)
    }

    /// Release: unmount (or destroy the pool) and put the host settings back, each failure
    /// recorded as this round's.
    fn release_round(&mut self, rec: &mut RoundRecord, mut r: Round) -> crate::Result<()> {
        if let Some(guard) = r.mount.take()
            && let Err(e) = guard.release()
        {
            self.fail(rec, &r.setup, r.round, "release", &e.to_string())?;
        }
        if let Some(t) = r.tuned.take()
            && let Err(e) = t.restore()
        {
            self.fail(rec, &r.setup, r.round, "restore", &e.to_string())?;
        }
        Ok(())
    }

    /// [`Runner::run_step`]'s output alone (the redundancy phase's reruns, which keep no
    /// per-rank records).
    pub(super) fn run_workload(
        &mut self,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
    ) -> crate::Result<WorkloadOutput> {
        self.run_step(w, at).map(|done| done.output)
    }

    /// Run one workload step through the registry ([`super::step`]): prepare, then measure;
    /// with a coordinator, its start barrier between the two (every process prepared, so no
    /// preparation or cache drop falls inside the ranks' common measured window), and on
    /// the leader every process's own measurement beside the output.
    fn run_step(
        &mut self,
        w: &WorkloadSpec,
        at: &StepAt<'_>,
    ) -> crate::Result<super::coordinator::Coordinated> {
        let Some(c) = self.coordinator else {
            let prepared = self.in_step(w, at, |cx| super::step::prepare(cx, w))?;
            // The disk's pace right before the job (after its preparation and cache drop).
            let reading = self.read_disk_ref(w)?;
            let mut output = self.measure(w, at, prepared)?;
            output.metrics.extend(reading);
            // A whole job run by this process alone (`fsbench io`): its report as it is.
            let job = output
                .job
                .as_deref()
                .map(|run| Box::new(super::reduce::aggregate::alone(run, io_bs(w).unwrap_or(0))));
            return Ok(super::coordinator::Coordinated {
                output,
                ranks: Vec::new(),
                job,
            });
        };
        let mut step = CoordinatedStep {
            runner: self,
            w,
            at,
            prepared: None,
        };
        super::coordinator::workload(c, &w.id, io_bs(w), &mut step)
    }

    /// A reading of the disk beside the image before I/O job `w`, when the plan asks for one
    /// ([`crate::plan::Plan::disk_ref`]). The reference file is made at the first; a failure
    /// becomes a run warning and the run goes on without readings (its ratios plain).
    fn read_disk_ref(&mut self, w: &WorkloadSpec) -> crate::Result<Option<Metric>> {
        let crate::scratch::TargetKind::Image { scratch_dir, .. } = &self.inv.options.target else {
            return Ok(None);
        };
        if !self.inv.plan.disk_ref || w.kind != crate::plan::Kind::Io || !w.record {
            return Ok(None);
        }
        if self.disk_ref.is_none() {
            let made = super::disk_ref::DiskRef::create(scratch_dir, &self.run_id);
            if let Err(e) = &made {
                crate::cancel::check()?;
                self.warn_once(
                    RunWarning::DiskRef,
                    "",
                    &format!("the disk beside the image was not read, ratios are plain: {e}"),
                );
            }
            self.disk_ref = Some(made.map_err(|_| ()));
        }
        let Some(Ok(r)) = &self.disk_ref else {
            return Ok(None);
        };
        match r.measure() {
            Ok(m) => Ok(Some(m)),
            Err(e) => {
                crate::cancel::check()?;
                self.warn_once(
                    RunWarning::DiskRef,
                    "",
                    &format!("a reading of the disk beside the image failed: {e}"),
                );
                Ok(None)
            }
        }
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
            self.warn_once(RunWarning::DropCaches, "", &msg);
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
        let device = self.counted_device(setup, at.work_root, at.dev);
        // Probes build a small filesystem of their own next to the image (or in /var/tmp for
        // device and directory targets); the one under test is untouched.
        let scratch = match &opts.target {
            crate::scratch::TargetKind::Image { scratch_dir, .. } => scratch_dir.clone(),
            _ => PathBuf::from("/var/tmp"),
        };
        let mut cx = StepContext {
            work: WorkloadContext {
                dir: at.data_dir,
                device: device.as_deref(),
                fs: &setup.fs,
                round: at.round,
                seed,
                // Several processes together: no wait for the device to go quiet inside
                // their common measured window (their device totals are not kept anyway:
                // ranks on one host share a device).
                settle: self.coordinator.is_none().then(|| plan.quiet.after_job()),
            },
            root: at.work_root,
            setup,
            driver: at.driver,
            defaults: plan.job_defaults(seed, device.clone()),
            plan_workloads: &plan.workloads,
            corpus: &plan.corpus,
            threads: opts.threads,
            tool_timeout: opts.tool_timeout,
            fio_engine: opts.engine == crate::plan::EngineChoice::Fio,
            scratch: &scratch,
            shared: &mut self.shared,
            coordinator: self.coordinator,
        };
        f(&mut cx)
    }

    /// Where the device counters of `setup` are read (and the quiet wait watches): its
    /// device alone, or for a `raid=` layout the filesystem's mount at `work_root`, which
    /// `measure::device` resolves to every member (Btrfs through sysfs, ZFS through the
    /// pool's vdevs). So a layout's figures sum every device it writes to, a rebuild's new
    /// member included and a spare not yet in use left out.
    fn counted_device(
        &self,
        setup: &SetupSpec,
        work_root: &Path,
        dev: Option<&Path>,
    ) -> Option<PathBuf> {
        if self.inv.options.target.formats() && crate::fs::layout::of_setup(setup).is_some() {
            return Some(work_root.to_path_buf());
        }
        dev.map(Path::to_path_buf)
    }

    /// This setup-round's workloads will not run: count them done for the progress line.
    pub(super) fn skip_workload_steps(&mut self, setup: &SetupSpec, round: u32) {
        let plan = &self.inv.plan;
        let fs = setup.fs.as_str();
        let ws: Vec<&WorkloadSpec> = plan
            .workloads
            .iter()
            .filter(|w| {
                step_in_round(w, &setup.name, round)
                    && self.extra_only.as_ref().is_none_or(|only| {
                        only.get(&setup.name).is_some_and(|ws| ws.contains(&w.id))
                    })
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

    pub(super) fn step_estimate_overhead(&self, setup: &SetupSpec) -> f64 {
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

/// A step's or round's warning as the results record it (`<id>: <message>` for a workload's).
fn round_warning(setup: &str, round: u32, id: Option<&str>, w: &StepWarning) -> Warning {
    Warning {
        setup: setup.to_string(),
        round,
        message: match id {
            Some(id) => format!("{id}: {}", w.message),
            None => w.message.clone(),
        },
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
