//! A rank's own directory under `fsbench run --mpi`, `io --mpi` and `meta --mpi`, holding
//! everything the rank writes:
//! removed when the rank ends, and at once when it is interrupted.
//!
//! mpirun answers Ctrl-C with SIGTERM to every rank and SIGKILL one second later (Open MPI's
//! `odls_base_sigkill_timeout`). A rank's normal unwinding can take longer than that on a
//! busy host (the runner assembles partial results, with tool version probes, before it
//! releases the target), and a killed rank would leave its files behind. So a watcher thread
//! removes the directory as soon as the rank is interrupted; ranks other than 0, which have
//! nothing to save, then exit right away.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PARENT/fsbench-<what>-r<rank>-<pid>` (`mpi` for `run --mpi`, `io`, `meta` for theirs);
/// dropping it removes it.
#[derive(Debug)]
pub struct RankDir {
    path: PathBuf,
}

impl RankDir {
    /// Create the directory of `rank` in `parent`, named for the command (`what`). Rank and
    /// pid: pids alone may repeat across hosts sharing one directory.
    pub fn create(parent: &Path, what: &str, rank: i32) -> Result<RankDir> {
        let path = parent.join(format!("fsbench-{what}-r{rank}-{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| Error::io("cannot create", &path, e))?;
        Ok(RankDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the directory as soon as this process is interrupted; then, with `exit`, end
    /// the process with the interrupt's exit code.
    pub fn remove_on_interrupt(&self, exit: bool) {
        let path = self.path.clone();
        std::thread::spawn(move || {
            while !crate::cancel::requested() {
                std::thread::sleep(Duration::from_millis(10));
            }
            // Let the running workload see the flag and stop creating entries, then retry
            // until no late entry keeps the tree from going.
            std::thread::sleep(Duration::from_millis(50));
            for _ in 0..50 {
                match std::fs::remove_dir_all(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    _ => break,
                }
            }
            if exit {
                // `_exit` ends the process at once (no atexit handlers, no destructors):
                // nothing of this rank is needed any more (its results are not used), and its
                // files are gone.
                signal_hook::low_level::exit(crate::cancel::exit_code())
            }
        });
    }
}

impl Drop for RankDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!(
                "fsbench: warning: cannot remove {}: {e}",
                self.path.display()
            );
        }
    }
}
