//! `fsbench meta`: run the metadata and small-file workloads on an existing directory.
//!
//! All work happens in DIR/fsbench-meta-<pid>; a guard removes it on every exit path (success,
//! failed workload, Ctrl-C via [`crate::cancel`], panic). A failed workload is reported with its
//! error and the remaining workloads still run; the exit code is then 1.

use crate::cli::meta::MetaArgs;
use crate::workload::meta::{self, Corpus, CorpusSpec, FsmarkSpec, FsyncPolicy, SmallFilesSpec};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Workload ids `fsbench meta` accepts (the same ids `fsbench run` records).
pub const WORKLOADS: [&str; 5] = ["untar", "find-cold", "rm-tree", "smallfiles", "fsmark"];

/// Removes fsbench's working directory when dropped.
pub(crate) struct WorkDir(pub(crate) PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        if let Err(e) = meta::remove_all(&self.0) {
            eprintln!(
                "fsbench: warning: could not remove {}: {e}; remove it by hand",
                self.0.display()
            );
        }
    }
}

pub(crate) struct Options {
    pub(crate) workloads: Vec<&'static str>,
    pub(crate) corpus: Option<CorpusSpec>,
    pub(crate) small: SmallFilesSpec,
    pub(crate) fsmark: FsmarkSpec,
    pub(crate) threads: usize,
}

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
    let mut workloads = Vec::new();
    for w in &args.workload {
        let w = w.trim();
        match WORKLOADS.iter().find(|&&k| k == w) {
            Some(k) => workloads.push(*k),
            None => {
                return Err(Error::invalid(
                    "--workload",
                    format!(
                        "unknown workload '{w}'; choose from {}",
                        WORKLOADS.join(", ")
                    ),
                ));
            }
        }
    }
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

/// Run `fsbench meta`; returns the exit code.
pub fn run(args: MetaArgs) -> Result<i32> {
    if args.mpi {
        return run_mpi(args);
    }
    crate::cancel::install_handlers();
    if args.existing {
        return walk_existing(&args);
    }
    let opts = resolve(&args)?;
    // Bad corpus input is reported before anything is created.
    let corpus = opts.corpus.as_ref().map(Corpus::build).transpose()?;
    if let Some(c) = &corpus {
        for n in c.notes() {
            eprintln!("fsbench: note: {n}");
        }
    }
    let work = args
        .dir
        .join(format!("fsbench-meta-{}", std::process::id()));
    std::fs::create_dir(&work).map_err(|e| Error::io("cannot create", &work, e))?;
    let guard = WorkDir(work.clone());
    let tree = work.join("tree");

    let mut samples: Vec<(String, Metric)> = Vec::new();
    let mut failures: Vec<(&str, String)> = Vec::new();
    let mut tree = Tree {
        path: tree,
        state: TreeState::Absent,
    };
    for &wl in &opts.workloads {
        crate::cancel::check()?;
        let res = step(wl, &opts, corpus.as_ref(), &work, &mut tree);
        match res {
            Ok(out) => {
                for n in &out.notes {
                    eprintln!("fsbench: note: {n}");
                }
                // A cold-cache walk that ran warm is reported under its warm name.
                let id = if out.ran_warm {
                    crate::workload::warm_id(wl)
                } else {
                    wl.to_string()
                };
                samples.extend(out.metrics.into_iter().map(|m| (id.clone(), m)));
            }
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => {
                // Most errors already start with the workload id; name it once.
                let msg = e.to_string();
                let msg = if msg.starts_with(wl) {
                    msg
                } else {
                    format!("{wl}: {msg}")
                };
                eprintln!("fsbench: failed: {msg}");
                // A marker row for the table, not a metric: never reaches results.json.
                samples.push((
                    wl.to_string(),
                    Metric {
                        metric: "FAILED".into(),
                        unit: String::new(),
                        value: f64::NAN,
                    },
                ));
                failures.push((wl, msg));
            }
        }
    }
    drop(guard);
    print(&samples, &failures, args.json);
    Ok(if failures.is_empty() {
        crate::error::EXIT_OK
    } else {
        crate::error::EXIT_FAILURE
    })
}

#[cfg(feature = "mpi")]
fn run_mpi(args: MetaArgs) -> Result<i32> {
    crate::mpi::meta::run(args)
}

/// Without the feature, `--mpi` exists but refuses, so the flag is discoverable.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: MetaArgs) -> Result<i32> {
    Err(Error::invalid(
        "--mpi",
        "this fsbench was built without MPI; rebuild with `cargo build --release --features mpi` \
         (needs libopenmpi-dev and libclang) and launch with mpirun",
    ))
}

/// `--existing`: walk DIR itself, cold, and create nothing.
fn walk_existing(args: &MetaArgs) -> Result<i32> {
    if !std::fs::metadata(&args.dir).is_ok_and(|m| m.is_dir()) {
        return Err(Error::invalid(
            "--dir",
            format!("{} is not an existing directory", args.dir.display()),
        ));
    }
    let asked: Vec<&str> = args.workload.iter().map(|w| w.trim()).collect();
    // The default list is untar,find-cold,rm-tree; with --existing only the walk makes sense.
    let default = ["untar", "find-cold", "rm-tree"];
    if asked != ["find-cold"] && asked != default {
        return Err(Error::invalid(
            "--existing",
            "walks an existing tree and runs find-cold only; drop --workload or use --workload find-cold",
        ));
    }
    if args.threads == 0 {
        return Err(Error::invalid("--threads", "must be at least 1"));
    }
    let out = meta::find_cold(&args.dir, args.threads, None, true)?;
    for n in &out.notes {
        eprintln!("fsbench: note: {n}");
    }
    let id = if out.ran_warm {
        "find-warm"
    } else {
        "find-cold"
    };
    let samples: Vec<(String, Metric)> = out
        .metrics
        .into_iter()
        .map(|m| (id.to_string(), m))
        .collect();
    print(&samples, &[], args.json);
    Ok(crate::error::EXIT_OK)
}

/// Where the extracted corpus is and whether it can be used.
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

pub(crate) fn step(
    wl: &str,
    opts: &Options,
    corpus: Option<&Corpus>,
    work: &Path,
    tree: &mut Tree,
) -> Result<WorkloadOutput> {
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

fn fmt_value(m: &Metric) -> String {
    if m.metric == "FAILED" {
        "(error below)".into()
    } else if m.unit == "s" {
        format!("{:.3}", m.value)
    } else {
        format!("{:.0}", m.value)
    }
}

fn print(samples: &[(String, Metric)], failures: &[(&str, String)], json: bool) {
    if json {
        let s: Vec<_> = samples
            .iter()
            .filter(|(_, m)| m.metric != "FAILED")
            .map(|(w, m)| {
                serde_json::json!({"workload": w, "metric": m.metric, "unit": m.unit, "value": m.value})
            })
            .collect();
        let f: Vec<_> = failures
            .iter()
            .map(|(w, e)| serde_json::json!({"workload": w, "error": e}))
            .collect();
        println!("{}", serde_json::json!({"samples": s, "failures": f}));
        return;
    }
    let mut t = comfy_table::Table::new();
    t.set_header(["workload", "metric", "value", "unit"]);
    for (w, m) in samples {
        t.add_row([
            w.to_string(),
            m.metric.clone(),
            fmt_value(m),
            m.unit.clone(),
        ]);
    }
    println!("{t}");
    for (_, e) in failures {
        println!("failed: {e}");
    }
}
