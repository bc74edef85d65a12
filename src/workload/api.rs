//! What a workload kind is, as every kind and every caller sees it: the [`Workload`] trait and
//! the types it speaks (what a kind needs, costs and answers). This module imports no kind and
//! not the registry, so a kind's module depends on it alone and the registry
//! ([`super::registry`]) is the one place that lists the kinds: no import circle.

use super::corpus::CorpusSpec;
use super::spec::{JobDefaults, WorkloadSpec};
use super::step::StepContext;
use crate::measure::LatencyHistogram;
use crate::metrics::MetricId;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Metric id (`metrics::registry`'s constants).
    pub metric: MetricId,
    /// Unit (`IOPS`, `s`, `ms`, `MiB/s`, `bytes`, `files/s`, `bool`…).
    pub unit: String,
    /// Value.
    pub value: f64,
}

impl Metric {
    /// Build a metric from its registered id ([`crate::metrics::registry`]).
    pub fn new(metric: MetricId, unit: &str, value: f64) -> Self {
        Metric {
            metric,
            unit: unit.to_string(),
            value,
        }
    }
}

/// Everything a workload measured.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOutput {
    /// Scalar metrics.
    pub metrics: Vec<Metric>,
    /// Latency histograms by direction (`read`, `write`).
    pub histograms: Vec<(String, LatencyHistogram)>,
    /// Per-second series by metric name (`iops`).
    pub series: Vec<(String, Vec<f64>)>,
    /// Notes for the reader (backend fallback, unsupported discard…).
    pub notes: Vec<String>,
    /// A cold-cache workload ran warm (caches could not be dropped): its results are recorded
    /// under [`warm_id`] so no exporter labels them cold.
    pub ran_warm: bool,
    /// What makes this step's figures doubtful, by kind: the runner records these as the
    /// round's warnings (the report lists them) and `notes` as notes, without reading text.
    pub warnings: Vec<StepWarning>,
    /// An I/O job run by one of several processes (`workload::io::GroupJob`): its whole
    /// engine report, which the leader keeps per process (`fsbench io --mpi`'s rows). An
    /// engine type, so this module names no kind.
    pub job: Option<Box<crate::engine::JobRun>>,
}

/// A warning about a step's or a round's figures: its kind, and the sentence for the reader.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWarning {
    /// What kind of doubt it is.
    pub kind: WarningKind,
    /// The sentence the results and the terminal show.
    pub message: String,
}

/// The kinds of warning a step or a round raises. `code` is each one's stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// An I/O job run until steady never met the criteria: a transient may be in its figures.
    NotSteady,
    /// A job met the steady criteria on a device that was not preconditioned: no claim.
    NotPreconditioned,
    /// The device did not go quiet after mkfs: background work may affect the round.
    NotQuiet,
}

impl WarningKind {
    /// The stable name of the kind (`not-steady`).
    pub fn code(self) -> &'static str {
        match self {
            WarningKind::NotSteady => "not-steady",
            WarningKind::NotPreconditioned => "not-preconditioned",
            WarningKind::NotQuiet => "not-quiet",
        }
    }
}

impl StepWarning {
    /// A warning of `kind` saying `message`.
    pub fn new(kind: WarningKind, message: String) -> Self {
        StepWarning { kind, message }
    }
}

/// The id a cold-cache workload is recorded under when it ran warm: `find-cold` →
/// `find-warm` (any other id gets `-warm` appended).
pub fn warm_id(id: &str) -> String {
    if id.contains("cold") {
        id.replace("cold", "warm")
    } else {
        format!("{id}-warm")
    }
}

/// What a workload may know about where it runs.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadContext<'a> {
    /// fsbench's working directory on the filesystem under test.
    pub dir: &'a Path,
    /// The block device under the filesystem, when there is one.
    pub device: Option<&'a Path>,
    /// Filesystem driver name (`ext4`, `zfs`, `dir`…).
    pub fs: &'a str,
    /// Round number (1-based).
    pub round: u32,
    /// Seed for this step (derived from the run seed, setup and round).
    pub seed: u64,
    /// After a job that writes, sync and wait for the device under this rule to count what
    /// the filesystem writes back later (`None`: the in-job window only).
    pub settle: Option<crate::measure::SettleRule>,
}

/// What a workload does: its plan-file `kind =` name, which results.json records (never
/// renamed). A kind is its registry entry: the module that implements it declares its constant
/// next to its [`Workload`] impl (`impl Kind { pub const Logs: Kind = Kind::named("logs"); }`),
/// so no list of kinds exists outside [`super::registry::REGISTRY`]. The constants keep the
/// names the enum variants had, so generic code reads `Kind::Layout` as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Kind(&'static str);

impl Kind {
    /// The kind named `name` (its plan-file string); a kind's module declares its constant
    /// with this, and [`Kind::parse`] finds a registered one.
    pub const fn named(name: &'static str) -> Kind {
        Kind(name)
    }

    /// Name used in plan files and results (`WorkloadInfo.kind`).
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Which table of the report and which `fsbench` command a kind belongs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The setup itself (mkfs, statvfs after mount).
    Setup,
    /// Jobs on the data file (layout, I/O jobs, memory-capped jobs).
    Io,
    /// Metadata and small-file work (the ones `fsbench meta` runs).
    Metadata,
    /// Compression, databases, job files.
    Application,
    /// Capability probes.
    Capability,
}

impl Family {
    /// The question a kind of this family answers unless it says otherwise.
    pub fn question(self) -> Question {
        match self {
            Family::Setup => Question::Setup,
            Family::Io => Question::Sequential,
            Family::Metadata => Question::SmallFiles,
            Family::Application => Question::Databases,
            Family::Capability => Question::Capabilities,
        }
    }

    /// The report table a kind of this family's headline metrics go in unless it says
    /// otherwise.
    pub fn table(self) -> Table {
        match self {
            Family::Setup | Family::Metadata => Table::Metadata,
            Family::Io => Table::Io,
            Family::Application => Table::Applications,
            Family::Capability => Table::Probes,
        }
    }
}

/// The question a workload answers for a reader: its class in the verdict ("Databases",
/// "Small files and metadata"…). A kind gives the default ([`Workload::question`]); an I/O job's
/// follows its job (random reads, sequential writes, fsync'd writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    /// Metadata and small-file work (untar, find, rm, smallfiles, fs_mark).
    SmallFiles,
    /// Real databases (pgbench, SQLite): TPS, their latency, their fsyncs.
    Databases,
    /// Synthetic random I/O (4K reads and writes).
    RandomIo,
    /// Writes that fsync each one: the commit path of databases and mail.
    FsyncHeavy,
    /// Sequential and large-file I/O (the layout, 1M jobs).
    Sequential,
    /// Space: what mkfs leaves usable, compression.
    Space,
    /// Capability probes: what a filesystem can do, not how fast.
    Capabilities,
    /// Durability: whether fsync'd data survives a power cut (the crash workloads).
    Durability,
    /// Container image stores: layers on overlayfs (pull, start, copy-up, delete, churn).
    Containers,
    /// VM disk images: raw and qcow2 files served through QEMU's block layer.
    VmImages,
    /// Source trees and builds: git clone, checkout, status, gc; build-shaped I/O.
    Builds,
    /// Mail spools: maildir delivery, reading, flag changes, expunge.
    Mail,
    /// Logs: appenders with fdatasync at a commit interval, rotation, tail readers.
    Logs,
    /// Snapshots and backups: snapshot cost and space, send/receive, reflink, dedupe.
    Backups,
    /// Your own workload: an application's recorded calls replayed (`fsbench record`).
    Yours,
    /// Setting a filesystem up (mkfs): shown, not a question of its own.
    Setup,
}

impl Question {
    /// Every question, in the order the verdict lists them.
    pub const ALL: [Question; 16] = [
        Question::Yours,
        Question::SmallFiles,
        Question::Databases,
        Question::RandomIo,
        Question::FsyncHeavy,
        Question::Sequential,
        Question::Containers,
        Question::VmImages,
        Question::Builds,
        Question::Mail,
        Question::Logs,
        Question::Backups,
        Question::Space,
        Question::Capabilities,
        Question::Durability,
        Question::Setup,
    ];

    /// The verdict's heading for it.
    pub fn title(self) -> &'static str {
        match self {
            Question::SmallFiles => "Small files and metadata",
            Question::Databases => "Databases",
            Question::RandomIo => "Random I/O",
            Question::FsyncHeavy => "fsync-heavy (databases' commit path, mail)",
            Question::Sequential => "Sequential and large files",
            Question::Space => "Space efficiency",
            Question::Capabilities => "Capabilities",
            Question::Durability => "Durability (fsync'd data after a power cut)",
            Question::Containers => "Containers (overlayfs image layers)",
            Question::VmImages => "VM images",
            Question::Builds => "Source trees and builds",
            Question::Mail => "Mail",
            Question::Logs => "Logs",
            Question::Backups => "Snapshots and backups",
            Question::Yours => "Your workload (replayed traces)",
            Question::Setup => "Setup",
        }
    }

    /// Its plan-file and results name (`databases`, `fsync-heavy`), as serde writes it.
    pub fn name(self) -> &'static str {
        match self {
            Question::SmallFiles => "small-files",
            Question::Databases => "databases",
            Question::RandomIo => "random-io",
            Question::FsyncHeavy => "fsync-heavy",
            Question::Sequential => "sequential",
            Question::Space => "space",
            Question::Capabilities => "capabilities",
            Question::Durability => "durability",
            Question::Containers => "containers",
            Question::VmImages => "vm-images",
            Question::Builds => "builds",
            Question::Mail => "mail",
            Question::Logs => "logs",
            Question::Backups => "backups",
            Question::Yours => "yours",
            Question::Setup => "setup",
        }
    }

    /// The names a plan file's `class = "…"` may give (every question but setup).
    pub fn class_names() -> Vec<&'static str> {
        Question::ALL
            .into_iter()
            .filter(|q| *q != Question::Setup)
            .map(Question::name)
            .collect()
    }

    /// A plan-file or recorded `class` value (`databases`, `fsync-heavy`…).
    pub fn parse(s: &str) -> Option<Question> {
        Question::ALL.into_iter().find(|q| q.name() == s)
    }
}

/// Which table of the report a workload's headline metrics go in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    /// I/O jobs: IOPS, bandwidth, fsync rate, latency.
    Io,
    /// Metadata and small files (and mkfs).
    Metadata,
    /// Databases and other applications: TPS, their latency.
    Applications,
    /// Usable space after mkfs, compression.
    Capacity,
    /// Capability probes.
    Probes,
    /// Crash consistency: crash states checked, acknowledged operations lost.
    Crash,
}

/// One row of the headline table (seed 000's): a shipped workload, the metric it is quoted
/// by, the seed's words for it and its place in the seed's order. The kind that ships the
/// workload declares it ([`Workload::headlines`]), so a kind added by the recipe brings its
/// own rows and the report has no list of ids.
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    /// Place in seed 000's tables (I/O first, then metadata and capacity); rows sort by it.
    pub rank: u8,
    /// Workload id.
    pub workload: &'static str,
    /// Metrics, first recorded one wins (engines name the fsync rate differently; older
    /// files lack the layout's bandwidth).
    pub metrics: &'static [MetricId],
    /// Label in seed 000's words; the row's unit goes where `{unit}` is, else after a comma.
    pub label: &'static str,
}

/// How a report names a workload: a label (`Random read`) and a short label for quotes
/// (`rm -rf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    /// Label of its rows (`find over the tree, cold cache`).
    pub label: &'static str,
    /// Short label in the verdict's quotes (`cold find`).
    pub short: &'static str,
}

/// The question an I/O job answers, from its recorded parameters (`job.rw`, `job.fsync`, or
/// the plan's `rw`/`fsync` in older files): fsync'd writes, then random, else sequential.
pub fn io_question(params: &serde_json::Value) -> Question {
    let get = |k: &str| {
        params
            .get("job")
            .and_then(|j| j.get(k))
            .or_else(|| params.get(k))
            .or_else(|| params.get("io").and_then(|j| j.get(k)))
    };
    let fsync = get("fsync").and_then(|v| v.as_u64()).unwrap_or(0) > 0
        || get("fdatasync").and_then(|v| v.as_u64()).unwrap_or(0) > 0
        || get("sync").and_then(|v| v.as_bool()).unwrap_or(false);
    let rw = get("rw").and_then(|v| v.as_str()).unwrap_or("");
    if fsync {
        Question::FsyncHeavy
    } else if matches!(rw, "randread" | "randwrite" | "randrw" | "randtrim") {
        Question::RandomIo
    } else {
        Question::Sequential
    }
}

/// When in a setup-round a kind runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Part of creating the setup (mkfs): not a step of its own.
    Setup,
    /// A timed workload on the filesystem under test, every round.
    Timed,
    /// A capability check on an image of its own: once per setup (in its first round, after
    /// the timed workloads), not between timed workloads every round.
    Capability,
}

/// How a kind uses the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusUse {
    /// Not at all.
    None,
    /// Extracts it (untar): later tree workloads depend on it succeeding.
    Extracts,
    /// Needs the extracted tree (find-cold, rm-tree): not run when the extraction failed.
    Tree,
}

/// Whether a kind writes, and so gets the post-job settle and device totals
/// (`device_write_bytes_total`, `write_amplification_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Reads, deletes, statvfs, probes (which write an image of their own).
    No,
    /// The native engine counts and settles itself; with `--engine fio` the runner does.
    Engine,
    /// The runner samples the device around the step and settles after it.
    Runner,
}

/// What a workload needs to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The shared data file (written by `layout` earlier in the round).
    pub data_file: bool,
    /// The corpus.
    pub corpus: CorpusUse,
    /// A small filesystem image of its own (the one under test is untouched).
    pub own_image: bool,
    /// Root (loop devices, mkfs, cgroups, a server run as another user).
    pub root: bool,
    /// The external program `fsbench plan` names for it (`None`: fsbench itself).
    pub tool: Option<&'static str>,
    /// Every external program it runs besides `tool` (which is added when not listed):
    /// `fsbench doctor` and `--install-missing` read them, so a kind's programs are declared
    /// here and nowhere else (their packages: `host/packages.rs`'s row, or for a program no
    /// row lists, the kind's own [`Workload::packages`]).
    pub programs: &'static [&'static str],
    /// Whether it writes (see [`Writes`]).
    pub writes: Writes,
    /// When it runs.
    pub phase: Phase,
}

impl Needs {
    /// A timed workload that needs nothing and does not write.
    pub const NOTHING: Needs = Needs {
        data_file: false,
        corpus: CorpusUse::None,
        own_image: false,
        root: false,
        tool: None,
        programs: &[],
        writes: Writes::No,
        phase: Phase::Timed,
    };
    /// A timed workload that needs nothing and writes: the runner counts the device around it.
    pub const WRITES: Needs = Needs {
        writes: Writes::Runner,
        ..Needs::NOTHING
    };

    /// Every external program it runs: `programs`, then `tool` when not among them.
    pub fn tools(&self) -> Vec<&'static str> {
        let mut v = self.programs.to_vec();
        if let Some(t) = self.tool.filter(|t| !v.contains(t)) {
            v.push(t);
        }
        v
    }
}

/// What a step costs, in the ETA's terms; `plan::eta` turns it into seconds with its
/// calibration constants, so the constants stay in one place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    /// Nothing beyond the per-step overhead.
    Nothing,
    /// A timed I/O job: ramp + runtime, plus write-back when buffered.
    Job {
        /// Measured time.
        runtime: std::time::Duration,
        /// Warm-up.
        ramp: std::time::Duration,
        /// O_DIRECT (no write-back after it).
        direct: bool,
    },
    /// Writing this many bytes at the layout bandwidth, times `share`.
    Write {
        /// Bytes written.
        bytes: u64,
        /// Share of the layout bandwidth's time (compressible data is cheaper).
        share: f64,
        /// Seconds of work after the write (`--precondition` after the layout).
        then_s: f64,
    },
    /// One pass over the extracted corpus.
    Corpus(CorpusStep),
    /// Small files made one by one (smallfiles, fsmark): `files` in all, each fsync'd or not.
    Files {
        /// Files created (and, for smallfiles, read and deleted).
        files: u64,
        /// Each file is made durable on its own (fsmark's per-file fsync), the dominant cost.
        fsync: bool,
    },
    /// A capability probe.
    Probe,
    /// The workload's own estimate, seconds (servers, databases, job files).
    Seconds(f64),
}

/// Which pass over the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusStep {
    /// Extraction.
    Untar,
    /// Cold walk (drops caches twice).
    Walk,
    /// Removal.
    Remove,
}

/// What `fsbench plan` may use to describe a step.
pub struct Describe<'a> {
    /// The plan's job defaults (file size, runtime, ramp).
    pub defaults: &'a JobDefaults,
    /// The plan's corpus.
    pub corpus: &'a CorpusSpec,
    /// Worker threads of the metadata workloads.
    pub threads: usize,
    /// The setup the step runs on.
    pub setup: &'a crate::fs::SetupSpec,
}

/// A `[[workload]]` table a kind adds to a shipped profile (`plan/profiles/<profile>.toml`),
/// appended to the profile's text when it is loaded: a kind's workloads join the profiles
/// from its own module, not from a line in each profile's file.
#[derive(Debug)]
pub struct ProfileEntry {
    /// The shipped profile's name (`quick`).
    pub profile: &'static str,
    /// The table's keys, as in a plan file (`id = "pgbench-rw"\noptional = true\nscale = 2`).
    pub table: &'static str,
}

/// A `run`/`plan` flag a kind owns, taking one value (`--image-archive PATH`,
/// `--replay-speed N`): what it does is declared by the kind ([`Workload::flags`]), and the
/// plan and the run apply it for every kind without naming one
/// (`plan::Overrides::kind_profile`, `plan::resolve::apply_kind_flags`). Its clap argument is
/// built from these fields when the command line is read (`cli::kind_flags`), and
/// docs/parameters.md lists it from them (`plan::knobs::kind_row`), so the flag is declared
/// here only.
#[derive(Debug)]
pub struct KindFlag {
    /// The flag, then its other spellings (`&["--replay-speed", "--replay-timing"]`), which
    /// `--help` shows as aliases.
    pub flags: &'static [&'static str],
    /// What its value is, as `--help` writes it (`FILE|DIR`).
    pub value_name: &'static str,
    /// What kind of value it takes, checked when the command line is read.
    pub value: KindValue,
    /// What it does, as `--help` (without the final period) and docs/parameters.md say it.
    pub doc: &'static str,
    /// How it combines with a plan file, in words (docs/parameters.md).
    pub merge: &'static str,
    /// Where its value is recorded (docs/parameters.md).
    pub lands: &'static str,
    /// The profile a run takes when the flag comes without `--plan` and `--profile`.
    pub alone: Option<&'static str>,
    /// Put the flag's value, as given, into the resolved workloads (it may read the file it
    /// names; `Err` refuses the run, exit 2, before anything is created).
    pub apply: fn(&mut [WorkloadSpec], &std::ffi::OsStr) -> crate::Result<()>,
}

impl KindFlag {
    /// The flag's own spelling (`--replay-speed`), the first of [`KindFlag::flags`].
    pub fn flag(&self) -> &'static str {
        self.flags[0]
    }
}

/// The kind of value a [`KindFlag`] takes.
#[derive(Debug, Clone, Copy)]
pub enum KindValue {
    /// A path to a file or a directory (completed as one).
    Path,
    /// A word the kind reads (`N|as-recorded|as-fast-as-possible`): this parser runs when the
    /// command line is read, so a bad value is a usage error (exit 2) naming the flag, with
    /// the parser's message; `apply` then gets a value it accepted.
    Word(fn(&str) -> Result<(), String>),
}

/// One workload kind.
pub trait Workload: Sync {
    /// The kind this entry implements (its module's `Kind` constant).
    fn kind(&self) -> Kind;
    /// Its plan-file `kind =` name (never renamed: results.json records it).
    fn name(&self) -> &'static str {
        self.kind().as_str()
    }
    /// Its own plan-file keys with a one-line doc each (`("scale", "pgbench scale factor")`):
    /// the plan file's `[[workload]]` documentation lists them, so a kind's keys are declared
    /// in its module only. The common keys (`id`, `kind`, `class`, `setups`…) are not listed.
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The packages of programs in its `needs` that `host/packages.rs` does not list (one
    /// [`Tool`] per program: its package per distribution, where it lives off PATH): declared
    /// beside the program, so a kind that brings a new program needs no row there; the doctor
    /// and `--install-missing` read them (`registry::declared_tool`). None by default.
    ///
    /// [`Tool`]: crate::host::packages::Tool
    fn packages(&self) -> &'static [crate::host::packages::Tool] {
        &[]
    }
    /// Its own claims: `[[claim]]` tables in `claims/claims.toml`'s format, kept in its folder
    /// (`include_str!("claims.toml")`), which `claims::all` appends to the shipped ones, so a
    /// kind's claims need no edit there. None by default.
    fn claims(&self) -> &'static str {
        ""
    }
    /// The tables it adds to shipped profiles ([`ProfileEntry`]); none by default.
    fn profile_entries(&self) -> &'static [ProfileEntry] {
        &[]
    }
    /// The `run`/`plan` flags it owns ([`KindFlag`]); none by default.
    fn flags(&self) -> &'static [KindFlag] {
        &[]
    }
    /// Its family (report table, `fsbench meta`).
    fn family(&self) -> Family;
    /// The question it answers, given the parameters a results file recorded for it
    /// (`WorkloadInfo.params`): by default its family's.
    fn question(&self, _params: &serde_json::Value) -> Question {
        self.family().question()
    }
    /// The report table its headline metrics go in: by default its family's.
    fn table(&self) -> Table {
        self.family().table()
    }
    /// How the report names the workload `id` of this kind (its shipped ones); `None`: by id.
    fn names(&self, _id: &str) -> Option<Names> {
        None
    }
    /// How the report names a workload from the parameters a results file recorded for it
    /// (`WorkloadInfo.params`: a replay is named after its trace), as (label, short label);
    /// `None`: as [`Workload::names`] does.
    fn named(&self, _params: &serde_json::Value) -> Option<(String, String)> {
        None
    }
    /// The headline-table rows of its shipped workloads (none by default).
    fn headlines(&self) -> &'static [Headline] {
        &[]
    }
    /// What `w` needs to run.
    fn needs(&self, w: &WorkloadSpec) -> Needs;
    /// Metric ids it may emit (`metrics::registry`'s constants).
    fn emits(&self) -> &'static [MetricId];
    /// The workloads of this kind fsbench ships (catalog ids, in suite order).
    fn shipped(&self) -> Vec<WorkloadSpec> {
        Vec::new()
    }
    /// A plan-file `[[workload]]` table using this kind (documentation and a unit test).
    fn example(&self) -> &'static str;
    /// What the step costs, for the ETA.
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost;
    /// One line for `fsbench plan`'s step table.
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String;
    /// Its own plan-file keys, taken out of its `[[workload]]` table into `spec` before the
    /// common keys are read (so what is left must be a common key); also where its parameters
    /// get their defaults. `base` is the catalog workload the table's id names, whose
    /// parameters it inherits. `Err` is the message; the plan file names the workload.
    fn take_params(
        &self,
        _t: &mut toml::Table,
        _base: Option<&WorkloadSpec>,
        _spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        Ok(())
    }
    /// After the common keys were read into `spec`: its kind's defaults and checks that
    /// depend on them (a probe's id prefix, memcap's own file). `Err` is the message.
    fn complete(&self, _spec: &mut WorkloadSpec) -> Result<(), String> {
        Ok(())
    }
    /// Checks of a selected workload against what is installed (e.g. PostgreSQL's setting
    /// names), once before anything is created; `Err` refuses the run (exit 2).
    fn check_host(&self, _w: &WorkloadSpec) -> Result<(), String> {
        Ok(())
    }
    /// Why `w` cannot run on a `--dir` target (refused at plan time, exit 2), if it cannot.
    fn refused_on_dir(&self, _w: &WorkloadSpec) -> Option<&'static str> {
        None
    }
    /// Whether this machine can run `w`; `Err` says what is missing and the run skips it.
    fn available(&self, _w: &WorkloadSpec) -> Result<(), String> {
        Ok(())
    }
    /// Whether `w` must meet the filesystem as the setup's previous step left it (its caches
    /// kept and read: `rm -rf` right after the walk). A round by steps (`runner::by_step`)
    /// then runs it right after that step on the same setup, never after another setup's
    /// step, whose cache drop would have taken what it reads.
    fn follows_previous(&self, _w: &WorkloadSpec) -> bool {
        false
    }
    /// Untimed preparation right before the step: by default the caches are dropped.
    fn prepare(&self, _cx: &mut StepContext<'_>, _w: &WorkloadSpec) -> crate::Result<Caches> {
        Ok(Caches::Drop)
    }
    /// Run the step.
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput>;
}

/// What [`Workload::prepare`] asks of the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caches {
    /// Drop the page cache, dentries and inodes before the step.
    Drop,
    /// Leave them (statvfs; a fio phase whose sections already ran together).
    Keep,
}
