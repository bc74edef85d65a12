//! The engine's meeting points ([`crate::engine::Coordinator`]) as MPI collectives.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Barrier before the clocks start; with `stonewall`, an all-reduce (max) of "my jobs are
/// done" every few milliseconds, so that all ranks stop when the first one finishes.
pub struct MpiCoordinator<'a> {
    /// `MPI_COMM_WORLD`.
    pub comm: &'a SimpleCommunicator,
    /// Stop every rank when the first finishes.
    pub stonewall: bool,
}

impl crate::engine::Coordinator for MpiCoordinator<'_> {
    fn ready(&self) {
        self.comm.barrier();
    }

    fn polls(&self) -> bool {
        self.stonewall
    }

    fn poll(&self, local_done: bool) -> bool {
        // Every rank calls this in step (same loop, same exit condition: the reduced value),
        // so the collective always matches up.
        let mine = u8::from(local_done);
        let mut any = 0u8;
        self.comm
            .all_reduce_into(&mine, &mut any, SystemOperation::max());
        any != 0
    }
}
