//! `fsbench meta`'s flags as a plan: the metadata workloads chosen, their sizes, the
//! corpus, and the in-memory plan on a directory that both `fsbench meta` and every rank of
//! `fsbench meta --mpi` run through the runner.

use crate::cli::meta::MetaArgs;
use crate::plan::WorkloadSpec;
use crate::workload::meta::{CorpusSpec, FsmarkSpec, FsyncPolicy, SmallFilesSpec};
use crate::workload::registry::Family;
use crate::{Error, Result};
use std::path::PathBuf;

/// Workload ids `fsbench meta` accepts: the registry's metadata workloads (the same ids
/// `fsbench run` records).
pub fn workloads() -> Vec<&'static str> {
    crate::workload::registry::REGISTRY
        .iter()
        .filter(|k| k.family() == Family::Metadata)
        .map(|k| k.name())
        .collect()
}

/// `fsbench meta`'s flags, checked: the workloads and their sizes.
pub(crate) struct Options {
    pub(crate) workloads: Vec<&'static str>,
    pub(crate) corpus: Option<CorpusSpec>,
    pub(crate) small: SmallFilesSpec,
    pub(crate) fsmark: FsmarkSpec,
    pub(crate) threads: usize,
}

/// Check the flags (bad input is exit 2 with nothing created).
pub(crate) fn resolve(args: &MetaArgs) -> Result<Options> {
    match std::fs::metadata(&args.dir) {
        Ok(m) if m.is_dir() => {}
        _ => {
            return Err(Error::invalid(
                "--dir",
                format!(
                    "{} is not an existing directory; give a directory on the filesystem to test",
                    args.dir.display()
                ),
            ));
        }
    }
    let known = workloads();
    let mut chosen = Vec::new();
    for w in &args.workload {
        let w = w.trim();
        match known.iter().find(|&&k| k == w) {
            Some(k) => chosen.push(*k),
            None => {
                return Err(Error::invalid(
                    "--workload",
                    format!("unknown workload '{w}'; choose from {}", known.join(", ")),
                ));
            }
        }
    }
    let workloads = chosen;
    if workloads.is_empty() {
        return Err(Error::invalid("--workload", "give at least one workload"));
    }
    if args.threads == 0 {
        return Err(Error::invalid("--threads", "must be at least 1"));
    }
    let scale = args.corpus_scale;
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(Error::invalid(
            "--corpus-scale",
            format!("{scale} is out of range; use a factor in (0, 100]"),
        ));
    }
    let scaled = |n: f64| ((n * scale).round() as u64).max(1);
    let needs_tree = workloads
        .iter()
        .any(|w| matches!(*w, "untar" | "find-cold" | "rm-tree"));
    let corpus = needs_tree.then(|| CorpusSpec {
        copies: args.corpus_copies,
        seed: args.corpus_seed,
        from_dir: args.corpus_from.clone(),
        file: args.corpus_file.clone(),
        scale,
    });
    let small = SmallFilesSpec {
        files: args.smallfiles.unwrap_or_else(|| scaled(50_000.0)),
        dirs: args.smallfiles_dirs,
        ..Default::default()
    };
    let small = SmallFilesSpec {
        dirs: small.dirs.min(small.files),
        ..small
    };
    let fsmark = FsmarkSpec {
        threads: args.fsmark_threads,
        files_per_thread: args.fsmark_files.unwrap_or_else(|| scaled(10_000.0)),
        fsync: args.fsync.parse::<FsyncPolicy>()?,
        ..Default::default()
    };
    Ok(Options {
        workloads,
        corpus,
        small,
        fsmark,
        threads: args.threads,
    })
}

/// The metadata plan every `fsbench meta` runs through the runner, as `fsbench run --dir DIR`
/// would: the chosen workloads with the flags' sizes, one round, one setup on directory `dir`
/// (the process's or the rank's own working directory), the flags' corpus; kept in memory
/// (no OUT: the caller renders the results). Under a coordinator every step settles nothing
/// inside the ranks' window (the runner's rule).
pub(crate) fn invocation(opts: &Options, dir: PathBuf, seed: u64) -> crate::plan::Invocation {
    let mut plan = crate::plan::Plan::on_dir("meta", "fsbench meta", specs(opts));
    plan.corpus = opts.corpus.clone().unwrap_or_default();
    crate::plan::Invocation::in_memory_on_dir(plan, dir, seed, opts.threads)
}

/// The chosen workloads as plan workloads, with the flags' sizes.
fn specs(opts: &Options) -> Vec<WorkloadSpec> {
    let catalog = crate::plan::workload::catalog();
    opts.workloads
        .iter()
        .map(|id| {
            let mut w = catalog
                .iter()
                .find(|w| w.id == *id)
                .cloned()
                .expect("validated against the registry");
            // The sizes of the run go to the kinds that take them.
            if w.kind == crate::plan::Kind::Smallfiles {
                w.set_params(&opts.small);
            } else if w.kind == crate::plan::Kind::Fsmark {
                w.set_params(&opts.fsmark);
            }
            w
        })
        .collect()
}

/// What a history record keeps of the flags (the workloads' parameters).
pub(crate) fn record_params(args: &MetaArgs) -> serde_json::Value {
    serde_json::json!({
        "corpus_copies": args.corpus_copies, "corpus_seed": args.corpus_seed,
        "corpus_scale": args.corpus_scale, "threads": args.threads, "existing": args.existing,
    })
}
