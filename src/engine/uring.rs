//! The `io_uring` backend: keeps `iodepth` I/Os in flight, submits every refill in one
//! `io_uring_enter` that also waits for a completion, reaps completions in batches, and uses a
//! registered file and registered (fixed) buffers when the kernel allows.

// `unsafe` outside host::sys, an allowed exception (docs/ARCHITECTURE.md): the engine's hot path
// (io_uring submissions on pool buffers).

use super::buffer::BufferPool;
use super::worker::{JobPlan, JobResult, Recorder, check_read, prepare_write, should_stop};
use crate::{Error, Result};
use io_uring::{IoUring, opcode, squeue, types};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Can this process create an io_uring at all? `Err` carries the kernel's reason.
pub(crate) fn probe() -> std::io::Result<()> {
    IoUring::new(2).map(|_| ())
}

#[derive(Clone, Copy)]
struct Slot {
    issued: Instant,
    offset: u64,
    write: bool,
    busy: bool,
}

/// Per-job state prepared before the clock starts. Field order matters: the ring is dropped
/// before the buffers it may still reference.
pub(crate) struct UringJob {
    ring: IoUring,
    pool: BufferPool,
    fixed_bufs: bool,
    fixed_file: bool,
    fd: RawFd,
    depth: usize,
}

impl UringJob {
    /// Create the ring, allocate and register buffers and the file.
    pub fn setup(plan: &JobPlan, file: &std::fs::File) -> std::io::Result<Self> {
        let depth = plan.iodepth as usize;
        let entries = (depth as u32).next_power_of_two().max(2);
        // COOP_TASKRUN: completions are delivered when we next enter the kernel instead of
        // interrupting us. DEFER_TASKRUN measured slower here: on devices without NOWAIT
        // support (zram, loop) every I/O goes through io-wq, and deferring its task work to our
        // single thread serialises the completions. Older kernels refuse the flag: go plain.
        let ring = IoUring::builder()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        let mut pool = BufferPool::new(plan.bs as usize, depth);
        let mut data = plan.data();
        for i in 0..depth {
            data.fill(pool.buf(i));
        }
        // SAFETY: the iovecs point into `pool`, which outlives the ring (field order).
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&pool.iovecs()) }.is_ok();
        let fd = file.as_raw_fd();
        let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
        Ok(UringJob {
            ring,
            pool,
            fixed_bufs,
            fixed_file,
            fd,
            depth,
        })
    }

    #[inline]
    fn sqe(&self, slot: usize, write: bool, offset: u64, len: u32) -> squeue::Entry {
        let ptr = self.pool.ptr(slot);
        let idx = slot as u16;
        macro_rules! build {
            ($fd:expr) => {
                match (write, self.fixed_bufs) {
                    (false, true) => opcode::ReadFixed::new($fd, ptr, len, idx)
                        .offset(offset)
                        .build(),
                    (true, true) => opcode::WriteFixed::new($fd, ptr, len, idx)
                        .offset(offset)
                        .build(),
                    (false, false) => opcode::Read::new($fd, ptr, len).offset(offset).build(),
                    (true, false) => opcode::Write::new($fd, ptr, len).offset(offset).build(),
                }
            };
        }
        let e = if self.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(self.fd))
        };
        e.user_data(slot as u64)
    }

    fn enter(&self, want: usize) -> std::io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // Completion queue full: reap first, the caller loops back.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// Wait for every in-flight I/O (used on error paths so no buffer is freed under the
    /// kernel's feet).
    fn drain(&mut self, mut inflight: usize) {
        while inflight > 0 {
            if self.enter(1).is_err() {
                return;
            }
            inflight -= self.ring.completion().count();
        }
    }

    /// Run the job until its region is done, its time is up, or it is told to stop.
    pub fn run(mut self, plan: &JobPlan, start: Instant, abort: &AtomicBool) -> Result<JobResult> {
        let bs = plan.bs as u32;
        let mut gen_ = plan.offsets();
        let mut data = plan.data();
        let mut rec = Recorder::new(plan, start);
        let mut slots = vec![
            Slot {
                issued: start,
                offset: 0,
                write: false,
                busy: false,
            };
            self.depth
        ];
        let mut free: Vec<u16> = (0..self.depth as u16).rev().collect();
        let mut pending: Vec<u16> = Vec::with_capacity(self.depth);
        let mut inflight = 0usize;
        let mut seq = 0u64;
        let mut since_sync = 0u32;
        let mut sync_due = false;
        let mut issuing = true;
        let guard_overlap = plan.verify && plan.rw.writes() && self.depth > 1;
        loop {
            if should_stop(abort) {
                issuing = false;
            }
            while issuing && !sync_due {
                let Some(&slot) = free.last() else { break };
                let Some(io) = gen_.next_io() else {
                    issuing = false;
                    break;
                };
                // A read racing a write of the same block could see half of it and report a
                // false verify failure: with verify on, never overlap I/O to one block.
                // (Skipping it ends this refill: looping for another offset could spin forever
                // on a region smaller than the queue.)
                if guard_overlap && slots.iter().any(|sl| sl.busy && sl.offset == io.offset) {
                    break;
                }
                free.pop();
                let s = slot as usize;
                if io.write {
                    prepare_write(plan, &mut data, self.pool.buf(s), io.offset, &mut seq);
                    if plan.fsync > 0 {
                        since_sync += 1;
                        if since_sync == plan.fsync {
                            since_sync = 0;
                            sync_due = true;
                        }
                    }
                }
                let e = self.sqe(s, io.write, io.offset, bs);
                // SAFETY: the buffer stays valid and untouched until the completion arrives;
                // the queue has room for `depth` entries and at most `depth` are pending.
                unsafe {
                    self.ring
                        .submission()
                        .push(&e)
                        .expect("submission queue sized to iodepth");
                }
                slots[s].offset = io.offset;
                slots[s].write = io.write;
                slots[s].busy = true;
                pending.push(slot);
            }
            if inflight + pending.len() == 0 {
                if sync_due {
                    // Every write before the fsync has completed: now sync, timed in the run.
                    sync_due = false;
                    // SAFETY: fd is open for the whole job.
                    if unsafe { libc::fsync(self.fd) } != 0 {
                        return Err(Error::io(
                            "fsync failed on",
                            &plan.path,
                            std::io::Error::last_os_error(),
                        ));
                    }
                    let now = Instant::now();
                    rec.fsync_done(now);
                    if rec.expired(now) {
                        issuing = false;
                    }
                    continue;
                }
                break;
            }
            let issued = Instant::now();
            for &s in &pending {
                slots[s as usize].issued = issued;
            }
            inflight += pending.len();
            pending.clear();
            if let Err(e) = self.enter(1) {
                self.drain(inflight);
                return Err(Error::io("io_uring_enter failed on", &plan.path, e));
            }
            let now = Instant::now();
            let mut failure = None;
            // Reap every completion available in one pass over the queue.
            let mut cq = self.ring.completion();
            cq.sync();
            for cqe in &mut cq {
                let s = cqe.user_data() as usize;
                let slot = slots[s];
                slots[s].busy = false;
                inflight -= 1;
                free.push(s as u16);
                let res = cqe.result();
                if res as u32 != bs || res < 0 {
                    failure.get_or_insert(plan.io_error(slot.write, slot.offset, res as i64));
                    continue;
                }
                if !slot.write {
                    // SAFETY: the kernel is done with this buffer; nothing else borrows it.
                    let buf =
                        unsafe { std::slice::from_raw_parts(self.pool.ptr(s), plan.bs as usize) };
                    if let Err(e) = check_read(plan, buf, slot.offset) {
                        failure.get_or_insert(e);
                        continue;
                    }
                }
                rec.complete(slot.write, slot.offset, slot.issued, now);
            }
            drop(cq);
            if let Some(e) = failure {
                self.drain(inflight);
                return Err(e);
            }
            if rec.expired(now) {
                issuing = false;
            }
        }
        Ok(rec.finish())
    }
}
