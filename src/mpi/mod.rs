//! fsbench under MPI (`--features mpi`): the transport only. Every rank runs the same job,
//! phases are separated by barriers, and rank 0 reduces the ranks' results into one
//! (IOR/mdtest's model). [`World`] is the MPI job and implements the one meeting-point trait,
//! [`crate::engine::Coordinator`] (meet, stonewall, gather, share); what the phases are is
//! `runner::coordinator`, what the leader makes of the gathered results `runner::reduce`.
//!
//! Failure is collective: a rank that fails prints which rank and host and why, then calls
//! `MPI_Abort`, which ends every rank (no one is left waiting in a barrier).

pub mod launch;
pub mod quiet;
pub mod rankdir;

use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// This process's place in the MPI job.
pub struct World {
    /// Keeps MPI initialised; `MPI_Finalize` runs when it is dropped.
    _universe: mpi::environment::Universe,
    /// `MPI_COMM_WORLD`.
    pub comm: SimpleCommunicator,
    /// This rank.
    pub rank: i32,
    /// Number of ranks.
    pub size: i32,
    /// This rank's host (`MPI_Get_processor_name`).
    pub host: String,
    /// Stop every rank's job when the first finishes (`io --mpi --stonewall`).
    pub stonewall: bool,
    /// `host.extra` entries of the results this job writes (`run --mpi`: ranks, hosts,
    /// library, the shared directory), set by the command once it knows them.
    pub provenance: Vec<(String, String)>,
}

/// Tag of the point-to-point messages that carry a rank's result to rank 0.
const RESULT_TAG: i32 = 15;

impl World {
    /// Initialise MPI. Only the main thread calls MPI (the job threads never do), so
    /// `MPI_THREAD_FUNNELED` is enough.
    pub fn init() -> crate::Result<World> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| crate::Error::Other("MPI is already initialised".into()))?;
        let comm = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(World {
            rank: comm.rank(),
            size: comm.size(),
            comm,
            host,
            stonewall: false,
            provenance: Vec::new(),
            _universe: universe,
        })
    }

    /// The MPI library's own version string (first line), e.g. `Open MPI v4.1.4, …`.
    pub fn library_version() -> String {
        let v = mpi::environment::library_version().unwrap_or_default();
        let (major, minor) = mpi::environment::version();
        let first = v.lines().next().unwrap_or("").trim_end_matches('\0').trim();
        format!("{first} (MPI {major}.{minor})")
    }

    /// Report this rank's failure and end the whole job: every rank exits non-zero.
    pub fn fail(&self, e: &crate::Error) -> ! {
        eprintln!(
            "fsbench: rank {} of {} on host {} failed: {e}; aborting all ranks",
            self.rank, self.size, self.host
        );
        let code = e.exit_code().max(1);
        self.comm.abort(code)
    }

    /// Unwrap `r`, or fail the whole job with its error.
    pub fn check<T>(&self, r: crate::Result<T>) -> T {
        r.unwrap_or_else(|e| self.fail(&e))
    }

    /// Rank 0's value of `v`, on every rank.
    pub fn broadcast_u64(&self, mut v: u64) -> u64 {
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v
    }

    /// Rank 0's bytes, on every rank (`mine` is ignored on the others).
    pub fn broadcast_bytes(&self, mine: Vec<u8>) -> Vec<u8> {
        let len = self.broadcast_u64(mine.len() as u64) as usize;
        let mut buf = if self.rank == 0 { mine } else { vec![0u8; len] };
        if len > 0 {
            self.comm.process_at_rank(0).broadcast_into(&mut buf[..]);
        }
        buf
    }

    /// Wait until every rank is here (a plain `MPI_Barrier`: for a job that is ending, when
    /// no rank can be interrupted mid-step).
    pub fn wait_for_all(&self) {
        self.comm.barrier();
    }

    /// Whether `ok` holds on every rank.
    pub fn all_ok(&self, ok: bool) -> bool {
        let mine = u8::from(ok);
        let mut all = 0u8;
        self.comm
            .all_reduce_into(&mine, &mut all, mpi::collective::SystemOperation::min());
        all != 0
    }

    /// Every rank's host name, in rank order, at rank 0 (`None` on the others).
    pub fn gather_hosts(&self) -> Option<Vec<String>> {
        self.gather_bytes(self.host.clone().into_bytes())
            .map(|all| {
                all.into_iter()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .collect()
            })
    }

    /// Gather every rank's bytes at rank 0 (in rank order); `None` on the other ranks.
    pub fn gather_bytes(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        if self.rank == 0 {
            let mut all = vec![mine];
            for r in 1..self.size {
                let (msg, _) = self
                    .comm
                    .process_at_rank(r)
                    .receive_vec_with_tag::<u8>(RESULT_TAG);
                all.push(msg);
            }
            Some(all)
        } else {
            self.comm
                .process_at_rank(0)
                .send_with_tag(&mine[..], RESULT_TAG);
            None
        }
    }
}

impl crate::engine::Coordinator for World {
    fn rank(&self) -> u32 {
        self.rank as u32
    }

    fn ranks(&self) -> u32 {
        self.size as u32
    }

    fn host(&self) -> String {
        self.host.clone()
    }

    /// A non-blocking barrier polled with the interrupt flag, so a rank that gets
    /// SIGINT/SIGTERM while it waits for the others unwinds through its guards and removes
    /// its files instead of hanging until mpirun kills it.
    fn meet(&self) -> crate::Result<()> {
        let mut req = self.comm.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return Ok(()),
                Err(pending) => req = pending,
            }
            if crate::cancel::requested() {
                // The others are interrupted too (mpirun signals every rank) or will be
                // killed when this one exits; the request is abandoned with the process.
                std::mem::forget(req);
                return Err(crate::Error::Interrupted);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn stonewall(&self) -> bool {
        self.stonewall
    }

    fn any_done(&self, local_done: bool) -> bool {
        // Every rank calls this in step (same loop, same exit condition: the reduced value),
        // so the collective always matches up.
        let mine = u8::from(local_done);
        let mut any = 0u8;
        self.comm
            .all_reduce_into(&mine, &mut any, SystemOperation::max());
        any != 0
    }

    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        self.gather_bytes(mine)
    }

    fn share(&self, leader: Vec<u8>) -> Vec<u8> {
        self.broadcast_bytes(leader)
    }

    fn provenance(&self) -> Vec<(String, String)> {
        self.provenance.clone()
    }
}

/// Whether `path` names a per-rank file or tree (`%r` or `%h` in it).
pub fn is_per_rank(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.contains("%r") || s.contains("%h")
}

/// `path` with `%r` replaced by the rank and `%h` by the host.
pub fn expand(path: &Path, rank: i32, host: &str) -> PathBuf {
    PathBuf::from(
        path.to_string_lossy()
            .replace("%r", &rank.to_string())
            .replace("%h", host),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_per_rank_and_host() {
        let p = Path::new("/mnt/%h/f.%r");
        assert!(is_per_rank(p));
        assert_eq!(expand(p, 3, "n1"), PathBuf::from("/mnt/n1/f.3"));
        assert!(!is_per_rank(Path::new("/mnt/shared")));
    }
}
