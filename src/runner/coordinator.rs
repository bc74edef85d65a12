//! The one hook through which several processes run a plan together (MPI ranks under
//! `fsbench run --mpi`): the runner hands every workload to the coordinator, which starts it
//! on all processes together and returns the all-processes figure
//! (`runner/round.rs`, where `run_workload` is called), and adds its provenance to every
//! results file (`Runner::assemble` in `runner/mod.rs`). The runner itself knows
//! nothing of MPI; `src/mpi/suite.rs` implements this trait.

use crate::workload::WorkloadOutput;

/// Meeting points of a run that several processes make at the same time.
pub trait Coordinator {
    /// Run workload `id` through `run` on this process together with the others: wait for
    /// every process (so all start at once and no one's cache drop hits a running workload),
    /// run, wait again, then return the reduced output (one figure for all processes).
    ///
    /// A workload that fails on any process must fail on every process (the same `Err` for
    /// the runner to record), so that they all go on in step. `Err(Error::Interrupted)`
    /// means this process was interrupted: the runner unwinds as usual.
    fn workload(
        &self,
        id: &str,
        run: &mut dyn FnMut() -> crate::Result<WorkloadOutput>,
    ) -> crate::Result<WorkloadOutput>;

    /// Facts about the processes (ranks, hosts, library) for the results' `host.extra`, in
    /// every results file the run writes, partial ones included.
    fn provenance(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
