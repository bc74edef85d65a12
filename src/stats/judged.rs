//! Which metrics `compare` may call better or worse, read from the metric registry
//! ([`crate::metrics`]), with the job's shape taken into account.
//!
//! Some recorded values are not measurements of how good a setup is. A time-based job that ran
//! slower simply wrote fewer bytes and issued fewer fsyncs, so "device bytes −16 %: better"
//! next to "IOPS −20 %: worse" is one fact counted twice with opposite signs. Sizes, inode
//! counts and corpus sizes are fixed by mkfs or by the plan. Those are shown, never judged; and
//! of a job's IOPS and MiB/s only the one its block size is quoted in is judged (MiB/s from
//! 64 KiB blocks on). An id the registry does not know is shown and not judged, so a new metric
//! is never called better by accident.

use crate::metrics::{self, Shape};
use crate::results::Results;

pub use crate::metrics::Role;

/// The registry's role of a metric id, before a job's shape is known; `None` when unknown.
pub fn role(metric_id: &(impl AsRef<str> + ?Sized)) -> Option<Role> {
    metrics::lookup(metric_id).map(|d| d.role)
}

/// The shape of one workload in a results file: its block size (the plan's `bs`, else the
/// recorded MiB/s over IOPS, so a file with samples only works too) and which throughput
/// metrics it recorded.
pub fn shape(results: &Results, workload: &str) -> Shape {
    let has = |id: metrics::MetricId| {
        results
            .samples
            .iter()
            .any(|s| s.workload == workload && s.metric == id)
    };
    let median = |id: metrics::MetricId| {
        let mut v: Vec<f64> = results
            .samples
            .iter()
            .filter(|s| s.workload == workload && s.metric == id && s.value > 0.0)
            .map(|s| s.value)
            .collect();
        crate::stats::descriptive::sort(&mut v);
        (!v.is_empty()).then(|| crate::stats::descriptive::median_sorted(&v))
    };
    use metrics::registry::{BW_MIB_S, IOPS, SECONDS};
    let inferred = match (median(BW_MIB_S), median(IOPS)) {
        (Some(bw), Some(ops)) => Some(round_block(bw * 1048576.0 / ops)),
        _ => None,
    };
    Shape {
        block_size: declared_block_size(results, workload).or(inferred),
        has_ops: has(IOPS),
        has_bandwidth: has(BW_MIB_S),
        has_seconds: has(SECONDS),
    }
}

/// The declared block size: `params.io.bs` (bytes) as runs write it, or `params.bs` ("4k").
fn declared_block_size(results: &Results, workload: &str) -> Option<f64> {
    let p = &results.workloads.iter().find(|w| w.id == workload)?.params;
    let bs = p
        .get("io")
        .and_then(|io| io.get("bs"))
        .or_else(|| p.get("bs"))?;
    bs.as_f64().or_else(|| {
        crate::units::parse_size(bs.as_str()?)
            .ok()
            .map(|b| b as f64)
    })
}

/// A block size inferred from rates, snapped to the power of two it is within 2 % of.
fn round_block(bs: f64) -> f64 {
    let p = 2f64.powf(bs.log2().round());
    if (bs / p - 1.0).abs() < 0.02 { p } else { bs }
}

/// The role of a metric in one workload of `results`.
pub fn role_in(results: &Results, workload: &str, metric_id: &(impl AsRef<str> + ?Sized)) -> Role {
    metrics::role_in(metric_id, &shape(results, workload))
}

/// Why a metric of a workload is not judged, for the output (`None` when it is judged).
pub fn why_not_judged(
    results: &Results,
    workload: &str,
    metric_id: &(impl AsRef<str> + ?Sized),
) -> Option<String> {
    why_not(metrics::lookup(metric_id).map(|_| role_in(results, workload, metric_id)))
}

/// Why a metric with this role (`None`: not registered) is not judged; `None` when it is.
pub fn why_not(role: Option<Role>) -> Option<String> {
    match role {
        None => Some("not in the metric registry (metrics::registry)".into()),
        Some(Role::Measured) => None,
        Some(Role::Derived(from)) => Some(format!("follows from {from}")),
        Some(Role::Fact) => Some("a fixed fact, not a measurement".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Sample, WorkloadInfo};

    fn run(workload: &str, rows: &[(&str, f64)], params: serde_json::Value) -> Results {
        let mut r = Results::new();
        r.workloads.push(WorkloadInfo {
            id: workload.into(),
            kind: "io".into(),
            params,
            fio_command: None,
        });
        for (m, v) in rows {
            r.samples.push(Sample {
                setup: "ext4".into(),
                workload: workload.into(),
                metric: crate::metrics::MetricKey::parse(m),
                unit: String::new(),
                round: 1,
                value: *v,
            });
        }
        r
    }

    #[test]
    fn facts_and_derived_quantities_are_not_judged() {
        let r = run(
            "randwrite",
            &[("iops", 20_000.0), ("bw_mib_s", 78.125)],
            serde_json::Value::Null,
        );
        let judged = |m: &str| why_not_judged(&r, "randwrite", m).is_none();
        assert!(judged("iops"));
        assert!(judged("write_lat_p99_ms_merged"));
        assert!(!judged("device_write_bytes"));
        assert!(!judged("fsyncs"));
        assert!(!judged("inodes_total"));
        assert!(!judged("size_bytes"));
        assert!(!judged("bw_mib_s"));
        assert!(judged("read_iops"));
        // A fixed count per second beside the time it divides: the time is judged.
        let untar = run(
            "untar",
            &[("seconds", 0.37), ("ops_per_s", 9398.0)],
            serde_json::Value::Null,
        );
        assert!(why_not_judged(&untar, "untar", "ops_per_s").is_some());
        assert!(why_not_judged(&untar, "untar", "seconds").is_none());
        // Exact ids, not substrings: an unknown id that merely contains "iops" is not judged.
        assert!(!judged("iops_but_new"));
        assert!(
            why_not_judged(&r, "randwrite", "iops_but_new")
                .unwrap()
                .contains("not in the metric registry")
        );
    }

    #[test]
    fn the_block_size_decides_between_iops_and_mib_s() {
        // Declared as runs write it (bytes), as older files write it ("1M"), or inferred.
        for params in [
            serde_json::json!({"io": {"bs": 1048576}}),
            serde_json::json!({"bs": "1M"}),
            serde_json::Value::Null,
        ] {
            let r = run("seqread", &[("iops", 2030.0), ("bw_mib_s", 2030.0)], params);
            assert_eq!(shape(&r, "seqread").block_size, Some(1048576.0));
            assert_eq!(role_in(&r, "seqread", "bw_mib_s"), Role::Measured);
            assert!(why_not_judged(&r, "seqread", "iops").is_some());
        }
        let r = run(
            "randread",
            &[("iops", 43718.3), ("bw_mib_s", 170.77)],
            serde_json::Value::Null,
        );
        assert_eq!(shape(&r, "randread").block_size, Some(4096.0));
        assert_eq!(role_in(&r, "randread", "iops"), Role::Measured);
    }
}
