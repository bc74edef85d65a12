//! The headline table in seed 000's layout: one row per test with the metric the seed quotes
//! (IOPS for 4K jobs, MiB/s for 1M jobs, ms for p99, seconds for metadata), columns = setups.
//!
//! The rows are chosen from a data table ([`HEADLINES`]), in the seed's order; each one is a
//! copy of the judged row from [`super::model`], so winners and ties are the same everywhere.

use super::model::{Row, Table};

/// One headline test: the workload and metric it shows and the seed-style label.
pub struct Headline {
    /// Workload id.
    pub workload: &'static str,
    /// Metric names, first recorded one wins (engines name the fsync rate differently).
    pub metrics: &'static [&'static str],
    /// Label in seed 000's words (with its unit).
    pub label: &'static str,
}

const fn h(
    workload: &'static str,
    metrics: &'static [&'static str],
    label: &'static str,
) -> Headline {
    Headline {
        workload,
        metrics,
        label,
    }
}

/// Seed 000's tables, in its order (I/O first, then metadata and capacity).
pub const HEADLINES: &[Headline] = &[
    h("randread", &["iops"], "4K random read, IOPS"),
    h("randwrite", &["iops"], "4K random write, IOPS"),
    h("randrw70", &["read_iops"], "70/30 random mix, read IOPS"),
    h("randrw70", &["write_iops"], "70/30 random mix, write IOPS"),
    h(
        "fsync-write",
        &["ops_per_s", "iops"],
        "4K write + fsync, ops/s",
    ),
    h("randread", &["lat_p99_ms"], "Random read p99, ms"),
    h("randwrite", &["lat_p99_ms"], "Random write p99, ms"),
    h("seqread", &["bw_mib_s"], "1M sequential read, MiB/s"),
    h("seqwrite", &["bw_mib_s"], "1M sequential write, MiB/s"),
    h("layout", &["seconds"], "Write the test file, s"),
    h("untar", &["seconds"], "Untar the corpus, s"),
    h("find-cold", &["seconds"], "find, cold cache, s"),
    // Caches could not be dropped (no root): the walk is recorded and labelled warm.
    h(
        "find-warm",
        &["seconds"],
        "find over the tree, warm cache (caches could not be dropped), s",
    ),
    h("rm-tree", &["seconds"], "rm -rf the tree, s"),
    h("mkfs", &["seconds"], "mkfs / zpool create, s"),
    h("usable-space", &["avail_bytes"], "Usable space (df)"),
];

/// The headline rows present in `tables`, relabelled, in [`HEADLINES`] order.
pub fn rows(tables: &[Table]) -> Vec<Row> {
    HEADLINES
        .iter()
        .filter_map(|hl| {
            let all = || tables.iter().flat_map(|t| t.rows.iter());
            hl.metrics
                .iter()
                .find_map(|m| all().find(|r| r.workload == hl.workload && r.metric == *m))
                .map(|r| Row {
                    label: hl.label.to_string(),
                    ..r.clone()
                })
        })
        .collect()
}
