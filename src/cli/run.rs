//! Flags of `fsbench run` and `fsbench plan` (the same flags: `plan` shows what `run` would do).

use super::suggest::{Suggest, profile_names, workload_ids};
use crate::plan::EngineChoice;
use crate::units::{duration_arg, size_arg};
use clap::ValueHint;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  # Default: quick profile, every filesystem whose tools are installed, on an 8 GiB sparse
  # image in /var/tmp attached to a loop device (nothing of yours is touched):
  sudo fsbench run

  # On a fresh machine: install what the four filesystems need first, then run
  sudo fsbench run --install-missing

  # See what would run, and the equivalent fio command of every I/O job:
  fsbench plan --fs ext4,xfs --emit-fio

  # Seed 000's method on a real scratch disk (WIPED; asks you to type its name):
  sudo fsbench run --profile standard --device /dev/sdb --fs ext4,xfs,btrfs,zfs,zfs-16k=zfs:recordsize=16K

  # Variants: NAME=FS:key=value;key=value  (keys: mkfs, mount, nocow [btrfs], any zfs property)
  sudo fsbench run --fs 'btrfs,btrfs-zstd=btrfs:mount=compress=zstd:3,btrfs-nocow=btrfs:nocow'
  sudo fsbench run --fs 'ext4,ext4-tuned=ext4:mkfs=-m 1 -E lazy_itable_init=0;mount=noatime'

  # Only some workloads, shorter, two rounds; opt-in workloads are chosen with --only:
  sudo fsbench run --only randread,randwrite,fsync-write --runtime 10s --rounds 2
  sudo fsbench run --only probe-reflink,probe-corruption,smallfiles

  # Your own fio job file on every filesystem (directory=/filename= are rebased, sizes capped):
  sudo fsbench run --fs ext4,xfs --fio-job ssd-test.fio --runtime 10s --rounds 3
  fsbench plan --fs ext4 --fio-job ssd-test.fio     # the jobs as they will run

  # No scratch disk or no root: benchmark an existing directory as it is (no mkfs):
  fsbench run --dir ~/bench

  # Continue an interrupted run (setup-rounds that finished are kept; a half-done one is
  # redone from mkfs, because the filesystem has to be re-created):
  sudo fsbench run --resume fsbench-results/20261130T121500Z

Profiles: quick (default, ~10 min for 3 filesystems x 3 rounds), standard (seed 000: file = 4x RAM,
60 s + 10 s ramp, 3 rounds), vps (seed 003: scaling, compression, 512 MiB memory cap), nvme
(seed 001: queue depth 1..128 and numjobs sweeps), tuning (seed 001's host and mount tunings as
variants). Host tunings in a setup: sched=, read_ahead_kb=, nr_requests=, nomerges=,
wbt_lat_usec= (the target device's queue) and sysctl.vm.* / sysctl.fs.*, always put back.
Exit codes: 0 ok, 1 a step failed, 2 bad input or refusal (nothing was touched), 128 + signal
when interrupted (130 Ctrl-C, 129 closed terminal, 143 SIGTERM; everything was released, continue
with --resume). A killed run's mounts, loop devices, images and settings are released by the next
fsbench run (its ledger is in /run/fsbench/ledger).";

/// Flags of `fsbench run` (and `fsbench plan`).
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct RunArgs {
    /// Setups to compare: filesystems and variants NAME=FS[:key=value;…], comma-separated or
    /// repeated. Default: every filesystem whose tools are installed (ext4, xfs, btrfs, zfs).
    #[arg(long, value_name = "SETUPS")]
    pub fs: Vec<String>,

    /// A TOML plan file (setups, workloads with parameters, sweeps, rounds, sizes).
    #[arg(long, value_name = "FILE", conflicts_with = "profile", value_hint = ValueHint::FilePath)]
    pub plan: Option<PathBuf>,

    /// A shipped profile: quick (default), standard, vps, nvme, tuning, db, claims.
    #[arg(long, value_name = "NAME", value_parser = Suggest::new(profile_names))]
    pub profile: Option<String>,

    /// Use this scratch block device; EVERYTHING ON IT IS DESTROYED.
    #[arg(long, value_name = "DEV", conflicts_with = "dir", value_hint = ValueHint::FilePath)]
    pub device: Option<PathBuf>,

    /// Benchmark this existing directory as it is (no mkfs; only fsbench's subdirectory is touched).
    #[arg(long, value_name = "PATH", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,

    /// Size of the sparse image used when neither --device nor --dir is given.
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = size_arg)]
    pub image_size: u64,

    /// Directory for the image (warned about when it is tmpfs: then RAM is measured).
    #[arg(long, value_name = "DIR", default_value = "/var/tmp", value_hint = ValueHint::DirPath)]
    pub scratch_dir: PathBuf,

    /// Keep the image file afterwards.
    #[arg(long)]
    pub keep_image: bool,

    /// Wipe a device even when it carries a filesystem, partition table or RAID/LVM/ZFS signature.
    #[arg(long)]
    pub force_wipe: bool,

    /// Consent to wipe --device without being asked; needed where there is no terminal
    /// (scripts, CI). Without it the device name must be typed on the terminal. Accepted in
    /// every target mode.
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Output directory (default: ./fsbench-results/<UTC timestamp>).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,

    /// Continue the run whose output directory is OUT, with its original options.
    #[arg(long, value_name = "OUT", value_hint = ValueHint::DirPath)]
    pub resume: Option<PathBuf>,

    /// Rounds per setup (interleaved across setups).
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Measured time of each I/O job.
    #[arg(long, value_name = "TIME", value_parser = duration_arg)]
    pub runtime: Option<Duration>,

    /// Warm-up before each I/O job's measurement.
    #[arg(long, value_name = "TIME", value_parser = duration_arg)]
    pub ramp: Option<Duration>,

    /// Data file size (e.g. 256M, 16G, or 4xram).
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<String>,

    /// Run only these workload ids (comma-separated); also selects opt-in ones (probe-*, smallfiles, fsmark).
    #[arg(long, value_name = "IDS", value_delimiter = ',', value_parser = Suggest::new(workload_ids), hide_possible_values = true)]
    pub only: Vec<String>,

    /// Skip these workload ids (comma-separated).
    #[arg(long, value_name = "IDS", value_delimiter = ',', value_parser = Suggest::new(workload_ids), hide_possible_values = true)]
    pub skip: Vec<String>,

    /// After mkfs, wait until the device wrote less than --quiet-threshold over this window [default: 10s; quick: 5s].
    #[arg(long, value_name = "TIME", value_parser = duration_arg)]
    pub quiet_window: Option<Duration>,

    /// Bytes written per window under which the device counts as quiet.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = size_arg)]
    pub quiet_threshold: u64,

    /// Give up waiting for quiet after this long (a warning goes into the results).
    #[arg(long, value_name = "TIME", default_value = "120s", value_parser = duration_arg)]
    pub quiet_timeout: Duration,

    /// Load generator for the I/O jobs [default: fsbench (alias native); --fio-job sections
    /// run with fio unless --engine native is given].
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// A fio job file (repeatable): every job section becomes a workload on every setup and
    /// round, with its files in fsbench's data directory (see docs/fio-jobs.md).
    #[arg(long = "fio-job", value_name = "FILE.fio")]
    pub fio_job: Vec<PathBuf>,

    /// Seed for offsets and data (default: random, recorded in the results).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Install the packages the setups need first (apt-get, dnf, zypper, pacman; root), so no
    /// filesystem is skipped for missing tools. `fsbench plan` only prints what it would install.
    #[arg(long)]
    pub install_missing: bool,

    /// Print results.json to stdout at the end.
    #[arg(long)]
    pub json: bool,

    /// Run as one rank of an MPI job (under `mpirun`, with --dir; needs a build with
    /// `--features mpi`).
    ///
    /// Every rank runs the plan's I/O and metadata workloads in its own subdirectory of --dir
    /// (`%r`/`%h` in it expand to rank and host), each workload started on all ranks together;
    /// rank 0 writes one results.json whose samples are the all-ranks figures.
    #[arg(long)]
    pub mpi: bool,

    /// (plan) Print the equivalent fio command line of every I/O job.
    #[arg(long)]
    pub emit_fio: bool,

    /// Copies of the synthetic corpus for untar/find-cold/rm-tree (≈35,000 entries each;
    /// standard: 3, quick: 1).
    #[arg(long, value_name = "N")]
    pub corpus_copies: Option<u32>,

    /// Size of each synthetic copy relative to the full tree (quick: 0.1, standard: 1).
    #[arg(long, value_name = "X")]
    pub corpus_scale: Option<f64>,

    /// Pack this real directory (e.g. /usr/share) as the corpus instead of the synthetic tree,
    /// as seed 000 did; it is read into memory once and never from the filesystem under test.
    #[arg(long, value_name = "DIR", conflicts_with = "corpus_file", value_hint = ValueHint::DirPath)]
    pub corpus_from: Option<std::path::PathBuf>,

    /// Use this tarball as the corpus (e.g. one written by `fsbench corpus`).
    #[arg(long, value_name = "FILE.tar", value_hint = ValueHint::FilePath)]
    pub corpus_file: Option<std::path::PathBuf>,

    /// Threads for metadata workloads (untar, find-cold, rm-tree).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,

    /// Timeout for each mkfs, mount, zpool and other tool invocation.
    #[arg(long, value_name = "TIME", default_value = "300s", value_parser = duration_arg)]
    pub tool_timeout: Duration,
}
