//! The `psync` backend: one pread/pwrite at a time per job thread.

// `unsafe` outside host::sys, an allowed exception (docs/ARCHITECTURE.md): the engine's hot path
// (pread/pwrite on pool buffers).

use super::buffer::BufferPool;
use super::worker::{JobPlan, JobResult, Recorder, check_read, prepare_write, should_stop};
use crate::Result;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Per-job state prepared before the clock starts.
pub(crate) struct PsyncJob {
    pool: BufferPool,
}

impl PsyncJob {
    /// Allocate the job's single buffer (filled once; refilled per write).
    pub fn setup(plan: &JobPlan) -> Self {
        let mut pool = BufferPool::new(plan.bs as usize, 1);
        plan.data().fill(pool.buf(0));
        PsyncJob { pool }
    }

    /// Run the job until its region is done, its time is up, or it is told to stop.
    pub fn run(
        mut self,
        plan: &JobPlan,
        file: &std::fs::File,
        start: Instant,
        abort: &AtomicBool,
    ) -> Result<JobResult> {
        let fd = file.as_raw_fd();
        let bs = plan.bs as usize;
        let mut gen_ = plan.offsets();
        let mut data = plan.data();
        let mut rec = Recorder::new(plan, start);
        let mut seq = 0u64;
        let mut since_sync = 0u32;
        while !should_stop(abort) {
            let Some(io) = gen_.next_io() else { break };
            let buf = self.pool.buf(0);
            if io.write {
                prepare_write(plan, &mut data, buf, io.offset, &mut seq);
            }
            let t0 = Instant::now();
            // SAFETY: buf is a live, exclusively borrowed buffer of exactly bs bytes.
            let r = unsafe {
                if io.write {
                    libc::pwrite64(fd, buf.as_ptr().cast(), bs, io.offset as i64)
                } else {
                    libc::pread64(fd, buf.as_mut_ptr().cast(), bs, io.offset as i64)
                }
            };
            let t1 = Instant::now();
            if r as usize != bs {
                let res = if r < 0 {
                    -(std::io::Error::last_os_error().raw_os_error().unwrap_or(5) as i64)
                } else {
                    r as i64
                };
                return Err(plan.io_error(io.write, io.offset, res));
            }
            if !io.write {
                check_read(plan, buf, io.offset)?;
            }
            rec.complete(io.write, io.offset, t0, t1);
            let mut now = t1;
            if io.write && plan.fsync > 0 {
                since_sync += 1;
                if since_sync == plan.fsync {
                    since_sync = 0;
                    // SAFETY: fd is open for the whole job.
                    if unsafe { libc::fsync(fd) } != 0 {
                        return Err(crate::Error::io(
                            "fsync failed on",
                            &plan.path,
                            std::io::Error::last_os_error(),
                        ));
                    }
                    now = Instant::now();
                    rec.fsync_done(now);
                }
            }
            if rec.expired(now) {
                break;
            }
        }
        Ok(rec.finish())
    }
}
