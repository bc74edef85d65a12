//! The workload registry: one [`Workload`] implementation per kind, in [`REGISTRY`].
//!
//! Generic code (the runner's step, the ETA, `fsbench plan`, `fsbench meta`, the catalog)
//! walks this table and asks each entry what it needs, what it emits and how long it takes;
//! nothing outside a kind's own module matches on the kind. docs/ARCHITECTURE.md ("How to add
//! a workload") names the files a new kind touches.

use super::WorkloadOutput;
use super::spec::{JobDefaults, WorkloadSpec};
use super::step::StepContext;
use crate::metrics::MetricId;
use serde::{Deserialize, Serialize};

/// What a workload does: the plan-file `kind =` value. Each variant has exactly one entry in
/// [`REGISTRY`] (a unit test checks the names agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// mkfs / zpool create, timed (happens once per setup-round whatever is selected).
    Mkfs,
    /// statvfs right after mount.
    UsableSpace,
    /// Write the data file once, timed.
    Layout,
    /// An I/O job on the data file.
    Io,
    /// An I/O job inside a memory-capped cgroup.
    Memcap,
    /// Extract the corpus.
    Untar,
    /// Walk the extracted tree with a cold cache.
    FindCold,
    /// Remove the extracted tree.
    RmTree,
    /// Many small files (create/read/delete).
    Smallfiles,
    /// fs_mark-style create + fsync.
    Fsmark,
    /// Write text-like (≈2.4:1) data and read the on-disk compression ratio back.
    Compress,
    /// PostgreSQL's pgbench on a private server ([`crate::workload::pgbench`]).
    Pgbench,
    /// Small transactions on a real SQLite database ([`crate::workload::sqlite`]).
    Sqlite,
    /// One section of a user's fio job file (`--fio-job`, plan kind `fio-job`).
    FioJob,
    /// A capability probe (`probe-reflink`…).
    Probe,
    /// Crash consistency on a recording image ([`crate::workload::crash`]).
    Crash,
    // Containers and VM images.
    /// A VM disk image through QEMU's block layer ([`crate::workload::vmimage`]).
    VmImage,
    /// Container image layers on overlayfs ([`crate::workload::container`]).
    Container,
    // Source trees, mail, logs, snapshots and backups.
    /// Real git on a generated repository: clone, checkout, status, gc, a build
    /// ([`crate::workload::usecase::git`]).
    Git,
    /// Maildir delivery, reading, flags, expunge ([`crate::workload::usecase::mail`]).
    Maildir,
    /// Debian's PostMark, the mail cross-check ([`crate::workload::usecase::postmark`]).
    Postmark,
    /// Log appenders, rotation, tail followers ([`crate::workload::usecase::logs`]).
    Logs,
    /// Snapshots, send/receive, reflink, dedupe, trim ([`crate::workload::backup`]).
    Backup,
    /// A FAKE step for the runner's unit tests ([`crate::workload::fake`]; not in a release).
    #[cfg(test)]
    TestFake,
}

/// The registry, with the unit tests' fake kind appended in test builds only.
macro_rules! registry {
    ($($entry:expr),* $(,)?) => {
        /// Every workload kind, in catalog (suite) order: one line per kind.
        #[cfg(not(test))]
        pub static REGISTRY: &[&dyn Workload] = &[$($entry),*];
        /// Every workload kind, in catalog (suite) order: one line per kind (and the fake).
        #[cfg(test)]
        pub static REGISTRY: &[&dyn Workload] = &[$($entry,)* &super::fake::Fake];
    };
}

registry![
    &super::builtin::Mkfs,
    &super::builtin::UsableSpace,
    &super::builtin::Layout,
    &super::builtin::Io,
    &super::builtin::Memcap,
    &super::meta::kind::Untar,
    &super::meta::kind::FindCold,
    &super::meta::kind::RmTree,
    &super::meta::kind::Smallfiles,
    &super::meta::kind::Fsmark,
    &super::builtin::Compress,
    &super::pgbench::kind::Pgbench,
    &super::sqlite::kind::Sqlite,
    &super::builtin::FioJob,
    &super::probe::kind::Probe,
    &super::crash::kind::Crash,
    // Containers and VM images.
    &super::vmimage::kind::VmImage,
    &super::container::kind::Container,
    // Source trees, mail, logs, snapshots and backups.
    &super::usecase::kind::Git,
    &super::usecase::kind::Maildir,
    &super::usecase::kind::Postmark,
    &super::usecase::kind::Logs,
    &super::backup::kind::Backup,
];

/// The registry entry of `kind`.
pub fn of(kind: Kind) -> &'static dyn Workload {
    *REGISTRY
        .iter()
        .find(|w| w.kind() == kind)
        .unwrap_or_else(|| panic!("workload kind {kind:?} has no registry entry"))
}

impl Kind {
    /// Name used in plan files and results (`WorkloadInfo.kind`).
    pub fn as_str(self) -> &'static str {
        of(self).name()
    }

    /// Parse a plan-file kind.
    pub fn parse(s: &str) -> Option<Kind> {
        REGISTRY.iter().find(|w| w.name() == s).map(|w| w.kind())
    }

    /// Kinds whose results are `results.json` "io" jobs (they get a fio command line).
    pub fn is_io(self) -> bool {
        of(self).family() == Family::Io
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
    /// Setting a filesystem up (mkfs): shown, not a question of its own.
    Setup,
}

impl Question {
    /// Every question, in the order the verdict lists them.
    pub const ALL: [Question; 15] = [
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

/// The registry entry a results file's recorded `kind` names, older files' names included
/// (`meta` was every metadata kind, `space` the statvfs step).
pub fn recorded(kind: &str) -> Option<&'static dyn Workload> {
    #[cfg(test)]
    if let Some(w) = EXTRA.with(|e| e.borrow().iter().copied().find(|w| w.name() == kind)) {
        return Some(w);
    }
    let kind = match kind {
        "meta" => Kind::Untar,
        "space" => Kind::UsableSpace,
        other => Kind::parse(other)?,
    };
    Some(of(kind))
}

#[cfg(test)]
thread_local! {
    static EXTRA: std::cell::RefCell<Vec<&'static dyn Workload>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Tests only: add a workload to what [`recorded`] finds on this thread, as a new kind added
/// by the documented recipe would be (a line in [`REGISTRY`]), without a `Kind` variant.
#[cfg(test)]
pub fn register_for_test(w: &'static dyn Workload) {
    EXTRA.with(|e| e.borrow_mut().push(w));
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

/// Every kind's headline rows, in the seed's order ([`Headline::rank`]).
pub fn headlines() -> Vec<&'static Headline> {
    #[cfg(test)]
    let extra: Vec<&'static dyn Workload> = EXTRA.with(|e| e.borrow().clone());
    #[cfg(not(test))]
    let extra: Vec<&'static dyn Workload> = Vec::new();
    let mut rows: Vec<&'static Headline> = REGISTRY
        .iter()
        .copied()
        .chain(extra)
        .flat_map(|w| w.headlines().iter())
        .collect();
    rows.sort_by_key(|h| h.rank);
    rows
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

/// The label and short label of a recorded workload ([`Workload::names`]); a file that does
/// not record its kind (samples only), or an older kind that covered several (`meta`), is
/// named by whichever entry ships that id; any other workload is shown by its id.
pub fn names(kind: &str, id: &str) -> (String, String) {
    let own = recorded(kind).and_then(|w| w.names(id));
    match own.or_else(|| REGISTRY.iter().find_map(|w| w.names(id))) {
        Some(n) => (n.label.to_string(), n.short.to_string()),
        None => (id.to_string(), id.to_string()),
    }
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

/// What a recorded workload is for: its question and its table. A recorded `class` (a plan
/// file's or a job file's own) wins over the kind's answer; an unknown kind answers nothing
/// and goes in the I/O table.
pub fn purpose(kind: &str, params: &serde_json::Value) -> (Option<Question>, Table) {
    let own = params
        .get("class")
        .and_then(|c| c.as_str())
        .and_then(Question::parse);
    match recorded(kind) {
        Some(w) => (own.or(Some(w.question(params))), w.table()),
        None => (own, Table::Io),
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
    /// An external program it runs, by name (`None`: fsbench itself).
    pub tool: Option<&'static str>,
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
        writes: Writes::No,
        phase: Phase::Timed,
    };
    /// A timed workload that needs nothing and writes: the runner counts the device around it.
    pub const WRITES: Needs = Needs {
        writes: Writes::Runner,
        ..Needs::NOTHING
    };
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
    /// smallfiles or fsmark at their default sizes.
    SmallFiles,
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
    pub corpus: &'a super::meta::CorpusSpec,
    /// Worker threads of the metadata workloads.
    pub threads: usize,
    /// The setup the step runs on.
    pub setup: &'a crate::fs::SetupSpec,
}

/// One workload kind.
pub trait Workload: Sync {
    /// The variant this entry implements.
    fn kind(&self) -> Kind;
    /// Its plan-file `kind =` name (never renamed: results.json records it).
    fn name(&self) -> &'static str;
    /// Its family (report table, `fsbench meta`).
    fn family(&self) -> Family;
    /// The question it answers, given the parameters a results file recorded for it
    /// (`WorkloadInfo.params`): by default its family's.
    fn question(&self, _params: &serde_json::Value) -> Question {
        match self.family() {
            Family::Setup => Question::Setup,
            Family::Io => Question::Sequential,
            Family::Metadata => Question::SmallFiles,
            Family::Application => Question::Databases,
            Family::Capability => Question::Capabilities,
        }
    }
    /// The report table its headline metrics go in: by default its family's.
    fn table(&self) -> Table {
        match self.family() {
            Family::Setup | Family::Metadata => Table::Metadata,
            Family::Io => Table::Io,
            Family::Application => Table::Applications,
            Family::Capability => Table::Probes,
        }
    }
    /// How the report names the workload `id` of this kind (its shipped ones); `None`: by id.
    fn names(&self, _id: &str) -> Option<Names> {
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

/// Whether `w` is a step of setup `setup`'s round `round`: timed workloads every round,
/// capability probes in the first round only, mkfs never (it is part of creating the setup),
/// and none on a setup the workload is not for ([`WorkloadSpec::setups`]).
pub fn step_in_round(w: &WorkloadSpec, setup: &str, round: u32) -> bool {
    if !w.setups.is_empty() && !w.setups.iter().any(|s| s == setup) {
        return false;
    }
    match of(w.kind).needs(w).phase {
        Phase::Setup => false,
        Phase::Timed => true,
        Phase::Capability => round == 1,
    }
}

/// The catalog: every kind's shipped workloads, in registry order.
pub fn shipped() -> Vec<WorkloadSpec> {
    REGISTRY.iter().flat_map(|w| w.shipped()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_rows_are_their_kinds_workloads_in_one_order() {
        let rows = headlines();
        let ranks: std::collections::BTreeSet<u8> = rows.iter().map(|h| h.rank).collect();
        assert_eq!(ranks.len(), rows.len(), "two rows share a rank");
        // Each row is a workload its kind ships or records (find-warm stands in for
        // find-cold without root), so the kind names it.
        for w in REGISTRY {
            for h in w.headlines() {
                assert!(
                    w.names(h.workload).is_some(),
                    "{}: headline row {} is not one of its workloads",
                    w.name(),
                    h.workload
                );
                assert!(!h.metrics.is_empty());
            }
        }
        assert_eq!(
            rows[0].workload, "randread",
            "seed 000 opens with 4K random reads"
        );
    }

    #[test]
    fn question_names_are_serdes() {
        for q in Question::ALL {
            assert_eq!(serde_json::to_value(q).unwrap(), q.name());
            assert_eq!(Question::parse(q.name()), Some(q));
        }
    }

    #[test]
    fn names_are_unique_and_match_the_serde_names() {
        let mut seen = std::collections::BTreeSet::new();
        for w in REGISTRY {
            assert!(seen.insert(w.name()), "duplicate kind {}", w.name());
            let json = serde_json::to_string(&w.kind()).unwrap();
            assert_eq!(json, format!("\"{}\"", w.name()));
            assert_eq!(Kind::parse(w.name()), Some(w.kind()));
            assert_eq!(of(w.kind()).name(), w.name(), "one entry per kind");
        }
    }

    #[test]
    fn shipped_ids_are_unique_and_of_their_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for k in REGISTRY {
            for w in k.shipped() {
                assert!(seen.insert(w.id.clone()), "duplicate workload id {}", w.id);
                assert_eq!(w.kind, k.kind(), "{}", w.id);
            }
        }
    }

    #[test]
    fn emitted_metric_ids_are_unique_per_kind() {
        for k in REGISTRY {
            let mut seen = std::collections::BTreeSet::new();
            for m in k.emits() {
                assert!(seen.insert(*m), "{} lists {m} twice", k.name());
            }
            let setup_only = k.needs(&WorkloadSpec::simple("x", k.kind())).phase == Phase::Setup;
            assert!(
                setup_only || !k.emits().is_empty(),
                "{} emits nothing",
                k.name()
            );
        }
    }
}
