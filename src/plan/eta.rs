//! Time estimates for a plan, printed up front and driving the progress bar's ETA.
//!
//! They are deliberately rough: I/O jobs are exact (ramp + runtime), everything else uses
//! conservative guesses for a small VM (layout at 200 MiB/s, btrfs/zfs mkfs slower).

use super::{Kind, Plan, WorkloadSpec};
use std::time::Duration;

/// Fixed overhead per workload: sync, drop caches, process bookkeeping.
const PER_STEP: f64 = 1.0;
/// Assumed layout bandwidth for the estimate, bytes/s.
const LAYOUT_BPS: f64 = 200.0 * 1048576.0;

/// Estimated seconds of one workload.
pub fn workload_seconds(plan: &Plan, w: &WorkloadSpec) -> f64 {
    let io = w.io.as_ref();
    let timed = || {
        let p = io.expect("io workloads carry params");
        p.runtime.unwrap_or(plan.runtime).as_secs_f64() + p.ramp.unwrap_or(plan.ramp).as_secs_f64()
    };
    let corpus = f64::from(plan.corpus.copies.max(1)) * plan.corpus.scale.max(0.01);
    // A writing workload is followed by syncfs and at least one quiet window.
    let writes = w.kind.write_accounting() != super::WriteAccounting::None
        && io.is_none_or(|p| p.rw.writes());
    let settle = if writes {
        plan.quiet.after_job().window.as_secs_f64()
    } else {
        0.0
    };
    PER_STEP
        + settle
        + match w.kind {
            Kind::Mkfs | Kind::UsableSpace => 0.0,
            Kind::Layout => io.and_then(|p| p.size).unwrap_or(plan.file_size) as f64 / LAYOUT_BPS,
            Kind::Io | Kind::Memcap => timed(),
            Kind::Untar => 8.0 * corpus,
            Kind::FindCold => 2.0 * corpus,
            Kind::RmTree => 4.0 * corpus,
            Kind::Smallfiles | Kind::Fsmark => 10.0,
            Kind::Probe => 10.0,
            Kind::Compress => w.size.unwrap_or(256 << 20) as f64 / LAYOUT_BPS * 2.0,
            // initdb, start, stop and two checkpoints ≈ 15 s; `pgbench -i` ≈ 3 s per scale unit.
            Kind::Pgbench => w.pgbench.as_ref().map_or(30.0, |p| {
                15.0 + 3.0 * f64::from(p.scale)
                    + p.duration.unwrap_or(plan.runtime).as_secs_f64().ceil()
            }),
            // About 200 durable transactions per second on a small VM's disk.
            Kind::Sqlite => w
                .sqlite
                .as_ref()
                .map_or(10.0, |p| 1.0 + f64::from(p.transactions) / 200.0),
            Kind::FioJob => w.fio_job.as_ref().map_or(0.0, |j| j.estimate_seconds()),
        }
}

/// Estimated seconds to create, mount, settle and release one setup.
pub fn setup_overhead_seconds(plan: &Plan, fs: &str, formats: bool) -> f64 {
    if !formats {
        return 1.0;
    }
    let mkfs = match fs {
        "btrfs" => 4.0,
        "zfs" => 5.0,
        _ => 2.0,
    };
    // The quiet wait lasts at least one window.
    mkfs + plan.quiet.window.as_secs_f64() + 2.0
}

/// Estimated seconds of one setup-round.
pub fn setup_round_seconds(plan: &Plan, setup: usize, formats: bool) -> f64 {
    setup_overhead_seconds(plan, &plan.setups[setup].fs, formats)
        + plan
            .workloads
            .iter()
            .map(|w| workload_seconds(plan, w))
            .sum::<f64>()
}

/// Estimated duration of the whole plan.
pub fn total(plan: &Plan, formats: bool) -> Duration {
    let per_round: f64 = (0..plan.setups.len())
        .map(|s| setup_round_seconds(plan, s, formats))
        .sum();
    Duration::from_secs_f64(per_round * f64::from(plan.rounds))
}

/// `1 h 02 min`, `8 min 30 s`, `45 s`.
pub fn format(d: Duration) -> String {
    let s = d.as_secs();
    if s < 10 && d.subsec_millis() != 0 {
        return format!("{:.1} s", d.as_secs_f64());
    }
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
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
