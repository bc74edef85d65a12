//! The native I/O load generator: fio's job semantics, `io_uring` and `psync` backends.
//!
//! Entry point: [`run`] takes a [`JobSpec`] and returns an [`IoReport`], whose JSON form is the
//! stable `fsbench io --json` interface (docs/ARCHITECTURE.md). [`validate`] checks a spec against the
//! real file or device without creating anything; [`layout`] writes a file sequentially.
//!
//! Design for low overhead per I/O: one thread per job, each with its own file descriptor,
//! buffers, offset generator, histograms and per-second counters, merged only at the end; the
//! hot loop neither allocates nor locks, and reads the clock twice per I/O (psync) or twice
//! per batch (io_uring).

pub mod buffer;
pub mod coordinator;
pub mod job;
pub mod layout;
pub mod offsets;
mod psync;
pub mod report;
pub mod rng;
pub mod until_steady;
mod uring;
pub mod validate;
pub mod verify;
mod worker;

pub use coordinator::{Alone, Coordinator, Tracked};
pub use job::{Backend, JobSpec, RwMode};
pub use layout::layout;
pub use report::{
    CpuReport, DeviceReport, DirectionReport, IoReport, JobDetail, JobRun, LatencyNs, SteadyReport,
    SteadyWindow,
};
pub use until_steady::SteadySpec;

use crate::measure::{CpuSnapshot, LatencyHistogram, SecondLatency, SecondSeries, device};
use crate::{Error, Result};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use worker::{JobPlan, JobResult};

/// Check `spec` against the real file or device; creates nothing. `Err` is
/// [`Error::InvalidInput`] naming the flag at fault and what to do.
pub fn validate(spec: &JobSpec) -> Result<()> {
    validate::resolve(spec).map(|_| ())
}

/// Run one job to completion (or until [`crate::cancel`] fires) and report what was measured.
///
/// Steps: validate, pick the backend (io_uring, or psync with a note when the kernel refuses
/// it), lay out the file if needed, start one thread per job, sample CPU and device counters
/// at the edges of the measured window (after the ramp), then merge the threads' results.
pub fn run(spec: &JobSpec) -> Result<IoReport> {
    run_with(spec, None)
}

/// [`run`], and for a job that writes, keep counting device writes after it ended: `syncfs`
/// and a wait for quiet under `settle` (not part of the job's runtime, IOPS or latency),
/// reported as `write_bytes_total` / `write_amplification_total`.
pub fn run_with(spec: &JobSpec, settle: Option<crate::measure::SettleRule>) -> Result<IoReport> {
    run_coordinated(spec, None, &Alone, settle).map(|(report, _)| report)
}

/// Which part of a larger job group this process runs: jobs
/// `[index × numjobs, (index + 1) × numjobs)` of a group of `of × numjobs` jobs spread over
/// one shared file by `offset_increment` (so MPI rank r gets its own regions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slice {
    /// This process's place in the group (the MPI rank).
    pub index: u32,
    /// Number of processes in the group.
    pub of: u32,
}

/// When the measured window opened and closed, seconds after this process's jobs were
/// released (right after [`Coordinator::meet`], so comparable across processes that met
/// there without relying on synchronised clocks).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Window {
    /// The ramp ended (statistics start).
    pub start_s: f64,
    /// The last I/O of this process completed.
    pub end_s: f64,
}

/// Lay out the file `spec` needs (as [`run`] would) without running anything; for a file
/// that several processes share, where one lays it out before the others resolve it.
pub fn lay_out(spec: &JobSpec, slice: Option<Slice>) -> Result<f64> {
    let resolved = validate::resolve(&group_spec(spec, slice))?;
    if !resolved.needs_layout() {
        return Ok(0.0);
    }
    let mut created = CreatedGuard {
        path: (!resolved.exists).then(|| resolved.path.clone()),
    };
    let s = layout::layout_with(
        &resolved.path,
        resolved.needed_len,
        layout::LayoutOptions {
            direct: spec.direct,
            verify_bs: spec.verify.then_some(spec.bs),
            seed: spec.seed.unwrap_or(0),
            compress: spec.buffer_compress_percentage,
        },
    )?;
    created.path = None;
    Ok(s)
}

/// The whole group's job when this process runs a slice of it.
fn group_spec(spec: &JobSpec, slice: Option<Slice>) -> JobSpec {
    let mut full = spec.clone();
    if let Some(s) = slice {
        full.numjobs = spec.numjobs * s.of.max(1);
    }
    full
}

/// [`run`] as one of several processes: `slice` picks this process's regions of a shared
/// file (which the leader, rank 0, lays out once before the others resolve it: a meeting),
/// `coord` holds the meeting points. Also returns the measured [`Window`].
///
/// Every process makes the same collective calls whether its job succeeds or fails: a
/// process that fails before one of its meetings (a missing file, a layout that hit ENOSPC,
/// a job that could not open its file) still takes part in the meetings it has left and, with
/// stonewall, says it is done ([`Tracked::catch_up`]), so the others stop and return instead
/// of waiting for it; the caller shares the failure (`runner::coordinator::workload`).
pub fn run_coordinated(
    spec: &JobSpec,
    slice: Option<Slice>,
    coord: &dyn Coordinator,
    settle: Option<crate::measure::SettleRule>,
) -> Result<(IoReport, Window)> {
    let tracked = Tracked::new(coord);
    let r = run_tracked(spec, slice, &tracked, settle);
    if r.is_err() && !crate::cancel::requested() {
        // The shared file's layout meeting, then the start meeting (`run_jobs`).
        tracked.catch_up(1 + u32::from(slice.is_some()));
    }
    r
}

/// [`run_coordinated`]'s job, its meetings counted by `coord`.
fn run_tracked(
    spec: &JobSpec,
    slice: Option<Slice>,
    coord: &Tracked<'_>,
    settle: Option<crate::measure::SettleRule>,
) -> Result<(IoReport, Window)> {
    // A shared file is laid out once, by the leader, before anyone opens it.
    if slice.is_some() {
        if coord.rank() == 0 {
            lay_out(spec, slice)?;
        }
        coord.meet()?;
    }
    let mut resolved = validate::resolve(&group_spec(spec, slice))?;
    let first_job = slice.map_or(0, |s| (s.index * spec.numjobs) as usize);
    if slice.is_some() {
        resolved.regions = resolved.regions[first_job..first_job + spec.numjobs as usize].to_vec();
    }
    let seed = spec.seed.unwrap_or_else(rng::fresh_seed);
    if spec.steady.is_some() && coord.stonewall() {
        return Err(Error::invalid(
            "--steady-state",
            "cannot be combined with --stonewall: each would stop the job on its own rule",
        ));
    }
    // Run until steady: time-based up to the round limit, each job publishing its seconds live.
    let runtime = spec.steady.map(|s| s.limit()).or(spec.runtime);

    let (backend, backend_note) = backend_for(spec);
    let iodepth = if backend == Backend::Psync {
        1
    } else {
        spec.iodepth
    };

    let layout_s = lay_out_file(&resolved, spec, seed)?;

    let located = device::locate(spec.device.as_deref().unwrap_or(&resolved.path));
    let device_note = located
        .as_ref()
        .err()
        .map(|why| format!("no device counters: {why}"));
    let dev = located.ok();

    let plans = job_plans(&resolved, spec, first_job, seed, iodepth, runtime);

    let Measured {
        results,
        cpu,
        dev0,
        dev1,
        window,
        opened,
        steady_end,
    } = run_jobs(&plans, backend, spec, coord, dev.as_ref());
    // Each member's counters were read (a multi-device filesystem's devices); the figures
    // are their sum, and each member's share goes into `per_device`.
    let per_device = match (&dev, &dev0, &dev1) {
        (Some(d), Some(a), Some(b)) => d.per_member(a, b),
        _ => Vec::new(),
    };
    let sum = |m: Option<Vec<device::DeviceCounters>>| m.map(|m| device::DeviceCounters::sum(&m));
    let (dev0, dev1) = (sum(dev0), sum(dev1));
    let devdelta = match (dev0, dev1) {
        (Some(a), Some(b)) => Some(a.delta(&b)),
        _ => None,
    };
    if crate::cancel::requested() {
        return Err(Error::Interrupted);
    }
    let results: Vec<JobResult> = results.into_iter().collect::<Result<_>>()?;
    // After the job: what the filesystem still writes because of it.
    let (settled, settle_note) = match (settle, &dev, dev1) {
        (Some(rule), Some(d), Some(end)) if spec.rw.writes() => {
            settle_after(d, &resolved.path, end, rule)?
        }
        _ => (None, None),
    };

    let Merged {
        read,
        write,
        series,
        lat_series,
        fsyncs,
        runtime,
        jobs,
    } = merge_jobs(&plans, &results);
    // A job's window runs from the ramp's end to its last completion; use the longest, as
    // fio's group reporting does. Fall back to the wall window if a job recorded nothing.
    let runtime_s = if runtime.is_zero() {
        window.as_secs_f64()
    } else {
        runtime.as_secs_f64()
    };
    let lat_q = lat_series.quantiles_ms(runtime_s, &[0.50, 0.99]);
    let iops_series = series.iops(runtime_s);
    let steady = spec
        .steady
        .map(|st| until_steady::report(&st, steady_end, runtime_s, &series, &lat_series));
    let rd = direction(&read, spec.bs, runtime_s);
    let wr = direction(&write, spec.bs, runtime_s);
    let device = dev.map(|d| {
        let after = (settled, settle_note);
        device_report(
            d.name,
            devdelta.unwrap_or_default(),
            after,
            per_device,
            wr.bytes,
        )
    });
    let window = Window {
        start_s: opened.as_secs_f64(),
        end_s: opened.as_secs_f64() + runtime_s,
    };
    let report = IoReport {
        read: rd,
        write: wr,
        cpu: CpuReport {
            user_s: cpu.user_s,
            sys_s: cpu.sys_s,
            system_util: cpu.system_util,
        },
        runtime_s,
        backend: backend.as_str().to_string(),
        backend_note,
        seed,
        layout_s,
        fsyncs,
        iops_series,
        bw_series: series.bandwidth(runtime_s),
        lat_p50_ms_series: lat_q[0].clone(),
        lat_p99_ms_series: lat_q[1].clone(),
        device,
        device_note,
        engine: "fsbench".into(),
        jobs,
        steady,
    };
    Ok((report, window))
}

/// The device's part of a job's report: its counters' `delta` over the job, with a settle
/// what the filesystem still wrote after it (`after`: the settle and its note), each against
/// the bytes the job wrote; each member's share for a multi-device filesystem.
fn device_report(
    name: String,
    delta: device::DeviceCounters,
    after: (Option<crate::measure::Settled>, Option<String>),
    per_device: Vec<device::MemberIo>,
    job_write_bytes: u64,
) -> DeviceReport {
    let (settled, settle_note) = after;
    let total = settled.map(|s| delta.write_bytes + s.after.write_bytes);
    let ratio = |bytes: u64| (job_write_bytes > 0).then(|| bytes as f64 / job_write_bytes as f64);
    DeviceReport {
        name,
        read_bytes: delta.read_bytes,
        write_bytes: delta.write_bytes,
        write_amplification: ratio(delta.write_bytes),
        write_bytes_total: total,
        write_amplification_total: total.and_then(ratio),
        settle_s: settled.map(|s| s.seconds),
        settle_quiet: settled.map(|s| s.quiet),
        settle_note,
        per_device,
    }
}

/// The backend the job asked for, or psync with a note when io_uring cannot be used here.
fn backend_for(spec: &JobSpec) -> (Backend, Option<String>) {
    match spec.backend {
        Backend::Psync => (Backend::Psync, None),
        Backend::IoUring => match uring::probe().and_then(|()| {
            // Test hook: lets tests exercise the fallback without disabling io_uring for the
            // whole machine (kernel.io_uring_disabled would hit every other process).
            if std::env::var_os("FSBENCH_TEST_REFUSE_IO_URING").is_some() {
                Err(std::io::Error::from_raw_os_error(libc::EPERM))
            } else {
                Ok(())
            }
        }) {
            Ok(()) => (Backend::IoUring, None),
            Err(e) => (
                Backend::Psync,
                Some(format!(
                    "io_uring unavailable ({e}); fell back to psync (check \
                     /proc/sys/kernel/io_uring_disabled or seccomp)"
                )),
            ),
        },
    }
}

/// Lay out the job's file when it needs it (a file this call created is removed if the
/// layout fails); the seconds it took.
fn lay_out_file(resolved: &validate::Resolved, spec: &JobSpec, seed: u64) -> Result<f64> {
    if !resolved.needs_layout() {
        return Ok(0.0);
    }
    let mut created = CreatedGuard {
        path: (!resolved.exists).then(|| resolved.path.clone()),
    };
    let s = layout::layout_with(
        &resolved.path,
        resolved.needed_len,
        layout::LayoutOptions {
            direct: spec.direct,
            verify_bs: spec.verify.then_some(spec.bs),
            seed,
            compress: spec.buffer_compress_percentage,
        },
    )?;
    created.path = None;
    Ok(s)
}

/// One plan per job of this process: its region, its seed (from the run's and its index).
fn job_plans(
    resolved: &validate::Resolved,
    spec: &JobSpec,
    first_job: usize,
    seed: u64,
    iodepth: u32,
    runtime: Option<Duration>,
) -> Vec<JobPlan> {
    resolved
        .regions
        .iter()
        .enumerate()
        .map(|(k, &region)| {
            let k = first_job + k;
            let mut s = seed ^ (k as u64).wrapping_mul(0xA24B_AED4_963E_E407);
            JobPlan {
                index: k,
                path: resolved.path.clone(),
                rw: spec.rw,
                bs: spec.bs,
                iodepth,
                direct: spec.direct,
                region,
                fsync: spec.fsync,
                verify: spec.verify,
                run_seed: seed,
                job_seed: rng::splitmix(&mut s),
                compress: spec.buffer_compress_percentage,
                rwmixread: spec.rwmixread,
                ramp: spec.ramp,
                runtime,
                live: spec.steady.map(|s| until_steady::live(s.limit())),
            }
        })
        .collect()
}

/// What the job threads and the window around them measured.
struct Measured {
    results: Vec<Result<JobResult>>,
    cpu: crate::measure::CpuUsage,
    dev0: Option<Vec<device::DeviceCounters>>,
    dev1: Option<Vec<device::DeviceCounters>>,
    window: Duration,
    opened: Duration,
    steady_end: Option<usize>,
}

/// Run the jobs, one thread each: meet when set up (the coordinator's start), open the
/// measured window after the ramp, watch for steady state or stonewall, join.
fn run_jobs(
    plans: &[JobPlan],
    backend: Backend,
    spec: &JobSpec,
    coord: &dyn Coordinator,
    dev: Option<&device::BlockDevice>,
) -> Measured {
    let abort = AtomicBool::new(false);
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let barrier = Barrier::new(plans.len() + 1);
    let counters = || dev.and_then(|d| d.member_counters().ok());
    std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .iter()
            .map(|plan| {
                let (abort, barrier, finished) = (&abort, &barrier, &finished);
                scope.spawn(move || {
                    let r = job_thread(plan, backend, barrier, abort);
                    if r.is_err() {
                        abort.store(true, Ordering::SeqCst);
                    }
                    finished.fetch_add(1, Ordering::SeqCst);
                    r
                })
            })
            .collect();
        // First meeting: every job is set up. Without a ramp the window opens now, so take
        // the "before" samples while the jobs still wait at the second meeting.
        barrier.wait();
        // Every process meets, even one whose job could not set up (it fails after the
        // meetings, so the others are not left waiting). An interrupt while waiting for the
        // others stops this process's jobs; the caller's cancel check then reports it.
        if coord.meet().is_err() {
            abort.store(true, Ordering::SeqCst);
        }
        let go = Instant::now();
        let mut before = None;
        if spec.ramp.is_zero() {
            before = Some((CpuSnapshot::now(), counters()));
        }
        barrier.wait();
        let start = Instant::now();
        // With a ramp, the measured window opens when it ends (or when every job finished).
        while start.elapsed() < spec.ramp && finished.load(Ordering::SeqCst) < plans.len() {
            std::thread::sleep(Duration::from_millis(5).min(spec.ramp));
        }
        let (cpu0, dev0) = before.unwrap_or_else(|| (CpuSnapshot::now(), counters()));
        let t0 = Instant::now();
        let mut steady_end = None;
        if let Some(st) = &spec.steady {
            let lives: Vec<until_steady::Live> =
                plans.iter().filter_map(|p| p.live.clone()).collect();
            let all_done = || finished.load(Ordering::SeqCst) == plans.len();
            steady_end = until_steady::watch(st, &lives, t0, all_done, &abort);
        }
        if coord.stonewall() {
            // Stonewalling: every process asks, in step, whether any has finished.
            loop {
                let done = finished.load(Ordering::SeqCst) == plans.len();
                if coord.any_done(done) {
                    abort.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let results: Vec<Result<JobResult>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Other("an I/O job thread panicked".into())))
            })
            .collect();
        let window = t0.elapsed();
        let cpu = cpu0.usage_until(&CpuSnapshot::now());
        Measured {
            results,
            cpu,
            dev0,
            dev1: counters(),
            window,
            opened: t0 - go,
            steady_end,
        }
    })
}

/// Wait for what the filesystem still writes because of a writing job, from its end
/// counters: the settle, and a note when it did not go quiet or could not be watched.
fn settle_after(
    d: &device::BlockDevice,
    path: &std::path::Path,
    end: device::DeviceCounters,
    rule: crate::measure::SettleRule,
) -> Result<(Option<crate::measure::Settled>, Option<String>)> {
    match crate::measure::quiesce::settle(d, path, end, rule) {
        Ok(s) => {
            let note = (!s.quiet).then(|| {
                format!(
                    "the device was still writing {:?} after the job; the total counts what it wrote until then",
                    rule.cap
                )
            });
            Ok((Some(s), note))
        }
        Err(Error::Interrupted) => Err(Error::Interrupted),
        Err(e) => Ok((None, Some(format!("no total after the job: {e}")))),
    }
}

/// The jobs' results merged: histograms, series, fsyncs, the longest runtime, each job's
/// detail.
struct Merged {
    read: LatencyHistogram,
    write: LatencyHistogram,
    series: SecondSeries,
    lat_series: SecondLatency,
    fsyncs: u64,
    runtime: Duration,
    jobs: Vec<JobDetail>,
}

fn merge_jobs(plans: &[JobPlan], results: &[JobResult]) -> Merged {
    let mut m = Merged {
        read: LatencyHistogram::new(),
        write: LatencyHistogram::new(),
        series: SecondSeries::default(),
        lat_series: SecondLatency::default(),
        fsyncs: 0,
        runtime: Duration::ZERO,
        jobs: Vec::with_capacity(results.len()),
    };
    for (plan, r) in plans.iter().zip(results) {
        m.read.merge(&r.read);
        m.write.merge(&r.write);
        m.series.merge(&r.series);
        m.lat_series.merge(&r.lat_series);
        m.fsyncs += r.fsyncs;
        m.runtime = m.runtime.max(r.runtime);
        m.jobs.push(JobDetail {
            job: plan.index as u32,
            region_start: plan.region.0,
            region_len: plan.region.1,
            ios: r.read.count() + r.write.count(),
            min_offset: if r.max_end == 0 { 0 } else { r.min_offset },
            max_end: r.max_end,
        });
    }
    m
}

/// Summarise one direction: rates over `runtime_s`, percentiles from the histogram (also
/// used by the MPI reduction over the ranks' merged histograms).
pub(crate) fn direction(h: &LatencyHistogram, bs: u64, runtime_s: f64) -> DirectionReport {
    let ios = h.count();
    let bytes = ios * bs;
    let rate = |x: u64| {
        if runtime_s > 0.0 {
            x as f64 / runtime_s
        } else {
            0.0
        }
    };
    DirectionReport {
        ios,
        bytes,
        iops: rate(ios),
        bw_bytes: rate(bytes),
        lat_ns: until_steady::latency_ns(h),
        histogram: h.to_sparse(),
        lat_sum_ns: h.sum(),
    }
}

/// One job's thread: open, set up, meet the others at the barrier, run.
fn job_thread(
    plan: &JobPlan,
    backend: Backend,
    barrier: &Barrier,
    abort: &AtomicBool,
) -> Result<JobResult> {
    // Set up everything before the barrier so the clock only sees I/O; but always reach the
    // barrier, or the other threads would wait forever.
    let setup = (|| -> Result<(std::fs::File, Prepared)> {
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(plan.rw.writes());
        if plan.direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        let file = opts
            .open(&plan.path)
            .map_err(|e| Error::io("cannot open", &plan.path, e))?;
        let prepared = match backend {
            Backend::Psync => Prepared::Psync(psync::PsyncJob::setup(plan)),
            Backend::IoUring => Prepared::Uring(Box::new(
                uring::UringJob::setup(plan, &file)
                    .map_err(|e| Error::io("cannot set up io_uring for", &plan.path, e))?,
            )),
        };
        Ok((file, prepared))
    })();
    if setup.is_err() {
        abort.store(true, Ordering::SeqCst);
    }
    barrier.wait();
    barrier.wait();
    let (file, prepared) = setup?;
    let start = Instant::now();
    match prepared {
        Prepared::Psync(j) => j.run(plan, &file, start, abort),
        Prepared::Uring(j) => j.run(plan, start, abort),
    }
}

enum Prepared {
    Psync(psync::PsyncJob),
    Uring(Box<uring::UringJob>),
}

/// Removes a file fsbench created when laying it out fails or is interrupted, so a failed
/// run leaves nothing behind. Forgotten once the layout succeeded.
struct CreatedGuard {
    path: Option<std::path::PathBuf>,
}

impl Drop for CreatedGuard {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}
