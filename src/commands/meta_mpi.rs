//! The per-rank workload loop of `fsbench meta --mpi` (`crate::mpi::meta` drives it): every
//! rank extracts before the barrier and then runs one workload. The single-process
//! `fsbench meta` runs each workload through the runner's step instead
//! ([`crate::runner::step`]); this stays until the MPI path moves onto it too.

use super::meta::Options;
use crate::workload::meta::{self, Corpus};
use crate::{Error, Result};
use std::path::PathBuf;

/// Where the extracted corpus is and whether it can be used (the per-rank loop of
/// `fsbench meta --mpi`).
pub(crate) struct Tree {
    pub(crate) path: PathBuf,
    pub(crate) state: TreeState,
}

#[derive(PartialEq)]
pub(crate) enum TreeState {
    Absent,
    Ready,
    /// The measured untar failed: later tree workloads fail at once instead of retrying it.
    Failed,
}

/// Make sure the extracted tree exists for find-cold / rm-tree (an untimed untar if needed).
pub(crate) fn ensure_tree(
    wl: &str,
    corpus: &Corpus,
    tree: &mut Tree,
    threads: usize,
) -> Result<()> {
    match tree.state {
        TreeState::Ready => Ok(()),
        TreeState::Failed => Err(Error::workload(
            wl,
            "not run: it needs the extracted corpus and untar failed",
        )),
        TreeState::Absent => {
            eprintln!(
                "fsbench: note: {wl}: extracting the corpus first into {} (not measured; removed afterwards; --existing walks a tree you already have)",
                tree.path.display()
            );
            if let Err(e) = meta::untar(corpus, &tree.path, threads) {
                let _ = meta::remove_all(&tree.path);
                tree.state = TreeState::Failed;
                return Err(e);
            }
            tree.state = TreeState::Ready;
            Ok(())
        }
    }
}

/// One workload of an MPI rank (`fsbench meta --mpi`; the single-process path is
/// [`crate::runner::step`]).
pub(crate) fn step(
    wl: &str,
    opts: &Options,
    corpus: Option<&Corpus>,
    work: &std::path::Path,
    tree: &mut Tree,
) -> Result<crate::workload::WorkloadOutput> {
    let t = opts.threads;
    let corpus = || corpus.expect("the corpus is built when a tree workload is asked for");
    match wl {
        "untar" => {
            meta::remove_all(&tree.path)?;
            match meta::untar(corpus(), &tree.path, t) {
                Ok(out) => {
                    tree.state = TreeState::Ready;
                    Ok(out)
                }
                Err(e) => {
                    // Free the space a partial tree holds before the next workload runs.
                    let _ = meta::remove_all(&tree.path);
                    tree.state = TreeState::Failed;
                    Err(e)
                }
            }
        }
        "find-cold" => {
            ensure_tree(wl, corpus(), tree, t)?;
            meta::find_cold(&tree.path, t, Some(corpus().entries()), false)
        }
        "rm-tree" => {
            ensure_tree(wl, corpus(), tree, t)?;
            tree.state = TreeState::Absent;
            meta::rm_tree_checked(&tree.path, t, Some(corpus().entries()))
        }
        "smallfiles" => meta::smallfiles(work, &opts.small),
        "fsmark" => meta::fsmark(work, &opts.fsmark),
        other => unreachable!("workload {other} was validated"),
    }
}
