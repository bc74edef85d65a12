//! The one trait through which several processes (MPI ranks) agree on the phases of a
//! measurement: meet before a workload (everyone prepared, so all start their clocks at the
//! same instant), stonewall (stop when the first is done), gather every process's result at
//! the leader and share the leader's verdict. The engine meets and stonewalls through it
//! inside a job ([`super::run_coordinated`]); the runner drives a whole workload step with it
//! (`runner::coordinator::workload`: prepare, meet, measure, meet, gather, reduce, share),
//! for `fsbench run --mpi` and `fsbench meta --mpi` alike; `fsbench io --mpi` gathers its
//! ranks' reports through it.
//!
//! It sits in the engine because the engine is the lowest layer that needs it; it carries
//! bytes only, so it knows nothing of what the layers above gather. `crate::mpi::World`
//! implements it over MPI; every default is a process that runs alone.

/// Meeting points of processes that measure together. Every process calls each method in the
/// same order (they are collectives); the defaults are a process alone.
pub trait Coordinator {
    /// This process's place among them (0 is the leader, which reduces and speaks for all).
    fn rank(&self) -> u32 {
        0
    }

    /// How many processes take part.
    fn ranks(&self) -> u32 {
        1
    }

    /// This process's host, for the per-rank rows and failure messages.
    fn host(&self) -> String {
        String::new()
    }

    /// Wait for every process. `Err(Error::Interrupted)` when this one is interrupted while
    /// it waits (so it unwinds through its guards instead of hanging in the meeting).
    fn meet(&self) -> crate::Result<()> {
        Ok(())
    }

    /// Whether the engine must ask [`Coordinator::any_done`] while its jobs run (stonewall:
    /// every process stops when the first finishes).
    fn stonewall(&self) -> bool {
        false
    }

    /// Called every few milliseconds by every process in step, with whether this process's
    /// jobs have all finished; `true` when any process's have.
    fn any_done(&self, local_done: bool) -> bool {
        local_done
    }

    /// Every process's bytes at the leader, in rank order (`None` on the others).
    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        Some(vec![mine])
    }

    /// The leader's bytes on every process (`leader` is ignored on the others).
    fn share(&self, leader: Vec<u8>) -> Vec<u8> {
        leader
    }

    /// Facts about the processes (ranks, hosts, library) for a results file's `host.extra`.
    fn provenance(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// A process that measures alone: no one to wait for, nothing to gather but its own.
pub struct Alone;

impl Coordinator for Alone {}
