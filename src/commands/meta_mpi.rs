//! `fsbench meta --mpi`: every rank runs the metadata workloads in its own directory; each
//! workload starts on all ranks together (a barrier) and rank 0 reports entries/s of all
//! ranks over the common window (earliest start to latest end), mdtest's way.

use super::meta::{self as cmd, Steps, WorkDir};
use crate::cli::meta::MetaArgs;
use crate::mpi::World;
use crate::workload::meta::Corpus;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One workload on one rank.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankStep {
    /// MPI rank.
    pub rank: i32,
    /// Host.
    pub host: String,
    /// Workload id.
    pub workload: String,
    /// Entries it created, walked or removed.
    pub entries: u64,
    /// Started, seconds after the common start barrier.
    pub start_s: f64,
    /// Ended, seconds after the common start barrier.
    pub end_s: f64,
}

/// Run `fsbench meta --mpi` on this rank; a failure on any rank aborts them all.
pub fn run(args: MetaArgs) -> Result<i32> {
    crate::cancel::install_handlers();
    let world = World::init()?;
    let mut args = args;
    args.dir = crate::mpi::expand(&args.dir, world.rank, &world.host);
    let opts = world.check(cmd::resolve(&args));
    let corpus = world.check(opts.corpus.as_ref().map(Corpus::build).transpose());
    // Rank and pid: pids alone may repeat across hosts sharing one directory.
    let work = args.dir.join(format!(
        "fsbench-meta-r{}-{}",
        world.rank,
        std::process::id()
    ));
    world.check(std::fs::create_dir(&work).map_err(|e| Error::io("cannot create", &work, e)));
    let guard = WorkDir(work.clone());
    // No settle: its wait for a quiet device would fall inside the ranks' common window.
    let mut steps = Steps::new(&opts, corpus.clone(), &args.dir, work.clone(), None);
    world.barrier();
    let go = Instant::now();
    let mut mine = Vec::new();
    for (i, &wl) in opts.workloads.iter().enumerate() {
        world.check(crate::cancel::check());
        // The untimed extraction find-cold/rm-tree may need happens before the barrier.
        world.check(steps.prepare(i));
        world.barrier();
        let start_s = go.elapsed().as_secs_f64();
        let out = steps
            .run(i)
            .map(|done| done.output)
            .map_err(|e| Error::workload(wl, e.to_string()));
        let out = world.check(out);
        let end_s = go.elapsed().as_secs_f64();
        if world.rank == 0 {
            for n in &out.notes {
                eprintln!("fsbench: note: {n}");
            }
        }
        mine.push(RankStep {
            rank: world.rank,
            host: world.host.clone(),
            workload: wl.to_string(),
            entries: entries_of(wl, &opts, corpus.as_ref()),
            start_s,
            end_s,
        });
        world.barrier();
    }
    drop(guard);
    let bytes = world
        .check(serde_json::to_vec(&mine).map_err(|e| Error::Other(format!("cannot encode: {e}"))));
    let Some(all) = world.gather_bytes(bytes) else {
        return Ok(crate::error::EXIT_OK);
    };
    let all: Vec<RankStep> = world
        .check(
            all.iter()
                .map(|b| serde_json::from_slice::<Vec<RankStep>>(b))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Other(format!("cannot decode a rank's result: {e}"))),
        )
        .into_iter()
        .flatten()
        .collect();
    print(&opts.workloads, &all, &world, args.json);
    Ok(crate::error::EXIT_OK)
}

/// Entries one run of workload `wl` creates, walks or removes (for entries/s).
fn entries_of(wl: &str, opts: &cmd::Options, corpus: Option<&Corpus>) -> u64 {
    match wl {
        "untar" | "find-cold" | "rm-tree" => corpus.map_or(0, Corpus::entries),
        "smallfiles" => opts.small.files,
        "fsmark" => opts.fsmark.threads as u64 * opts.fsmark.files_per_thread,
        _ => 0,
    }
}

/// Entries/s of all ranks over their common window for one workload, plus the window.
fn aggregate(steps: &[&RankStep]) -> (u64, f64, f64) {
    let entries: u64 = steps.iter().map(|s| s.entries).sum();
    let start = steps
        .iter()
        .map(|s| s.start_s)
        .fold(f64::INFINITY, f64::min);
    let end = steps.iter().map(|s| s.end_s).fold(0.0, f64::max);
    let w = (end - start).max(0.0);
    (entries, w, if w > 0.0 { entries as f64 / w } else { 0.0 })
}

fn print(workloads: &[&str], all: &[RankStep], world: &World, json: bool) {
    let mut hosts: Vec<&str> = Vec::new();
    for s in all {
        if !hosts.contains(&s.host.as_str()) {
            hosts.push(&s.host);
        }
    }
    let rows: Vec<_> = workloads
        .iter()
        .map(|wl| {
            let steps: Vec<&RankStep> = all.iter().filter(|s| s.workload == *wl).collect();
            let (entries, w, rate) = aggregate(&steps);
            let per: Vec<f64> = steps
                .iter()
                .map(|s| s.entries as f64 / (s.end_s - s.start_s).max(1e-9))
                .collect();
            (*wl, entries, w, rate, per)
        })
        .collect();
    if json {
        let samples: Vec<_> = rows
            .iter()
            .map(|(wl, entries, w, rate, _)| {
                serde_json::json!({"workload": wl, "metric": "entries_per_s", "unit": "entries/s",
                    "value": rate, "entries": entries, "window_s": w})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"samples": samples, "failures": [], "ranks": all, "hosts": hosts,
                "mpi": {"library": World::library_version(), "ranks": world.size, "hosts": hosts}})
        );
        return;
    }
    println!(
        "MPI: {} ranks on {} host(s) ({}); entries/s = all ranks' entries ÷ common window",
        world.size,
        hosts.len(),
        World::library_version()
    );
    let mut t = comfy_table::Table::new();
    t.set_header([
        "workload",
        "entries (all ranks)",
        "window s",
        "entries/s",
        "per rank min–max entries/s",
    ]);
    for (wl, entries, w, rate, per) in &rows {
        let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per.iter().copied().fold(0.0, f64::max);
        t.add_row([
            wl.to_string(),
            entries.to_string(),
            format!("{w:.3}"),
            format!("{rate:.0}"),
            format!("{lo:.0}–{hi:.0}"),
        ]);
    }
    println!("{t}");
}
