//! The aging step of a setup-round (`fs::setup::age`, `workload::age`): after mkfs, mount and the
//! quiet wait, before the workloads. When any setup of the plan ages, every setup's age is
//! measured (workload id [`AGE`]: the state the workloads start from), so fresh and aged
//! setups are side by side; an aged setup also records its fresh state ([`AGE_BEFORE`])
//! and the aging itself (amount, time, throughput, which stop fired, and about every second
//! its rate, fullness, bytes written and a sample's layout score and extents per file as
//! series under [`AGE`], charted over time by the HTML report).
//!
//! Replication (`replicate=`): each round re-ages with its own seed, or, with `restore`,
//! the first round to age keeps an image of the aged filesystem ([`Runner::keep_aged`])
//! and the later rounds write it back instead of mkfs and aging ([`Runner::restore_aged`]);
//! the kept images are the runner's until the run ends (ledger entries).

use super::Runner;
use super::journal::RoundRecord;
use super::round::{MountGuard, Round, sample};
use crate::Error;
use crate::fs::setup::age::{AgeSpec, Replicate};
use crate::metrics::registry as m;
use crate::plan::{SetupSpec, step_seed};
use crate::results::{SeriesRecord, Warning};
use crate::workload::Metric;
use crate::workload::age::restore::{KeptImage, WrittenBack};
use crate::workload::age::{self, measure::AgeMeasures};
use std::path::PathBuf;

/// The workload id the age measures are recorded under: the state the workloads start from.
pub const AGE: &str = "age";
/// An aged setup's measures before aging (its fresh state).
pub const AGE_BEFORE: &str = "age-before";
/// The step id a restore's failure is recorded under.
pub const RESTORE: &str = "age-restore";
/// Where the probe file is written (removed with it).
const PROBE_DIR: &str = "fsbench-age-probe";

/// The per-tick series of one aging run, in the order the ticks came.
#[derive(Default)]
struct Series {
    rate: Vec<f64>,
    fullness: Vec<f64>,
    written: Vec<f64>,
    layout: Vec<f64>,
    extents: Vec<f64>,
}

impl Series {
    /// The records, one per measure; a measure never sampled (no FIEMAP) is left out.
    fn records(self, setup: &str, round: u32) -> Vec<SeriesRecord> {
        [
            (m::BW_MIB_S, self.rate),
            (m::AGE_FULLNESS, self.fullness),
            (m::AGE_WRITTEN_BYTES, self.written),
            (m::AGE_LAYOUT_SCORE, self.layout),
            (m::AGE_EXTENTS_PER_FILE, self.extents),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(metric, values)| SeriesRecord {
            setup: setup.to_string(),
            workload: AGE.to_string(),
            round,
            metric: metric.as_str().to_string(),
            values,
        })
        .collect()
    }
}

/// Whether the round's setup can be restored from a copy of its device: one device, and a
/// driver that mounts a copy of its device again (its crash-state clones are the same
/// ability).
fn restorable(r: &Round) -> bool {
    crate::fs::layout::of_setup(&r.setup).is_none()
        && r.driver
            .is_some_and(|d| matches!(d.caps().crash, crate::fs::caps::Crash::Clones { .. }))
}

impl Runner<'_> {
    /// Age the round's setup (when it asks to) on its mounted filesystem and record the age
    /// measures; nothing when no setup of the plan ages or the target is a directory. A
    /// failed aging is the round's failure; its workloads still run (the report shows both).
    pub(super) fn age_step(&mut self, rec: &mut RoundRecord, r: &mut Round) -> crate::Result<()> {
        let plan = &self.inv.plan;
        if !self.inv.options.target.formats() || plan.setups.iter().all(|s| s.age.is_none()) {
            return Ok(());
        }
        let (setup, round) = (r.setup.clone(), r.round);
        match self.age_or_measure(rec, r) {
            Err(e) if matches!(e, Error::Interrupted) || crate::cancel::requested() => {
                Err(Error::Interrupted)
            }
            Err(e) => self.fail(rec, &setup, round, AGE, &e.to_string()),
            Ok(()) => Ok(()),
        }
    }

    /// [`Runner::age_step`]'s work: a restored round's measures, a fresh setup's, or the
    /// aging with its measures before and after (and, with `replicate=restore`, the kept
    /// image).
    fn age_or_measure(&mut self, rec: &mut RoundRecord, r: &mut Round) -> crate::Result<()> {
        let (setup, round, root) = (r.setup.clone(), r.round, r.work_root.clone());
        let files = root.join(age::AGED_DIR);
        let probe = root.join(PROBE_DIR);
        if let Some(wb) = r.restored.take() {
            let after = age::measure::measure(&root, &files, &probe)?;
            let done = [
                Metric::new(m::AGE_RESTORE_SECONDS, "s", wb.seconds),
                Metric::new(m::AGE_RESTORE_BYTES, "bytes", wb.bytes as f64),
            ];
            return self.record_age(rec, &setup, round, AGE, &after, &done);
        }
        let before = age::measure::measure(&root, &files, &probe)?;
        let Some(spec) = setup.age else {
            return self.record_age(rec, &setup, round, AGE, &before, &[]);
        };
        self.record_age(rec, &setup, round, AGE_BEFORE, &before, &[])?;
        let seed = step_seed(self.inv.options.seed, &setup.name, round, AGE);
        let what = format!(
            "round {round}/{} · {} · aging {spec}",
            self.inv.plan.rounds, setup.name
        );
        let progress = &self.progress;
        // Per tick (about a second): the HTML report's series over the aging time.
        let (mut series, mut last) = (Series::default(), (0u64, 0.0f64));
        // The data file must still fit after aging, written as the layout will write it.
        let reserve = self.inv.plan.file_size;
        let aged = age::run(&root, &spec, seed, reserve, &mut |t| {
            let now = (t.written, t.elapsed.as_secs_f64());
            if now.1 > last.1 {
                series
                    .rate
                    .push((now.0 - last.0) as f64 / (1u64 << 20) as f64 / (now.1 - last.1));
                series.fullness.push(t.fullness_pct);
                series.written.push(t.written as f64);
                series.layout.extend(t.sampled.layout_score);
                series.extents.extend(t.sampled.extents_per_file);
            }
            last = now;
            // In steps of 10 s: plain output prints a line when the text changes, so a
            // log gets one about every 10 s rather than one a second.
            let eta = t.eta_seconds().map_or(String::new(), |s| {
                let s = ((s / 10.0).ceil() * 10.0) as u64;
                format!(" · ETA {}m {:02}s", s / 60, s % 60)
            });
            progress.percent(&format!("{what}{eta} ·"), t.percent());
        })?;
        let mib_s = aged.written as f64 / (1u64 << 20) as f64 / aged.seconds.max(1e-3);
        let stop = if aged.stopped_on_layout {
            format!(
                ", stopped on its layout score (≤ {})",
                spec.stop_layout.unwrap_or_default()
            )
        } else {
            String::new()
        };
        let freed = if aged.freed_for_room > 0 {
            format!(
                "; {} of aged files deleted so the {} data file could be written",
                crate::units::format_size(aged.freed_for_room),
                crate::units::format_size(reserve)
            )
        } else {
            String::new()
        };
        self.progress.note(&format!(
            "fsbench: {} round {round}: aged ({spec}): {} written in {:.0} s, {mib_s:.0} MiB/s{stop}{freed}",
            setup.name,
            crate::units::format_size(aged.written),
            aged.seconds
        ));
        let after = age::measure::measure(&root, &files, &probe)?;
        let mut done = vec![
            Metric::new(m::AGE_WRITTEN_BYTES, "bytes", aged.written as f64),
            Metric::new(m::AGE_SECONDS, "s", aged.seconds),
            Metric::new(m::AGE_MIB_S, "MiB/s", mib_s),
            Metric::new(m::AGE_FREED_FOR_ROOM, "bytes", aged.freed_for_room as f64),
        ];
        if spec.stop_layout.is_some() {
            let fired = f64::from(u8::from(aged.stopped_on_layout));
            done.push(Metric::new(m::AGE_STOPPED_ON_LAYOUT, "bool", fired));
        }
        self.record_age(rec, &setup, round, AGE, &after, &done)?;
        let mut step = self.empty(&setup, round);
        step.series = series.records(&setup.name, round);
        self.commit(rec, AGE, step)?;
        // Kept only when a later round of the plan will restore it.
        if spec.replicate == Replicate::Restore && round < self.inv.plan.rounds {
            self.keep_aged(rec, r, &spec)?;
        }
        Ok(())
    }

    /// `replicate=restore`, in the round that aged: unmount, keep the aged filesystem's
    /// image (trimmed first, so what aging deleted is neither copied nor written back),
    /// mount it again for this round's workloads, so every round's workloads start from a
    /// fresh mount of the same image. When it cannot be kept (a filesystem that cannot be
    /// restored, too little room), a warning says so and the later rounds re-age.
    fn keep_aged(
        &mut self,
        rec: &mut RoundRecord,
        r: &mut Round,
        spec: &AgeSpec,
    ) -> crate::Result<()> {
        let (setup, round) = (r.setup.clone(), r.round);
        let (Some(dev), true) = (r.dev.clone(), restorable(r)) else {
            let why = format!(
                "age: replicate=restore needs one device and a filesystem fsbench mounts again from a copy of its device ({} here cannot be); its rounds re-age",
                setup.fs
            );
            return self.age_warning(rec, &setup, round, why);
        };
        let Some(guard) = r.mount.as_mut() else {
            return Ok(());
        };
        self.progress.doing(&format!(
            "round {round}/{} · {} · keeping the aged image",
            self.inv.plan.rounds, setup.name
        ));
        let timeout = self.inv.options.tool_timeout;
        if let Some(mounted) = guard.mounted.take() {
            let at = mounted.path().to_string_lossy().into_owned();
            let trim = crate::host::command::argv(&["fstrim", at.as_str()]);
            // Without a trim the image keeps what aging deleted: larger, never wrong.
            let _ = crate::host::command::run(&trim, timeout);
            mounted.unmount()?;
        }
        let (backing, dir) = match &self.inv.options.target {
            crate::scratch::TargetKind::Image { scratch_dir, .. } => (
                crate::workload::probe::sys::loop_backing_file(&dev).ok(),
                scratch_dir.clone(),
            ),
            _ => (None, PathBuf::from("/var/tmp")),
        };
        let kept = KeptImage::keep(&dev, backing.as_deref(), &dir, &setup.name);
        let driver = r
            .driver
            .ok_or_else(|| Error::Other(format!("no driver for {}", setup.fs)))?;
        guard.mounted = Some(driver.mount(&dev, &setup, guard.mountpoint(), timeout)?);
        match kept {
            Ok(k) => {
                self.progress.note(&format!(
                    "fsbench: {} round {round}: aged image kept ({}, {} of data in {:.1} s); later rounds restore it instead of aging ({spec})",
                    setup.name,
                    k.by().name(),
                    crate::units::format_size(k.data_bytes()),
                    k.seconds()
                ));
                let mut step = self.empty(&setup, round);
                for metric in [
                    Metric::new(m::AGE_KEEP_SECONDS, "s", k.seconds()),
                    Metric::new(m::AGE_IMAGE_BYTES, "bytes", k.data_bytes() as f64),
                ] {
                    step.samples.push(sample(&setup.name, AGE, round, &metric));
                }
                self.commit(rec, AGE, step)?;
                self.aged_images.insert(setup.name.clone(), k);
                Ok(())
            }
            Err(e) if matches!(e, Error::Interrupted) => Err(e),
            Err(e) => {
                let why = format!("age: cannot keep the aged image ({e}); its rounds re-age");
                self.age_warning(rec, &setup, round, why)
            }
        }
    }

    /// `replicate=restore`, in a round after the one that kept the image: instead of
    /// discard, mkfs and aging, write the kept image back to the device and mount it. The
    /// progress counts it as the round's mkfs step. `Ok(false)`: it failed (recorded, the
    /// round's workloads skipped).
    pub(super) fn restore_aged(
        &mut self,
        rec: &mut RoundRecord,
        r: &mut Round,
    ) -> crate::Result<bool> {
        let (setup, round) = (r.setup.clone(), r.round);
        let est = self.step_estimate_overhead(&setup);
        self.progress.start(
            round,
            self.inv.plan.rounds,
            &setup.name,
            "restore aged image",
        );
        let restored = self.write_back_and_mount(r);
        match restored {
            Ok(wb) => {
                r.restored = Some(wb);
                self.quiesce(rec, r)?;
                self.progress.finish(est);
                Ok(true)
            }
            Err(e) if matches!(e, Error::Interrupted) || crate::cancel::requested() => {
                Err(Error::Interrupted)
            }
            Err(e) if matches!(e, Error::Refused { .. }) => Err(e),
            Err(e) => {
                self.fail(rec, &setup, round, RESTORE, &e.to_string())?;
                self.progress.finish(est);
                self.skip_workload_steps(&setup, round);
                Ok(false)
            }
        }
    }

    /// Write the kept image of `r`'s setup back to its device and mount it.
    fn write_back_and_mount(&mut self, r: &mut Round) -> crate::Result<WrittenBack> {
        let setup = &r.setup;
        let dev = r
            .dev
            .clone()
            .ok_or_else(|| Error::Other("no device to restore onto".into()))?;
        let kept = self
            .aged_images
            .get(&setup.name)
            .ok_or_else(|| Error::Other(format!("no aged image kept for {}", setup.name)))?;
        let wb = kept.write_back(&dev)?;
        let driver = r
            .driver
            .ok_or_else(|| Error::Other(format!("no driver for {}", setup.fs)))?;
        let mountpoint = crate::fs::mount_root().join(format!("{}-{}", self.run_id, setup.name));
        let guard = MountGuard::create(mountpoint)?;
        let mounted = driver.mount(
            &dev,
            setup,
            guard.mountpoint(),
            self.inv.options.tool_timeout,
        )?;
        r.work_root = mounted.path().to_path_buf();
        r.mount = Some(guard.holding(mounted));
        Ok(wb)
    }

    /// Record a warning of the aging step on the round (and say it).
    fn age_warning(
        &mut self,
        rec: &mut RoundRecord,
        setup: &SetupSpec,
        round: u32,
        message: String,
    ) -> crate::Result<()> {
        self.progress.note(&format!(
            "fsbench: warning: {} round {round}: {message}",
            setup.name
        ));
        let mut step = self.empty(setup, round);
        step.warnings.push(Warning {
            setup: setup.name.clone(),
            round,
            message,
        });
        self.commit(rec, AGE, step)
    }

    /// Journal one set of age measures under workload `id`.
    fn record_age(
        &mut self,
        rec: &mut RoundRecord,
        setup: &SetupSpec,
        round: u32,
        id: &str,
        a: &AgeMeasures,
        more: &[Metric],
    ) -> crate::Result<()> {
        let mut step = self.empty(setup, round);
        for metric in metrics(a).iter().chain(more) {
            step.samples.push(sample(&setup.name, id, round, metric));
        }
        self.commit(rec, id, step)
    }
}

/// The measures as metrics (those a fresh filesystem has no value for left out).
pub fn metrics(a: &AgeMeasures) -> Vec<Metric> {
    let mut v = vec![
        Metric::new(m::AGE_FULLNESS, "%", a.fullness_pct),
        Metric::new(m::AGE_FILES, "count", a.files as f64),
    ];
    let opt = [
        (m::AGE_EXTENTS_PER_FILE, "extents", a.extents_mean),
        (m::AGE_EXTENTS_P90, "extents", a.extents_p90),
        (m::AGE_EXTENTS_MAX, "extents", a.extents_max),
        (m::AGE_LAYOUT_SCORE, "fraction", a.layout_score),
        (
            m::AGE_PROBE_EXTENTS,
            "extents",
            a.probe_extents.map(|n| n as f64),
        ),
        (m::AGE_FREE_EXTENT_KIB, "KiB", a.probe_extent_kib),
    ];
    v.extend(
        opt.into_iter()
            .filter_map(|(id, unit, x)| x.map(|x| Metric::new(id, unit, x))),
    );
    v
}
