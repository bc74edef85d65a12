//! The headline table in seed 000's layout: one row per test with the metric the seed quotes
//! (IOPS for 4K jobs, MiB/s for 1M jobs and the layout, ms for p99, seconds for metadata),
//! columns = setups.
//!
//! The rows are chosen from a data table ([`HEADLINES`]), in the seed's order; each one is a
//! copy of the judged row from [`super::model`], so winners and ties are the same everywhere.
//! The unit in the label is the row's own (from the metric registry), so it cannot disagree
//! with the numbers.

use super::model::{Row, Table};

/// One headline test: the workload and metric it shows and the seed-style label.
pub struct Headline {
    /// Workload id.
    pub workload: &'static str,
    /// Metric names, first recorded one wins (engines name the fsync rate differently).
    pub metrics: &'static [&'static str],
    /// Label in seed 000's words; the row's unit goes where `{unit}` is, else after a comma.
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
    h("randread", &["iops"], "4K random read"),
    h("randwrite", &["iops"], "4K random write"),
    h("randrw70", &["read_iops"], "70/30 random mix, read {unit}"),
    h(
        "randrw70",
        &["write_iops"],
        "70/30 random mix, write {unit}",
    ),
    h("fsync-write", &["ops_per_s", "iops"], "4K write + fsync"),
    h("randread", &["lat_p99_ms"], "Random read p99"),
    h("randwrite", &["lat_p99_ms"], "Random write p99"),
    h("seqread", &["bw_mib_s"], "1M sequential read"),
    h("seqwrite", &["bw_mib_s"], "1M sequential write"),
    // Older files may lack the layout's bandwidth: its time then stands in.
    h("layout", &["bw_mib_s", "seconds"], "Write the test file"),
    h("untar", &["seconds"], "Untar the corpus"),
    h("find-cold", &["seconds"], "find, cold cache"),
    // Caches could not be dropped (no root): the walk is recorded and labelled warm.
    h(
        "find-warm",
        &["seconds"],
        "find over the tree, warm cache (caches could not be dropped)",
    ),
    h("rm-tree", &["seconds"], "rm -rf the tree"),
    h("mkfs", &["seconds"], "mkfs / zpool create"),
    h("usable-space", &["avail_bytes"], "Usable space (df)"),
];

/// The headline rows present in `tables`, relabelled, in [`HEADLINES`] order; then the
/// judged throughput of every workload in the databases table (TPS of pgbench and SQLite, or
/// of any workload the registry puts there), under its own label.
pub fn rows(tables: &[Table]) -> Vec<Row> {
    let mut out = seed_rows(tables);
    let databases = tables
        .iter()
        .filter(|t| t.kind == super::model::TableKind::Applications)
        .flat_map(|t| t.rows.iter())
        .filter(|r| {
            r.class == crate::metrics::Class::Throughput && r.role == crate::metrics::Role::Measured
        });
    out.extend(databases.cloned());
    out
}

fn seed_rows(tables: &[Table]) -> Vec<Row> {
    HEADLINES
        .iter()
        .filter_map(|hl| {
            let all = || tables.iter().flat_map(|t| t.rows.iter());
            hl.metrics
                .iter()
                .find_map(|m| all().find(|r| r.workload == hl.workload && r.metric == *m))
                .map(|r| Row {
                    label: with_unit(hl.label, r),
                    ..r.clone()
                })
        })
        .collect()
}

/// "4K random read, IOPS": the label and the row's unit, unless the values carry their own
/// (sizes are written in GiB/MiB, yes/no is a word).
fn with_unit(label: &str, r: &Row) -> String {
    let own = matches!(
        crate::metrics::def(&r.metric).format,
        crate::metrics::Format::Bytes | crate::metrics::Format::YesNo
    );
    if label.contains("{unit}") {
        label.replace("{unit}", &r.unit)
    } else if own || r.unit.is_empty() {
        label.to_string()
    } else {
        format!("{label}, {}", r.unit)
    }
}
