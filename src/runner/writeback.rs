//! Device writes of a workload that the engine does not count itself (every kind whose
//! registry entry says `Writes::Runner`: untar, smallfiles, fsmark, compress, layout, pgbench,
//! SQLite, fio job sections, and I/O jobs run by fio): counters before and after the workload
//! (the in-job window), then `syncfs` and a wait for quiet (the total window).
//!
//! A workload that counts its own in-job window (pgbench around its timed run, SQLite around
//! its transactions, a fio section alone in its phase) keeps that figure; its total is that
//! figure plus what the device wrote after the step until it went quiet.

use crate::measure::device::{BlockDevice, DeviceCounters};
use crate::measure::{SettleRule, quiesce};
use crate::metrics::MetricId;
use crate::metrics::registry::{
    BYTES, DEVICE_BYTES_PER_FILE, DEVICE_BYTES_PER_FILE_TOTAL, DEVICE_WRITE_BYTES,
    DEVICE_WRITE_BYTES_TOTAL, ENTRIES, PHASE_DEVICE_WRITE_BYTES, WRITE_AMPLIFICATION,
    WRITE_AMPLIFICATION_TOTAL,
};
use crate::workload::{Metric, WorkloadOutput};
use std::path::Path;

/// Counters taken just before a workload started.
pub(super) struct Tracked {
    device: BlockDevice,
    /// Each member's counters (one for a single device; every device of a `raid=` layout).
    before: Vec<DeviceCounters>,
}

/// Start counting on `device` (`None` when it has no readable counters).
pub(super) fn start(device: Option<BlockDevice>) -> Option<Tracked> {
    let device = device?;
    let before = device.member_counters().ok()?;
    Some(Tracked { device, before })
}

impl Tracked {
    /// The workload ended: close the in-job window, sync and wait, and add to `out`
    /// `device_write_bytes` (unless the workload reported it), `device_write_bytes_total`,
    /// and per logical byte (`bytes`) and per file (`entries`) figures of both windows.
    pub(super) fn finish(
        self,
        fs_path: &Path,
        rule: SettleRule,
        out: &mut WorkloadOutput,
    ) -> crate::Result<()> {
        let Ok(end_members) = self.device.member_counters() else {
            return Ok(());
        };
        let end = DeviceCounters::sum(&end_members);
        // Sections that ran concurrently share one phase figure: no per-section total.
        if has(out, PHASE_DEVICE_WRITE_BYTES) {
            return Ok(());
        }
        let in_job = match get(out, DEVICE_WRITE_BYTES) {
            Some(own) => own as u64,
            None => DeviceCounters::sum(&self.before).delta(&end).write_bytes,
        };
        let settled = match quiesce::settle(&self.device, fs_path, end, rule) {
            Ok(s) => s,
            Err(crate::Error::Interrupted) => return Err(crate::Error::Interrupted),
            Err(e) => {
                out.notes
                    .push(format!("no device total after the job: {e}"));
                self.note_members(&end_members, out);
                return Ok(());
            }
        };
        // Each device's share of the total window (the job and its write-back), the one a
        // pool's writes land in (zfs-fuse commits after the job).
        let after = self.device.member_counters().unwrap_or(end_members);
        self.note_members(&after, out);
        if !settled.quiet {
            out.notes.push(format!(
                "the device was still writing {:?} after the job; the total counts what it wrote until then",
                rule.cap
            ));
        }
        add_metrics(out, in_job, in_job + settled.after.write_bytes);
        Ok(())
    }

    /// The `per device:` note of a multi-device filesystem, from the start to `now`.
    fn note_members(&self, now: &[DeviceCounters], out: &mut WorkloadOutput) {
        let per = self.device.per_member(&self.before, now);
        out.notes
            .extend(crate::measure::device::per_member_note(&per));
    }
}

fn get(out: &WorkloadOutput, name: MetricId) -> Option<f64> {
    out.metrics
        .iter()
        .find(|m| m.metric == name)
        .map(|m| m.value)
}

fn has(out: &WorkloadOutput, name: MetricId) -> bool {
    get(out, name).is_some()
}

/// The logical bytes the device bytes are divided by: the workload's `bytes`, else what its
/// own write amplification was computed over (pgbench: WAL + data).
fn logical_bytes(out: &WorkloadOutput) -> Option<f64> {
    get(out, BYTES).filter(|b| *b > 0.0).or_else(|| {
        let wa = get(out, WRITE_AMPLIFICATION).filter(|w| *w > 0.0)?;
        Some(get(out, DEVICE_WRITE_BYTES)? / wa).filter(|b| *b > 0.0)
    })
}

/// Add the device figures of both windows to `out`.
fn add_metrics(out: &mut WorkloadOutput, in_job: u64, total: u64) {
    let mut add = Vec::new();
    if !has(out, DEVICE_WRITE_BYTES) {
        add.push(Metric::new(DEVICE_WRITE_BYTES, "bytes", in_job as f64));
    }
    add.push(Metric::new(DEVICE_WRITE_BYTES_TOTAL, "bytes", total as f64));
    if let Some(logical) = logical_bytes(out) {
        if !has(out, WRITE_AMPLIFICATION) {
            add.push(Metric::new(
                WRITE_AMPLIFICATION,
                "ratio",
                in_job as f64 / logical,
            ));
        }
        add.push(Metric::new(
            WRITE_AMPLIFICATION_TOTAL,
            "ratio",
            total as f64 / logical,
        ));
    }
    if let Some(files) = get(out, ENTRIES).filter(|n| *n > 0.0) {
        add.push(Metric::new(
            DEVICE_BYTES_PER_FILE,
            "bytes",
            in_job as f64 / files,
        ));
        add.push(Metric::new(
            DEVICE_BYTES_PER_FILE_TOTAL,
            "bytes",
            total as f64 / files,
        ));
    }
    out.metrics.extend(add);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricId;
    use crate::metrics::registry::{
        DEVICE_BYTES_PER_FILE, DEVICE_BYTES_PER_FILE_TOTAL, DEVICE_WRITE_BYTES,
        DEVICE_WRITE_BYTES_TOTAL, WRITE_AMPLIFICATION, WRITE_AMPLIFICATION_TOTAL,
    };

    #[test]
    fn both_windows_per_byte_and_per_file() {
        let mut out = WorkloadOutput {
            metrics: vec![
                Metric::new(BYTES, "bytes", 1000.0),
                Metric::new(ENTRIES, "files", 10.0),
            ],
            ..Default::default()
        };
        add_metrics(&mut out, 1500, 4000);
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert_eq!(get(DEVICE_WRITE_BYTES), 1500.0);
        assert_eq!(get(DEVICE_WRITE_BYTES_TOTAL), 4000.0);
        assert_eq!(get(WRITE_AMPLIFICATION), 1.5);
        assert_eq!(get(WRITE_AMPLIFICATION_TOTAL), 4.0);
        assert_eq!(get(DEVICE_BYTES_PER_FILE), 150.0);
        assert_eq!(get(DEVICE_BYTES_PER_FILE_TOTAL), 400.0);
    }

    #[test]
    fn own_amplification_gives_the_denominator_of_the_total() {
        // pgbench: 300 device bytes over 100 of WAL + data.
        let mut out = WorkloadOutput {
            metrics: vec![
                Metric::new(DEVICE_WRITE_BYTES, "bytes", 300.0),
                Metric::new(WRITE_AMPLIFICATION, "x", 3.0),
            ],
            ..Default::default()
        };
        add_metrics(&mut out, 300, 500);
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert_eq!(get(DEVICE_WRITE_BYTES_TOTAL), 500.0);
        assert_eq!(get(WRITE_AMPLIFICATION_TOTAL), 5.0);
    }

    #[test]
    fn keeps_what_the_workload_measured_itself() {
        let mut out = WorkloadOutput {
            metrics: vec![Metric::new(DEVICE_WRITE_BYTES, "bytes", 7.0)],
            ..Default::default()
        };
        add_metrics(&mut out, 1500, 4000);
        let n = |name: MetricId| out.metrics.iter().filter(|m| m.metric == name).count();
        assert_eq!(n(DEVICE_WRITE_BYTES), 1);
        assert_eq!(n(DEVICE_WRITE_BYTES_TOTAL), 1);
        assert_eq!(n(WRITE_AMPLIFICATION_TOTAL), 0, "no logical bytes known");
    }
}
