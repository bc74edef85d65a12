//! The job specification: fio's vocabulary, typed.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Access pattern, as fio's `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential read.
    Read,
    /// Sequential write.
    Write,
    /// Random read.
    Randread,
    /// Random write.
    Randwrite,
    /// Random mix of reads and writes (`rwmixread` % reads by I/O count).
    Randrw,
}

/// I/O backend, as fio's `ioengine=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Linux io_uring: batched submissions and completions.
    #[value(name = "io_uring")]
    IoUring,
    /// pread/pwrite, one I/O at a time per job.
    Psync,
}

/// One I/O job. Sizes are bytes; `None` size means "the file's current size".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Regular file or block device.
    pub filename: PathBuf,
    /// Access pattern.
    pub rw: RwMode,
    /// Block size in bytes.
    pub bs: u64,
    /// Outstanding I/Os per job (io_uring); psync always has 1.
    pub iodepth: u32,
    /// Number of jobs (one thread each).
    pub numjobs: u32,
    /// Backend.
    pub backend: Backend,
    /// O_DIRECT with aligned buffers.
    pub direct: bool,
    /// Bytes of the file each job works on (its region); `None` = whole file / device.
    pub size: Option<u64>,
    /// Job k works on `[k × offset_increment, k × offset_increment + size)`.
    pub offset_increment: u64,
    /// Time-based run length; `None` = size-based (each job moves its region's bytes once).
    pub runtime: Option<Duration>,
    /// Warm-up before statistics are reset.
    pub ramp: Duration,
    /// Percentage of reads for `randrw`, by I/O count.
    pub rwmixread: u8,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    /// Random seed; `None` = a fresh one per run (fio's randrepeat=0), recorded in the report.
    pub seed: Option<u64>,
    /// Percentage of each written block that compresses (0 = incompressible).
    pub buffer_compress_percentage: u8,
    /// Write a verifiable header into each block and check it on read.
    #[serde(default)]
    pub verify: bool,
    /// Block device whose /sys/block/<dev>/stat counters are sampled (write amplification).
    #[serde(default)]
    pub device: Option<PathBuf>,
    /// Run until steady (time-based up to its limit, which replaces `runtime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<super::until_steady::SteadySpec>,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            filename: PathBuf::new(),
            rw: RwMode::Randread,
            bs: 4096,
            iodepth: 1,
            numjobs: 1,
            backend: Backend::IoUring,
            direct: false,
            size: None,
            offset_increment: 0,
            runtime: None,
            ramp: Duration::ZERO,
            rwmixread: 50,
            fsync: 0,
            seed: None,
            buffer_compress_percentage: 0,
            verify: false,
            device: None,
            steady: None,
        }
    }
}

impl RwMode {
    /// fio's name for this pattern.
    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Randrw => "randrw",
        }
    }

    /// Whether the pattern issues reads.
    pub fn reads(self) -> bool {
        matches!(self, RwMode::Read | RwMode::Randread | RwMode::Randrw)
    }

    /// Whether the pattern issues writes.
    pub fn writes(self) -> bool {
        matches!(self, RwMode::Write | RwMode::Randwrite | RwMode::Randrw)
    }

    /// Whether offsets are random.
    pub fn random(self) -> bool {
        matches!(self, RwMode::Randread | RwMode::Randwrite | RwMode::Randrw)
    }
}

impl Backend {
    /// fio's name for this engine.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::IoUring => "io_uring",
            Backend::Psync => "psync",
        }
    }
}
