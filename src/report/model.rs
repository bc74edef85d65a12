//! The report model: results grouped into seed-style tables with winners and ties marked.
//!
//! Exporters only format this model; every judgement (which row goes in which table, who wins,
//! what ties) is made once, here.

use crate::metrics::{self, Class, Direction, MetricKey, Role, Shown};
use crate::results::{Results, Summary};
use crate::stats::{self, judged, paired};
use crate::workload::registry::{self, Question, Table as RegistryTable};
use serde::Serialize;

/// What a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// I/O jobs: IOPS, bandwidth, fsync rate, latency.
    Io,
    /// Metadata and small files: untar, find, rm, mkfs.
    Metadata,
    /// Databases and applications: pgbench, SQLite.
    Applications,
    /// Usable space after mkfs: size, available, inodes.
    Capacity,
    /// Capability probes (reflink, snapshots, corruption detection…).
    Probes,
    /// Crash consistency: crash states, lost acknowledged operations, fsck errors.
    Crash,
    /// Secondary metrics of every workload (p50, CPU, device bytes…).
    Details,
}

/// How a cell is marked: its setup against the row's leader, by the one paired statistic
/// ([`crate::stats::paired`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Nothing to say (a derived or unranked row, or one setup alone).
    None,
    /// The leader, ahead of every other setup beyond noise (★).
    Best,
    /// The leader or a setup not separated from it: the interval of their ratio straddles 1
    /// and reaches past the margin (≈, "not separated": we do not know yet).
    Tied,
    /// Shown equivalent to the leader within the metric's margin (=, a proven tie), or the
    /// leader when every setup near it is equivalent.
    Equivalent,
    /// Behind the leader beyond noise (▽).
    Behind,
}

impl Mark {
    /// The symbol written after a value (empty for none).
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::None => "",
            Mark::Best => "★",
            Mark::Tied => "≈",
            Mark::Equivalent => "=",
            Mark::Behind => "▽",
        }
    }

    /// Whether the setup shares the lead (leader, equivalent or not separated from it).
    pub fn leads(self) -> bool {
        matches!(self, Mark::Best | Mark::Tied | Mark::Equivalent)
    }
}

/// One cell: a setup's statistics on a row's metric.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// The statistics.
    pub summary: Summary,
    /// Its mark against the row's leader.
    pub mark: Mark,
    /// The leader against this setup (ratio > 1 favours the leader; `None` for the leader
    /// itself and unranked rows): what the mark was read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versus_leader: Option<crate::stats::paired::Judgement>,
    /// Whether the job reached steady state (`--steady-state`); `None` when it did not look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
}

/// What `--steady-state` found for a cell's job, over its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Steady {
    /// Reached in every round: the figure is taken over the steady windows.
    Reached,
    /// Not reached in this many rounds: those figures come from a job still moving.
    NotReached(usize),
}

impl Cell {
    /// The steady-state flag written right after the value: `ˢ` (steady every round), `!`
    /// (not steady in some round), nothing when the job ran without `--steady-state`.
    pub fn steady_flag(&self) -> &'static str {
        match self.steady {
            None => "",
            Some(Steady::Reached) => "ˢ",
            Some(Steady::NotReached(_)) => "!",
        }
    }
}

/// Legend of [`Cell::steady_flag`], when any of `rows` carries one.
pub fn steady_legend(rows: &[Row]) -> Option<&'static str> {
    rows.iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.steady.is_some())
        .then_some("ˢ over the steady window, ! steady state not reached in some round")
}

/// One row: a (workload, metric) across setups.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Workload id.
    pub workload: String,
    /// The metric.
    pub metric: MetricKey,
    /// Human test name (`Random read — IOPS`).
    pub label: String,
    /// The workload's short label, for quotes (`rm -rf`; the workload registry's).
    pub short: String,
    /// Unit as recorded.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// What kind of quantity (from the metric registry).
    pub class: Class,
    /// Whether the metric is judged in this workload, or follows from one that is.
    pub role: Role,
    /// One cell per setup (report order); `None` when that setup has no value.
    pub cells: Vec<Option<Cell>>,
}

/// A titled table.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Heading.
    pub title: String,
    /// What it holds.
    pub kind: TableKind,
    /// Rows in workload order.
    pub rows: Vec<Row>,
}

/// The recorded kind and parameters of a workload (empty when the file has none).
fn recorded<'a>(results: &'a Results, workload: &str) -> (&'a str, &'a serde_json::Value) {
    static NONE: serde_json::Value = serde_json::Value::Null;
    results
        .workloads
        .iter()
        .find(|w| w.id == workload)
        .map(|w| (w.kind.as_str(), &w.params))
        .unwrap_or(("", &NONE))
}

/// The question a workload answers, from the workload registry (its kind, refined by its
/// recorded parameters); `None` for a kind this fsbench does not know.
pub fn question(results: &Results, workload: &str) -> Option<Question> {
    let (kind, params) = recorded(results, workload);
    registry::purpose(kind, params).0
}

/// The label and short label of a workload, from the workload registry (its id when its
/// kind does not name it).
pub fn names(results: &Results, workload: &str) -> (String, String) {
    let (kind, params) = recorded(results, workload);
    registry::names(kind, workload, params)
}

/// The names the kind of workload `member` gives the id `id` (a scaling family's base,
/// `randread` of `randread-qd32`, is named like the plain workload of that kind).
pub fn names_like(results: &Results, member: &str, id: &str) -> (String, String) {
    let (kind, _) = recorded(results, member);
    registry::names(kind, id, &serde_json::Value::Null)
}

/// Which table a workload belongs in: the workload registry's answer for its kind.
pub fn table_of(results: &Results, workload: &str) -> TableKind {
    let (kind, params) = recorded(results, workload);
    match registry::purpose(kind, params).1 {
        RegistryTable::Io => TableKind::Io,
        RegistryTable::Metadata => TableKind::Metadata,
        RegistryTable::Applications => TableKind::Applications,
        RegistryTable::Capacity => TableKind::Capacity,
        RegistryTable::Probes => TableKind::Probes,
        RegistryTable::Crash => TableKind::Crash,
    }
}

/// Display rank of a metric inside one workload: the registry's order, unknown ids last.
fn metric_rank(metric: &MetricKey) -> usize {
    metrics::REGISTRY
        .iter()
        .position(|d| *metric == d.id)
        .unwrap_or(metrics::REGISTRY.len())
}

/// Setup names in report order: as created, then any that only appear in samples.
pub fn setup_order(results: &Results) -> Vec<String> {
    let mut v: Vec<String> = results.setups.iter().map(|s| s.name.clone()).collect();
    let seen = results.summary.iter().map(|s| &s.setup);
    for s in seen.chain(results.samples.iter().map(|s| &s.setup)) {
        if !v.contains(s) {
            v.push(s.clone());
        }
    }
    v
}

/// Workload ids in report order: as declared, then in first-seen order.
pub fn workload_order(results: &Results) -> Vec<String> {
    let mut v: Vec<String> = results.workloads.iter().map(|w| w.id.clone()).collect();
    let seen = results.summary.iter().map(|s| &s.workload);
    for w in seen.chain(results.samples.iter().map(|s| &s.workload)) {
        if !v.contains(w) {
            v.push(w.clone());
        }
    }
    v
}

/// Build every non-empty table, in the order I/O, metadata, capacity, probes, details.
pub fn tables(results: &Results) -> Vec<Table> {
    let setups = setup_order(results);
    let workloads = workload_order(results);
    let kinds = [
        (TableKind::Io, "I/O"),
        (TableKind::Metadata, "Metadata and small files"),
        (TableKind::Applications, "Databases"),
        (TableKind::Capacity, "Capacity after mkfs"),
        (TableKind::Probes, "Capabilities (probes)"),
        (TableKind::Crash, "Crash consistency"),
    ];
    let mut out: Vec<Table> = kinds
        .iter()
        .map(|(k, t)| Table {
            title: t.to_string(),
            kind: *k,
            rows: Vec::new(),
        })
        .collect();
    let mut details = Table {
        title: "More metrics".into(),
        kind: TableKind::Details,
        rows: Vec::new(),
    };
    for w in &workloads {
        let kind = table_of(results, w);
        let mut metrics: Vec<(&MetricKey, &str)> = Vec::new();
        for s in results.summary.iter().filter(|s| &s.workload == w) {
            if !metrics.iter().any(|(m, _)| **m == s.metric) {
                metrics.push((&s.metric, &s.unit));
            }
        }
        let shape = judged::shape(results, w);
        // What the workload is judged on first, then what follows from it.
        metrics.sort_by_key(|(m, _)| {
            let derived = matches!(metrics::role_in(m, &shape), Role::Derived(_));
            (derived, metric_rank(m))
        });
        for (m, unit) in metrics {
            // Capacity and probe tables are short: every metric of theirs is a row there.
            let shown = match (kind, metrics::shown_in(m, &shape)) {
                (_, Shown::Hidden) => continue,
                (TableKind::Capacity | TableKind::Probes, _) | (_, Shown::Table) => Shown::Table,
                (_, shown) => shown,
            };
            let row = build_row(results, &setups, w, m, unit, metrics::role_in(m, &shape));
            if shown == Shown::Table {
                let t = out.iter_mut().find(|t| t.kind == kind).expect("kind");
                t.rows.push(row);
            } else {
                details.rows.push(row);
            }
        }
    }
    out.push(details);
    out.retain(|t| !t.rows.is_empty());
    out
}

fn build_row(
    results: &Results,
    setups: &[String],
    workload: &str,
    m: &MetricKey,
    unit: &str,
    role: Role,
) -> Row {
    let find = |setup: &str, metric: &MetricKey| {
        results
            .summary
            .iter()
            .find(|s| s.setup == setup && s.workload == workload && s.metric == *metric)
            .cloned()
    };
    let direction = metrics::direction(m);
    // Only a job run until steady (`--steady-state`) is flagged: every other job's
    // `steady_reached` is an after-the-fact look at a series too short to settle it.
    let ran_until_steady = results.workloads.iter().any(|w| {
        w.id == workload
            && w.params
                .get("job")
                .and_then(|j| j.get("steady"))
                .is_some_and(|s| !s.is_null())
    });
    let mut cells: Vec<Option<Cell>> = setups
        .iter()
        .map(|s| {
            find(s, m).map(|summary| Cell {
                summary,
                mark: Mark::None,
                versus_leader: None,
                steady: ran_until_steady
                    .then(|| find(s, &metrics::registry::STEADY_REACHED.into()))
                    .flatten()
                    .map(|r| {
                        // One 0/1 sample per round: the mean says how many rounds missed it.
                        let missed = ((1.0 - r.mean) * r.n as f64).round() as usize;
                        if missed == 0 {
                            Steady::Reached
                        } else {
                            Steady::NotReached(missed)
                        }
                    }),
            })
        })
        .collect();
    let present: Vec<usize> = (0..cells.len()).filter(|&i| cells[i].is_some()).collect();
    // A derived row (a 4K job's MiB/s, untar's entries/s) would repeat its source's mark, and a
    // fact (usable space, fixed by mkfs: the same every round) is shown, never judged: only a
    // measured metric is ranked, starred and counted as a decided question.
    let ranked = direction != Direction::Neutral && role == Role::Measured;
    if ranked && present.len() >= 2 {
        let med = |i: usize| {
            cells[i]
                .as_ref()
                .map(|c| c.summary.median)
                .unwrap_or(f64::NAN)
        };
        // The leader by the estimator whose size every output prints (the geometric mean of
        // the paired per-round ratios); the median only where no round is shared.
        let best =
            paired_leader(results, workload, m, setups, &present, direction).unwrap_or_else(|| {
                present
                    .iter()
                    .copied()
                    .reduce(|a, b| {
                        if direction.better(med(b), med(a)) {
                            b
                        } else {
                            a
                        }
                    })
                    .expect("non-empty")
            });
        let judged: Vec<(usize, paired::Judgement)> = present
            .iter()
            .copied()
            .filter(|&i| i != best)
            .map(|i| {
                let j = paired::compare_with_leader(
                    results,
                    workload,
                    m,
                    &setups[best],
                    &setups[i],
                    present.len(),
                );
                (i, j)
            })
            .collect();
        // No per-round values to pair (a merged tail without its per-round counterpart):
        // nothing can be called beyond noise, so nothing is marked.
        if judged.iter().all(|(_, j)| j.interval.is_none()) {
            return finish(results, workload, m, unit, role, cells);
        }
        let mut leader = Mark::Best;
        for (i, j) in judged {
            let mark = match j.outcome {
                paired::Outcome::Ahead => Mark::Behind,
                paired::Outcome::Equivalent => Mark::Equivalent,
                // The leader shown behind once the disk's pace is taken out of the ratios
                // (`stats::adjusted`): a shared lead.
                paired::Outcome::NotSeparated | paired::Outcome::Behind => Mark::Tied,
            };
            leader = match (leader, mark) {
                (_, Mark::Tied) | (Mark::Tied, _) => Mark::Tied,
                (_, Mark::Equivalent) | (Mark::Equivalent, _) => Mark::Equivalent,
                (l, _) => l,
            };
            let c = cells[i].as_mut().expect("present");
            c.mark = mark;
            c.versus_leader = Some(j);
        }
        cells[best].as_mut().expect("present").mark = leader;
    }
    finish(results, workload, m, unit, role, cells)
}

/// The setup with the best geometric mean over the rounds every setup of `present` has (so
/// that its paired ratio to each other setup is ≥ 1, as the judgement reads it); `None` when
/// they share no round or a value there is not positive. A merged tail is read on its
/// per-round counterpart, as [`paired::compare`] does.
fn paired_leader(
    results: &Results,
    workload: &str,
    m: &MetricKey,
    setups: &[String],
    present: &[usize],
    direction: Direction,
) -> Option<usize> {
    let per: MetricKey = match metrics::merged_tail(m) {
        Some(t) => t.per_round.into(),
        None => m.clone(),
    };
    let values: Vec<_> = present
        .iter()
        .map(|&i| paired::per_round(results, &setups[i], workload, &per))
        .collect();
    let shared: Vec<u32> = values
        .first()?
        .keys()
        .copied()
        .filter(|r| values.iter().all(|v| v.contains_key(r)))
        .collect();
    if shared.is_empty() {
        return None;
    }
    let mut scores = Vec::with_capacity(present.len());
    for v in &values {
        let logs: Vec<f64> = shared.iter().map(|r| v[r]).map(f64::ln).collect();
        if logs.iter().any(|x| !x.is_finite()) {
            return None;
        }
        scores.push(stats::descriptive::mean(&logs));
    }
    (0..present.len())
        .reduce(|a, b| {
            if direction.better(scores[b], scores[a]) {
                b
            } else {
                a
            }
        })
        .map(|k| present[k])
}

/// The setup a ranked row's marks are relative to (its leader), if the row is ranked.
pub fn leader(row: &Row) -> Option<usize> {
    row.cells.iter().position(|c| {
        c.as_ref()
            .is_some_and(|c| c.mark != Mark::None && c.versus_leader.is_none())
    })
}

fn finish(
    results: &Results,
    workload: &str,
    m: &MetricKey,
    unit: &str,
    role: Role,
    cells: Vec<Option<Cell>>,
) -> Row {
    let (name, short) = names(results, workload);
    let label = format!("{name} — {}", metrics::label(m));
    let def = metrics::def(m);
    Row {
        workload: workload.into(),
        metric: m.clone(),
        label,
        short,
        unit: unit.into(),
        direction: def.direction,
        class: def.class,
        role,
        cells,
    }
}

/// The row's noise floor: the largest paired noise among the leader's comparisons (the sd of
/// the log ratios, about the ratio's cv per round) and the rounds that comparison would need
/// to tell 10 % apart; `None` for an unranked row.
pub fn noise_floor(row: &Row) -> Option<(f64, Option<usize>)> {
    row.cells
        .iter()
        .flatten()
        .filter_map(|c| c.versus_leader)
        .filter_map(|j| j.noise.map(|n| (n, j.rounds_for_10pct)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// "6 % (5 rounds)": a noise floor in words; "–" when there is none.
pub fn noise_floor_text(row: &Row) -> String {
    match noise_floor(row) {
        None => "–".into(),
        Some((n, Some(r))) => format!("{:.0} % ({r} rounds)", n * 100.0),
        Some((n, None)) => format!("{:.0} % (> 100 rounds)", n * 100.0),
    }
}

/// Cell text: median, with (min–max) when the rounds differ.
pub fn cell_text(s: &Summary) -> String {
    let med = metrics::format_value(&s.metric, s.median, &s.unit);
    if s.n <= 1 || s.min == s.max || stats::is_merged(&s.metric) {
        med
    } else {
        format!(
            "{med} ({}–{})",
            metrics::format_value(&s.metric, s.min, &s.unit),
            metrics::format_value(&s.metric, s.max, &s.unit)
        )
    }
}

/// Unit column text: unit plus ↑/↓ (bytes are shown scaled, so the unit says "size").
pub fn unit_text(row: &Row) -> String {
    let unit = metrics::unit_text(&row.metric, &row.unit);
    let arrow = row.direction.arrow();
    if arrow.is_empty() {
        unit
    } else {
        format!("{unit} {arrow}")
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::MetricId;
    use crate::metrics::registry::TX_PER_S;
    use crate::results::{Results, Sample, SetupInfo, WorkloadInfo};
    use crate::workload::registry::{self, Cost, Describe, Family, Kind, Needs, Workload};
    use crate::workload::{
        WorkloadOutput, spec::JobDefaults, spec::WorkloadSpec, step::StepContext,
    };

    /// A database kind added by the recipe: nothing under src/report/ names it.
    struct KeyValueStore;

    impl Workload for KeyValueStore {
        fn kind(&self) -> Kind {
            Kind::named("kv-store")
        }
        fn name(&self) -> &'static str {
            "kv-store"
        }
        fn family(&self) -> Family {
            Family::Application
        }
        fn needs(&self, _: &WorkloadSpec) -> Needs {
            Needs::WRITES
        }
        fn emits(&self) -> &'static [MetricId] {
            &[TX_PER_S]
        }
        fn example(&self) -> &'static str {
            "kind = \"kv-store\""
        }
        fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
            Cost::Nothing
        }
        fn describe(&self, _: &WorkloadSpec, _: &Describe<'_>) -> String {
            String::new()
        }
        fn run(&self, _: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
            Ok(WorkloadOutput::default())
        }
    }

    #[test]
    fn a_new_workload_lands_in_its_table_and_class_from_the_registry() {
        registry::register_for_test(&KeyValueStore);
        let mut r = Results::new();
        for s in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: s.into(),
                fs: s.into(),
                ..Default::default()
            });
        }
        r.workloads.push(WorkloadInfo {
            id: "my-kv".into(),
            kind: "kv-store".into(),
            ..Default::default()
        });
        for round in 1..=3 {
            for (setup, v) in [("ext4", 1000.0), ("xfs", 2000.0)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "my-kv".into(),
                    metric: TX_PER_S.into(),
                    unit: "tx/s".into(),
                    round,
                    value: v + round as f64,
                });
            }
        }
        let rep = crate::report::Report::new(&r);
        let table = rep
            .tables
            .iter()
            .find(|t| t.rows.iter().any(|row| row.workload == "my-kv"))
            .expect("a table");
        assert_eq!(table.kind, super::TableKind::Applications);
        let db = rep
            .recommendations
            .iter()
            .find(|x| x.question == registry::Question::Databases)
            .expect("a Databases verdict");
        assert_eq!(db.winner, "xfs");
        assert!(db.basis.contains("decided by my-kv"), "{}", db.basis);
        assert!(rep.headline.iter().any(|h| h.workload == "my-kv"));
    }
}
