//! `fsbench meta`: run the metadata and small-file workloads on an existing directory.
//!
//! The workloads are the registry's metadata family, and each runs through the same step as
//! in `fsbench run --dir` ([`crate::runner::step`]: prepare, drop caches, run, device totals
//! after the settle). All work happens in DIR/fsbench-meta-<pid>; a guard removes it on every
//! exit path (success, failed workload, Ctrl-C via [`crate::cancel`], panic). A failed workload
//! is reported with its error and the remaining workloads still run; the exit code is then 1.

use crate::cli::meta::MetaArgs;
use crate::plan::{SetupSpec, WorkloadSpec};
use crate::workload::meta::{self, Corpus, CorpusSpec, FsmarkSpec, FsyncPolicy, SmallFilesSpec};
use crate::workload::registry::Family;
use crate::workload::step::{Shared, StepContext};
use crate::workload::{Metric, WorkloadContext};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Workload ids `fsbench meta` accepts: the registry's metadata workloads (the same ids
/// `fsbench run` records).
pub fn workloads() -> Vec<&'static str> {
    crate::workload::registry::REGISTRY
        .iter()
        .filter(|k| k.family() == Family::Metadata)
        .map(|k| k.name())
        .collect()
}

/// Removes fsbench's working directory when dropped.
struct WorkDir(PathBuf);

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
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
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

    let mut steps = Steps::new(&opts, corpus, &args.dir, work.clone());
    // `None`: the workload failed (a row of the table, never a sample).
    let mut samples: Vec<(String, Option<Metric>)> = Vec::new();
    let mut failures: Vec<(&str, String)> = Vec::new();
    let mut warned = false;
    for (i, wl) in opts.workloads.iter().enumerate() {
        crate::cancel::check()?;
        match steps.run(i) {
            Ok(done) => {
                if let Some(w) = done.cache_warning.filter(|_| !warned) {
                    eprintln!("fsbench: warning: {w}");
                    warned = true;
                }
                let out = done.output;
                for n in &out.notes {
                    eprintln!("fsbench: note: {n}");
                }
                // A cold-cache walk that ran warm is reported under its warm name.
                let id = if out.ran_warm {
                    crate::workload::warm_id(wl)
                } else {
                    wl.to_string()
                };
                samples.extend(out.metrics.into_iter().map(|m| (id.clone(), Some(m))));
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
                // A row for the table, not a metric: never reaches results.json.
                samples.push((wl.to_string(), None));
                failures.push((wl, msg));
            }
        }
    }
    drop(guard);
    print!(
        "{}",
        crate::report::meta::render(&samples, &failures, args.json)
    );
    record(history.as_ref(), &started, &args, &samples);
    Ok(if failures.is_empty() {
        crate::error::EXIT_OK
    } else {
        crate::error::EXIT_FAILURE
    })
}

/// The workloads of one `fsbench meta` process and what their steps share. Every workload runs
/// through the runner's step ([`crate::runner::step`]); under MPI the ranks run
/// [`invocation`]'s plan through the runner itself instead.
struct Steps<'a> {
    work: PathBuf,
    root: &'a Path,
    setup: SetupSpec,
    specs: Vec<WorkloadSpec>,
    corpus: CorpusSpec,
    shared: Shared,
    threads: usize,
    settle: crate::measure::SettleRule,
}

impl<'a> Steps<'a> {
    /// Steps working in `work` (below `root`, the user's DIR); after a writing workload each
    /// waits for the device to go quiet and counts its writes.
    fn new(opts: &Options, corpus: Option<Corpus>, root: &'a Path, work: PathBuf) -> Self {
        Steps {
            work,
            root,
            setup: SetupSpec::plain("dir"),
            specs: specs(opts),
            corpus: opts.corpus.clone().unwrap_or_default(),
            shared: corpus.map(Shared::with_corpus).unwrap_or_default(),
            threads: opts.threads,
            settle: crate::measure::SettleRule::default(),
        }
    }

    /// Run workload `i` through the runner's step.
    fn run(&mut self, i: usize) -> Result<crate::runner::step::Done> {
        let spec = self.specs[i].clone();
        let mut cx = self.context();
        crate::runner::step::run(&mut cx, &spec)
    }

    fn context(&mut self) -> StepContext<'_> {
        StepContext {
            work: WorkloadContext {
                dir: &self.work,
                device: None,
                fs: "dir",
                round: 1,
                seed: 1,
                settle: Some(self.settle),
            },
            root: self.root,
            setup: &self.setup,
            // An existing directory: no filesystem of fsbench's making, no driver.
            driver: None,
            defaults: crate::plan::JobDefaults {
                seed: 1,
                ..Default::default()
            },
            plan_workloads: &self.specs,
            corpus: &self.corpus,
            threads: self.threads,
            tool_timeout: std::time::Duration::from_secs(600),
            fio_engine: false,
            scratch: &self.work,
            shared: &mut self.shared,
            coordinator: None,
        }
    }
}

/// The metadata plan `fsbench meta --mpi` runs on each rank through the runner, as
/// `fsbench run --dir DIR` would: the chosen workloads with the flags' sizes, one round, one
/// setup on directory `dir` (the rank's own), the flags' corpus; kept in memory (no OUT: the
/// caller renders the results), every step settling nothing inside the ranks' window (the
/// runner's rule under a coordinator).
#[cfg(feature = "mpi")]
pub(crate) fn invocation(opts: &Options, dir: PathBuf) -> crate::plan::Invocation {
    let flags = crate::plan::Overrides::default();
    let plan = crate::plan::Plan {
        name: "meta".into(),
        description: "fsbench meta --mpi".into(),
        setups: vec![SetupSpec::plain("dir")],
        workloads: specs(opts),
        rounds: 1,
        runtime: std::time::Duration::from_secs(5),
        ramp: std::time::Duration::ZERO,
        // No data file: the metadata workloads make their own trees and files.
        file_size: 0,
        corpus: opts.corpus.clone().unwrap_or_default(),
        quiet: crate::plan::QuietSpec {
            window: std::time::Duration::from_secs(1),
            threshold: flags.quiet_threshold,
            timeout: flags.quiet_timeout,
        },
        steady: None,
        precondition: false,
        precondition_device: None,
        settle: None,
        error: Default::default(),
        margin: None,
        // One coordinated round across ranks; nothing to warm up that the ranks would share.
        switches: Default::default(),
        disk_ref: false,
        by_step: false,
    };
    crate::plan::Invocation::in_memory_on_dir(plan, dir, 1, opts.threads)
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

#[cfg(feature = "mpi")]
fn run_mpi(args: MetaArgs) -> Result<i32> {
    super::meta_mpi::run(args)
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
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let out = meta::find_cold(&args.dir, args.threads, None, true)?;
    for n in &out.notes {
        eprintln!("fsbench: note: {n}");
    }
    let id = if out.ran_warm {
        "find-warm"
    } else {
        "find-cold"
    };
    let samples: Vec<(String, Option<Metric>)> = out
        .metrics
        .into_iter()
        .map(|m| (id.to_string(), Some(m)))
        .collect();
    print!("{}", crate::report::meta::render(&samples, &[], args.json));
    record(history.as_ref(), &started, args, &samples);
    Ok(crate::error::EXIT_OK)
}

/// Record the workloads as a one-setup run of the filesystem holding --dir (failed workloads
/// leave no samples).
fn record(
    loc: Option<&crate::history::Location>,
    started: &str,
    args: &MetaArgs,
    samples: &[(String, Option<Metric>)],
) {
    let mut ids: Vec<&str> = Vec::new();
    for (w, m) in samples {
        if m.is_some() && !ids.contains(&w.as_str()) {
            ids.push(w);
        }
    }
    let params = serde_json::json!({
        "corpus_copies": args.corpus_copies, "corpus_seed": args.corpus_seed,
        "corpus_scale": args.corpus_scale, "threads": args.threads, "existing": args.existing,
    });
    let workloads = ids
        .iter()
        .map(|id| crate::results::WorkloadInfo {
            id: id.to_string(),
            kind: "meta".into(),
            params: params.clone(),
            fio_command: None,
        })
        .collect();
    let rows = samples.iter().filter_map(|(w, m)| {
        m.as_ref()
            .map(|m| (w.clone(), m.metric, m.unit.clone(), m.value))
    });
    let r = crate::history::record::one_setup("meta", started, &args.dir, workloads, rows);
    crate::history::record::after_run(loc, &r, &args.dir, "meta");
}
