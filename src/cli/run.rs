//! Flags of `fsbench run` and `fsbench plan`. Both take [`PlanFlags`] (what to run, where,
//! how long), so `plan` shows exactly what `run` would do; the flags that only act when
//! something runs (`--yes`, `--keep-image`, `--force-wipe`, `--json`) are `run`'s alone, and
//! `--emit-fio` is `plan`'s. The library never sees these clap types: [`PlanFlags::overrides`]
//! turns them into the plain [`Overrides`] that [`crate::plan::resolve`] takes.

use super::suggest::Suggest;
use crate::plan::knobs as K;
use crate::plan::params as P;
use crate::plan::{EngineChoice, Overrides, PlanValues};
use clap::ValueHint;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  # Default: quick profile, every filesystem whose tools are installed, on an 8 GiB sparse
  # image in /var/tmp attached to a loop device (nothing of yours is touched):
  sudo fsbench run

  # On a fresh machine: install what the default filesystems need first, then run
  sudo fsbench run --install-missing

  # See what would run, and the equivalent fio command of every I/O job:
  fsbench plan --fs ext4,xfs --emit-fio

  # The standard profile (data file 4x RAM, 60 s jobs) on a real scratch disk (WIPED; asks
  # you to type its name):
  sudo fsbench run --profile standard --device /dev/sdb --fs ext4,xfs,btrfs,zfs,zfs-16k=zfs:recordsize=16K

  # Variants: NAME=FS:key=value;key=value  (keys: mkfs, mount, nocow [btrfs], zfs properties, raid)
  sudo fsbench run --fs 'btrfs,btrfs-zstd=btrfs:mount=compress=zstd:3,btrfs-nocow=btrfs:nocow'
  sudo fsbench run --fs 'ext4,ext4-tuned=ext4:mkfs=-m 1 -E lazy_itable_init=0;mount=noatime'
  # Fresh and aged side by side (age=PROFILE[:AMOUNT[:FULLNESS%]], docs/aging.md):
  sudo fsbench run --fs 'ext4,ext4-aged=ext4:age=churn:1'

  # Several devices, one filesystem (raid=: btrfs single|raid0|raid1|raid10|raid1c3 [mraid=
  # for metadata], zfs stripe|mirror|raidz1|raidz2); scrub, degraded reads and rebuild follow:
  sudo fsbench run --images 3 --image-size 2G --fs 'b1=btrfs:raid=raid1,z1=zfs:raid=mirror'
  sudo fsbench run --device /dev/sdb --device /dev/sdc --fs 'b=btrfs:raid=raid1'
  # spare=yes: the last device stays out of the layout, the rebuild replaces the failed one
  # with it (without it every device is in the layout, and the rebuild is onto the wiped one):
  sudo fsbench run --images 3 --fs 'z=zfs:raid=mirror;spare=yes'

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

Profiles: see --profile. Host tunings in a setup: sched=, read_ahead_kb=, nr_requests=, nomerges=,
wbt_lat_usec= (the target device's queue) and sysctl.vm.* / sysctl.fs.*, always put back.
Exit codes: 0 ok, 1 a step failed, 2 bad input or refusal (nothing was touched), 128 + signal
when interrupted (130 Ctrl-C, 129 closed terminal, 143 SIGTERM; everything was released, continue
with --resume). A killed run's mounts, loop devices, images and settings are released by the next
fsbench run (its ledger is in /run/fsbench/ledger).";

const PLAN_EXAMPLES: &str = "\
Examples:
  fsbench plan                                  # what `sudo fsbench run` would do
  fsbench plan --profile standard --fs ext4,xfs # steps, ETA and fio commands
  fsbench plan --fs ext4 --fio-job ssd-test.fio --emit-fio   # only the fio command lines
  fsbench plan --resume fsbench-results/20261130T121500Z     # what a resume would redo
  fsbench plan tune --profile db --fs ext4,xfs --budget 30m  # tune's stages and budget

`plan` takes the flags of `run` that shape the plan; the ones that act on a run (--yes,
--keep-image, --force-wipe, --json) are refused here.";

/// Flags of `fsbench run`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct RunArgs {
    /// What to run, where, how long (shared with `fsbench plan`).
    #[command(flatten)]
    pub plan: PlanFlags,

    /// [`K::KEEP_IMAGE`]: its help, values and plan-file key.
    #[arg(help = K::KEEP_IMAGE.help(), long)]
    pub keep_image: bool,

    /// [`K::FORCE_WIPE`]: its help, values and plan-file key.
    #[arg(help = K::FORCE_WIPE.help(), long)]
    pub force_wipe: bool,

    /// [`K::YES`]: its help, values and plan-file key.
    #[arg(help = K::YES.help(), long, short = 'y')]
    pub yes: bool,

    /// [`K::JSON`]: its help, values and plan-file key.
    #[arg(help = K::JSON.help(), long)]
    pub json: bool,

    /// Run as one rank of an MPI job (under `mpirun`, with --dir; needs a build with
    /// `--features mpi`).
    ///
    /// Every rank runs the plan's I/O and metadata workloads in its own subdirectory of --dir
    /// (`%r`/`%h` in it expand to rank and host), each workload started on all ranks together;
    /// rank 0 writes one results.json whose samples are the all-ranks figures.
    #[arg(help = K::MPI.help(), long)]
    pub mpi: bool,

    /// Refused: `--emit-fio` prints fio commands instead of running (a `fsbench plan` flag).
    #[arg(long, hide = true)]
    pub emit_fio: bool,

    /// Where the run is recorded (`fsbench history`).
    #[command(flatten)]
    pub history: super::history::RecordArgs,
}

/// Flags of `fsbench plan`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = PLAN_EXAMPLES, args_conflicts_with_subcommands = true)]
pub struct PlanArgs {
    /// `fsbench plan tune …`: the plan of `fsbench tune` with the same flags, not of a run.
    #[command(subcommand)]
    pub of: Option<super::tune::PlanOf>,

    /// What `fsbench run` would run with the same flags.
    #[command(flatten)]
    pub plan: PlanFlags,

    /// [`K::EMIT_FIO`]: its help, values and plan-file key.
    #[arg(help = K::EMIT_FIO.help(), long)]
    pub emit_fio: bool,

    /// [`K::OUTPUT`]: its help, values and plan-file key.
    #[arg(help = K::OUTPUT.help(), short = 'o', long = "output", value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub output: Option<PathBuf>,
}

impl RunArgs {
    /// The overrides of a run: the shared flags plus the run-only ones.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            keep_image: self.keep_image,
            force_wipe: self.force_wipe,
            yes: self.yes,
            ..self.plan.overrides()
        }
    }
}

/// Flags `fsbench run` and `fsbench plan` share.
#[derive(Debug, Clone, clap::Args)]
pub struct PlanFlags {
    /// [`K::FS`]: its help, values and plan-file key.
    #[arg(help = K::FS.help(), long, value_name = "SETUPS")]
    pub fs: Vec<String>,

    /// [`K::AGE`]: its help, values and plan-file key.
    #[arg(help = K::AGE.help(), long, value_name = "PROFILE[:AMOUNT]")]
    pub age: Option<String>,

    /// [`K::PLAN`]: its help, values and plan-file key.
    #[arg(help = K::PLAN.help(), long, value_name = "FILE", conflicts_with = "profile", value_hint = ValueHint::FilePath)]
    pub plan: Option<PathBuf>,

    /// [`K::PROFILE`]: its help, values and plan-file key.
    #[arg(help = K::PROFILE.help(), long, value_name = "NAME", value_parser = Suggest::new(K::PROFILE.known),
          long_help = crate::plan::profiles::help())]
    pub profile: Option<String>,

    /// [`K::DEVICE`]: its help, values and plan-file key.
    #[arg(help = K::DEVICE.help(), long, value_name = "DEV", conflicts_with = "dir", value_hint = ValueHint::FilePath)]
    pub device: Vec<PathBuf>,

    /// [`K::DIR`]: its help, values and plan-file key.
    #[arg(help = K::DIR.help(), long, value_name = "PATH", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,

    /// Size of the sparse image used when neither --device nor --dir is given.
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = P::IMAGE_SIZE.size_arg(), help = P::IMAGE_SIZE.help())]
    pub image_size: u64,

    /// Loop images of --image-size each, for setups over several devices (raid=raid1…);
    /// setups without raid= use the first.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with_all = ["device", "dir"], value_parser = P::IMAGES.count_arg::<u32>(), help = P::IMAGES.help())]
    pub images: u32,

    /// [`K::SCRATCH_DIR`]: its help, values and plan-file key.
    #[arg(help = K::SCRATCH_DIR.help(), long, value_name = "DIR", default_value = "/var/tmp", value_hint = ValueHint::DirPath)]
    pub scratch_dir: PathBuf,

    /// [`K::OUT`]: its help, values and plan-file key.
    #[arg(help = K::OUT.help(), long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,

    /// [`K::RESUME`]: its help, values and plan-file key.
    #[arg(help = K::RESUME.help(), long, value_name = "OUT", value_hint = ValueHint::DirPath)]
    pub resume: Option<PathBuf>,

    /// The values a plan file has keys for too (`--rounds`, `--runtime`…), one flag each from
    /// `knobs::plan_knobs!`, named, helped and parsed by its row.
    #[command(flatten)]
    pub values: super::knob_flags::ValueFlags,

    /// The switches a plan file has keys for too (`--until-settled`, `--warmup`…), one flag
    /// each from `knobs::plan_knobs!`.
    #[command(flatten)]
    pub switches: super::knob_flags::SwitchFlags,

    /// Equivalence margin in percent for every metric [default: the metric registry's].
    #[arg(long, value_name = "N", value_parser = P::MARGIN.count_arg::<u32>(), help = P::MARGIN.help())]
    pub margin: Option<u32>,

    /// Data file size (e.g. 256M, 16G, or 4xram).
    #[arg(long, value_name = "SIZE", help = P::FILE_SIZE.help())]
    pub file_size: Option<String>,

    /// [`K::ONLY`]: its help, values and plan-file key.
    #[arg(help = K::ONLY.help(), long, value_name = "IDS", value_delimiter = ',', value_parser = Suggest::new(K::ONLY.known), hide_possible_values = true)]
    pub only: Vec<String>,

    /// [`K::SKIP`]: its help, values and plan-file key.
    #[arg(help = K::SKIP.help(), long, value_name = "IDS", value_delimiter = ',', value_parser = Suggest::new(K::SKIP.known), hide_possible_values = true)]
    pub skip: Vec<String>,

    /// [`K::CLAIMS_FOR`]: its help, values and plan-file key.
    #[arg(help = K::CLAIMS_FOR.help(), long, value_name = "WORKLOAD|CLASS", value_delimiter = ',', conflicts_with_all = ["only", "fs"])]
    pub claims_for: Vec<String>,

    /// Bytes written per window under which the device counts as quiet.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = P::QUIET_THRESHOLD.size_arg(), help = P::QUIET_THRESHOLD.help())]
    pub quiet_threshold: u64,

    /// Give up waiting for quiet after this long (a warning goes into the results).
    #[arg(long, value_name = "TIME", default_value = "120s", value_parser = P::QUIET_TIMEOUT.duration_arg(), help = P::QUIET_TIMEOUT.help())]
    pub quiet_timeout: Duration,

    /// [`K::ENGINE`]: its help, values and plan-file key.
    #[arg(help = K::ENGINE.help(), long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// [`K::FIO_JOB`]: its help, values and plan-file key.
    #[arg(help = K::FIO_JOB.help(), long = "fio-job", value_name = "FILE.fio")]
    pub fio_job: Vec<PathBuf>,

    /// Seed for offsets and data (default: random, recorded in the results).
    #[arg(long, value_parser = P::SEED.count_arg::<u64>(), help = P::SEED.help())]
    pub seed: Option<u64>,

    /// [`K::INSTALL_MISSING`]: its help, values and plan-file key.
    #[arg(help = K::INSTALL_MISSING.help(), long)]
    pub install_missing: bool,

    /// [`K::CORPUS_FROM`]: its help, values and plan-file key.
    #[arg(help = K::CORPUS_FROM.help(), long, value_name = "DIR", conflicts_with = "corpus_file", value_hint = ValueHint::DirPath)]
    pub corpus_from: Option<std::path::PathBuf>,

    /// [`K::CORPUS_FILE`]: its help, values and plan-file key.
    #[arg(help = K::CORPUS_FILE.help(), long, value_name = "FILE.tar", value_hint = ValueHint::FilePath)]
    pub corpus_file: Option<std::path::PathBuf>,

    /// The flags workload kinds own (`--image-archive`), built from the kinds' declarations.
    #[command(flatten)]
    pub kinds: super::kind_flags::KindFlags,

    /// [`K::REPLAY`]: its help, values and plan-file key.
    #[arg(help = K::REPLAY.help(), long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub replay: Vec<PathBuf>,

    /// Threads for metadata workloads (untar, find-cold, rm-tree).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = P::THREADS.count_arg::<usize>(), help = P::THREADS.help())]
    pub threads: usize,

    /// Timeout for each mkfs, mount, zpool and other tool invocation.
    #[arg(long, value_name = "TIME", default_value = "300s", value_parser = P::TOOL_TIMEOUT.duration_arg(), help = P::TOOL_TIMEOUT.help())]
    pub tool_timeout: Duration,

    /// --steady-state, --steady-round, --steady-quick and --steady-max.
    #[command(flatten)]
    pub steady: super::steady_flags::SteadyArgs,

    /// --precondition.
    #[command(flatten)]
    pub precondition: super::steady_flags::PreconditionArgs,
}

impl PlanFlags {
    /// The flags as the plain options the plan resolver takes (no clap type crosses over).
    pub fn overrides(&self) -> Overrides {
        Overrides {
            fs: self.fs.clone(),
            age: self.age.clone(),
            plan: self.plan.clone(),
            profile: self.profile.clone(),
            device: self.device.first().cloned(),
            more_devices: self.device.iter().skip(1).cloned().collect(),
            images: self.images,
            dir: self.dir.clone(),
            image_size: self.image_size,
            scratch_dir: self.scratch_dir.clone(),
            keep_image: false,
            force_wipe: false,
            yes: false,
            out: self.out.clone(),
            values: self.switches.over(self.values.over(PlanValues {
                steady: self.steady.spec(),
                precondition: self.precondition.precondition,
                ..Default::default()
            })),
            margin: self.margin,
            file_size: self.file_size.clone(),
            only: self.only.clone(),
            skip: self.skip.clone(),
            quiet_threshold: self.quiet_threshold,
            quiet_timeout: self.quiet_timeout,
            engine: self.engine,
            fio_job: self.fio_job.clone(),
            seed: self.seed,
            corpus_from: self.corpus_from.clone(),
            corpus_file: self.corpus_file.clone(),
            threads: self.threads,
            tool_timeout: self.tool_timeout,
            claims_for: self.claims_for.clone(),
            kind_flags: self.kinds.given.clone(),
            replay: self.replay.clone(),
        }
        .kind_profile()
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use crate::plan::Overrides;
    use clap::Parser;

    fn parse(v: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(v).map(|c| c.command)
    }

    #[test]
    fn clap_defaults_are_the_overrides_defaults() {
        let Command::Plan(p) = parse(&["fsbench", "plan"]).unwrap() else {
            unreachable!()
        };
        assert_eq!(p.plan.overrides(), Overrides::default());
    }

    /// Every flag a workload kind declares (`Workload::flags`) is a flag of `run` and `plan`
    /// with the help it declares, and reaches `Overrides::kind_flags`, with nothing written
    /// for it outside the kind's folder (no static row, no clap field).
    #[test]
    fn every_kind_flag_is_a_flag_and_reaches_the_overrides() {
        use clap::CommandFactory;
        let flags: Vec<_> = crate::workload::registry::flags().collect();
        assert!(!flags.is_empty());
        for f in flags {
            assert!(
                crate::plan::knobs::by_flag(f.flag()).is_none(),
                "{} is declared twice",
                f.flag()
            );
            for sub in ["run", "plan"] {
                let cmd = Cli::command();
                let arg = cmd
                    .find_subcommand(sub)
                    .unwrap()
                    .get_arguments()
                    .find(|a| a.get_long() == f.flag().strip_prefix("--"))
                    .unwrap_or_else(|| panic!("{} is no flag of {sub}", f.flag()))
                    .clone();
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert_eq!(help, crate::plan::knobs::kind_row(f).help(), "{}", f.flag());
                let names = arg.get_value_names().unwrap_or_default();
                assert_eq!(names, [f.value_name], "{}", f.flag());
            }
            // Every spelling reaches the overrides as the flag; "2" is a path and a speed.
            for spelling in f.flags {
                let Command::Plan(p) = parse(&["fsbench", "plan", spelling, "2"]).unwrap() else {
                    unreachable!()
                };
                let o = p.plan.overrides();
                assert_eq!(
                    o.kind_flags,
                    [(f.flag().to_string(), "2".into())],
                    "{spelling}"
                );
                assert_eq!(o.profile.as_deref(), f.alone, "{spelling}");
            }
        }
    }

    /// A kind flag's word is checked as the kind declares it (`KindValue::Word`) when the
    /// command line is read: a bad one is a usage error (exit 2) naming the flag.
    #[test]
    fn a_kind_flags_bad_word_is_a_usage_error() {
        for spelling in ["--replay-speed", "--replay-timing"] {
            let e = parse(&["fsbench", "run", spelling, "fast"]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{spelling}");
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
            let text = e.to_string();
            assert!(
                text.contains("--replay-speed") && text.contains("as-recorded"),
                "{text}"
            );
        }
    }

    #[test]
    fn plan_refuses_run_only_flags() {
        for flag in ["--yes", "-y", "--keep-image", "--force-wipe", "--json"] {
            let e = parse(&["fsbench", "plan", flag]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{flag}");
            assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{flag}");
        }
        let Command::Run(r) = parse(&["fsbench", "run", "--yes", "--keep-image"]).unwrap() else {
            unreachable!()
        };
        let o = r.overrides();
        assert!(o.yes && o.keep_image && !o.force_wipe);
    }
}
