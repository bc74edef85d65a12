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

/// One metadata kind as data: the five differ only in these fields, so one impl of
/// [`Workload`] serves them all and a sixth is one more value (and its `kinds!` line).
pub struct MetaKind {
    kind: Kind,
    /// How the report names its ids: `(id, label, short label)`.
    names: &'static [(&'static str, &'static str, &'static str)],
    headlines: &'static [Headline],
    corpus: CorpusUse,
    writes: Writes,
    emits: &'static [MetricId],
    /// Shipped opt-in (`--only`), leaving the standard suite as it is.
    opt_in: bool,
    example: &'static str,
    cost: fn(&WorkloadSpec) -> Cost,
    describe: fn(&WorkloadSpec, &Describe<'_>) -> String,
    /// Untimed work before the step: `None` drops the caches (the default).
    prepare: Option<fn(&mut StepContext<'_>, &WorkloadSpec) -> crate::Result<Caches>>,
    follows_previous: bool,
    run: fn(&mut StepContext<'_>, &WorkloadSpec) -> crate::Result<WorkloadOutput>,
}

impl Workload for MetaKind {
    fn kind(&self) -> Kind {
        self.kind
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn names(&self, id: &str) -> Option<Names> {
        self.names
            .iter()
            .find(|(i, _, _)| *i == id)
            .map(|&(_, label, short)| Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        self.headlines
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        tree_needs(self.corpus, self.writes)
    }
    fn emits(&self) -> &'static [MetricId] {
        self.emits
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        let w = WorkloadSpec::simple(self.kind.as_str(), self.kind);
        vec![if self.opt_in { w.opt() } else { w }]
    }
    fn example(&self) -> &'static str {
        self.example
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        (self.cost)(w)
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        (self.describe)(w, d)
    }
    fn follows_previous(&self, _: &WorkloadSpec) -> bool {
        self.follows_previous
    }
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        match self.prepare {
            Some(f) => f(cx, w),
            None => Ok(Caches::Drop),
        }
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        (self.run)(cx, w)
    }
}

fn corpus_line(_: &WorkloadSpec, d: &Describe<'_>) -> String {
    describe_corpus(d)
}

/// Extract the corpus into the data directory's `tree/`.
pub static UNTAR: MetaKind = MetaKind {
    kind: Kind::Untar,
    names: &[("untar", "Untar the corpus", "untar")],
    headlines: {
        use crate::metrics::registry::*;
        &[Headline {
            rank: 11,
            workload: "untar",
            metrics: &[SECONDS],
            label: "Untar the corpus",
        }]
    },
    corpus: CorpusUse::Extracts,
    writes: Writes::Runner,
    emits: WRITING_TREE_METRICS,
    opt_in: false,
    example: "id = \"untar\"\nkind = \"untar\"",
    cost: |_| Cost::Corpus(CorpusStep::Untar),
    describe: corpus_line,
    prepare: None,
    follows_previous: false,
    run: |cx, _| {
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
    },
};

/// Walk the extracted tree with a cold cache.
pub static FIND_COLD: MetaKind = MetaKind {
    kind: Kind::FindCold,
    names: &[
        ("find-cold", "find over the tree, cold cache", "cold find"),
        (
            "find-warm",
            "find over the tree, warm cache (caches could not be dropped)",
            "warm find",
        ),
    ],
    headlines: {
        use crate::metrics::registry::*;
        &[
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
        ]
    },
    // A read-only walk still writes: under relatime the first read of a changed directory
    // updates its atime. Counting the device writes (and settling them) is what lets the
    // noatime claim be judged.
    corpus: CorpusUse::Tree,
    writes: Writes::Runner,
    emits: TREE_METRICS,
    opt_in: false,
    example: "id = \"find-cold\"\nkind = \"find-cold\"",
    cost: |_| Cost::Corpus(CorpusStep::Walk),
    describe: corpus_line,
    prepare: Some(ensure_tree),
    follows_previous: false,
    run: |cx, _| {
        let (tree, threads) = (cx.tree(), cx.threads);
        let expected = cx.corpus()?.entries();
        super::find_cold(&tree, threads, Some(expected), false)
    },
};

/// Remove the extracted tree.
pub static RM_TREE: MetaKind = MetaKind {
    kind: Kind::RmTree,
    names: &[("rm-tree", "rm -rf the tree", "rm -rf")],
    headlines: {
        use crate::metrics::registry::*;
        &[Headline {
            rank: 14,
            workload: "rm-tree",
            metrics: &[SECONDS],
            label: "rm -rf the tree",
        }]
    },
    corpus: CorpusUse::Tree,
    writes: Writes::No,
    emits: TREE_METRICS,
    opt_in: false,
    example: "id = \"rm-tree\"\nkind = \"rm-tree\"",
    cost: |_| Cost::Corpus(CorpusStep::Remove),
    describe: corpus_line,
    // Seed 000 unpacks, walks the tree cold, "then deletes it": rm -rf meets the tree as
    // the walk left it (its directories and inodes cached), so the caches stay. Dropping
    // them made rm-tree a cold delete that `rm -rf` after `find` never is.
    prepare: Some(|cx, w| {
        ensure_tree(cx, w)?;
        Ok(Caches::Keep)
    }),
    follows_previous: true,
    run: |cx, _| {
        let (tree, threads) = (cx.tree(), cx.threads);
        let expected = cx.corpus()?.entries();
        super::rm_tree_checked(&tree, threads, Some(expected))
    },
};

/// Many small files: create, sync, read back, delete (in `smallfiles/`).
pub static SMALLFILES: MetaKind = MetaKind {
    kind: Kind::Smallfiles,
    names: &[],
    headlines: &[],
    corpus: CorpusUse::None,
    writes: Writes::Runner,
    emits: {
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
    },
    opt_in: true,
    example: "id = \"smallfiles\"\nkind = \"smallfiles\"",
    cost: |w| Cost::Files {
        files: w.params_of::<SmallFilesSpec>().unwrap_or_default().files,
        fsync: false,
    },
    describe: |w, _| {
        let s = w.params_of::<SmallFilesSpec>().unwrap_or_default();
        format!(
            "{} files of {} B in {} directories: create, sync, read, delete",
            s.files, s.size, s.dirs
        )
    },
    prepare: None,
    follows_previous: false,
    // Creates its own subdirectory (`smallfiles/`) inside the data dir.
    run: |cx, w| {
        super::smallfiles(
            cx.work.dir,
            &w.params_of::<SmallFilesSpec>().unwrap_or_default(),
        )
    },
};

fn fsmark_spec(w: &WorkloadSpec, threads: usize) -> FsmarkSpec {
    w.params_of::<FsmarkSpec>().unwrap_or(FsmarkSpec {
        threads,
        ..Default::default()
    })
}

/// fs_mark-style creates with fsync (in `fsmark/`).
pub static FSMARK: MetaKind = MetaKind {
    kind: Kind::Fsmark,
    names: &[],
    headlines: &[],
    corpus: CorpusUse::None,
    writes: Writes::Runner,
    emits: WRITING_TREE_METRICS,
    opt_in: true,
    example: "id = \"fsmark\"\nkind = \"fsmark\"",
    // Writers beyond one share two cores and one journal here, so the estimate counts the
    // files of one writer unless the spec names more (`--threads` is not in a plan).
    cost: |w| {
        let s = fsmark_spec(w, 1);
        Cost::Files {
            files: s.files_per_thread * s.threads.max(1) as u64,
            fsync: s.fsync != super::FsyncPolicy::None,
        }
    },
    describe: |w, d| {
        let s = fsmark_spec(w, d.threads);
        format!(
            "{} thread(s) × {} files of {} B, fsync {:?}",
            s.threads, s.files_per_thread, s.size, s.fsync
        )
    },
    prepare: None,
    follows_previous: false,
    // Creates its own subdirectory (`fsmark/`) inside the data dir.
    run: |cx, w| super::fsmark(cx.work.dir, &fsmark_spec(w, cx.threads)),
};
