//! Time estimates for a plan, printed up front and driving the progress bar's ETA.
//!
//! I/O jobs are exact (ramp + runtime); everything else uses constants calibrated on the
//! project's 2-core VM (kernel 6.18, image on virtio) from the step timestamps of real runs
//! (`[  12s] [3/40] round …` lines on a non-terminal stderr) and the steps' own `seconds`.
//! The calibration runs are seven quick-profile runs on a quiet host (2026-12-02/03, load
//! average under 2, 70k-entry corpus): three of ext4, XFS and Btrfs at five rounds (7 min 58 s
//! to 8 min 07 s, where the previous constants predicted 10 min 35 s) and four of those and
//! zfs-fuse at three rounds (9 min 23 s typical, predicted 10 min 03 s). Each constant is fitted
//! to the mean time of its steps from one step's start line to the next's, so it includes what
//! the step does around its measured part (cache drops, syncfs, the quiet wait after writes,
//! unmount after the last step). On a loaded host the estimate is low; the doctor's load
//! warning says so. `fsbench run` prints the real time beside the estimate at the end and
//! records both in `results.json` (`host.extra.estimated_s`, `host.extra.elapsed_s`).

use super::{Plan, WorkloadSpec};
use crate::workload::registry::{self, CorpusStep, Cost, Phase, Writes};
use std::time::Duration;

/// Overhead of an I/O step beyond its job: drop caches, open, sync, device counters (the
/// quick profile's read-only 2 s + 0.3 s jobs took 2.33 s as steps on average, its writing
/// ones 3.5 s with their quiet wait).
const IO_STEP: f64 = 0.05;
/// Extra write-back after a buffered (not O_DIRECT) job.
const BUFFERED_EXTRA: f64 = 2.0;
/// Overhead of any other step (usable-space, a statvfs, took under 0.1 s as a step).
const PER_STEP: f64 = 0.05;
/// Effective layout bandwidth, bytes/s, including its sync and the cache drop after it (the
/// quick profile's 256 MiB layout took 1.1–2.4 s as a step with its quiet wait).
const LAYOUT_BPS: f64 = 350.0 * 1048576.0;
/// Seconds per corpus unit (one copy at scale 1.0, ≈35k entries) on ext4, fitted to the
/// calibration runs' step times (two copies, 27 steps each): untar 3.4 s as a step (2.1–2.6 s
/// of it the measured unpack, the rest its quiet wait), cold find 2.2 s (0.7–1.0 s the walk;
/// its freeze/thaw and two cache drops are `FIND_FIXED`), rm -rf 1.5 s (0.8–1.0 s the
/// removal; the quiet wait after a slot's last step is short). Per-filesystem factors are the
/// drivers' `Caps::eta.meta`.
const UNTAR_S: f64 = 1.2;
const FIND_S: f64 = 0.4;
const FIND_FIXED: f64 = 1.3;
const RM_S: f64 = 0.22;
/// Seconds per small file made one by one, without and with an fsync each: smallfiles
/// (create, sync, read, delete) and fsmark (create, write, fsync). From the quiet claims run
/// of 2026-12-02 (ext4, XFS, Btrfs, and zfs-fuse for fsmark; four rounds): the steps' median
/// time less their overhead, 8.5 s − 1.05 s for 50,000 files and 6.5 s − 1.05 s for 10,000
/// fsync'd files. Btrfs took about 1.6 times the others; one constant covers them all (the
/// earlier 25 s per step, from slower builds of these workloads, made the claims profile's
/// estimate 26 % high).
const FILE_S: f64 = 149e-6;
const FSYNC_FILE_S: f64 = 545e-6;
/// A capability probe (builds and checks its own small filesystem).
const PROBE_S: f64 = 3.0;
/// The reading of the disk beside the image before an I/O job (`runner::disk_ref`): its
/// 0.5 s and the engine's start and stop around it.
const DISK_REF_S: f64 = 0.6;
/// Metadata time relative to ext4 per filesystem and step (untar, cold find, rm -rf) is its
/// driver's `Caps::eta.meta`, from the same calibration run's medians: one factor per
/// filesystem cannot fit (zfs-fuse walks a cold tree ten times slower than ext4 but unpacks it
/// only 3.6 times slower). A name no driver has counts as ext4. Looked up by name because an
/// estimate is of a plan as data (`fsbench plan`, a resumed plan.json), before any driver
/// is held.
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
        Cost::Files { files, fsync } => files as f64 * if fsync { FSYNC_FILE_S } else { FILE_S },
        Cost::Probe => PROBE_S,
        Cost::Seconds(s) => s,
    };
    let disk_ref = if plan.disk_ref && w.kind == crate::plan::Kind::Io && w.record {
        DISK_REF_S
    } else {
        0.0
    };
    PER_STEP + settle + cost + disk_ref
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

/// Whether workload `w` runs again with one device failed (runner/redundancy.rs): a
/// recorded I/O job that only reads.
pub fn reruns_degraded(w: &WorkloadSpec) -> bool {
    w.record
        && w.io_job()
            .is_some_and(|io| io.rw.reads() && !io.rw.writes())
}

/// The estimate of a redundant layout's round-1 phase, step by step (runner/redundancy.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrayPhase {
    /// The scrub of the healthy array.
    pub scrub_s: f64,
    /// Failing one device.
    pub fail_s: f64,
    /// The rebuild (onto the wiped device or the spare).
    pub rebuild_s: f64,
}

impl ArrayPhase {
    /// The phase's steps apart from the degraded reruns: scrub, fail, rebuild.
    pub const STEPS: usize = 3;

    /// All three.
    pub fn total(&self) -> f64 {
        self.scrub_s + self.fail_s + self.rebuild_s
    }
}

/// The estimate of setup `setup`'s redundancy phase, `None` when it has none (no layout that
/// survives a failed device, not the first round, or no filesystem made). The data scrubbed
/// and rebuilt is about the plan's data file (what the I/O workloads leave); the constants
/// are the driver's `Caps::eta.array`. The degraded reruns are estimated as the workloads.
pub fn array_phase(
    plan: &Plan,
    setup: &super::SetupSpec,
    round: u32,
    formats: bool,
) -> Option<ArrayPhase> {
    let layout = crate::fs::layout::of_setup(setup)?;
    if round != 1 || !formats || layout.redundancy == 0 {
        return None;
    }
    let has_io = plan.workloads.iter().any(|w| w.io_job().is_some());
    let gib = if has_io {
        plan.file_size as f64 / (1u64 << 30) as f64
    } else {
        0.0
    };
    let a = setup.caps().eta.array;
    Some(ArrayPhase {
        scrub_s: PER_STEP + a.scrub_s + a.scrub_s_per_gib * gib,
        fail_s: PER_STEP + a.fail_s,
        rebuild_s: PER_STEP + a.rebuild_s + a.rebuild_s_per_gib * gib,
    })
}

/// The workloads setup `setup` runs again degraded in round `round` (none outside round 1
/// or without a redundant layout).
pub fn degraded_reruns<'a>(
    plan: &'a Plan,
    setup: &'a super::SetupSpec,
    round: u32,
    formats: bool,
) -> impl Iterator<Item = &'a WorkloadSpec> + 'a {
    let on = array_phase(plan, setup, round, formats).is_some();
    plan.workloads
        .iter()
        .filter(move |w| on && reruns_degraded(w) && registry::step_in_round(w, &setup.name, round))
}

/// Estimated seconds of one setup-round (probes count in the first round only; a redundant
/// layout's scrub, degraded reruns and rebuild in the first round too).
pub fn setup_round_seconds(plan: &Plan, setup: usize, round: u32, formats: bool) -> f64 {
    let st = &plan.setups[setup];
    let array = array_phase(plan, st, round, formats).map_or(0.0, |a| a.total())
        + degraded_reruns(plan, st, round, formats)
            .map(|w| workload_seconds(plan, w, &st.fs))
            .sum::<f64>();
    array + setup_round_seconds_without_array(plan, setup, round, formats)
}

fn setup_round_seconds_without_array(plan: &Plan, setup: usize, round: u32, formats: bool) -> f64 {
    let fs = &plan.setups[setup].fs;
    // mkfs is part of the setup (its step overhead counts every round).
    let in_round = |w: &&WorkloadSpec| {
        registry::of(w.kind).needs(w).phase == Phase::Setup
            || registry::step_in_round(w, &plan.setups[setup].name, round)
    };
    // Aging (`age=`) after mkfs: every round, or a restore of the image kept in the first.
    let age = plan.setups[setup].age.filter(|_| formats).map_or(0.0, |a| {
        a.round_seconds(fs, plan.file_size, round, plan.rounds)
    });
    setup_overhead_seconds(plan, fs, formats)
        + age
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
    fn a_redundant_layout_adds_its_array_phase_to_round_one() {
        let mut setups = vec![crate::fs::SetupSpec::plain("btrfs")];
        let mut raid = crate::fs::SetupSpec::plain("btrfs");
        raid.name = "b1".into();
        raid.raid = Some("raid1".into());
        setups.push(raid);
        let mut r0 = crate::fs::SetupSpec::plain("btrfs");
        r0.name = "b0".into();
        r0.raid = Some("raid0".into());
        setups.push(r0);
        let mut plan = crate::plan::test_plan(setups, 2);
        plan.file_size = 1 << 30;
        let extra = |i: usize| {
            setup_round_seconds(&plan, i, 1, true)
                - setup_round_seconds_without_array(&plan, i, 1, true)
        };
        // Only the layout that survives a failed device, only in round 1, only when formatted.
        assert_eq!(extra(0), 0.0);
        assert_eq!(extra(2), 0.0);
        assert!(array_phase(&plan, &plan.setups[1], 2, true).is_none());
        assert!(array_phase(&plan, &plan.setups[1], 1, false).is_none());
        let a = array_phase(&plan, &plan.setups[1], 1, true).unwrap();
        let c = crate::fs::BTRFS.caps.eta.array;
        // One GiB of data: the per-GiB constants once each.
        assert!((a.scrub_s - (PER_STEP + c.scrub_s + c.scrub_s_per_gib)).abs() < 1e-9);
        assert!((a.rebuild_s - (PER_STEP + c.rebuild_s + c.rebuild_s_per_gib)).abs() < 1e-9);
        let reruns: Vec<&str> = degraded_reruns(&plan, &plan.setups[1], 1, true)
            .map(|w| w.id.as_str())
            .collect();
        assert!(
            reruns.contains(&"randread") && !reruns.contains(&"randwrite"),
            "{reruns:?}"
        );
        let rerun_s: f64 = degraded_reruns(&plan, &plan.setups[1], 1, true)
            .map(|w| workload_seconds(&plan, w, "btrfs"))
            .sum();
        assert!((extra(1) - a.total() - rerun_s).abs() < 1e-9);
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format(Duration::from_secs(45)), "45 s");
        assert_eq!(format(Duration::from_millis(300)), "0.3 s");
        assert_eq!(format(Duration::from_secs(510)), "8 min 30 s");
        assert_eq!(format(Duration::from_secs(3720)), "1 h 02 min");
    }
}
