//! The one trait through which several processes (MPI ranks) agree on the phases of a
//! measurement: meet before a workload (everyone prepared, so all start their clocks at the
//! same instant), stonewall (stop when the first is done), gather every process's result at
//! the leader and share the leader's verdict. The engine meets and stonewalls through it
//! inside a job ([`super::run_coordinated`]); the runner drives a whole workload step with it
//! (`runner::coordinator::workload`: prepare, meet, measure, meet, gather, reduce, share),
//! for `fsbench run --mpi`, `fsbench meta --mpi` and `fsbench io --mpi` alike (whose I/O
//! step runs the engine with the coordinator inside that step: one more meeting before the
//! clocks start, the shared file's layout, stonewall). [`Tracked`] counts a job's meetings so
//! that a process whose job fails still makes the calls the others make.
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

/// A coordinator that counts this process's meetings and whether its stonewall ended, so that
/// a job that fails part-way can still make the collective calls the others make
/// ([`Tracked::catch_up`]) instead of leaving them waiting for it.
pub struct Tracked<'a> {
    inner: &'a dyn Coordinator,
    meets: std::cell::Cell<u32>,
    walled: std::cell::Cell<bool>,
}

impl<'a> Tracked<'a> {
    /// Count the meetings made through `inner`.
    pub fn new(inner: &'a dyn Coordinator) -> Tracked<'a> {
        Tracked {
            inner,
            meets: std::cell::Cell::new(0),
            walled: std::cell::Cell::new(false),
        }
    }

    /// Meetings made so far.
    pub fn meets(&self) -> u32 {
        self.meets.get()
    }

    /// After a failure: meet until `meets` meetings were made, then, with stonewall, say
    /// this process is done (one [`Coordinator::any_done`] with `true`, which ends every
    /// other process's stonewall loop at that same call). Stops at an interrupt.
    pub fn catch_up(&self, meets: u32) {
        while self.meets.get() < meets {
            if self.meet().is_err() {
                return;
            }
        }
        if self.inner.stonewall() && !self.walled.get() {
            self.any_done(true);
        }
    }
}

impl Coordinator for Tracked<'_> {
    fn rank(&self) -> u32 {
        self.inner.rank()
    }
    fn ranks(&self) -> u32 {
        self.inner.ranks()
    }
    fn host(&self) -> String {
        self.inner.host()
    }
    fn meet(&self) -> crate::Result<()> {
        self.inner.meet()?;
        self.meets.set(self.meets.get() + 1);
        Ok(())
    }
    fn stonewall(&self) -> bool {
        self.inner.stonewall()
    }
    fn any_done(&self, local_done: bool) -> bool {
        let any = self.inner.any_done(local_done);
        if any {
            self.walled.set(true);
        }
        any
    }
    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        self.inner.gather(mine)
    }
    fn share(&self, leader: Vec<u8>) -> Vec<u8> {
        self.inner.share(leader)
    }
    fn provenance(&self) -> Vec<(String, String)> {
        self.inner.provenance()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{JobSpec, RwMode, Slice, run_coordinated};
    use std::cell::Cell;

    /// A process alone that counts the collective calls it is asked to make.
    #[derive(Default)]
    struct Counting {
        meets: Cell<u32>,
        any_done: Cell<u32>,
        stonewall: bool,
    }

    impl Coordinator for Counting {
        fn meet(&self) -> crate::Result<()> {
            self.meets.set(self.meets.get() + 1);
            Ok(())
        }
        fn stonewall(&self) -> bool {
            self.stonewall
        }
        fn any_done(&self, local_done: bool) -> bool {
            self.any_done.set(self.any_done.get() + 1);
            local_done
        }
    }

    /// A read of a file that is not there: it fails before any meeting.
    fn missing(dir: &std::path::Path) -> JobSpec {
        JobSpec {
            filename: dir.join("missing"),
            rw: RwMode::Read,
            size: None,
            ..JobSpec::default()
        }
    }

    #[test]
    fn a_job_that_fails_before_its_meetings_still_makes_them() {
        let dir = tempfile::tempdir().unwrap();
        // Its own file: the start meeting.
        let c = Counting::default();
        assert!(run_coordinated(&missing(dir.path()), None, &c, None).is_err());
        assert_eq!((c.meets.get(), c.any_done.get()), (1, 0));
        // A shared file, stonewall: the layout meeting, the start meeting, and one "done"
        // that ends the others' stonewall loop.
        let c = Counting {
            stonewall: true,
            ..Counting::default()
        };
        let slice = Some(Slice { index: 0, of: 2 });
        assert!(run_coordinated(&missing(dir.path()), slice, &c, None).is_err());
        assert_eq!((c.meets.get(), c.any_done.get()), (2, 1));
    }

    #[test]
    fn catch_up_makes_only_the_meetings_not_made_yet() {
        let c = Counting::default();
        let t = Tracked::new(&c);
        t.meet().unwrap();
        t.catch_up(2);
        assert_eq!((t.meets(), c.meets.get(), c.any_done.get()), (2, 2, 0));
    }
}
