//! How every measuring command starts under mpirun (`run --mpi`, `io --mpi`, `meta --mpi`):
//! signal handlers, the [`World`], one seed formula, rank 0 speaking for all, the rank's own
//! directory, and a failure on any rank ending them all. The commands keep only what is
//! theirs (which plan, what rank 0 prints).
//!
//! The seed: rank 0 draws or takes the run's seed and broadcasts it; rank `r` runs with
//! `seed ^ r·0x9E37_79B9_7F4A_7C15` ([`rank_seed`]), so rank 0 runs with exactly the seed
//! the run reports and every other rank has its own offset stream (or all would replay rank
//! 0's). A job on one shared file keeps the one seed on every rank (`io --mpi`: the jobs'
//! global numbers already give each its own stream).

use super::World;
use super::quiet::Quiet;
use super::rankdir::RankDir;
use crate::Result;
use std::path::Path;

/// The golden-ratio constant that spreads the ranks' seeds apart.
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// Rank `rank`'s seed from the run's `seed` (rank 0's is the run's own).
pub fn rank_seed(seed: u64, rank: i32) -> u64 {
    seed ^ (rank as u64).wrapping_mul(SPREAD)
}

/// This process's part of an MPI launch.
pub struct Launch {
    /// The MPI job (the runner's coordinator).
    pub world: World,
    /// Set on ranks other than 0 once [`Launch::quiet_others`] ran.
    quiet: Option<Quiet>,
}

impl Launch {
    /// Install the interrupt handlers and start MPI.
    pub fn init() -> Result<Launch> {
        crate::cancel::install_handlers();
        Ok(Launch {
            world: World::init()?,
            quiet: None,
        })
    }

    /// Whether this is rank 0, which speaks for all, renders and records.
    pub fn leader(&self) -> bool {
        self.world.rank == 0
    }

    /// From here on ranks other than 0 print only why they fail.
    pub fn quiet_others(&mut self) {
        if !self.leader() && self.quiet.is_none() {
            self.quiet = Quiet::install();
        }
    }

    /// `r`'s value, or this rank's failure (said aloud, even on a quiet rank) ends the
    /// whole job (MPI_Abort): no rank is left waiting in a barrier.
    pub fn checked<T>(&self, r: Result<T>) -> T {
        r.unwrap_or_else(|e| {
            if let Some(q) = &self.quiet {
                q.restore();
            }
            self.world.fail(&e)
        })
    }

    /// Rank 0's `seed`, turned into this rank's ([`rank_seed`]).
    pub fn seed(&self, seed: u64) -> u64 {
        rank_seed(self.world.broadcast_u64(seed), self.world.rank)
    }

    /// This rank's own directory in `parent` for command `what`, removed when dropped and at
    /// once on an interrupt (ranks other than 0 then exit).
    pub fn rank_dir(&self, parent: &Path, what: &str) -> RankDir {
        let dir = self.checked(RankDir::create(parent, what, self.world.rank));
        dir.remove_on_interrupt(!self.leader());
        dir
    }

    /// Run `inv` through the runner with the world as its coordinator; a rank that cannot
    /// even set up ends the job.
    pub fn execute(&self, inv: &crate::plan::Invocation) -> crate::runner::Outcome {
        self.checked(crate::runner::execute_with(inv, false, Some(&self.world)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_0_keeps_the_runs_seed_and_the_others_differ() {
        assert_eq!(rank_seed(42, 0), 42);
        assert_ne!(rank_seed(42, 1), 42);
        assert_ne!(rank_seed(42, 1), rank_seed(42, 2));
    }
}
