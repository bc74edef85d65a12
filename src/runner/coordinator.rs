//! How several processes (MPI ranks under `fsbench run --mpi` and `fsbench meta --mpi`) run
//! one workload step together, over the one meeting-point trait
//! [`crate::engine::Coordinator`]: each prepares (untimed), all meet, each measures with its
//! start and end on the clock the meeting's release gives them all, all meet again, the
//! leader gathers every process's output and reduces it ([`super::reduce`]), and a failure on
//! any process is shared so that all fail the step alike. The runner calls [`workload`] from
//! `Runner::run_step` (`runner/round.rs`), keeps every process's own measurement as the
//! results' `ranks`, and adds [`Coordinator::provenance`] to every results file
//! (`Runner::assemble`); `fsbench run --mpi`, `fsbench meta --mpi` and `fsbench io --mpi` all
//! run their plans so (`io --mpi`'s I/O step meets once more inside the engine).
//! The runner knows nothing of MPI: `crate::mpi::World` implements the trait.

use super::reduce::{RankMeasured, merge};
use crate::engine::Coordinator;
use crate::plan::Kind;
use crate::workload::WorkloadOutput;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Workload kinds that run under several processes: I/O and metadata, whose figures add up
/// across ranks. Probes, compress, memcap and the application workloads (pgbench, SQLite) do
/// not (a per-host server, a cgroup, a probe image of its own).
pub const KINDS: &[Kind] = &[
    Kind::UsableSpace,
    Kind::Layout,
    Kind::Io,
    Kind::Untar,
    Kind::FindCold,
    Kind::RmTree,
    Kind::Smallfiles,
    Kind::Fsmark,
];

/// One workload step as a coordinator drives it: first [`Step::prepare`] (untimed: a tree
/// extracted, a file laid out, the caches dropped), then, once every process has prepared,
/// [`Step::measure`].
pub trait Step {
    /// The untimed part; it runs before the start meeting.
    fn prepare(&mut self) -> Result<()>;
    /// The measured part; it starts right after the start meeting.
    fn measure(&mut self) -> Result<WorkloadOutput>;
}

/// What a coordinated step returns: on the leader the all-ranks output and every rank's own
/// measurement; on the others this process's own output and no rows.
pub struct Coordinated {
    /// The output to record (the leader's is every process's together).
    pub output: WorkloadOutput,
    /// Every process's measurement, in rank order (the leader only).
    pub ranks: Vec<RankMeasured>,
    /// A whole-job step's reduced report (the leader only; `io --mpi`).
    pub job: Option<Box<crate::runner::reduce::aggregate::MpiIoReport>>,
}

/// What a process sends the leader after a step.
#[derive(Debug, Serialize, Deserialize)]
struct RankOutput {
    rank: u32,
    host: String,
    result: std::result::Result<merge::Measured, String>,
}

/// Run workload `id` on this process together with the others: prepare, meet, measure, meet,
/// then the leader reduces every process's output (`io_bs`: the block size of an I/O job,
/// whose bytes are I/Os × bs; `None` for the other kinds).
///
/// A workload that fails on any process fails on every process with the same error, so that
/// they all go on in step. `Err(Error::Interrupted)`: this process was interrupted.
pub fn workload(
    c: &dyn Coordinator,
    id: &str,
    io_bs: Option<u64>,
    step: &mut dyn Step,
) -> Result<Coordinated> {
    // Untimed, before the start meeting: a slow preparation on one process (a tree to
    // extract, a file to lay out, the cache drop) delays the start of all, never the window
    // of one.
    let prepared = step.prepare();
    if matches!(prepared, Err(Error::Interrupted)) || crate::cancel::requested() {
        return Err(Error::Interrupted);
    }
    // Every process has prepared and dropped its caches: start together. The meeting's
    // release is the clock all share; each measures from it.
    c.meet()?;
    let go = Instant::now();
    let mine = prepared.and_then(|()| {
        let start_s = go.elapsed().as_secs_f64();
        let out = step.measure()?;
        Ok((out, start_s, go.elapsed().as_secs_f64()))
    });
    if matches!(mine, Err(Error::Interrupted)) || crate::cancel::requested() {
        return Err(Error::Interrupted);
    }
    // Everyone is done before anyone drops caches for the next workload.
    c.meet()?;
    let msg = RankOutput {
        rank: c.rank(),
        host: c.host(),
        result: mine
            .as_ref()
            .map(|(out, start_s, end_s)| merge::Measured::of(out).started(*start_s, *end_s))
            .map_err(|e| e.to_string()),
    };
    let bytes = serde_json::to_vec(&msg).map_err(|e| Error::Other(format!("{e}")))?;
    let verdict = c
        .gather(bytes)
        .map(|all| reduce(c.ranks(), id, io_bs, c.stonewall(), all));
    // A failure on any process is the workload's failure on every process, so all go on in
    // step (and every process's guards clean up as in a run that fails one workload).
    let failure = verdict.as_ref().and_then(|v| v.as_ref().err().cloned());
    let failure = c.share(failure.unwrap_or_default().into_bytes());
    if !failure.is_empty() {
        return Err(Error::Other(String::from_utf8_lossy(&failure).into_owned()));
    }
    match verdict {
        Some(Ok(done)) => Ok(done),
        // The others record nothing: their own output goes back to their runner.
        _ => mine.map(|(output, _, _)| Coordinated {
            output,
            ranks: Vec::new(),
            job: None,
        }),
    }
}

/// The leader: the all-processes output and rows, or which processes failed and why.
fn reduce(
    ranks: u32,
    id: &str,
    io_bs: Option<u64>,
    stonewall: bool,
    all: Vec<Vec<u8>>,
) -> std::result::Result<Coordinated, String> {
    let mut ok = Vec::new();
    let mut failed = Vec::new();
    for bytes in all {
        let r: RankOutput = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{id}: cannot decode a rank's result: {e}"))?;
        match r.result {
            Ok(measured) => ok.push(RankMeasured {
                rank: r.rank,
                host: r.host,
                measured,
            }),
            Err(e) => failed.push(format!(
                "rank {} of {ranks} on host {} failed: {e}",
                r.rank, r.host
            )),
        }
    }
    if !failed.is_empty() {
        return Err(failed.join("; "));
    }
    // The one reduction of the step (`runner::reduce::step`).
    let reduced = crate::runner::reduce::step(&ok, io_bs, stonewall);
    Ok(Coordinated {
        output: reduced.output,
        ranks: ok,
        job: reduced.job.map(Box::new),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::{ENTRIES, SECONDS};
    use crate::workload::Metric;

    /// A step that records the order of its parts.
    struct Recorded(Vec<&'static str>, bool);

    impl Step for Recorded {
        fn prepare(&mut self) -> Result<()> {
            self.0.push("prepare");
            Ok(())
        }
        fn measure(&mut self) -> Result<WorkloadOutput> {
            self.0.push("measure");
            if self.1 {
                return Err(Error::Other("disk full".into()));
            }
            Ok(WorkloadOutput {
                metrics: vec![
                    Metric::new(SECONDS, "s", 0.5),
                    Metric::new(ENTRIES, "entries", 10.0),
                ],
                ..Default::default()
            })
        }
    }

    #[test]
    fn a_step_alone_is_prepared_measured_and_reduced_at_the_leader() {
        let mut step = Recorded(Vec::new(), false);
        let done = workload(&crate::engine::Alone, "untar", None, &mut step).unwrap();
        assert_eq!(step.0, ["prepare", "measure"]);
        assert_eq!(done.ranks.len(), 1);
        assert_eq!(done.ranks[0].measured.get(ENTRIES), Some(10.0));
        let entries = done.output.metrics.iter().find(|m| m.metric == ENTRIES);
        assert_eq!(entries.map(|m| m.value), Some(10.0));
        assert!(
            done.output
                .notes
                .iter()
                .any(|n| n.starts_with("MPI: 1 ranks"))
        );
    }

    #[test]
    fn a_failed_measure_is_the_steps_failure_with_the_rank_and_host() {
        let mut step = Recorded(Vec::new(), true);
        let Err(e) = workload(&crate::engine::Alone, "untar", None, &mut step) else {
            panic!("the failure is shared");
        };
        assert!(e.to_string().contains("rank 0 of 1"), "{e}");
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
