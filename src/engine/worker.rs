//! What every backend shares: the per-job plan, the per-thread recorder (histograms, byte
//! counts, per-second series, offsets touched) and the stop rules.

use super::buffer::DataGen;
use super::job::RwMode;
use super::offsets::OffsetGen;
use super::verify;
use crate::measure::{LatencyHistogram, SecondLatency, SecondSeries};
use crate::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Everything one job thread needs to know.
#[derive(Debug, Clone)]
pub(crate) struct JobPlan {
    /// Job number (0-based).
    pub index: usize,
    /// File or device.
    pub path: PathBuf,
    /// Pattern.
    pub rw: RwMode,
    /// Block size.
    pub bs: u64,
    /// Queue depth (io_uring).
    pub iodepth: u32,
    /// O_DIRECT.
    pub direct: bool,
    /// Region start and length.
    pub region: (u64, u64),
    /// fsync every N writes.
    pub fsync: u32,
    /// Stamp and check verify headers.
    pub verify: bool,
    /// The run's seed (recorded in verify headers).
    pub run_seed: u64,
    /// This job's own seed (offsets, mix, data).
    pub job_seed: u64,
    /// Compressible percentage.
    pub compress: u8,
    /// Read percentage for randrw.
    pub rwmixread: u8,
    /// Warm-up.
    pub ramp: Duration,
    /// Time-based length after the ramp.
    pub runtime: Option<Duration>,
    /// Where this job publishes its per-second I/O counts while it runs (`--steady-state`).
    pub live: Option<super::until_steady::Live>,
}

impl JobPlan {
    /// The offset generator for this job.
    pub fn offsets(&self) -> OffsetGen {
        OffsetGen::new(
            self.rw,
            self.rwmixread,
            self.region.0,
            self.bs,
            self.region.1 / self.bs,
            self.runtime.is_some(),
            self.job_seed,
        )
    }

    /// The write-data generator for this job.
    pub fn data(&self) -> DataGen {
        DataGen::new(self.job_seed, self.bs as usize, self.compress)
    }

    /// Verify failure as the error the runner reports.
    pub fn verify_error(&self, msg: String) -> Error {
        Error::workload("verify", format!("{}: {msg}", self.path.display()))
    }

    /// Short or failed I/O as an error.
    pub fn io_error(&self, write: bool, offset: u64, res: i64) -> Error {
        let what = if write { "write" } else { "read" };
        if res < 0 {
            Error::io(
                format!("{what} at offset {offset} failed on"),
                &self.path,
                std::io::Error::from_raw_os_error(-res as i32),
            )
        } else {
            Error::workload(
                "io",
                format!(
                    "{}: short {what} at offset {offset}: {res} of {} bytes (file shrank?)",
                    self.path.display(),
                    self.bs
                ),
            )
        }
    }
}

/// What one job measured.
#[derive(Debug, Clone)]
pub(crate) struct JobResult {
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    pub fsyncs: u64,
    pub series: SecondSeries,
    /// Per-second latency histograms (reads and writes together).
    pub lat_series: SecondLatency,
    /// Lowest offset touched and end of the highest block touched (whole run, ramp included).
    pub min_offset: u64,
    pub max_end: u64,
    /// Length of this job's measured window.
    pub runtime: Duration,
}

/// Per-thread bookkeeping on the hot path: no allocation, no locks.
pub(crate) struct Recorder {
    pub res: JobResult,
    measuring: bool,
    ramp_end: Instant,
    end: Option<Instant>,
    last: Instant,
    bs: u64,
    live: Option<super::until_steady::Live>,
}

impl Recorder {
    /// Start recording for a job whose clock started at `start`.
    pub fn new(plan: &JobPlan, start: Instant) -> Self {
        let ramp_end = start + plan.ramp;
        let secs = plan.runtime.map(|r| r.as_secs() as usize + 2).unwrap_or(16);
        Recorder {
            res: JobResult {
                read: LatencyHistogram::new(),
                write: LatencyHistogram::new(),
                fsyncs: 0,
                series: SecondSeries::with_capacity(secs),
                lat_series: SecondLatency::default(),
                min_offset: u64::MAX,
                max_end: 0,
                runtime: Duration::ZERO,
            },
            measuring: plan.ramp.is_zero(),
            ramp_end,
            end: plan.runtime.map(|r| ramp_end + r),
            last: start,
            bs: plan.bs,
            live: plan.live.clone(),
        }
    }

    #[inline]
    fn cross_ramp(&mut self, now: Instant) {
        if !self.measuring && now >= self.ramp_end {
            self.res.read.reset();
            self.res.write.reset();
            self.res.series.reset();
            self.res.lat_series.reset();
            self.res.fsyncs = 0;
            if let Some(l) = &self.live {
                l.iter().for_each(|c| c.store(0, Ordering::Relaxed));
            }
            self.measuring = true;
        }
    }

    /// One I/O finished.
    #[inline]
    pub fn complete(&mut self, write: bool, offset: u64, issued: Instant, now: Instant) {
        self.cross_ramp(now);
        let lat = now.saturating_duration_since(issued).as_nanos() as u64;
        if write {
            self.res.write.record(lat);
        } else {
            self.res.read.record(lat);
        }
        let sec = now.saturating_duration_since(self.ramp_end).as_secs() as usize;
        self.res.series.add(sec, self.bs, write);
        if let Some(c) = self.live.as_ref().and_then(|l| l.get(sec)) {
            // A plain store of this thread's own count: the watcher only reads it.
            c.store(self.res.series.ios_at(sec), Ordering::Relaxed);
        }
        self.res.lat_series.record(sec, lat);
        self.res.min_offset = self.res.min_offset.min(offset);
        self.res.max_end = self.res.max_end.max(offset + self.bs);
        self.last = now;
    }

    /// One fsync finished.
    #[inline]
    pub fn fsync_done(&mut self, now: Instant) {
        self.cross_ramp(now);
        self.res.fsyncs += 1;
        self.last = now;
    }

    /// True once a time-based job has run its time.
    #[inline]
    pub fn expired(&self, now: Instant) -> bool {
        matches!(self.end, Some(end) if now >= end)
    }

    /// Close the books.
    pub fn finish(mut self) -> JobResult {
        if self.measuring {
            self.res.runtime = self.last.saturating_duration_since(self.ramp_end);
        } else {
            // Finished inside the ramp: nothing was measured.
            self.res.read.reset();
            self.res.write.reset();
            self.res.series.reset();
            self.res.lat_series.reset();
            self.res.fsyncs = 0;
        }
        self.res
    }
}

/// Whether the job should stop issuing (Ctrl-C, or another job failed).
#[inline]
pub(crate) fn should_stop(abort: &AtomicBool) -> bool {
    crate::cancel::requested() || abort.load(Ordering::Relaxed)
}

/// Prepare a write buffer: fresh data, and the verify header when asked.
#[inline]
pub(crate) fn prepare_write(
    plan: &JobPlan,
    data: &mut DataGen,
    buf: &mut [u8],
    offset: u64,
    seq: &mut u64,
) {
    data.refill(buf);
    if plan.verify {
        *seq += 1;
        verify::stamp(buf, offset, plan.run_seed, *seq);
    }
}

/// Check a read buffer when verifying.
#[inline]
pub(crate) fn check_read(plan: &JobPlan, buf: &[u8], offset: u64) -> Result<()> {
    if plan.verify {
        verify::check(buf, offset).map_err(|m| plan.verify_error(m))?;
    }
    Ok(())
}
