//! What every metric means, declared once: the metric registry (docs/ARCHITECTURE.md,
//! "Registries").
//!
//! A workload emits a [`MetricId`] (one of the constants in [`registry`]); a recorded value's
//! metric is a [`MetricKey`] (that id, or one a file of another fsbench version names), which
//! `results.json` keeps as its string (`"iops"`, `"lat_p99_ms"`), so files written before the
//! registry still load. The
//! statistics, the report's tables, headline, recommendations and warnings, `compare`, the
//! claims and every exporter read a metric's [`MetricDef`] here instead of guessing from its
//! name. An id the registry does not know (from an older or a newer fsbench) is shown as a
//! not-ranked fact ([`def`] returns [`UNKNOWN`]).
//!
//! Two metrics of one job can state one quantity twice: at a fixed block size IOPS and MiB/s
//! are the same number scaled, and a size-based step's seconds and MiB/s are each other's
//! inverse. [`Shape`] says which of such a pair a job is judged on ([`role_in`]) and whether
//! the other is worth a row at all ([`shown_in`]).

mod format;
mod key;
pub mod registry;

pub use format::{format_bytes, format_number, format_value, format_with_unit};
pub use key::MetricKey;
pub use registry::REGISTRY;

/// A registered metric id. Only [`registry`] constructs them (and deserializing one refuses an
/// id the registry does not declare), so an id a workload emits is one the registry declares;
/// [`MetricId::as_str`] is the string `results.json` stores. A recorded value's metric, which
/// a file may name with an id this build does not know, is a [`MetricKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct MetricId(&'static str);

impl MetricId {
    /// The id as stored in `results.json`.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The registered id spelled `id`, for ids built from parts (`read_` + `lat_p99_ms`,
    /// `grow_` + `supported`).
    ///
    /// # Panics
    /// When `id` is not registered: a programming error that the registry's tests (every
    /// per-side and per-direction combination a workload builds is registered) catch.
    pub fn registered(id: &str) -> MetricId {
        lookup(id)
            .map(|d| d.id)
            .unwrap_or_else(|| panic!("metric {id} is not in metrics::registry"))
    }

    /// Its definition in the registry.
    pub fn def(self) -> &'static MetricDef {
        def(&self)
    }
}

impl AsRef<str> for MetricId {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl std::fmt::Display for MetricId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.0)
    }
}

/// Whether a larger or a smaller value of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// More is better (throughput, usable space, supported features).
    HigherIsBetter,
    /// Less is better (time, latency, CPU, bytes written to the device).
    LowerIsBetter,
    /// A fact (a size, a count, an inode total): never ranked.
    Neutral,
}

impl Direction {
    /// Arrow shown next to the unit: ↑ higher is better, ↓ lower is better, none for a fact.
    pub fn arrow(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "↑",
            Direction::LowerIsBetter => "↓",
            Direction::Neutral => "",
        }
    }
    /// Whether `a` is better than `b` under this direction.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Direction::HigherIsBetter => a > b,
            Direction::LowerIsBetter => a < b,
            Direction::Neutral => false,
        }
    }
}

/// What kind of quantity a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Work per time: IOPS, MiB/s, ops/s, TPS.
    Throughput,
    /// Time per operation: percentiles and means in ms.
    Latency,
    /// Elapsed time of a step (untar, rm, layout, mkfs).
    Time,
    /// Space the filesystem leaves usable.
    Capacity,
    /// What the work cost: CPU, device bytes, write amplification, memory, stalls.
    Cost,
    /// A probe's yes/no (reflink, snapshots, corruption detected).
    Capability,
    /// Fixed by mkfs, the plan or the corpus (sizes, counts, inode totals): never ranked.
    Fact,
}

/// Whether `compare` may call a metric better or worse.
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

/// How a value is written for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Thousands separators from 1,000 up, three significant digits below.
    Number,
    /// Binary units (`372.6 GiB`).
    Bytes,
    /// 1 → yes, 0 → no.
    YesNo,
    /// A count where 0 means the filesystem has no fixed limit (Btrfs and ZFS report 0 inodes).
    Limit,
}

/// How `run --mpi` reduces a metric of the non-I/O workloads (layout, usable-space, the
/// metadata workloads) over the ranks to the all-ranks value (`runner::reduce::merge`). A metric without
/// one is not reduced: a sum of device counters of ranks on one host would count the same
/// device twice, so it is left out of the aggregate and a note says so.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// A phase's duration: the common window of the phase, which starts on each rank after
    /// the phases named in `after` (all ranks started the workload together).
    Window {
        /// The phases before it, each rank's own.
        after: &'static [MetricId],
    },
    /// A count: the sum over ranks.
    Sum,
    /// The sum of metric `of` over the reduced window of metric `over`, times `scale`.
    Rate {
        /// The count summed.
        of: MetricId,
        /// The window it is divided by.
        over: MetricId,
        /// Unit scale (bytes → MiB).
        scale: f64,
    },
    /// A fact of the shared filesystem (statvfs): rank 0's value.
    First,
}

/// One metric, declared once.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MetricDef {
    /// The id (the JSON string).
    pub id: MetricId,
    /// The unit it is recorded in (a workload may name its count: `entries/s`, `files/s`).
    pub unit: &'static str,
    /// Short human label (`p99 latency (median of rounds)`).
    pub label: &'static str,
    /// What kind of quantity.
    pub class: Class,
    /// Which way is better.
    pub direction: Direction,
    /// Whether `compare` judges it (before a job's [`Shape`] is taken into account).
    pub role: Role,
    /// Whether it is a row of its table (else it goes to "More metrics").
    pub headline: bool,
    /// How its values are written.
    pub format: Format,
    /// How `run --mpi` reduces it over the ranks, if at all.
    pub reduce: Option<Reduce>,
    /// A count of what a check found (crash states that lost data), not a sample of a noisy
    /// quantity: one round settles a claim on it, as a probe's yes/no does.
    pub observed: bool,
    /// A tail latency `stats::summarize` computes from the merged histograms, not a sample.
    pub merged: Option<MergedTail>,
    /// Equivalence margin: two setups whose ratio is shown to lie within ±this fraction are
    /// called equivalent (`=`); the class's default unless the line says otherwise
    /// (`registry::DEFAULT_MARGIN`, `LATENCY_MARGIN`, `DEEP_TAIL_MARGIN`).
    pub margin: f64,
}

/// What makes a metric a tail latency over all rounds' histograms merged, and the per-round
/// percentile whose spread judges it (a merged tail has no spread of its own).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MergedTail {
    /// The histogram direction it is for when a job has both (`read`, `write`), else `None`.
    pub side: Option<&'static str>,
    /// The quantile (0.99 for p99).
    pub quantile: f64,
    /// Its per-round counterpart.
    pub per_round: MetricId,
}

/// What an id the registry does not know is shown as: a not-ranked fact, never judged.
pub const UNKNOWN: MetricDef = MetricDef {
    id: MetricId("unknown"),
    unit: "",
    label: "",
    class: Class::Fact,
    direction: Direction::Neutral,
    role: Role::Fact,
    headline: false,
    format: Format::Number,
    reduce: None,
    observed: false,
    merged: None,
    margin: registry::DEFAULT_MARGIN,
};

/// Whether one round settles a claim on `id`: a probe's yes/no, or a count a check observed
/// ([`MetricDef::observed`]).
pub fn settles_in_one_round(id: &(impl AsRef<str> + ?Sized)) -> bool {
    let d = def(id);
    d.class == Class::Capability || d.observed
}

/// The registered metric of an id, if any. Here and below, `id` is whatever names a metric: a
/// [`MetricId`], a [`MetricKey`], or an id string read from a file.
pub fn lookup(id: &(impl AsRef<str> + ?Sized)) -> Option<&'static MetricDef> {
    let id = id.as_ref();
    REGISTRY.iter().find(|d| d.id.0 == id)
}

/// The definition of an id, [`UNKNOWN`] when it is not registered.
pub fn def(id: &(impl AsRef<str> + ?Sized)) -> &'static MetricDef {
    lookup(id).unwrap_or(&UNKNOWN)
}

/// The merged tail an id is, if it is one ([`MetricDef::merged`]).
pub fn merged_tail(id: &(impl AsRef<str> + ?Sized)) -> Option<&'static MergedTail> {
    lookup(id)?.merged.as_ref()
}

/// Every merged tail `stats::summarize` computes, in registry order.
pub fn merged_tails() -> impl Iterator<Item = (MetricId, &'static MergedTail)> {
    REGISTRY
        .iter()
        .filter_map(|d| d.merged.as_ref().map(|t| (d.id, t)))
}

/// Which way is better for an id ([`Direction::Neutral`] when unknown).
pub fn direction(id: &(impl AsRef<str> + ?Sized)) -> Direction {
    def(id).direction
}

/// Short human label of an id; an unknown id reads as its words (`my_metric` → `my metric`).
pub fn label(id: &(impl AsRef<str> + ?Sized)) -> String {
    match lookup(id) {
        Some(d) => d.label.to_string(),
        None => id.as_ref().replace('_', " "),
    }
}

/// Unit column text: the unit, or what the format shows instead (sizes scaled, yes/no).
pub fn unit_text(id: &(impl AsRef<str> + ?Sized), recorded_unit: &str) -> String {
    let format = match lookup(id) {
        Some(d) => d.format,
        None => format::by_unit(recorded_unit),
    };
    match format {
        Format::Bytes => "size".into(),
        Format::YesNo => "yes/no".into(),
        Format::Number | Format::Limit => recorded_unit.into(),
    }
}

/// Which metric of an IOPS/MiB/s pair a job is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Small blocks: operations per second (4 KiB random I/O).
    Ops,
    /// Large blocks or a size-based step: bandwidth (1 MiB sequential, layout, compression).
    Bandwidth,
}

/// From this block size on, a job is judged and quoted in MiB/s (seed 000: 1M jobs in MiB/s,
/// 4K jobs in IOPS).
pub const BANDWIDTH_FROM_BLOCK: f64 = 64.0 * 1024.0;

/// What decides, for one job, which of two equivalent metrics is judged: its block size and
/// whether it recorded operations at all.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Shape {
    /// Block size in bytes, when known (the plan's `bs`, or bandwidth / IOPS).
    pub block_size: Option<f64>,
    /// The job recorded `iops` (an I/O job); without it a MiB/s figure is size / seconds.
    pub has_ops: bool,
    /// The job recorded `bw_mib_s`.
    pub has_bandwidth: bool,
    /// The job recorded `seconds`: then a fixed count per second follows from it.
    pub has_seconds: bool,
}

impl Shape {
    /// The throughput this job is judged on.
    pub fn basis(&self) -> Basis {
        match (self.has_ops, self.block_size) {
            (false, _) => Basis::Bandwidth,
            (true, Some(bs)) if bs >= BANDWIDTH_FROM_BLOCK => Basis::Bandwidth,
            _ => Basis::Ops,
        }
    }
}

/// The role of an id in one job: a pair's other half (see [`registry::PAIRS`]) is derived.
pub fn role_in(id: &(impl AsRef<str> + ?Sized), shape: &Shape) -> Role {
    let id = id.as_ref();
    let bandwidth_basis = shape.basis() == Basis::Bandwidth;
    if registry::PAIRS.iter().any(|p| p.ops.0 == id) {
        if bandwidth_basis && shape.has_bandwidth {
            return Role::Derived(registry::IOPS_FROM_BW);
        }
        return Role::Measured;
    }
    if registry::PAIRS.iter().any(|p| p.bandwidth.0 == id) {
        return if bandwidth_basis {
            Role::Measured
        } else {
            Role::Derived(registry::BW_FROM_IOPS)
        };
    }
    if id == registry::SECONDS.0 && shape.has_bandwidth && !shape.has_ops {
        return Role::Derived(registry::SECONDS_FROM_BW);
    }
    match def(id).role {
        // A rate without the time it divides by is the measurement itself.
        Role::Derived(registry::RATE) if !shape.has_seconds => Role::Measured,
        role => role,
    }
}

/// Where a metric of one job is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A row of its table (and a headline candidate).
    Table,
    /// A row of "More metrics".
    Details,
    /// No row: it repeats another row's numbers (1 MiB jobs' IOPS = MiB/s); JSON and CSV keep it.
    Hidden,
}

/// Where a metric of one job goes: headline metrics in their table, the rest in the details,
/// a derived pair half in the details, or nowhere when its numbers equal the judged one's.
pub fn shown_in(id: &(impl AsRef<str> + ?Sized), shape: &Shape) -> Shown {
    let id = id.as_ref();
    let d = def(id);
    match role_in(id, shape) {
        Role::Derived(_)
            if registry::PAIRS
                .iter()
                .any(|p| p.ops.0 == id || p.bandwidth.0 == id) =>
        {
            if shape.block_size == Some(1024.0 * 1024.0) {
                Shown::Hidden
            } else {
                Shown::Details
            }
        }
        Role::Derived(_) if d.headline && id == registry::SECONDS.0 => Shown::Details,
        _ if d.headline => Shown::Table,
        _ => Shown::Details,
    }
}

/// Rank of a metric as the one that decides a workload in the recommendations, given its role
/// in that workload: throughput, then time, then capacity; the registry's order breaks ties
/// (`iops` before `read_iops`). `None` for a metric that never decides (latency, cost, facts,
/// derived ones).
pub fn deciding_rank(id: &(impl AsRef<str> + ?Sized), role: Role) -> Option<(u8, usize)> {
    let d = lookup(id)?;
    let class = match d.class {
        Class::Throughput if role == Role::Measured => 0,
        Class::Time if role == Role::Measured => 1,
        Class::Capacity if d.direction != Direction::Neutral => 2,
        _ => return None,
    };
    let index = REGISTRY.iter().position(|x| x.id == d.id)?;
    Some((class, index))
}

#[cfg(test)]
mod tests;
