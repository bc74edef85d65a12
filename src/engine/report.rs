//! What a job measured. The JSON form is the stable `fsbench io --json` interface:
//! `{"read":{…},"write":{…},"cpu":{"user_s","sys_s"},"runtime_s"}` plus extensions.

use serde::{Deserialize, Serialize};

/// Latency percentiles in nanoseconds (submission → completion, fio's `lat`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyNs {
    /// Exact minimum.
    pub min: u64,
    /// Exact mean.
    pub mean: f64,
    /// Exact maximum.
    pub max: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
}

/// One direction (read or write) of a job, summed over its jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionReport {
    /// Completed I/Os in the measured window.
    pub ios: u64,
    /// Bytes moved in the measured window.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Latency distribution.
    pub lat_ns: LatencyNs,
    /// Sparse histogram `[value_ns, count]` (mergeable across rounds); omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<[u64; 2]>,
    /// Sum of latencies, ns (for exact merged means).
    #[serde(default)]
    pub lat_sum_ns: u128,
}

/// CPU time used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    /// Process user time over the measured window, seconds.
    pub user_s: f64,
    /// Process system time over the measured window, seconds.
    pub sys_s: f64,
    /// System-wide CPU utilisation over the window (0–1 per all CPUs, from /proc/stat).
    #[serde(default)]
    pub system_util: f64,
}

/// Device counters (from /sys/block/<dev>/stat) over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Device name (e.g. `loop3`).
    pub name: String,
    /// Bytes the device read.
    pub read_bytes: u64,
    /// Bytes the device wrote.
    pub write_bytes: u64,
    /// Device write bytes / job write bytes (None when the job wrote nothing).
    pub write_amplification: Option<f64>,
    /// Bytes the device wrote in the job's window plus after it, until `syncfs` and a quiet
    /// device (present when the job wrote and the wait ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_total: Option<u64>,
    /// `write_bytes_total` / job write bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification_total: Option<f64>,
    /// Seconds spent in the syncfs and the wait after the job (not part of `runtime_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_s: Option<f64>,
    /// Whether the device went quiet before the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_quiet: Option<bool>,
    /// Why the total is missing or incomplete, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_note: Option<String>,
    /// What each device read and wrote in the window, when the file's filesystem spans
    /// several (a `raid=` layout); the figures above are their sum. Empty for one device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_device: Vec<crate::measure::device::MemberIo>,
}

/// The full report of one job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoReport {
    /// Reads.
    pub read: DirectionReport,
    /// Writes.
    pub write: DirectionReport,
    /// CPU accounting.
    pub cpu: CpuReport,
    /// Measured window, seconds (ramp excluded).
    pub runtime_s: f64,
    /// Backend actually used (after any fallback).
    #[serde(default)]
    pub backend: String,
    /// Why the backend differs from the one asked for, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_note: Option<String>,
    /// Seed of the offset generator.
    #[serde(default)]
    pub seed: u64,
    /// Seconds spent laying out the file first (0 when it already existed).
    #[serde(default)]
    pub layout_s: f64,
    /// fsync calls issued in the measured window.
    #[serde(default)]
    pub fsyncs: u64,
    /// IOPS (reads + writes) per second of the measured window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iops_series: Vec<f64>,
    /// Bytes per second (reads + writes) per second of the measured window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bw_series: Vec<f64>,
    /// p50 latency (ms, reads and writes together) per second of the measured window; 0 for a
    /// second in which nothing completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_p50_ms_series: Vec<f64>,
    /// p99 latency (ms) per second of the measured window; 0 when nothing completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_p99_ms_series: Vec<f64>,
    /// Device-level counters, when the file sits on a block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceReport>,
    /// Why there are no device counters, when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_note: Option<String>,
    /// Which engine produced this: `fsbench` or `fio`.
    #[serde(default)]
    pub engine: String,
    /// Per-job detail (region and offsets actually touched); empty from fio.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobDetail>,
    /// With `--steady-state`: whether and when the job became steady, and the figures of the
    /// steady window. `read`/`write` above always cover the whole measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyReport>,
}

/// The outcome of a run-until-steady job (`--steady-state`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// The criteria: N rounds (quick mode: seconds), range and slope limits in % of their mean.
    pub criteria: crate::measure::snia_criteria::SteadyCriteria,
    /// The limit: the job stops here (seconds after the ramp) when it never became steady.
    pub max_s: f64,
    /// Whether the last N rounds met the criteria before the limit.
    pub reached: bool,
    /// Seconds of the measured window it took (the steady window's end), when reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<u64>,
    /// The steady window's figures, when reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<SteadyWindow>,
    /// Range of the steady window (or, not reached, of the last N whole rounds), % of mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_pct: Option<f64>,
    /// How far the least-squares line moved across that window, % of mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_pct: Option<f64>,
    /// Seconds per round (1 in the quick mode; 0 in reports from before rounds).
    #[serde(default)]
    pub round_s: f64,
    /// The quick mode (`--steady-quick`): one-second windows, not SNIA's rounds.
    #[serde(default)]
    pub quick: bool,
    /// Most rounds the job could run (25, fewer when `--steady-max` allows fewer).
    #[serde(default)]
    pub round_limit: u32,
    /// IOPS of each whole round, in order (the per-second values are `iops_series`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<f64>,
    /// The rounds judged last, 1-based and inclusive: the steady window when reached, else
    /// the last N whole rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_rounds: Option<[u32; 2]>,
    /// Mean IOPS of those rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_mean: Option<f64>,
    /// Slope of their least-squares line, IOPS per round (through the mean at the middle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_slope: Option<f64>,
    /// What the target went through before: `not-a-device`, `not-preconditioned`,
    /// `preconditioned`.
    #[serde(default)]
    pub conditioning: crate::engine::until_steady::Conditioning,
    /// Whether steady state is claimed: reached, and on a device after preconditioning.
    #[serde(default)]
    pub claimed: bool,
    /// `steady`, `not steady`, `not preconditioned` (criteria met, no claim) or `stable, not
    /// a device` (criteria met on a file: caches in the way).
    #[serde(default)]
    pub verdict: String,
}

/// What the job did in its steady window, seconds `[start_s, end_s)` of the measured window.
/// Latency covers reads and writes together; its mean comes from the histogram's buckets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// First second of the window.
    pub start_s: u64,
    /// Second after the window's last.
    pub end_s: u64,
    /// Reads completed in the window.
    pub read_ios: u64,
    /// Writes completed in the window.
    pub write_ios: u64,
    /// Bytes moved (reads and writes).
    pub bytes: u64,
    /// I/Os per second over the window (reads and writes).
    pub iops: f64,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Latency percentiles of the window's I/Os.
    pub lat_ns: LatencyNs,
}

/// What one job of a `numjobs` group did, so its region can be checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobDetail {
    /// Job number (0-based).
    pub job: u32,
    /// First byte of the job's region.
    pub region_start: u64,
    /// Length of the region.
    pub region_len: u64,
    /// I/Os completed in the measured window.
    pub ios: u64,
    /// Lowest offset touched (whole run, ramp included).
    pub min_offset: u64,
    /// End of the highest block touched.
    pub max_end: u64,
}

/// One process's run of a group job (`workload::io::GroupJob`): its file and its engine report whole (the per-rank
/// rows of `fsbench io --mpi` are read from it), with the measured window on the clock of the
/// engine's start meeting.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobRun {
    /// The file it worked on.
    pub filename: String,
    /// Its own report, as `fsbench io --json` prints it alone.
    pub report: IoReport,
    /// The measured window opened (after the ramp), seconds after the start meeting.
    pub start_s: f64,
    /// Its last I/O completed, on the same clock.
    pub end_s: f64,
}
