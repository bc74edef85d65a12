//! Time estimates for a plan, printed up front and driving the progress bar's ETA.
//!
//! I/O jobs are exact (ramp + runtime); everything else uses constants calibrated on the
//! project's 2-core VM (kernel 6.18, image on virtio) from the step timestamps of real runs
//! (`[  12s] [3/40] round …` lines on a non-terminal stderr) and the steps' own `seconds`.
//! The calibration run is the quick profile on a quiet host (2026-12-01, load average under
//! 2, four filesystems, three rounds, 35k-entry corpus): it took 9 min 41 s where the
//! previous constants, fitted on a run slowed by other builds (load 4–12), predicted
//! 12 min 05 s. On a loaded host the estimate is low; the doctor's load warning says so.
//! `fsbench run` prints the real time beside the estimate at the end and records both in
//! `results.json` (`host.extra.estimated_s`, `host.extra.elapsed_s`).

use super::{Plan, WorkloadSpec};
use crate::workload::registry::{self, CorpusStep, Cost, Phase, Writes};
use std::time::Duration;

/// Overhead of an I/O step beyond its job: drop caches, open, sync, device counters (a
/// read-only 3 s + 1 s job took 4.2–4.6 s as a step).
const IO_STEP: f64 = 0.4;
/// Extra write-back after a buffered (not O_DIRECT) job.
const BUFFERED_EXTRA: f64 = 2.0;
/// Overhead of any other step.
const PER_STEP: f64 = 0.2;
/// Effective layout bandwidth, bytes/s, including its sync and the cache drop after it.
const LAYOUT_BPS: f64 = 100.0 * 1048576.0;
/// Seconds per corpus unit (one copy at scale 1.0, ≈35k entries) on ext4, from the steps'
/// medians in the calibration run: untar 2.6 s, cold find 0.6 s; rm -rf of the warm tree the
/// walk leaves 0.9 s (GNU `rm -rf` after `find` in bench/meta-vs-gnu.sh, which rm-tree
/// matches). find-cold's freeze/thaw and two cache drops cost `FIND_FIXED` on top.
const UNTAR_S: f64 = 2.6;
const FIND_S: f64 = 0.6;
const FIND_FIXED: f64 = 0.4;
const RM_S: f64 = 0.9;
/// smallfiles and fsmark at their default sizes (20–29 s each here, on ext4 and XFS alike).
const SMALL_S: f64 = 25.0;
/// A capability probe (builds and checks its own small filesystem).
const PROBE_S: f64 = 3.0;
/// Metadata time relative to ext4 per filesystem and step (untar, cold find, rm -rf) is its
/// driver's `Caps::eta.meta`, from the same calibration run's medians: one factor per
/// filesystem cannot fit (zfs-fuse walks a cold tree ten times slower than ext4 but unpacks it
/// only 3.6 times slower). A name no driver has counts as ext4.
fn meta_factor(fs: &str, step: CorpusStep) -> f64 {
    let i = match step {
        CorpusStep::Untar => 0,
        CorpusStep::Walk => 1,
        CorpusStep::Remove => 2,
    };
    crate::fs::caps::of(fs).eta.meta[i]
}

/// Estimated seconds of one workload on filesystem `fs`: its registry entry says what it
/// costs ([`Cost`]), the constants above what that takes here.
pub fn workload_seconds(plan: &Plan, w: &WorkloadSpec, fs: &str) -> f64 {
    let entry = registry::of(w.kind);
    let corpus = |step: CorpusStep| {
        f64::from(plan.corpus.copies.max(1)) * plan.corpus.scale.max(0.01) * meta_factor(fs, step)
    };
    // A writing workload is followed by syncfs and at least one quiet window.
    let settle = if entry.needs(w).writes != Writes::No {
        plan.quiet.after_job().window.as_secs_f64()
    } else {
        0.0
    };
    let cost = match entry.cost(w, &plan.job_defaults(0, None)) {
        Cost::Nothing => 0.0,
        Cost::Job {
            runtime,
            ramp,
            direct,
        } => {
            let buffered = if direct { 0.0 } else { BUFFERED_EXTRA };
            IO_STEP + buffered + runtime.as_secs_f64() + ramp.as_secs_f64()
        }
        Cost::Write {
            bytes,
            share,
            then_s,
        } => bytes as f64 / LAYOUT_BPS * share + then_s,
        Cost::Corpus(step @ CorpusStep::Untar) => UNTAR_S * corpus(step),
        Cost::Corpus(step @ CorpusStep::Walk) => FIND_FIXED + FIND_S * corpus(step),
        Cost::Corpus(step @ CorpusStep::Remove) => RM_S * corpus(step),
        Cost::SmallFiles => SMALL_S,
        Cost::Probe => PROBE_S,
        Cost::Seconds(s) => s,
    };
    PER_STEP + settle + cost
}

/// Estimated seconds to create, mount, settle and release one setup.
pub fn setup_overhead_seconds(plan: &Plan, fs: &str, formats: bool) -> f64 {
    if !formats {
        return 1.0;
    }
    // mkfs itself and what keeps the device busy after it (the driver's `Caps::eta.mkfs_s`:
    // ext4's lazy inode-table initialisation), then the quiet wait, about one window; unmount
    // and release are folded into the last step.
    crate::fs::caps::of(fs).eta.mkfs_s + plan.quiet.window.as_secs_f64()
}

/// Estimated seconds of one setup-round (probes count in the first round only).
pub fn setup_round_seconds(plan: &Plan, setup: usize, round: u32, formats: bool) -> f64 {
    let fs = &plan.setups[setup].fs;
    // mkfs is part of the setup (its step overhead counts every round).
    let in_round = |w: &&WorkloadSpec| {
        registry::of(w.kind).needs(w).phase == Phase::Setup
            || registry::step_in_round(w, &plan.setups[setup].name, round)
    };
    setup_overhead_seconds(plan, fs, formats)
        + plan
            .workloads
            .iter()
            .filter(in_round)
            .map(|w| workload_seconds(plan, w, fs))
            .sum::<f64>()
}

/// Estimated seconds of what runs once before the first setup-round (the device's
/// preconditioning with `--precondition --device`).
pub fn once_seconds(plan: &Plan) -> f64 {
    plan.precondition_device
        .map_or(0.0, crate::workload::precondition::device_estimate_s)
}

/// Estimated duration of the whole plan.
pub fn total(plan: &Plan, formats: bool) -> Duration {
    let secs: f64 = plan
        .setup_rounds()
        .iter()
        .map(|sr| setup_round_seconds(plan, sr.setup, sr.round, formats))
        .sum();
    Duration::from_secs_f64(secs + once_seconds(plan))
}

/// `1 h 02 min`, `8 min 30 s`, `45 s`.
pub fn format(d: Duration) -> String {
    crate::units::format_duration(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_durations() {
        assert_eq!(format(Duration::from_secs(45)), "45 s");
        assert_eq!(format(Duration::from_millis(300)), "0.3 s");
        assert_eq!(format(Duration::from_secs(510)), "8 min 30 s");
        assert_eq!(format(Duration::from_secs(3720)), "1 h 02 min");
    }
}
