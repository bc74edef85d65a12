//! Registry entries of the metadata workloads: untar, find-cold, rm-tree (on the extracted
//! corpus), smallfiles and fsmark (in directories of their own inside the data directory).

use super::{FsmarkSpec, SmallFilesSpec};
use crate::Error;
use crate::metrics::MetricId;
use crate::workload::api::{
    Caches, CorpusStep, CorpusUse, Cost, Describe, Family, Headline, Kind, Names, Needs, Workload,
    WorkloadOutput, Writes,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Extract the corpus.
    pub const Untar: Kind = Kind::named("untar");
    /// Walk the extracted tree with a cold cache.
    pub const FindCold: Kind = Kind::named("find-cold");
    /// Remove the extracted tree.
    pub const RmTree: Kind = Kind::named("rm-tree");
    /// Many small files (create/read/delete).
    pub const Smallfiles: Kind = Kind::named("smallfiles");
    /// fs_mark-style create + fsync.
    pub const Fsmark: Kind = Kind::named("fsmark");
}

const TREE_METRICS: &[MetricId] = {
    use crate::metrics::registry::{ENTRIES, OPS_PER_S, SECONDS};
    &[SECONDS, ENTRIES, OPS_PER_S]
};

/// What a step that writes a tree emits: its time, entries and bytes, their rate, and the
/// device's writes (per step and until written back) with the amplification they give.
const WRITING_TREE_METRICS: &[MetricId] = {
    use crate::metrics::registry::*;
    &[
        SECONDS,
        ENTRIES,
        BYTES,
        OPS_PER_S,
        DEVICE_WRITE_BYTES,
        DEVICE_WRITE_BYTES_TOTAL,
        WRITE_AMPLIFICATION,
        WRITE_AMPLIFICATION_TOTAL,
        DEVICE_BYTES_PER_FILE,
        DEVICE_BYTES_PER_FILE_TOTAL,
    ]
};

/// `corpus 3 copies at scale 1, 2 thread(s)`.
fn describe_corpus(d: &Describe<'_>) -> String {
    let c = d.corpus;
    let source = match (&c.from_dir, &c.file) {
        (Some(dir), _) => format!("corpus packed from {}", dir.display()),
        (None, Some(f)) => format!("corpus from {}", f.display()),
        (None, None) => format!(
            "corpus {} cop{} at scale {}",
            c.copies,
            if c.copies == 1 { "y" } else { "ies" },
            c.scale
        ),
    };
    format!("{source}, {} thread(s)", d.threads)
}

fn tree_needs(corpus: CorpusUse, writes: Writes) -> Needs {
    Needs {
        corpus,
        writes,
        ..Needs::NOTHING
    }
}

/// Fail at once when this setup-round's extraction failed.
fn check_tree(cx: &StepContext<'_>, w: &WorkloadSpec) -> crate::Result<()> {
    if cx.shared.tree_failed {
        return Err(Error::workload(
            &w.id,
            "not run: it needs the extracted corpus and untar failed",
        ));
    }
    Ok(())
}

/// Make sure the extracted tree exists (an untimed untar when it does not: `fsbench meta
/// --workload find-cold`; `fsbench run` schedules untar before it instead).
fn ensure_tree(cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
    check_tree(cx, w)?;
    let tree = cx.tree();
    if !tree.exists() {
        eprintln!(
            "fsbench: note: {}: extracting the corpus first into {} (not measured; removed afterwards; --existing walks a tree you already have)",
            w.id,
            tree.display()
        );
        let threads = cx.threads;
        let corpus = cx.corpus()?;
        if let Err(e) = super::untar(corpus, &tree, threads) {
            let _ = super::remove_all(&tree);
            cx.shared.tree_failed = true;
            return Err(e);
        }
    }
    Ok(Caches::Drop)
}

/// Extract the corpus into the data directory's `tree/`.
pub struct Untar;

impl Workload for Untar {
    fn kind(&self) -> Kind {
        Kind::Untar
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "untar" => ("Untar the corpus", "untar"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 11,
            workload: "untar",
            metrics: &[SECONDS],
            label: "Untar the corpus",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        tree_needs(CorpusUse::Extracts, Writes::Runner)
    }
    fn emits(&self) -> &'static [MetricId] {
        WRITING_TREE_METRICS
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("untar", Kind::Untar)]
    }
    fn example(&self) -> &'static str {
        "id = \"untar\"\nkind = \"untar\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Corpus(CorpusStep::Untar)
    }
    fn describe(&self, _: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_corpus(d)
    }
    fn run(&self, cx: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let tree = cx.tree();
        let threads = cx.threads;
        super::remove_all(&tree)?;
        let corpus = cx.corpus()?;
        let r = super::untar(corpus, &tree, threads);
        if r.is_err() {
            // Free the space a partial tree holds before the next workload runs.
            let _ = super::remove_all(&tree);
        }
        cx.shared.tree_failed = r.is_err();
        r
    }
}

/// Walk the extracted tree with a cold cache.
pub struct FindCold;

impl Workload for FindCold {
    fn kind(&self) -> Kind {
        Kind::FindCold
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "find-cold" => ("find over the tree, cold cache", "cold find"),
            "find-warm" => (
                "find over the tree, warm cache (caches could not be dropped)",
                "warm find",
            ),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 12,
                workload: "find-cold",
                metrics: &[SECONDS],
                label: "find, cold cache",
            },
            Headline {
                rank: 13,
                workload: "find-warm",
                metrics: &[SECONDS],
                label: "find over the tree, warm cache (caches could not be dropped)",
            },
        ];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        // A read-only walk still writes: under relatime the first read of a changed directory
        // updates its atime. Counting the device writes (and settling them) is what lets the
        // noatime claim be judged.
        tree_needs(CorpusUse::Tree, Writes::Runner)
    }
    fn emits(&self) -> &'static [MetricId] {
        TREE_METRICS
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("find-cold", Kind::FindCold)]
    }
    fn example(&self) -> &'static str {
        "id = \"find-cold\"\nkind = \"find-cold\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Corpus(CorpusStep::Walk)
    }
    fn describe(&self, _: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_corpus(d)
    }
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        ensure_tree(cx, w)
    }
    fn run(&self, cx: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let (tree, threads) = (cx.tree(), cx.threads);
        let expected = cx.corpus()?.entries();
        super::find_cold(&tree, threads, Some(expected), false)
    }
}

/// Remove the extracted tree.
pub struct RmTree;

impl Workload for RmTree {
    fn kind(&self) -> Kind {
        Kind::RmTree
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "rm-tree" => ("rm -rf the tree", "rm -rf"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 14,
            workload: "rm-tree",
            metrics: &[SECONDS],
            label: "rm -rf the tree",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        tree_needs(CorpusUse::Tree, Writes::No)
    }
    fn emits(&self) -> &'static [MetricId] {
        TREE_METRICS
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("rm-tree", Kind::RmTree)]
    }
    fn example(&self) -> &'static str {
        "id = \"rm-tree\"\nkind = \"rm-tree\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Corpus(CorpusStep::Remove)
    }
    fn describe(&self, _: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_corpus(d)
    }
    fn follows_previous(&self, _: &WorkloadSpec) -> bool {
        true
    }
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        // Seed 000 unpacks, walks the tree cold, "then deletes it": rm -rf meets the tree as
        // the walk left it (its directories and inodes cached), so the caches stay. Dropping
        // them made rm-tree a cold delete that `rm -rf` after `find` never is.
        ensure_tree(cx, w)?;
        Ok(Caches::Keep)
    }
    fn run(&self, cx: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let (tree, threads) = (cx.tree(), cx.threads);
        let expected = cx.corpus()?.entries();
        super::rm_tree_checked(&tree, threads, Some(expected))
    }
}

/// Many small files: create, sync, read back, delete (in `smallfiles/`).
pub struct Smallfiles;

impl Workload for Smallfiles {
    fn kind(&self) -> Kind {
        Kind::Smallfiles
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        tree_needs(CorpusUse::None, Writes::Runner)
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            CREATE_SECONDS,
            CREATE_FILES_PER_S,
            SYNC_SECONDS,
            READ_SECONDS,
            READ_FILES_PER_S,
            ENTRIES,
            BYTES,
            DEVICE_WRITE_BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION,
            WRITE_AMPLIFICATION_TOTAL,
            DEVICE_BYTES_PER_FILE,
            DEVICE_BYTES_PER_FILE_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("smallfiles", Kind::Smallfiles).opt()]
    }
    fn example(&self) -> &'static str {
        "id = \"smallfiles\"\nkind = \"smallfiles\""
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Files {
            files: w.params_of::<SmallFilesSpec>().unwrap_or_default().files,
            fsync: false,
        }
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let s = w.params_of::<SmallFilesSpec>().unwrap_or_default();
        format!(
            "{} files of {} B in {} directories: create, sync, read, delete",
            s.files, s.size, s.dirs
        )
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        // Creates its own subdirectory (`smallfiles/`) inside the data dir.
        super::smallfiles(
            cx.work.dir,
            &w.params_of::<SmallFilesSpec>().unwrap_or_default(),
        )
    }
}

/// fs_mark-style creates with fsync (in `fsmark/`).
pub struct Fsmark;

impl Fsmark {
    fn spec(w: &WorkloadSpec, threads: usize) -> FsmarkSpec {
        w.params_of::<FsmarkSpec>().unwrap_or(FsmarkSpec {
            threads,
            ..Default::default()
        })
    }
}

impl Workload for Fsmark {
    fn kind(&self) -> Kind {
        Kind::Fsmark
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        tree_needs(CorpusUse::None, Writes::Runner)
    }
    fn emits(&self) -> &'static [MetricId] {
        WRITING_TREE_METRICS
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("fsmark", Kind::Fsmark).opt()]
    }
    fn example(&self) -> &'static str {
        "id = \"fsmark\"\nkind = \"fsmark\""
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        // Writers beyond one share two cores and one journal here, so the estimate counts
        // the files of one writer unless the spec names more (`--threads` is not in a plan).
        let s = Self::spec(w, 1);
        Cost::Files {
            files: s.files_per_thread * s.threads.max(1) as u64,
            fsync: s.fsync != super::FsyncPolicy::None,
        }
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        let s = Self::spec(w, d.threads);
        format!(
            "{} thread(s) × {} files of {} B, fsync {:?}",
            s.threads, s.files_per_thread, s.size, s.fsync
        )
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        // Creates its own subdirectory (`fsmark/`) inside the data dir.
        super::fsmark(cx.work.dir, &Self::spec(w, cx.threads))
    }
}
