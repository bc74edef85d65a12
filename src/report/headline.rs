//! The headline table in seed 000's layout: one row per test with the metric the seed quotes
//! (IOPS for 4K jobs, MiB/s for 1M jobs and the layout, ms for p99, seconds for metadata),
//! columns = setups.
//!
//! The rows are the ones the workload kinds declare ([`registry::headlines`]), in the seed's
//! order; each one is a copy of the judged row from [`super::model`], so winners and ties are
//! the same everywhere.
//! The unit in the label is the row's own (from the metric registry), so it cannot disagree
//! with the numbers.

use super::model::{Row, Table};
use crate::workload::registry;

/// The headline rows present in `tables`, relabelled, in the seed's order; then the
/// judged throughput of every workload in the databases table (TPS of pgbench and SQLite, or
/// of any workload the registry puts there), under its own label, unless a kind's own
/// headline row already shows it.
pub fn rows(tables: &[Table]) -> Vec<Row> {
    let mut out = seed_rows(tables);
    let databases: Vec<Row> = tables
        .iter()
        .filter(|t| t.kind == super::model::TableKind::Applications)
        .flat_map(|t| t.rows.iter())
        .filter(|r| {
            r.class == crate::metrics::Class::Throughput && r.role == crate::metrics::Role::Measured
        })
        .filter(|r| {
            !out.iter()
                .any(|o| o.workload == r.workload && o.metric == r.metric)
        })
        .cloned()
        .collect();
    out.extend(databases);
    out
}

fn seed_rows(tables: &[Table]) -> Vec<Row> {
    registry::headlines()
        .into_iter()
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
