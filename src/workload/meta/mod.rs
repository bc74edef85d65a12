//! Metadata and small-file workloads: untar, cold walk, rm -rf, small files, fs_mark-style creates.

use super::WorkloadOutput;
use std::path::{Path, PathBuf};

/// How to obtain the corpus.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CorpusSpec {
    /// Copies of the synthetic tree (≈35,000 entries each; default 3 ≈ 105,000 entries).
    pub copies: u32,
    /// Generator seed (the corpus is deterministic for a seed).
    pub seed: u64,
    /// Pack this real directory instead of generating.
    pub from_dir: Option<PathBuf>,
    /// Use this tarball instead of generating.
    pub file: Option<PathBuf>,
    /// Scale factor for tests and quick runs (1.0 = full size of one copy).
    #[serde(default = "one")]
    pub scale: f64,
}

fn one() -> f64 {
    1.0
}

/// A corpus held in memory (never read from the filesystem under test).
#[derive(Debug, Clone)]
pub struct Corpus {
    _private: (),
}

impl Corpus {
    /// Build or load the corpus described by `spec`.
    pub fn build(spec: &CorpusSpec) -> crate::Result<Corpus> {
        let _ = spec;
        todo!("Corpus::build")
    }
    /// Entries (files, directories, symlinks) one extraction creates, all copies included.
    pub fn entries(&self) -> u64 {
        todo!()
    }
    /// Total file bytes one extraction writes.
    pub fn bytes(&self) -> u64 {
        todo!()
    }
}

/// `untar`: extract every copy under `dest`, then sync; verified against the corpus.
pub fn untar(corpus: &Corpus, dest: &Path, threads: usize) -> crate::Result<WorkloadOutput> {
    let _ = (corpus, dest, threads);
    todo!("untar")
}

/// `find-cold`: drop caches, walk `dir` and stat every entry; `expected` entries are checked.
pub fn find_cold(
    dir: &Path,
    threads: usize,
    expected: Option<u64>,
) -> crate::Result<WorkloadOutput> {
    let _ = (dir, threads, expected);
    todo!("find_cold")
}

/// `rm-tree`: remove `dir` recursively, then sync.
pub fn rm_tree(dir: &Path, threads: usize) -> crate::Result<WorkloadOutput> {
    let _ = (dir, threads);
    todo!("rm_tree")
}
