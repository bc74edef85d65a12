//! Which metrics `compare` may call better or worse: one table, keyed on exact metric ids.
//!
//! Some recorded values are not measurements of how good a setup is. A time-based job that ran
//! slower simply wrote fewer bytes and issued fewer fsyncs, so "device bytes −16 %: better"
//! next to "IOPS −20 %: worse" is one fact counted twice with opposite signs. Sizes, inode
//! counts and corpus sizes are fixed by mkfs or by the plan. Those are shown, never judged.
//! Until metrics get a registry of their own this table is the one place that knows; an id that
//! is not listed is shown and not judged, so a new metric is never called better by accident.

/// What kind of quantity a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A measurement of the setup: judged.
    Measured,
    /// Follows from another metric of the same job; shown, not judged.
    Derived(&'static str),
    /// Fixed by mkfs, the plan or a setting; shown, not judged.
    Fact,
}

const BW: &str = "IOPS × block size (or size / seconds), which is judged instead";
const RATE: &str = "a fixed count divided by the time, which is judged instead";

/// Every metric id fsbench records, with its role. Per-side ids of a mixed job (`read_…`,
/// `write_…`) and merged-histogram tails (`…_merged`) are listed explicitly, not derived from
/// substrings, so the table can move into a metric registry unchanged.
pub const ROLES: &[(&str, Role)] = &[
    // I/O jobs (workload::io).
    ("iops", Role::Measured),
    ("read_iops", Role::Measured),
    ("write_iops", Role::Measured),
    // Bandwidth is IOPS × block size in an I/O job and size / seconds in a timed step:
    // judging it too would count one finding twice.
    ("bw_mib_s", Role::Derived(BW)),
    ("read_bw_mib_s", Role::Derived(BW)),
    ("write_bw_mib_s", Role::Derived(BW)),
    ("lat_p50_ms", Role::Measured),
    ("lat_p99_ms", Role::Measured),
    ("lat_p99_9_ms", Role::Measured),
    ("read_lat_p50_ms", Role::Measured),
    ("read_lat_p99_ms", Role::Measured),
    ("read_lat_p99_9_ms", Role::Measured),
    ("write_lat_p50_ms", Role::Measured),
    ("write_lat_p99_ms", Role::Measured),
    ("write_lat_p99_9_ms", Role::Measured),
    ("lat_p50_ms_merged", Role::Measured),
    ("lat_p99_ms_merged", Role::Measured),
    ("lat_p99_9_ms_merged", Role::Measured),
    ("read_lat_p50_ms_merged", Role::Measured),
    ("read_lat_p99_ms_merged", Role::Measured),
    ("read_lat_p99_9_ms_merged", Role::Measured),
    ("write_lat_p50_ms_merged", Role::Measured),
    ("write_lat_p99_ms_merged", Role::Measured),
    ("write_lat_p99_9_ms_merged", Role::Measured),
    ("cpu_util", Role::Measured),
    ("write_amplification", Role::Measured),
    (
        "device_write_bytes",
        Role::Derived(
            "the amount the job wrote (less when a time-based job ran slower); \
             write_amplification is judged instead",
        ),
    ),
    ("fsyncs", Role::Derived("the job's rate × its runtime")),
    // Times and rates of metadata, layout, compression and probe steps.
    ("seconds", Role::Measured),
    ("create_seconds", Role::Measured),
    ("sync_seconds", Role::Measured),
    ("read_seconds", Role::Measured),
    ("grow_seconds", Role::Measured),
    ("shrink_seconds", Role::Measured),
    // A fixed number of entries divided by the time: the time is judged.
    ("ops_per_s", Role::Derived(RATE)),
    ("create_files_per_s", Role::Derived(RATE)),
    ("read_files_per_s", Role::Derived(RATE)),
    ("compress_ratio", Role::Measured),
    ("scaling_factor", Role::Measured),
    ("peak_memory_bytes", Role::Measured),
    // Fixed by mkfs, the corpus or the plan.
    ("entries", Role::Fact),
    ("bytes", Role::Fact),
    ("size_bytes", Role::Fact),
    ("avail_bytes", Role::Fact),
    ("inodes_total", Role::Fact),
    ("inodes_free", Role::Fact),
    ("memory_cap_bytes", Role::Fact),
];

/// The role of a metric id; `None` when the table does not know it.
pub fn role(metric_id: &str) -> Option<Role> {
    ROLES
        .iter()
        .find(|(id, _)| *id == metric_id)
        .map(|(_, r)| *r)
}

/// Whether `compare` judges this metric (better / worse / no change beyond noise).
pub fn judged(metric_id: &str) -> bool {
    role(metric_id) == Some(Role::Measured)
}

/// Why a metric is not judged, for the output (`None` when it is judged).
pub fn why_not_judged(metric_id: &str) -> Option<String> {
    match role(metric_id) {
        Some(Role::Measured) => None,
        Some(Role::Derived(from)) => Some(format!("follows from {from}")),
        Some(Role::Fact) => Some("a fixed fact, not a measurement".into()),
        None => Some("not in the table of judged metrics (stats::judged)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_and_derived_quantities_are_not_judged() {
        assert!(judged("iops"));
        assert!(judged("write_lat_p99_ms_merged"));
        assert!(!judged("device_write_bytes"));
        assert!(!judged("fsyncs"));
        assert!(!judged("inodes_total"));
        assert!(!judged("size_bytes"));
        assert!(!judged("bw_mib_s") && !judged("ops_per_s"));
        assert!(judged("seconds") && judged("read_iops"));
        // Exact ids, not substrings: an unknown id that merely contains "iops" is not judged.
        assert!(!judged("iops_but_new"));
        assert!(
            why_not_judged("iops_but_new")
                .unwrap()
                .contains("not in the table")
        );
        let mut ids: Vec<&str> = ROLES.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ROLES.len(), "every id once");
    }
}
