//! Flags of `fsbench doctor`.

use crate::plan::EngineChoice;
use crate::plan::params as P;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  # Before the default run (an image in /var/tmp): the host and the disk under /var/tmp
  fsbench doctor

  # A scratch disk you are about to benchmark (only sysfs and /proc are read; never written)
  fsbench doctor --device /dev/nvme1n1 --file-size 16G

  # Install what the default filesystems need (apt-get, dnf, zypper or pacman), then re-check
  sudo fsbench doctor --install-missing
  fsbench doctor --install-missing --dry-run --fs ext4,xfs,btrfs,zfs --engine fio

  # After a crash or kill -9: put back settings and release what the dead run held
  sudo fsbench doctor --cleanup --dry-run
  sudo fsbench doctor --restore

  # Your own fio job against ZFS: is it the queue-depth trap?
  fsbench doctor --dir /tank/bench --ioengine libaio --iodepth 32 --json

Exit codes: 0 the checks ran (findings or not), 1 an installation or a release failed,
2 bad input or refusal.";

/// Flags of `fsbench doctor`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("action").args(["install_missing", "cleanup", "restore"]).multiple(true)))]
pub struct DoctorArgs {
    /// Inspect this block device (read-only: sysfs and stat, the device is never opened).
    #[arg(long, value_name = "DEV", conflicts_with = "dir")]
    pub device: Option<PathBuf>,

    /// Inspect the directory you would benchmark with `fsbench run --dir`.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,

    /// Where `fsbench run` would put its image (checked when neither --device nor --dir is given).
    #[arg(long, value_name = "DIR", default_value = "/var/tmp")]
    pub scratch_dir: PathBuf,

    /// Setups you mean to run (as `fsbench run --fs`), for missing tools and ZFS checks.
    /// Default: as `fsbench run`'s (ext4, xfs, btrfs, and zfs when ZFS is in the kernel).
    #[arg(long, value_name = "SETUPS")]
    pub fs: Vec<String>,

    /// Workload ids you mean to run (as `fsbench run --only`), for the programs they need.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub only: Vec<String>,

    /// Load generator you mean to use (`fio` adds fio to the needed programs).
    #[arg(long, value_enum, default_value = "fsbench")]
    pub engine: EngineChoice,

    /// Data file size you mean to use (e.g. 16G or 4xram): compared with RAM.
    #[arg(long, value_name = "SIZE", help = P::FILE_SIZE.help())]
    pub file_size: Option<String>,

    /// fio ioengine of a job you mean to run yourself (e.g. libaio), for engine traps.
    #[arg(long, value_name = "ENGINE")]
    pub ioengine: Option<String>,

    /// That job's iodepth.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "ioengine", value_parser = P::IODEPTH.count_arg::<u32>(), help = P::IODEPTH.help())]
    pub iodepth: u32,

    /// That job's numjobs.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "ioengine", value_parser = P::NUMJOBS.count_arg::<u32>(), help = P::NUMJOBS.help())]
    pub numjobs: u32,

    /// How long to watch the devices for other processes' I/O.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = P::SAMPLE.duration_arg(), help = P::SAMPLE.help())]
    pub sample: Duration,

    /// Print the diagnosis (facts, findings, passed checks) as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Install the packages the setups need with the distribution's package manager (root).
    #[arg(long)]
    pub install_missing: bool,

    /// Release what killed fsbench runs still hold (mounts, pools, loop devices, images,
    /// settings; from their ledgers), one line per item (root).
    #[arg(long)]
    pub cleanup: bool,

    /// Put back host settings (sysctls, block-queue attributes) a killed run left changed,
    /// and nothing else (--cleanup releases the rest) (root).
    #[arg(long)]
    pub restore: bool,

    /// With --install-missing, --cleanup or --restore: print what would be done, do nothing.
    #[arg(long, requires = "action")]
    pub dry_run: bool,
}
