//! The one hook through which several processes run a plan together (MPI ranks under
//! `fsbench run --mpi` and `fsbench meta --mpi`): the runner hands every workload step to the
//! coordinator, which prepares it (untimed), starts the measured part on all processes
//! together and returns the all-processes figure (`runner/round.rs`, `Runner::run_workload`),
//! and adds its provenance to every results file (`Runner::assemble` in `runner/mod.rs`).
//! The runner knows nothing of MPI; `src/mpi/suite.rs` implements this trait.

use crate::workload::WorkloadOutput;

/// One workload step as a coordinator drives it: first [`Step::prepare`] (untimed: a tree
/// extracted, a file laid out, the caches dropped), then, once every process has prepared,
/// [`Step::measure`].
pub trait Step {
    /// The untimed part; it runs before the start barrier.
    fn prepare(&mut self) -> crate::Result<()>;
    /// The measured part; it starts right after the start barrier.
    fn measure(&mut self) -> crate::Result<WorkloadOutput>;
}

/// Meeting points of a run that several processes make at the same time.
pub trait Coordinator {
    /// Run workload `id` on this process together with the others: prepare, wait for every
    /// process (so all start at once and no one's cache drop hits a running workload), measure
    /// with this process's start and end on the clock all processes share (the start
    /// barrier), wait again, then return the reduced output (one figure for all processes).
    ///
    /// A workload that fails on any process must fail on every process (the same `Err` for
    /// the runner to record), so that they all go on in step. `Err(Error::Interrupted)`
    /// means this process was interrupted: the runner unwinds as usual.
    fn workload(&self, id: &str, step: &mut dyn Step) -> crate::Result<WorkloadOutput>;

    /// Facts about the processes (ranks, hosts, library) for the results' `host.extra`, in
    /// every results file the run writes, partial ones included.
    fn provenance(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
