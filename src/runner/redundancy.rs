//! The redundancy phase of a `raid=` layout that survives a failed device (round 1 only):
//! scrub → one device failed → the read-only I/O workloads again → rebuild. This file is the
//! sequence, its progress steps and its records; what each step does to the filesystem is
//! its driver's (`Filesystem::{scrub_layout, degrade_layout, rebuild_layout}`, over a
//! `fs::redundancy::LiveArray`), so nothing here names a filesystem or runs its tools.
//!
//! Degraded reads are recorded under their own workload id, `<id>-degraded` (like `-warm`
//! for warm-cache reruns), so healthy and degraded samples sit side by side in every table
//! and compare. Scrub and rebuild are the steps `scrub` and `rebuild` (onto the failed
//! device, wiped) or `rebuild-onto-spare` (`spare=yes`: onto the target's last device, which
//! the layout left out): `seconds`, `bytes` (data in use then) and `seconds_per_gib`, with a
//! note of what each of the target's devices read and wrote meanwhile. A failing step is
//! recorded as a failure and the phase stops there; the round's release destroys or
//! unmounts the array as always.
//!
//! Each part is a progress step with its estimate (`plan::eta::array_phase`, the counts in
//! `progress::array_steps`), and while a scrub or rebuild runs the progress line shows the
//! percent its tool reports (the driver polls it: `btrfs scrub status`, `btrfs replace
//! status`, `zpool status`).

use super::Runner;
use super::journal::RoundRecord;
use super::round::{MountGuard, StepAt, add_output, sample};
use crate::fs::Filesystem;
use crate::fs::redundancy::{LiveArray, used_bytes};
use crate::measure::device::{self, BlockDevice, DeviceCounters};
use crate::metrics::registry::{BYTES, SECONDS, SECONDS_PER_GIB};
use crate::plan::WorkloadSpec;
use crate::plan::eta;
use crate::results::Warning;
use crate::workload::Metric;
use std::path::PathBuf;

/// The suffix of a workload id rerun with one device failed.
pub const DEGRADED: &str = "-degraded";
/// The step of a rebuild onto the failed device, wiped.
pub const REBUILD: &str = "rebuild";
/// The step of a rebuild onto the spare (`spare=yes`).
pub const REBUILD_SPARE: &str = "rebuild-onto-spare";

/// Every device of the target, counted together around an array step (the spare included,
/// which a rebuild writes onto), for the step's per-device note.
struct Watch {
    set: Option<BlockDevice>,
    before: Vec<DeviceCounters>,
}

impl Watch {
    fn start(devices: &[PathBuf]) -> Watch {
        let set = device::of_nodes(devices);
        let before = set
            .as_ref()
            .and_then(|s| s.member_counters().ok())
            .unwrap_or_default();
        Watch { set, before }
    }

    fn note(&self) -> Option<String> {
        let s = self.set.as_ref()?;
        let after = s.member_counters().ok()?;
        device::per_member_note(&s.per_member(&self.before, &after))
    }
}

/// Where a polled percent goes: the progress line of the step `label` names.
fn percent_tick(progress: &super::progress::Progress, label: String) -> impl Fn(f64) + '_ {
    move |pct| progress.percent(&label, pct)
}

impl Runner<'_> {
    /// Scrub, fail the last device of the layout, rerun the read workloads of `timed`,
    /// rebuild (onto the spare with `spare=yes`), each step through `driver`.
    pub(super) fn redundancy_phase(
        &mut self,
        rec: &mut RoundRecord,
        driver: &dyn Filesystem,
        guard: &mut MountGuard,
        at: &StepAt<'_>,
        timed: &[WorkloadSpec],
    ) -> crate::Result<()> {
        let setup = at.setup;
        let formats = self.inv.options.target.formats();
        let Some(est) = eta::array_phase(&self.inv.plan, setup, at.round, formats) else {
            return Ok(());
        };
        let all = self.target.block_devices();
        let (members, spare) = crate::fs::layout::members(setup, &all);
        let (members, spare) = (members.to_vec(), spare.cloned());
        let Some(last) = members.last().cloned() else {
            return Ok(());
        };
        let reruns: Vec<WorkloadSpec> = timed
            .iter()
            .filter(|w| eta::reruns_degraded(w))
            .cloned()
            .collect();
        // The reruns' weight, for the progress steps a stop part-way leaves out.
        let reruns_s: f64 = reruns
            .iter()
            .map(|w| eta::workload_seconds(&self.inv.plan, w, &setup.fs))
            .sum();
        let used = used_bytes(at.work_root).unwrap_or(0);
        let mut array = LiveArray {
            setup,
            members: &members,
            spare: spare.as_deref(),
            mountpoint: at.work_root,
            mounted: &mut guard.mounted,
            timeout: self
                .inv
                .options
                .tool_timeout
                .max(std::time::Duration::from_secs(600)),
        };

        // Scrub, healthy.
        let what = format!("scrub of {} of data", crate::units::format_size(used));
        self.array_step("scrub", &what, at);
        let watch = Watch::start(&all);
        let tick = percent_tick(&self.progress, self.step_label(at, "scrub"));
        let scrubbed = driver.scrub_layout(&array, &tick);
        drop(tick);
        self.progress.finish(est.scrub_s);
        match scrubbed {
            Ok(s) => self.per_gib(rec, at, "scrub", s, used, watch.note())?,
            Err(e) => {
                let left = (2 + reruns.len(), est.fail_s + reruns_s + est.rebuild_s);
                return self.stop(rec, at, "scrub", e, left);
            }
        }

        // One device failed.
        let what = format!("failing {} (degraded mode)", last.display());
        self.array_step("degrade", &what, at);
        let failed = driver.degrade_layout(&mut array);
        self.progress.finish(est.fail_s);
        if let Err(e) = failed {
            let left = (1 + reruns.len(), reruns_s + est.rebuild_s);
            return self.stop(rec, at, "degrade", e, left);
        }
        self.degraded_reruns(rec, at, &reruns)?;

        // Rebuild onto the failed device, wiped, or onto the spare.
        let (id, what) = match &spare {
            Some(s) => (
                REBUILD_SPARE,
                format!(
                    "rebuild of {} onto the spare {}",
                    last.display(),
                    s.display()
                ),
            ),
            None => (REBUILD, format!("rebuild onto {}, wiped", last.display())),
        };
        self.array_step(id, &what, at);
        let watch = Watch::start(&all);
        let tick = percent_tick(&self.progress, self.step_label(at, id));
        let rebuilt = driver.rebuild_layout(&array, &tick);
        drop(tick);
        self.progress.finish(est.rebuild_s);
        match rebuilt {
            Ok(s) => self.per_gib(rec, at, id, s, used, watch.note()),
            Err(e) => self.stop(rec, at, id, e, (0, 0.0)),
        }
    }

    /// The progress line's label of the phase's step `what` (its tool's percent follows).
    fn step_label(&self, at: &StepAt<'_>, what: &str) -> String {
        format!(
            "round {}/{} · {} · {what}",
            at.round, self.inv.plan.rounds, at.setup.name
        )
    }

    /// The read-only I/O workloads again on the degraded layout, each as `<id>-degraded`.
    fn degraded_reruns(
        &mut self,
        rec: &mut RoundRecord,
        at: &StepAt<'_>,
        reruns: &[WorkloadSpec],
    ) -> crate::Result<()> {
        let (setup, round, rounds) = (at.setup, at.round, self.inv.plan.rounds);
        for w in reruns {
            crate::cancel::check()?;
            let id = format!("{}{DEGRADED}", w.id);
            let w_est = eta::workload_seconds(&self.inv.plan, w, &setup.fs);
            self.progress.start(round, rounds, &setup.name, &id);
            let mut step = self.empty(setup, round);
            let ran = self.run_workload(w, at);
            self.progress.finish(w_est);
            match ran {
                Ok(out) => {
                    for n in &out.notes {
                        step.notes.push(Warning {
                            setup: setup.name.clone(),
                            round,
                            message: format!("{id}: {n}"),
                        });
                    }
                    for wa in &out.warnings {
                        step.warnings.push(Warning {
                            setup: setup.name.clone(),
                            round,
                            message: format!("{id}: {}", wa.message),
                        });
                    }
                    add_output(&mut step, &setup.name, &id, round, out)
                }
                Err(crate::Error::Interrupted) => return Err(crate::Error::Interrupted),
                Err(e) => {
                    self.fail(rec, setup, round, &id, &e.to_string())?;
                    continue;
                }
            }
            self.commit(rec, &id, step)?;
        }
        Ok(())
    }

    /// A step of the phase begins: a line of its own (it may take minutes on a large
    /// array) and the progress step.
    fn array_step(&mut self, id: &str, what: &str, at: &StepAt<'_>) {
        self.progress.note(&format!(
            "fsbench: {} round {}: {what}",
            at.setup.name, at.round
        ));
        self.progress
            .start(at.round, self.inv.plan.rounds, &at.setup.name, id);
    }

    /// Record `seconds` and seconds per GiB of `used` bytes under step `id`, with the
    /// per-device note.
    fn per_gib(
        &mut self,
        rec: &mut RoundRecord,
        at: &StepAt<'_>,
        id: &str,
        seconds: f64,
        used: u64,
        per_device: Option<String>,
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
        if let Some(n) = per_device {
            step.notes.push(Warning {
                setup: at.setup.name.clone(),
                round: at.round,
                message: format!("{id}: {n}"),
            });
        }
        self.commit(rec, id, step)
    }

    /// A step of the phase failed: record it and end the phase (the release still runs);
    /// the `(steps, estimated seconds)` it will not run count as done.
    fn stop(
        &mut self,
        rec: &mut RoundRecord,
        at: &StepAt<'_>,
        id: &str,
        e: crate::Error,
        (steps, weight): (usize, f64),
    ) -> crate::Result<()> {
        if matches!(e, crate::Error::Interrupted) || crate::cancel::requested() {
            return Err(crate::Error::Interrupted);
        }
        self.progress.skip(steps, weight);
        self.fail(rec, at.setup, at.round, id, &e.to_string())
    }
}
