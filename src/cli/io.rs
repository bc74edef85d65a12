//! Flags of `fsbench io`.

use crate::engine::{Backend, RwMode};
use crate::plan::params as P;
use std::path::PathBuf;
use std::time::Duration;

/// Output formats of `fsbench io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A readable summary.
    Normal,
    /// The stable JSON report (same as --json).
    Json,
}

/// Which engine runs the job: the same choice as `fsbench run --engine`.
pub use crate::plan::EngineChoice;

/// Flags of `fsbench io`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = "\
Examples:
  # 4k random reads for 10 s after a 2 s ramp, queue depth 32, on a 1 GiB file (laid out first)
  fsbench io --filename /mnt/test/f --rw randread --bs 4k --iodepth 32 --size 1G --runtime 10s --ramp 2s

  # a mixed test: 70 % reads, 4 jobs each on its own quarter of the device, O_DIRECT
  fsbench io --filename /dev/loop7 --rw randrw --rwmixread 70 --numjobs 4 \\
      --size 4G --offset-increment 4G --direct --runtime 30s

  # durability cost: fsync after every 4k write, JSON for scripts
  fsbench io --filename /mnt/test/f --rw randwrite --size 256M --fsync 1 --runtime 10s --json

  # write with integrity headers, then read them back and check every block
  fsbench io --filename /mnt/test/f --rw write --size 64M --verify
  fsbench io --filename /mnt/test/f --rw read --verify

  # the same job run by fio, for a cross-check
  fsbench io --filename /mnt/test/f --rw randread --size 1G --runtime 10s --engine fio

  # a fio job file, once, in an existing directory (directory= is rebased into fsbench's
  # own directory there, /mnt/test/fsbench-<run>/fio-ssd-test/, removed after; sizes capped)
  fsbench io --fio-job ssd-test.fio --dir /mnt/test --runtime 5s

Without --runtime a job is size-based: each job moves its region's bytes exactly once.
Latency is submission to completion (fio's `lat`). A missing or short file is written
sequentially first; the time it took is reported as layout_s. Exit codes: 0 ok, 1 the job
failed (I/O error, verify mismatch), 2 bad input (nothing was created), 128 + signal when interrupted (130 Ctrl-C).
After a job that writes, fsbench syncs the filesystem and waits until the device wrote less
than 1 MiB in 1 s (at most 30 s; --no-settle skips it): the device's write_bytes_total and
write_amplification_total include what the filesystem wrote back after the job. The wait
is not part of the runtime, IOPS or latency.")]
pub struct IoArgs {
    /// File or block device to test (a missing file is created and laid out); with
    /// --fio-job, every job of the file uses it.
    #[arg(long, value_name = "PATH", required_unless_present = "fio_job", value_hint = clap::ValueHint::FilePath)]
    pub filename: Option<PathBuf>,

    /// Run this fio job file once (every section, phases in order) instead of one job; a
    /// section that fails is reported with its error and the next phase still runs.
    #[arg(long = "fio-job", value_name = "FILE.fio", conflicts_with_all = ["rw", "bs", "iodepth", "numjobs", "ioengine", "size", "offset_increment", "verify"])]
    pub fio_job: Option<PathBuf>,

    /// With --fio-job: the existing directory to test. The job's files go in fsbench's own
    /// directory inside it (PATH/fsbench-<run>/fio-<job file>/), removed when the run ends;
    /// nothing is made outside PATH.
    #[arg(
        long,
        value_name = "PATH",
        requires = "fio_job",
        conflicts_with = "filename"
    )]
    pub dir: Option<PathBuf>,

    /// Access pattern.
    #[arg(long, value_enum, default_value = "randread")]
    pub rw: RwMode,

    /// Block size of each I/O (4k, 128k, 1M…).
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = P::BS.size_arg(), help = P::BS.help())]
    pub bs: u64,

    /// I/Os in flight per job (io_uring; psync always has one).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = P::IODEPTH.count_arg::<u32>(), help = P::IODEPTH.help())]
    pub iodepth: u32,

    /// Number of jobs, one thread each.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = P::NUMJOBS.count_arg::<u32>(), help = P::NUMJOBS.help())]
    pub numjobs: u32,

    /// I/O backend.
    #[arg(long, value_enum, default_value = "io_uring")]
    pub ioengine: Backend,

    /// Bypass the page cache (O_DIRECT, aligned buffers).
    #[arg(long)]
    pub direct: bool,

    /// Bytes each job works on [default: the file's or device's size].
    #[arg(long, value_name = "SIZE", value_parser = P::JOB_SIZE.size_arg(), help = P::JOB_SIZE.help())]
    pub size: Option<u64>,

    /// Run for this long after the ramp (time-based) instead of moving --size once.
    #[arg(long, value_name = "DURATION", value_parser = P::RUNTIME.duration_arg(), help = P::RUNTIME.help())]
    pub runtime: Option<Duration>,

    /// Warm-up before statistics start.
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = P::RAMP.duration_arg(), help = P::RAMP.help())]
    pub ramp: Duration,

    /// Percentage of reads in --rw randrw, by I/O count.
    #[arg(long, default_value_t = 50, value_name = "PERCENT", value_parser = P::RWMIXREAD.count_arg::<u8>(), help = P::RWMIXREAD.help())]
    pub rwmixread: u8,

    /// fsync after every N writes (0 = never); the fsync time counts in the runtime.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = P::FSYNC.count_arg::<u32>(), help = P::FSYNC.help())]
    pub fsync: u32,

    /// Job k works on its own region starting at k × this offset.
    #[arg(long, default_value = "0", value_name = "SIZE", value_parser = P::OFFSET_INCREMENT.size_arg(), help = P::OFFSET_INCREMENT.help())]
    pub offset_increment: u64,

    /// Seed of the offset and data generators [default: fresh each run, reported].
    #[arg(long, value_name = "N", value_parser = P::SEED.count_arg::<u64>(), help = P::SEED.help())]
    pub seed: Option<u64>,

    /// Percentage of each written block that compresses (0 = incompressible).
    #[arg(long, default_value_t = 0, value_name = "PERCENT", value_parser = P::COMPRESS.count_arg::<u8>(), help = P::COMPRESS.help())]
    pub buffer_compress_percentage: u8,

    /// Stamp each written block with a checked header (offset, seed, sequence, crc32c) and
    /// check it on every read; a mismatch fails the job.
    #[arg(long)]
    pub verify: bool,

    /// Block device whose counters give device bytes [default: the one under --filename].
    #[arg(long, value_name = "DEV", value_hint = clap::ValueHint::FilePath)]
    pub device: Option<PathBuf>,

    /// After a job that writes, do not syncfs and wait for the device to go quiet (the
    /// report then has only the in-job device window, no write_bytes_total).
    #[arg(long)]
    pub no_settle: bool,

    /// Print the JSON report (the stable interface) instead of a summary.
    #[arg(long)]
    pub json: bool,

    /// Output format (json is the same as --json).
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: OutputFormat,

    /// Run as one rank of an MPI job (under `mpirun`; needs a build with `--features mpi`).
    ///
    /// Every rank runs this job. `%r` (rank) and `%h` (host) in --filename give each rank its
    /// own file; without them all ranks share the file, rank r's jobs on the regions after
    /// rank r−1's (--offset-increment apart). Rank 0 prints one result for all ranks.
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: stop every rank as soon as the first one finishes; the figures at the
    /// first and at the last rank's end are both reported.
    #[arg(long)]
    pub stonewall: bool,

    /// Engine that runs the job [default: fsbench (alias native); --fio-job: fio].
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// --steady-state, --steady-round, --steady-quick and --steady-max.
    #[command(flatten)]
    pub steady: super::steady_flags::SteadyArgs,

    /// --precondition (a block device only).
    #[command(flatten)]
    pub precondition: super::steady_flags::PreconditionArgs,

    /// Where the run is recorded (`fsbench history`).
    #[command(flatten)]
    pub history: super::history::RecordArgs,
}
