//! The redundancy phase of a `raid=` layout that survives a failed device (round 1 only):
//! scrub → one device failed → the read-only I/O workloads again → rebuild.
//!
//! Degraded reads are recorded under their own workload id, `<id>-degraded` (like `-warm`
//! for warm-cache reruns), so healthy and degraded samples sit side by side in every table
//! and compare. Scrub and rebuild are the steps `scrub` and `rebuild`: `seconds`, `bytes`
//! (data in use then) and `seconds_per_gib`. A failing step is recorded as a failure and
//! the phase stops there; the round's release destroys or unmounts the array as always.

use super::Runner;
use super::journal::RoundRecord;
use super::round::{MountGuard, StepAt, add_output, sample};
use crate::fs::layout::{Builder, Layout};
use crate::fs::redundancy as r;
use crate::metrics::registry::{BYTES, SECONDS, SECONDS_PER_GIB};
use crate::plan::WorkloadSpec;
use crate::workload::Metric;
use std::path::PathBuf;

/// The suffix of a workload id rerun with one device failed.
pub const DEGRADED: &str = "-degraded";

/// Whether `w` is a recorded I/O job that only reads (what is worth rerunning degraded).
fn read_only(w: &WorkloadSpec) -> bool {
    w.record
        && w.io
            .as_ref()
            .is_some_and(|io| io.rw.reads() && !io.rw.writes())
}

impl Runner<'_> {
    /// Scrub, fail the last device, rerun the read workloads of `timed`, rebuild.
    pub(super) fn redundancy_phase(
        &mut self,
        rec: &mut RoundRecord,
        layout: &Layout,
        guard: &mut MountGuard,
        at: &StepAt<'_>,
        timed: &[WorkloadSpec],
    ) -> crate::Result<()> {
        let setup = at.setup;
        let devices = self.target.block_devices();
        let Some(last) = devices.last().cloned() else {
            return Ok(());
        };
        let timeout = self
            .inv
            .options
            .tool_timeout
            .max(std::time::Duration::from_secs(600));
        let mnt = at.work_root.to_path_buf();
        let pool = guard
            .mounted
            .as_ref()
            .and_then(|m| m.pool().map(str::to_string));
        let used = r::used_bytes(&mnt).unwrap_or(0);
        let name = setup.name.clone();
        let rounds = self.inv.plan.rounds;
        let doing = |p: &super::progress::Progress, what: &str| {
            p.doing(&format!("round 1/{rounds} · {name} · {what}"));
        };
        // Each step's start as a line of its own (it may take minutes on a large array).
        let says = |p: &super::progress::Progress, what: &str| {
            p.note(&format!("fsbench: {name} round 1: {what}"));
            doing(p, what);
        };

        // Scrub, healthy.
        says(
            &self.progress,
            &format!("scrub of {} of data", crate::units::format_size(used)),
        );
        let scrubbed = {
            let progress = &self.progress;
            let tick = |l: &str| doing(progress, &format!("scrub: {l}"));
            r::scrub(layout.builder, &mnt, pool.as_deref(), timeout, &tick)
        };
        match scrubbed {
            Ok(s) => self.per_gib(rec, at, "scrub", s, used)?,
            Err(e) => return self.stop(rec, at, "scrub", e),
        }

        // One device failed.
        says(
            &self.progress,
            &format!("failing {} (degraded mode)", last.display()),
        );
        let failed = match layout.builder {
            Builder::Zpool(_) => match &pool {
                Some(p) => r::zpool_offline(p, &last, timeout),
                None => Err(crate::Error::Other("no pool".into())),
            },
            Builder::Btrfs => self.btrfs_degrade(guard, at, &devices, timeout),
            Builder::Md(_) => Err(crate::Error::Other("md is not built here".into())),
        };
        if let Err(e) = failed {
            return self.stop(rec, at, "degrade", e);
        }
        for w in timed.iter().filter(|w| read_only(w)) {
            crate::cancel::check()?;
            let id = format!("{}{DEGRADED}", w.id);
            doing(&self.progress, &id);
            let mut step = self.empty(setup, at.round);
            match self.run_workload(w, at) {
                Ok(out) => add_output(&mut step, &setup.name, &id, at.round, out),
                Err(crate::Error::Interrupted) => return Err(crate::Error::Interrupted),
                Err(e) => {
                    self.fail(rec, setup, at.round, &id, &e.to_string())?;
                    continue;
                }
            }
            self.commit(rec, &id, step)?;
        }

        // Rebuild onto the failed device, wiped.
        says(
            &self.progress,
            &format!("rebuild onto {}, wiped", last.display()),
        );
        let size = crate::target::size_of(&last).unwrap_or(0);
        let progress = &self.progress;
        let rebuilt = match (layout.builder, &pool) {
            (Builder::Zpool(_), Some(p)) => r::wipe(&last, size, timeout).and_then(|()| {
                let tick = |l: &str| doing(progress, &format!("rebuild: {l}"));
                r::zpool_rebuild(p, &last, timeout, &tick)
            }),
            (Builder::Btrfs, _) => r::btrfs_rebuild(devices.len(), &last, &mnt, timeout),
            _ => Err(crate::Error::Other("no array to rebuild".into())),
        };
        match rebuilt {
            Ok(s) => self.per_gib(rec, at, "rebuild", s, used),
            Err(e) => self.stop(rec, at, "rebuild", e),
        }
    }

    /// Btrfs: unmount, wipe the last device, make the kernel forget it, mount `-o degraded`.
    fn btrfs_degrade(
        &mut self,
        guard: &mut MountGuard,
        at: &StepAt<'_>,
        devices: &[PathBuf],
        timeout: std::time::Duration,
    ) -> crate::Result<()> {
        let last = devices.last().expect("checked by the caller");
        if let Some(m) = guard.mounted.take() {
            m.release()?;
        }
        let size = crate::target::size_of(last)?;
        r::wipe(last, size, timeout)?;
        r::btrfs_forget(last, timeout)?;
        let mut degraded = at.setup.clone();
        degraded.mount.push("degraded".into());
        let driver = crate::fs::driver(&at.setup.fs)
            .ok_or_else(|| crate::Error::Other(format!("no driver for {}", at.setup.fs)))?;
        guard.mounted = Some(driver.mount(&devices[0], &degraded, at.work_root, timeout)?);
        Ok(())
    }

    /// Record `seconds` and seconds per GiB of `used` bytes under step `id`.
    fn per_gib(
        &mut self,
        rec: &mut RoundRecord,
        at: &StepAt<'_>,
        id: &str,
        seconds: f64,
        used: u64,
    ) -> crate::Result<()> {
        let mut step = self.empty(at.setup, at.round);
        let gib = used as f64 / (1u64 << 30) as f64;
        let mut ms = vec![
            Metric::new(SECONDS, "s", seconds),
            Metric::new(BYTES, "bytes", used as f64),
        ];
        if gib > 0.0 {
            ms.push(Metric::new(SECONDS_PER_GIB, "s/GiB", seconds / gib));
        }
        for m in &ms {
            step.samples.push(sample(&at.setup.name, id, at.round, m));
        }
        self.commit(rec, id, step)
    }

    /// A step of the phase failed: record it and end the phase (the release still runs).
    fn stop(
        &mut self,
        rec: &mut RoundRecord,
        at: &StepAt<'_>,
        id: &str,
        e: crate::Error,
    ) -> crate::Result<()> {
        if matches!(e, crate::Error::Interrupted) || crate::cancel::requested() {
            return Err(crate::Error::Interrupted);
        }
        self.fail(rec, at.setup, at.round, id, &e.to_string())
    }
}
