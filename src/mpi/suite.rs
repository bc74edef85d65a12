//! The runner's [`Coordinator`] under MPI (`fsbench run --mpi`): each workload starts on all
//! ranks together and ends with rank 0 holding the all-ranks output ([`super::merge`]).
//!
//! Waits are cancellable barriers (a non-blocking barrier polled with the interrupt flag), so
//! a rank that gets SIGINT/SIGTERM while it waits for the others unwinds through the runner's
//! guards and removes its files instead of hanging until mpirun kills it.

use super::World;
use super::merge::{self, Measured};
use crate::plan::{Kind, Plan};
use crate::runner::coordinator::{Coordinator, Step};
use crate::workload::WorkloadOutput;
use crate::{Error, Result};
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Workload kinds that run under `run --mpi`: I/O and metadata, whose figures add up across
/// ranks. Probes, compress, memcap and the application workloads (pgbench, SQLite) do not
/// (a per-host server, a cgroup, a probe image of its own).
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

/// What a rank sends rank 0 after a workload.
#[derive(Debug, Serialize, Deserialize)]
struct RankOutput {
    rank: i32,
    host: String,
    result: std::result::Result<Measured, String>,
}

/// Runs every workload of a plan on all ranks together.
pub struct SuiteCoordinator<'a> {
    world: &'a World,
    /// Block size of each I/O job, by workload id (its aggregate bytes are I/Os × bs).
    io_bs: BTreeMap<String, u64>,
    /// `host.extra` entries of the results (rank 0).
    provenance: Vec<(String, String)>,
}

impl<'a> SuiteCoordinator<'a> {
    /// The coordinator of `plan` on this rank; `provenance` goes into the results.
    pub fn new(world: &'a World, plan: &Plan, provenance: Vec<(String, String)>) -> Self {
        let io_bs = plan
            .workloads
            .iter()
            .filter(|w| w.kind == Kind::Io)
            .filter_map(|w| Some((w.id.clone(), w.io.as_ref()?.bs)))
            .collect();
        SuiteCoordinator {
            world,
            io_bs,
            provenance,
        }
    }

    /// Wait for every rank, or give up when this one is interrupted.
    fn barrier(&self) -> Result<()> {
        let mut req = self.world.comm.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return Ok(()),
                Err(pending) => req = pending,
            }
            if crate::cancel::requested() {
                // The others are interrupted too (mpirun signals every rank) or will be
                // killed when this one exits; the request is abandoned with the process.
                std::mem::forget(req);
                return Err(Error::Interrupted);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Rank 0: the all-ranks output, or which ranks failed and why.
    fn reduce(&self, id: &str, all: Vec<Vec<u8>>) -> std::result::Result<WorkloadOutput, String> {
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for bytes in all {
            let r: RankOutput = serde_json::from_slice(&bytes)
                .map_err(|e| format!("cannot decode a rank's result: {e}"))?;
            match r.result {
                Ok(m) => ok.push(m),
                Err(e) => failed.push(format!(
                    "rank {} of {} on host {} failed: {e}",
                    r.rank, self.world.size, r.host
                )),
            }
        }
        if failed.is_empty() {
            Ok(merge::merge(&ok, self.io_bs.get(id).copied()))
        } else {
            Err(failed.join("; "))
        }
    }
}

impl Coordinator for SuiteCoordinator<'_> {
    fn provenance(&self) -> Vec<(String, String)> {
        self.provenance.clone()
    }

    fn workload(&self, id: &str, step: &mut dyn Step) -> Result<WorkloadOutput> {
        // Untimed, before the start barrier: a slow preparation on one rank (a tree to
        // extract, a file to lay out, the cache drop) delays the start of all, never the
        // window of one.
        let prepared = step.prepare();
        if matches!(prepared, Err(Error::Interrupted)) || crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        // Every rank has prepared and dropped its caches: start together. The barrier's
        // release is the clock all ranks share; each measures from it.
        self.barrier()?;
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
        self.barrier()?;
        let msg = RankOutput {
            rank: self.world.rank,
            host: self.world.host.clone(),
            result: mine
                .as_ref()
                .map(|(out, start_s, end_s)| Measured::of(out).started(*start_s, *end_s))
                .map_err(|e| e.to_string()),
        };
        let bytes = serde_json::to_vec(&msg).map_err(|e| Error::Other(format!("{e}")))?;
        let verdict = self
            .world
            .gather_bytes(bytes)
            .map(|all| self.reduce(id, all));
        // A failure on any rank is the workload's failure on every rank, so all go on in step
        // (and every rank's guards clean up as in a run that fails one workload).
        let failure = verdict.as_ref().and_then(|v| v.as_ref().err().cloned());
        let failure = self
            .world
            .broadcast_bytes(failure.unwrap_or_default().into_bytes());
        if !failure.is_empty() {
            return Err(Error::Other(String::from_utf8_lossy(&failure).into_owned()));
        }
        match verdict {
            Some(Ok(out)) => Ok(out),
            // Other ranks record nothing: their own output is returned to their runner.
            _ => mine.map(|(out, _, _)| out),
        }
    }
}
