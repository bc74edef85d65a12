//! What a workload's [`run`](super::api::Workload::run) gets: where it runs, the plan's
//! defaults, and the state shared between steps of a setup-round (the corpus, built once per
//! run; the outputs of a fio job-file phase, until each section's step takes its own).

use super::api::{WorkloadContext, WorkloadOutput};
use super::corpus::{Corpus, CorpusSpec};
use super::spec::{JobDefaults, WorkloadSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The run-wide state steps share.
#[derive(Default)]
pub struct Shared {
    /// The corpus, built the first time a step needs it.
    corpus: Option<Corpus>,
    /// Outputs of the fio job-file phase that ran last.
    pub fio_phase: Option<FioPhase>,
    /// This setup-round's extraction of the corpus failed: tree workloads fail at once.
    pub tree_failed: bool,
}

/// What one phase of a fio job file produced in one setup-round.
pub struct FioPhase {
    /// (setup, round, job file, phase).
    pub key: (String, u32, PathBuf, usize),
    /// Each section's output, by workload id, until its step takes it.
    pub outputs: BTreeMap<String, crate::Result<WorkloadOutput>>,
}

impl Shared {
    /// The corpus of `spec`, built on first use.
    pub fn corpus(&mut self, spec: &CorpusSpec) -> crate::Result<&Corpus> {
        if self.corpus.is_none() {
            self.corpus = Some(Corpus::build(spec)?);
        }
        Ok(self.corpus.as_ref().expect("just built"))
    }

    /// Use an already built corpus (`fsbench meta` builds it before creating anything).
    pub fn with_corpus(corpus: Corpus) -> Shared {
        Shared {
            corpus: Some(corpus),
            ..Default::default()
        }
    }
}

/// Everything one step may use.
pub struct StepContext<'a> {
    /// Directory, device, filesystem, round, seed, settle rule.
    pub work: WorkloadContext<'a>,
    /// The filesystem's root (statvfs).
    pub root: &'a Path,
    /// Setup name (keys of per-setup-round state).
    pub setup: &'a crate::fs::SetupSpec,
    /// Its filesystem's driver, resolved once by the runner for the round (`None` on a
    /// directory target): what a workload asks of the filesystem (compression ratio, probes,
    /// crash states) goes through it, never through a look-up of the setup's name.
    pub driver: Option<&'static dyn crate::fs::Filesystem>,
    /// The plan's job defaults, with this step's seed and device.
    pub defaults: JobDefaults,
    /// Every workload of the plan (the sections of a fio phase run together).
    pub plan_workloads: &'a [WorkloadSpec],
    /// The corpus of the plan.
    pub corpus: &'a CorpusSpec,
    /// Worker threads of metadata workloads.
    pub threads: usize,
    /// Timeout of external tools.
    pub tool_timeout: Duration,
    /// I/O jobs run by fio instead of the native engine.
    pub fio_engine: bool,
    /// Where probes build their own small images.
    pub scratch: &'a Path,
    /// State shared with the other steps of the run.
    pub shared: &'a mut Shared,
    /// The processes this step runs together with (MPI ranks), if any: an I/O job given as a
    /// [`super::io::GroupJob`] meets and stonewalls through it inside the engine.
    pub coordinator: Option<&'a dyn crate::engine::Coordinator>,
}

impl StepContext<'_> {
    /// The plan's corpus (built on first use).
    pub fn corpus(&mut self) -> crate::Result<&Corpus> {
        self.shared.corpus(self.corpus)
    }

    /// The extracted tree's directory.
    pub fn tree(&self) -> PathBuf {
        self.work.dir.join("tree")
    }

    /// The driver of the step's filesystem, or `id`'s error that it has none (a directory
    /// target).
    pub fn driver(&self, id: &str) -> crate::Result<&'static dyn crate::fs::Filesystem> {
        self.driver
            .ok_or_else(|| crate::Error::workload(id, format!("no driver for {}", self.setup.fs)))
    }
}
