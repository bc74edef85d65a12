//! One setup-round: check the device → discard → mkfs + mount (timed) → wait quiet →
//! usable space → each workload after sync + drop caches → release.
//!
//! Every step's outcome is journaled as soon as it finishes. A failing workload becomes a
//! `Failure` and the round goes on; an interrupt unwinds through the guards (unmount, pool
//! destroy, data directory removal) and is passed up.

use super::Runner;
use super::adapters;
use super::journal::{Entry, RoundRecord};
use super::writeback;
use crate::Error;
use crate::fs::Mounted;
use crate::plan::{Kind, SetupRound, SetupSpec, WorkloadSpec, WriteAccounting, step_seed};
use crate::results::{Failure, HistogramRecord, Sample, SeriesRecord, SetupInfo, Warning};
use crate::workload::{Metric, WorkloadContext, WorkloadOutput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Unmounts (or destroys the pool) and removes the mountpoint when dropped: on success, error,
/// panic or interrupt alike.
struct MountGuard {
    mounted: Option<Box<dyn Mounted>>,
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
            match self.target.discard() {
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
                self.skip_workload_steps(&setup.fs);
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
            let created =
                driver.create_and_mount(&dev, &setup, &mountpoint, self.inv.options.tool_timeout);
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
                    self.skip_workload_steps(&setup.fs);
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
                    &Metric::new("seconds", "s", mkfs.seconds),
                ));
            }
            self.commit(rec, "mkfs", step)?;
            // Wait for lazy init, commits and discards to settle before measuring.
            let q = plan.quiet;
            self.progress.doing(&format!(
                "round {round}/{} · {} · waiting for the device to go quiet",
                plan.rounds, setup.name
            ));
            match adapters::wait_quiet(&dev, q.window, q.threshold, q.timeout) {
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
                let entries = crate::fs::mountinfo::read().ok()?;
                crate::fs::mountinfo::containing(&entries, &real)
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
                self.skip_workload_steps(&setup.fs);
                return Ok(());
            }
        }

        let mut bandwidth: BTreeMap<String, f64> = BTreeMap::new();
        let mut untar_failed = false;
        let workloads: Vec<WorkloadSpec> = plan
            .workloads
            .iter()
            .filter(|w| !self.skipped_workloads.contains(&w.id))
            .cloned()
            .collect();
        for w in workloads.iter().filter(|w| w.kind != Kind::Mkfs) {
            crate::cancel::check()?;
            let est = crate::plan::eta::workload_seconds(plan, w, &setup.fs);
            self.progress.start(round, plan.rounds, &setup.name, &w.id);
            // A fio phase drops caches once, before its first section runs.
            if w.kind != Kind::UsableSpace && !self.fio_phase_ran(w, &setup.name, round) {
                self.drop_caches();
            }
            let needs_tree = matches!(w.kind, Kind::FindCold | Kind::RmTree);
            let result = if untar_failed && needs_tree {
                Err(Error::workload(
                    &w.id,
                    "not run: it needs the extracted corpus and untar failed",
                ))
            } else if let Some(c) = self.coordinator {
                // The coordinator hook: run on every process together, get the reduced output.
                c.workload(&w.id, &mut || {
                    self.run_workload(w, &setup, round, &work_root, &data_dir)
                })
            } else {
                self.run_workload(w, &setup, round, &work_root, &data_dir)
            };
            untar_failed |= w.kind == Kind::Untar && result.is_err();
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
                    if let Some(bw) = out.metrics.iter().find(|m| m.metric == "bw_mib_s") {
                        bandwidth.insert(w.id.clone(), bw.value);
                    }
                    if let Some(base) = &w.baseline
                        && let (Some(b), Some(x)) = (bandwidth.get(base), bandwidth.get(&w.id))
                        && *b > 0.0
                    {
                        out.metrics.push(Metric::new("scaling_factor", "x", x / b));
                    }
                    for n in &out.notes {
                        step.notes.push(Warning {
                            setup: setup.name.clone(),
                            round,
                            message: format!("{id}: {n}"),
                        });
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

    /// Run one workload; for one that writes, also count what the device writes after it
    /// until the filesystem has written back what it caused (the engine does this for its
    /// own I/O jobs, the runner for everything else).
    fn run_workload(
        &mut self,
        w: &WorkloadSpec,
        setup: &SetupSpec,
        round: u32,
        work_root: &Path,
        data_dir: &Path,
    ) -> crate::Result<WorkloadOutput> {
        let rule = self.inv.plan.quiet.after_job();
        let by_runner = match w.kind.write_accounting() {
            WriteAccounting::Runner => true,
            WriteAccounting::Engine => {
                self.inv.options.engine == crate::plan::EngineChoice::Fio
                    && w.io.as_ref().is_some_and(|p| p.rw.writes())
            }
            WriteAccounting::None => false,
        };
        let tracked = if by_runner {
            let device = match self.target.block_device() {
                Some(d) => crate::measure::device::resolve(d),
                None => crate::measure::device::resolve(data_dir),
            };
            writeback::start(device)
        } else {
            None
        };
        let mut out = self.run_workload_inner(w, setup, round, work_root, data_dir, rule)?;
        if let Some(t) = tracked {
            t.finish(data_dir, rule, &mut out)?;
        }
        Ok(out)
    }

    fn run_workload_inner(
        &mut self,
        w: &WorkloadSpec,
        setup: &SetupSpec,
        round: u32,
        work_root: &Path,
        data_dir: &Path,
        rule: crate::measure::SettleRule,
    ) -> crate::Result<WorkloadOutput> {
        let plan = &self.inv.plan;
        let opts = &self.inv.options;
        let seed = step_seed(opts.seed, &setup.name, round, &w.id);
        let device = self.target.block_device().map(Path::to_path_buf);
        let defaults = plan.job_defaults(seed, device.clone());
        let tree = data_dir.join("tree");
        let ctx = WorkloadContext {
            dir: data_dir,
            device: device.as_deref(),
            fs: &setup.fs,
            round,
            seed,
            settle: Some(rule),
        };
        match w.kind {
            Kind::Mkfs => Ok(WorkloadOutput::default()),
            Kind::UsableSpace => usable_space(work_root),
            Kind::Layout => {
                let spec = w
                    .job_spec(data_dir, &defaults)
                    .expect("layout has io params");
                let size = spec.size.unwrap_or(plan.file_size);
                let mut notes = Vec::new();
                let secs = match adapters::layout_file(&spec.filename, size, spec.direct) {
                    Err(e) if spec.direct && is_direct_refusal(&e) => {
                        let _ = std::fs::remove_file(&spec.filename);
                        notes.push(format!(
                            "{} refused O_DIRECT ({e}); the file was laid out buffered",
                            setup.fs
                        ));
                        adapters::layout_file(&spec.filename, size, false)?
                    }
                    other => other?,
                };
                Ok(WorkloadOutput {
                    metrics: vec![
                        Metric::new("seconds", "s", secs),
                        Metric::new("bytes", "bytes", size as f64),
                        Metric::new(
                            "bw_mib_s",
                            "MiB/s",
                            size as f64 / 1048576.0 / secs.max(1e-9),
                        ),
                    ],
                    notes,
                    ..Default::default()
                })
            }
            Kind::Io => {
                let spec = w.job_spec(data_dir, &defaults).expect("io has params");
                self.io_with_fallback(&ctx, spec)
            }
            Kind::Memcap => {
                let spec = w.job_spec(data_dir, &defaults).expect("memcap has params");
                adapters::memcap_run(&spec, w.memory_limit.unwrap_or(512 << 20))
            }
            Kind::Untar => {
                let threads = opts.threads;
                let corpus = self.corpus()?;
                crate::workload::meta::untar(corpus, &tree, threads)
            }
            Kind::FindCold => {
                let threads = opts.threads;
                let expected = self.corpus()?.entries();
                crate::workload::meta::find_cold(&tree, threads, Some(expected), false)
            }
            Kind::RmTree => {
                let expected = self.corpus()?.entries();
                crate::workload::meta::rm_tree_checked(&tree, opts.threads, Some(expected))
            }
            // Both create their own subdirectory (`smallfiles/`, `fsmark/`) inside the data dir.
            Kind::Smallfiles => adapters::smallfiles(data_dir),
            Kind::Fsmark => adapters::fsmark(data_dir, opts.threads),
            Kind::Compress => {
                adapters::compress_run(data_dir, &setup.fs, w.size.unwrap_or(256 << 20), seed)
            }
            Kind::Pgbench => adapters::pgbench_run(&ctx, w, plan.runtime, opts.tool_timeout),
            Kind::Sqlite => adapters::sqlite_run(&ctx, w),
            Kind::FioJob => self.fio_job(w, &setup.name, round, data_dir, device.as_deref()),
            Kind::Probe => {
                // Probes build a small filesystem of their own next to the image (or in
                // /var/tmp for device and directory targets); the one under test is untouched.
                let scratch = match &opts.target {
                    crate::target::TargetKind::Image { scratch_dir, .. } => scratch_dir.clone(),
                    _ => PathBuf::from("/var/tmp"),
                };
                adapters::probe_run(&w.id, setup, &scratch, opts.tool_timeout)
            }
        }
    }

    /// Run an I/O job; when the filesystem refuses O_DIRECT (EINVAL, e.g. zfs-fuse) run it
    /// buffered and say so in the results rather than failing the step.
    fn io_with_fallback(
        &mut self,
        ctx: &WorkloadContext<'_>,
        spec: crate::engine::JobSpec,
    ) -> crate::Result<WorkloadOutput> {
        match adapters::io_run(ctx, &spec, self.inv.options.engine) {
            Err(e) if spec.direct && is_direct_refusal(&e) => {
                let mut buffered = spec.clone();
                buffered.direct = false;
                let mut out = adapters::io_run(ctx, &buffered, self.inv.options.engine)?;
                out.notes.push(format!(
                    "{} refused O_DIRECT ({e}); this job ran buffered, so the page cache is part of its numbers",
                    ctx.fs
                ));
                Ok(out)
            }
            other => other,
        }
    }

    fn phase_key(
        w: &WorkloadSpec,
        setup: &str,
        round: u32,
    ) -> Option<(String, u32, PathBuf, usize)> {
        let (file, phase) = w.fio_job.as_ref()?.phase_key();
        Some((setup.to_string(), round, file, phase))
    }

    /// Whether `w`'s phase already ran in this setup-round (its output is waiting).
    fn fio_phase_ran(&self, w: &WorkloadSpec, setup: &str, round: u32) -> bool {
        let key = Self::phase_key(w, setup, round);
        self.fio_phase
            .as_ref()
            .is_some_and(|p| Some(&p.key) == key.as_ref() && p.outputs.contains_key(&w.id))
    }

    /// A section of a fio job file: run its phase (every selected section between the same
    /// stonewalls) unless that already happened in this setup-round, then take its output.
    fn fio_job(
        &mut self,
        w: &WorkloadSpec,
        setup: &str,
        round: u32,
        data_dir: &Path,
        device: Option<&Path>,
    ) -> crate::Result<WorkloadOutput> {
        let job = w
            .fio_job
            .as_ref()
            .ok_or_else(|| Error::workload(&w.id, "fio-job workload without a job section"))?;
        let key = Self::phase_key(w, setup, round).expect("fio job");
        if !self.fio_phase_ran(w, setup, round) {
            let inv = self.inv;
            let members: Vec<&WorkloadSpec> = inv
                .plan
                .workloads
                .iter()
                .filter(|x| Self::phase_key(x, setup, round).as_ref() == Some(&key))
                .collect();
            let jobs: Vec<&crate::fio::jobfile::FioJob> =
                members.iter().filter_map(|m| m.fio_job.as_ref()).collect();
            let stem = job
                .file
                .file_stem()
                .map(|s| crate::fio::jobfile::section_id(&s.to_string_lossy()))
                .unwrap_or_else(|| "fio".into());
            let dir = data_dir.join(format!("fio-{stem}"));
            let outputs = match crate::workload::fiojob::run_phase(&jobs, &dir, device) {
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
            self.fio_phase = Some(super::FioPhase { key, outputs });
        }
        let mut out = self
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

    fn corpus(&mut self) -> crate::Result<&crate::workload::meta::Corpus> {
        if self.corpus.is_none() {
            self.corpus = Some(crate::workload::meta::Corpus::build(&self.inv.plan.corpus)?);
        }
        Ok(self.corpus.as_ref().expect("just built"))
    }

    fn drop_caches(&mut self) {
        if let Err(e) = crate::host::drop_caches() {
            self.warn_once(
                "drop_caches",
                "",
                &format!("caches were not dropped before workloads: {e}"),
            );
        }
    }

    /// This setup-round's workloads will not run: count them done for the progress line.
    fn skip_workload_steps(&mut self, fs: &str) {
        let plan = &self.inv.plan;
        let ws: Vec<&WorkloadSpec> = plan
            .workloads
            .iter()
            .filter(|w| w.kind != Kind::Mkfs)
            .collect();
        let weight: f64 = ws
            .iter()
            .map(|w| crate::plan::eta::workload_seconds(plan, w, fs))
            .sum();
        let n = ws.len();
        self.progress.skip(n, weight);
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

    fn empty(&self, setup: &SetupSpec, round: u32) -> RoundRecord {
        RoundRecord {
            setup: setup.name.clone(),
            round,
            ..Default::default()
        }
    }

    /// Journal one step (fsync'd) and fold it into the setup-round's record.
    fn commit(
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

    fn fail(
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

/// Whether an I/O error means "this filesystem does not do O_DIRECT".
fn is_direct_refusal(e: &Error) -> bool {
    let s = e.to_string();
    s.contains("EINVAL") || s.contains("Invalid argument") || s.contains("os error 22")
}

fn sample(setup: &str, workload: &str, round: u32, m: &Metric) -> Sample {
    Sample {
        setup: setup.to_string(),
        workload: workload.to_string(),
        metric: m.metric.clone(),
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

/// `usable-space`: what statvfs reports right after mkfs (df's Size/Avail, inodes).
fn usable_space(root: &Path) -> crate::Result<WorkloadOutput> {
    let s = rustix::fs::statvfs(root).map_err(|e| Error::io("cannot statvfs", root, e.into()))?;
    let f = s.f_frsize as f64;
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new("size_bytes", "bytes", s.f_blocks as f64 * f),
            Metric::new("avail_bytes", "bytes", s.f_bavail as f64 * f),
            Metric::new("inodes_total", "count", s.f_files as f64),
            Metric::new("inodes_free", "count", s.f_ffree as f64),
        ],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_space_reads_statvfs() {
        let d = tempfile::tempdir().unwrap();
        let out = usable_space(d.path()).unwrap();
        let get = |n: &str| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert!(get("size_bytes") > 0.0);
        assert!(get("avail_bytes") <= get("size_bytes"));
    }

    #[test]
    fn direct_refusal_is_recognised() {
        let e = Error::io(
            "cannot open with O_DIRECT",
            "/x",
            std::io::Error::from_raw_os_error(22),
        );
        assert!(is_direct_refusal(&e));
        assert!(!is_direct_refusal(&Error::Other("ENOSPC".into())));
    }
}
