//! The versioned results model. This file *is* the `results.json` schema (docs/ARCHITECTURE.md).
//!
//! Raw samples are always kept; `summary` is derived from them by [`crate::stats`] and may be
//! recomputed by any reader. New fields are added with `#[serde(default)]` so that older files
//! still load; a breaking change bumps [`SCHEMA_VERSION`].

use crate::metrics::MetricKey;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Current schema version of `results.json`. 2: `summary` rows carry `ci_low`, `ci_high` and
/// `ci_coverage` (an exact interval with its true coverage) instead of `ci95_low`/`ci95_high`;
/// version 1 files still load (the old names are aliases, the summary is recomputed anyway).
pub const SCHEMA_VERSION: u32 = 2;

/// A whole results file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Schema version; see [`SCHEMA_VERSION`]. A file without one is read as the current one.
    #[serde(default = "current_schema")]
    pub schema_version: u32,
    /// fsbench version that wrote the file.
    #[serde(default)]
    pub fsbench_version: String,
    /// When the run started (RFC 3339, UTC).
    #[serde(default)]
    pub started_at: String,
    /// When the run finished (RFC 3339, UTC); empty while partial.
    #[serde(default)]
    pub finished_at: String,
    /// True when the run was interrupted or is still in progress.
    #[serde(default)]
    pub partial: bool,
    /// The machine.
    #[serde(default)]
    pub host: HostInfo,
    /// Where the filesystems lived.
    #[serde(default)]
    pub target: TargetInfo,
    /// The filesystems and variants, as created.
    #[serde(default)]
    pub setups: Vec<SetupInfo>,
    /// The workloads and their parameters (used by `compare` to refuse mismatched runs).
    #[serde(default)]
    pub workloads: Vec<WorkloadInfo>,
    /// One row per measured value.
    pub samples: Vec<Sample>,
    /// Derived per (setup, workload, metric) statistics. Optional on input: `report` and
    /// `compare` recompute it from `samples` (so a file filtered with jq needs only samples).
    #[serde(default)]
    pub summary: Vec<Summary>,
    /// Latency histograms per (setup, workload, round, direction), mergeable across rounds.
    #[serde(default)]
    pub histograms: Vec<HistogramRecord>,
    /// Per-second series (IOPS over time) per (setup, workload, round).
    #[serde(default)]
    pub series: Vec<SeriesRecord>,
    /// Steps that failed; never reported as results.
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// Warnings that apply to the whole run or a setup (durability weakened, device never quiet…).
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// What workloads observed along the way (how a probe decided, a backend fallback…):
    /// context for the reader, not a caution.
    #[serde(default)]
    pub notes: Vec<Warning>,
    /// What `fsbench doctor`'s checks found on this host and target when the run started
    /// (also listed among `warnings` and `notes` as text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_findings: Vec<Finding>,
    /// How a `--until-settled` run went on past its minimum rounds, and why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleRecord>,
    /// The run's error control when it was per run (`--error per-run`): each of its
    /// `questions` judged at α/m ([`crate::stats::family`]); absent: per question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// What fsbench concluded from the samples, derived like `summary` (and recomputed by
    /// `fsbench report --format json`): per headline row its marks and paired judgements, per
    /// verdict line who leads, is equivalent and is behind, per claim its verdicts
    /// (`report::json::Judgements`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgements: Option<serde_json::Value>,
    /// The order the setups ran in, per round (rotated one place per round:
    /// `plan::Plan::setup_order`); empty in files from before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_order: Vec<RoundOrder>,
    /// `--margin`: the equivalence margin (a fraction) the run judged every metric by,
    /// instead of the metric registry's (`stats::paired::margin_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// Steps that several processes ran together (MPI ranks: `run --mpi`, `meta --mpi`):
    /// every process's own measurement, beside the all-processes figures in `samples`. Empty
    /// (and absent from the file) for a run of one process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankRecord>,
}

/// One process's own measurement of one coordinated step (`runner::coordinator`): the
/// samples of that step are every process's together; this is what this one measured, its
/// start and end on the clock all processes share from the step's start meeting.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RankRecord {
    /// Setup name.
    pub setup: String,
    /// Workload id, as its samples name it.
    pub workload: String,
    /// Round, 1-based.
    pub round: u32,
    /// The process's rank (0 is the leader, which reduced the step).
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// When its measured part started, seconds after the start meeting's release.
    pub start_s: f64,
    /// When it ended, on the same clock.
    pub end_s: f64,
    /// Its own scalar values (its histograms are merged into the step's, not kept apart).
    #[serde(default)]
    pub values: Vec<RankValue>,
}

/// One value a process measured itself in a coordinated step.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RankValue {
    /// The metric, as in [`Sample::metric`].
    pub metric: MetricKey,
    /// Unit.
    pub unit: String,
    /// The value.
    pub value: f64,
}

impl RankRecord {
    /// Its value of `metric`, if it measured one.
    pub fn get(&self, metric: crate::metrics::MetricId) -> Option<f64> {
        self.values
            .iter()
            .find(|v| v.metric == metric)
            .map(|v| v.value)
    }
}

/// The setups of one round in the order they ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RoundOrder {
    /// The round.
    pub round: u32,
    /// Setup names, first to last.
    pub setups: Vec<String>,
}

/// `--until-settled`: the stopping rule, the extra rounds and why they stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SettleRecord {
    /// The statistic and how its error rate is spent over the looks.
    pub method: String,
    /// The error rate of a settled verdict, at most.
    pub alpha: f64,
    /// Rounds before the first look (`--rounds`).
    pub min_rounds: u32,
    /// Rounds at most (`--max-rounds`).
    pub max_rounds: u32,
    /// The round of the last look: `max_rounds`, or fewer when the budget fits fewer (fixed
    /// after the minimum rounds, before the first look); α is spent over the looks up to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_look: Option<u32>,
    /// Wall time the run could take (`--budget`), seconds.
    pub budget_s: u64,
    /// Rounds the run reached.
    pub rounds_run: u32,
    /// Why it stopped.
    pub stop: SettleStop,
    /// Workloads whose question was still open when it stopped.
    #[serde(default)]
    pub still_open: Vec<String>,
    /// Each extra round and the workloads it ran.
    #[serde(default)]
    pub extra_rounds: Vec<ExtraRound>,
}

/// Why a `--until-settled` run stopped adding rounds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SettleStop {
    /// Every open question was settled.
    #[default]
    Settled,
    /// The next round would have ended past the budget.
    Budget,
    /// The round limit was reached.
    MaxRounds,
    /// The user interrupted it (every finished round is kept).
    Interrupted,
}

impl SettleStop {
    /// In words, for reports.
    pub fn word(self) -> &'static str {
        match self {
            SettleStop::Settled => "settled",
            SettleStop::Budget => "budget spent",
            SettleStop::MaxRounds => "max rounds",
            SettleStop::Interrupted => "interrupted",
        }
    }
}

/// One extra round of a `--until-settled` run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExtraRound {
    /// Round number (after the minimum).
    pub round: u32,
    /// Workloads it ran (the open ones and what they need).
    pub workloads: Vec<String>,
    /// Setups it ran (those an open question compares; the others have no samples in it).
    /// Empty in files from before extra rounds ran only these.
    #[serde(default)]
    pub setups: Vec<String>,
}

fn current_schema() -> u32 {
    SCHEMA_VERSION
}

/// Provenance of the machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    /// `uname -r`.
    pub kernel: String,
    /// CPU model name and count.
    pub cpu: String,
    /// Number of online CPUs.
    #[serde(default)]
    pub cpus: u32,
    /// Total RAM.
    pub ram_bytes: u64,
    /// Hostname.
    #[serde(default)]
    pub hostname: String,
    /// Versions of the tools used (mkfs.ext4, mkfs.xfs, mkfs.btrfs, zpool, fio…).
    #[serde(default)]
    pub tool_versions: BTreeMap<String, String>,
    /// Free-form extras (distribution, virtualization…).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

/// Provenance of the target (device, image or directory).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// `image`, `device` or `dir`.
    pub kind: String,
    /// The device or directory path (for images: the backing file).
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Device model (sysfs), if any.
    #[serde(default)]
    pub model: String,
    /// Whether the kernel reports the device as rotational.
    #[serde(default)]
    pub rotational: Option<bool>,
    /// Active I/O scheduler.
    #[serde(default)]
    pub scheduler: String,
    /// Logical block size in bytes.
    #[serde(default)]
    pub logical_block_size: u64,
    /// Whether BLKDISCARD worked.
    #[serde(default)]
    pub discard_supported: Option<bool>,
    /// Free-form extras (loop backing file, direct I/O flag, filesystem holding the image…).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

/// One filesystem setup (a filesystem with its variant options).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SetupInfo {
    /// Setup name as given by the user (`ext4`, `zfs-16k`).
    pub name: String,
    /// Filesystem type (`ext4`, `xfs`, `btrfs`, `zfs`, `tmpfs`, `dir`).
    pub fs: String,
    /// Implementation label, e.g. `zfs-fuse` rather than `OpenZFS`.
    #[serde(default)]
    pub implementation: String,
    /// The full mkfs / zpool create command line.
    pub mkfs_args: Vec<String>,
    /// Mount options as /proc/self/mountinfo shows them.
    pub mount_opts: String,
    /// Filesystem properties (zfs get, tune2fs -l excerpt, xfs_info…).
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// mkfs output, kept verbatim (from the first round).
    #[serde(default)]
    pub mkfs_output: String,
    /// Warnings tied to this setup (durability weakened…).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The variant options as the user wrote them.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Host tunings as read back while the setup ran (`sched` → `mq-deadline`,
    /// `sysctl.vm.dirty_ratio` → `10`); put back afterwards.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub host: BTreeMap<String, String>,
    /// What its implementation substitutes for, as its driver declared it (zfs-fuse for
    /// kernel OpenZFS); absent for the real thing. Read through [`SetupInfo::substitute`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substitute: Option<Substitute>,
}

impl SetupInfo {
    /// What this setup's implementation substitutes for, when its figures are not comparable
    /// with that one's published figures: what its driver declared while it ran
    /// ([`SetupInfo::substitute`]), or for a file written before drivers declared it, the one
    /// substitute fsbench had then (zfs-fuse, by its implementation label or, in older files
    /// still, by its filesystem name).
    pub fn substitute(&self) -> Option<Substitute> {
        if self.substitute.is_some() {
            return self.substitute.clone();
        }
        const LEGACY: &str = "zfs-fuse";
        let legacy =
            self.implementation.split_whitespace().next() == Some(LEGACY) || self.fs == LEGACY;
        legacy.then(|| Substitute {
            implementation: LEGACY.into(),
            what: "ZFS in user space over FUSE".into(),
            instead_of: "kernel OpenZFS".into(),
            published: "OpenZFS".into(),
        })
    }
}

/// An implementation that substitutes for another whose published figures it does not match
/// (zfs-fuse for kernel OpenZFS), as its driver declares it (`fs::Mounted::substitute`): the
/// report warns about it and claims that need the real one are not decided on it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Substitute {
    /// What ran (`zfs-fuse`).
    pub implementation: String,
    /// What that is, in words (`ZFS in user space over FUSE`).
    pub what: String,
    /// What it substitutes for (`kernel OpenZFS`).
    pub instead_of: String,
    /// Whose published figures its numbers must not be compared with (`OpenZFS`).
    pub published: String,
}

/// A workload and the parameters it ran with.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkloadInfo {
    /// Workload id (`randread`, `untar`…).
    pub id: String,
    /// Kind (`io`, `meta`, `probe`, `mkfs`, `space`).
    #[serde(default)]
    pub kind: String,
    /// Parameters (job spec, corpus size…) as a JSON object.
    #[serde(default)]
    pub params: serde_json::Value,
    /// Equivalent fio command line, for I/O jobs.
    #[serde(default)]
    pub fio_command: Option<String>,
}

/// One measured value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// The metric (`iops`, `lat_p99_ms`, `seconds`…): build it from a registered id,
    /// `metric: registry::IOPS.into()`; a file of another fsbench version may name an id this
    /// one does not know. Stored as the plain id string.
    pub metric: MetricKey,
    /// Unit (`IOPS`, `ms`, `s`, `MiB/s`, `bytes`…).
    pub unit: String,
    /// Round number, starting at 1.
    pub round: u32,
    /// The value.
    pub value: f64,
}

/// Statistics of one (setup, workload, metric) over its rounds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// The metric, as in [`Sample::metric`].
    pub metric: MetricKey,
    /// Unit.
    pub unit: String,
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Mean.
    #[serde(default)]
    pub mean: f64,
    /// Sample standard deviation.
    #[serde(default)]
    pub stddev: f64,
    /// Confidence interval of the median, low end: an order statistic (see `ci_coverage`).
    /// Files written before the interval was exact call it `ci95_low`.
    #[serde(alias = "ci95_low")]
    pub ci_low: f64,
    /// Confidence interval of the median, high end.
    #[serde(alias = "ci95_high")]
    pub ci_high: f64,
    /// The interval's exact coverage (0.75 at n = 3, 0.9375 at n = 5, ≥ 0.95 from n = 6);
    /// 0 when there is no interval (one round, merged histogram tails).
    #[serde(default)]
    pub ci_coverage: f64,
}

/// A latency histogram, sparse: `buckets` holds `[value_ns, count]` pairs for non-empty buckets.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistogramRecord {
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// Round.
    pub round: u32,
    /// `read` or `write`.
    pub direction: String,
    /// Exact minimum latency, ns.
    pub min_ns: u64,
    /// Exact maximum latency, ns.
    pub max_ns: u64,
    /// Number of I/Os recorded.
    pub count: u64,
    /// Sum of latencies, ns (for the exact mean).
    pub sum_ns: u128,
    /// Non-empty buckets as `[representative value ns, count]`.
    pub buckets: Vec<[u64; 2]>,
}

/// A per-second series.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SeriesRecord {
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// Round.
    pub round: u32,
    /// Metric (`iops`, `bw_mib_s`).
    pub metric: String,
    /// One value per second of the measured window.
    pub values: Vec<f64>,
}

/// A step that failed, with its error; the run went on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Failure {
    /// Setup name.
    pub setup: String,
    /// Workload id (or `mkfs`, `mount`).
    pub workload: String,
    /// Round.
    pub round: u32,
    /// The error message.
    pub error: String,
}

/// A warning for the reader of the results.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    /// Setup it applies to, or empty for the whole run.
    #[serde(default)]
    pub setup: String,
    /// Round, or 0 for all.
    #[serde(default)]
    pub round: u32,
    /// The message.
    pub message: String,
}

/// Largest results.json read (`report`, `compare`): a four-filesystem standard run writes a
/// few MiB; anything this large is not one, and reading it would only exhaust memory.
pub const MAX_RESULTS_BYTES: u64 = 64 << 20;

impl Results {
    /// An empty results file with the current schema version.
    pub fn new() -> Self {
        Results {
            schema_version: SCHEMA_VERSION,
            fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            ..Default::default()
        }
    }

    /// Load a results file, with a clear error when it is missing, too large
    /// ([`MAX_RESULTS_BYTES`]) or not fsbench's.
    pub fn load(path: &Path) -> crate::Result<Self> {
        let origin = path.display().to_string();
        let file = std::fs::File::open(path)
            .map_err(|e| crate::Error::io("cannot read results file", path, e))?;
        // Read one byte past the limit, so a file that grows while read is refused too.
        let mut text = String::new();
        use std::io::Read as _;
        file.take(MAX_RESULTS_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| crate::Error::io("cannot read results file", path, e))?;
        if text.len() as u64 > MAX_RESULTS_BYTES {
            return Err(crate::Error::invalid(
                origin,
                format!(
                    "larger than {} MiB, which no fsbench run writes; give the results.json of a run",
                    MAX_RESULTS_BYTES >> 20
                ),
            ));
        }
        Self::from_json(&text, &origin)
    }

    /// Parse a results.json's text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> crate::Result<Self> {
        let r: Results = serde_json::from_str(text).map_err(|e| {
            crate::Error::invalid(origin, format!("not an fsbench results.json: {e}"))
        })?;
        if r.schema_version > SCHEMA_VERSION {
            return Err(crate::Error::invalid(
                origin,
                format!(
                    "schema_version {} is newer than this fsbench understands ({}); upgrade fsbench",
                    r.schema_version, SCHEMA_VERSION
                ),
            ));
        }
        Ok(r)
    }

    /// Write atomically: temp file in the same directory, fsync, rename, fsync the directory.
    pub fn save(&self, path: &Path) -> crate::Result<()> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| crate::Error::Other(format!("cannot serialize results: {e}")))?;
        write_atomic(path, &text)
    }

    /// Samples of one (setup, workload, metric), in round order.
    pub fn values(&self, setup: &str, workload: &str, metric: &MetricKey) -> Vec<f64> {
        let mut v: Vec<(u32, f64)> = self
            .samples
            .iter()
            .filter(|s| s.setup == setup && s.workload == workload && s.metric == *metric)
            .map(|s| (s.round, s.value))
            .collect();
        v.sort_by_key(|(r, _)| *r);
        v.into_iter().map(|(_, x)| x).collect()
    }
}

/// Write `bytes` to `path` atomically (temp + fsync + rename + directory fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| crate::Error::io("cannot create temporary file in", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| crate::Error::io("cannot write", tmp.path(), e))?;
    // NamedTempFile is created 0600; results are meant to be shared and read by other users.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| crate::Error::io("cannot rename into", path, e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

// ---- doctor findings (the `doctor` module produces them; results.json carries them) ----

/// How much a finding matters for the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The numbers would be skewed or meaningless as they stand.
    Warn,
    /// Context a reader of the numbers should know; nothing is wrong as such.
    Info,
}

impl Severity {
    /// `warn` / `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warn => "warn",
            Severity::Info => "info",
        }
    }
}

/// One thing the doctor found: what, why it matters, and how to fix it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id of the check that produced it (`rotational-virtual`, `page-cache`…).
    pub code: String,
    /// How much it matters.
    pub severity: Severity,
    /// What it is about: a device (`vda`), a directory, a setup, or `host`.
    pub subject: String,
    /// What was found, with the measured values.
    pub finding: String,
    /// Why it matters for a benchmark.
    pub why: String,
    /// What to do about it.
    pub fix: String,
}

impl Finding {
    /// One line for a warning or note: `code (subject): finding; why. Fix: fix`.
    pub fn one_line(&self) -> String {
        format!(
            "doctor {} ({}): {}; {}. Fix: {}",
            self.code, self.subject, self.finding, self.why, self.fix
        )
    }
}

/// Which error a run controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorControl {
    /// At most α per decision (today's default).
    #[default]
    PerQuestion,
    /// At most α that any decision of the run is wrong (Bonferroni over its questions).
    PerRun,
}

impl ErrorControl {
    /// The words `--error` and the plan key take.
    pub const NAMES: &'static [&'static str] = &["per-question", "per-run"];

    /// From its word (`per-question`, `per-run`).
    pub fn parse(s: &str) -> Option<ErrorControl> {
        match s {
            "per-question" => Some(ErrorControl::PerQuestion),
            "per-run" => Some(ErrorControl::PerRun),
            _ => None,
        }
    }

    /// Its word.
    pub fn word(self) -> &'static str {
        match self {
            ErrorControl::PerQuestion => "per-question",
            ErrorControl::PerRun => "per-run",
        }
    }
}

/// The method per-run control uses, as outputs name it.
pub const ERROR_METHOD: &str = "Bonferroni (familywise)";

/// What `results.json` records of a per-run control ([`crate::stats::family`] applies it) (`error`): absent for per-question.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// The control.
    pub control: ErrorControl,
    /// Its method ([`ERROR_METHOD`]).
    pub method: String,
    /// The run's questions m the error is shared over (each judged at α/m).
    pub questions: usize,
}

impl ErrorRecord {
    /// Per-run control over `questions` questions.
    pub fn per_run(questions: usize) -> ErrorRecord {
        ErrorRecord {
            control: ErrorControl::PerRun,
            method: ERROR_METHOD.into(),
            questions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_substitute_is_what_the_driver_declared_or_in_older_files_the_zfs_fuse_label() {
        let declared = Substitute {
            implementation: "fuse-x".into(),
            what: "x in user space".into(),
            instead_of: "kernel x".into(),
            published: "x".into(),
        };
        let s = SetupInfo {
            implementation: "fuse-x 1.0".into(),
            substitute: Some(declared.clone()),
            ..Default::default()
        };
        assert_eq!(s.substitute(), Some(declared));
        let old = SetupInfo {
            implementation: "zfs-fuse 0.7".into(),
            ..Default::default()
        };
        assert_eq!(old.substitute().unwrap().instead_of, "kernel OpenZFS");
        let real = SetupInfo {
            implementation: "OpenZFS 2.2.2".into(),
            ..Default::default()
        };
        assert_eq!(real.substitute(), None);
        // Absent from the JSON of a setup that is the real thing.
        assert!(!serde_json::to_string(&real).unwrap().contains("substitute"));
    }

    #[test]
    fn roundtrip_and_atomic_save() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("results.json");
        let mut r = Results::new();
        r.samples.push(Sample {
            setup: "ext4".into(),
            workload: "randread".into(),
            metric: crate::metrics::registry::IOPS.into(),
            unit: "IOPS".into(),
            round: 2,
            value: 10.0,
        });
        r.save(&p).unwrap();
        let back = Results::load(&p).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            back.values("ext4", "randread", &crate::metrics::registry::IOPS.into()),
            vec![10.0]
        );
    }
}
