//! Time estimates for a plan, printed up front and driving the progress bar's ETA.
//!
//! I/O jobs are exact (ramp + runtime); everything else uses constants calibrated on the
//! project's 2-core VM (kernel 6.18, image on virtio) from the step timestamps of real runs
//! (`[  12s] [3/40] round …` lines on a non-terminal stderr): each I/O step costs about a
//! second beyond its job (dropping caches, syncing, opening the file), a buffered job two more
//! (its dirty pages are written back before the next step), other steps a fifth of a second;
//! the 256 MiB layout about 3 s in all. The 2026-11-30 quick run predicted 12 min 11 s and
//! took 9 min 19 s: the old constants charged 10 s for each probe (they take 1–5 s), 1 s for
//! every step and 2–5 s for mkfs (well under 1 s), but 10 s for smallfiles and fsmark (20–29 s). Metadata work scales with the
//! corpus and a per-filesystem factor ([`META_FACTOR`]: ZFS through zfs-fuse does metadata about three
//! times slower than ext4 at the default corpus). `fsbench run` prints the real time beside the estimate at the end
//! and records both in `results.json` (`host.extra.estimated_s`, `host.extra.elapsed_s`).

use super::{Plan, WorkloadSpec};
use crate::workload::registry::{self, CorpusStep, Cost, Phase, Writes};
use std::time::Duration;

/// Overhead of an I/O step beyond its job: drop caches, open, sync, device counters.
const IO_STEP: f64 = 1.0;
/// Extra write-back after a buffered (not O_DIRECT) job.
const BUFFERED_EXTRA: f64 = 2.0;
/// Overhead of any other step.
const PER_STEP: f64 = 0.2;
/// Effective layout bandwidth, bytes/s, including its sync and the cache drop after it.
const LAYOUT_BPS: f64 = 100.0 * 1048576.0;
/// Seconds per corpus unit (one copy at scale 1.0, ≈35k entries) on ext4: untar, cold find,
/// rm -rf; find-cold also drops caches twice (`FIND_FIXED`). Calibrated for the quick
/// profile's scale 1.0 from the medians of a three-round scale-1.5 run (2026-12-01, load
/// average 4–12 from other builds): ext4 steps of 8 s (untar 5.0 s), 2 s (cold find 0.9 s) and
/// 4 s (rm -rf 3.0 s). Each step's fixed part (cache drops, corpus generation, write-back) is
/// folded into the per-unit figure at scale 1.0, so the estimate is right at the default size
/// and somewhat high for much larger corpora.
const UNTAR_S: f64 = 5.1;
const FIND_S: f64 = 0.7;
const FIND_FIXED: f64 = 0.8;
const RM_S: f64 = 2.8;
/// smallfiles and fsmark at their default sizes (20–29 s each here, on ext4 and XFS alike).
const SMALL_S: f64 = 25.0;
/// A capability probe (builds and checks its own small filesystem).
const PROBE_S: f64 = 3.0;
/// Metadata time relative to ext4, per filesystem (others count as 1): the medians of the
/// metadata steps in that run, scaled to 1.0, took 11 s (ext4), 9 s (XFS), 14 s (Btrfs) and
/// 36 s (zfs-fuse) per round.
const META_FACTOR: &[(&str, f64)] = &[("xfs", 0.85), ("btrfs", 1.3), ("zfs", 3.3)];

fn meta_factor(fs: &str) -> f64 {
    META_FACTOR
        .iter()
        .find(|(n, _)| *n == fs)
        .map_or(1.0, |(_, f)| *f)
}

/// Estimated seconds of one workload on filesystem `fs`: its registry entry says what it
/// costs ([`Cost`]), the constants above what that takes here.
pub fn workload_seconds(plan: &Plan, w: &WorkloadSpec, fs: &str) -> f64 {
    let entry = registry::of(w.kind);
    let corpus =
        f64::from(plan.corpus.copies.max(1)) * plan.corpus.scale.max(0.01) * meta_factor(fs);
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
        Cost::Corpus(CorpusStep::Untar) => UNTAR_S * corpus,
        Cost::Corpus(CorpusStep::Walk) => FIND_FIXED + FIND_S * corpus,
        Cost::Corpus(CorpusStep::Remove) => RM_S * corpus,
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
    let mkfs = match fs {
        "btrfs" => 0.5,
        "zfs" => 2.0,
        _ => 0.3,
    };
    // The quiet wait lasts about one window; unmount and release about 1 s.
    mkfs + plan.quiet.window.as_secs_f64() + 1.0
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

/// Estimated duration of the whole plan.
pub fn total(plan: &Plan, formats: bool) -> Duration {
    let secs: f64 = plan
        .setup_rounds()
        .iter()
        .map(|sr| setup_round_seconds(plan, sr.setup, sr.round, formats))
        .sum();
    Duration::from_secs_f64(secs)
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
