//! What the user asked for on top of a plan file or profile, as plain data. The flags and
//! keys are the rows of [`super::knobs`] and [`super::params`]; the values a plan file gives
//! too are one [`super::knobs::PlanValues`] here and in the plan file's draft.
//!
//! `cli` builds this from the `run`/`plan` flags; tests build it by hand. The plan never sees a
//! clap type, so [`super::resolve`] can be called (and tested) without a command line.

use super::EngineChoice;
use std::path::PathBuf;
use std::time::Duration;

/// Overrides of a plan: every `fsbench run`/`fsbench plan` flag that shapes the invocation.
/// `None` / empty means "the plan's value, else the default".
#[derive(Debug, Clone, PartialEq)]
pub struct Overrides {
    /// `--fs`: setups, each value possibly several comma-separated ones.
    pub fs: Vec<String>,
    /// `--age`: the aging of every setup without its own `age=` (`PROFILE[:AMOUNT]`).
    pub age: Option<String>,
    /// `--plan`: a plan file (its text comes in through [`super::resolve::Source`]).
    pub plan: Option<PathBuf>,
    /// `--profile`.
    pub profile: Option<String>,
    /// `--device`.
    pub device: Option<PathBuf>,
    /// `--device` after the first (a multi-device target, `fsbench::scratch::multi`).
    pub more_devices: Vec<PathBuf>,
    /// `--images N`: loop images of `--image-size` each (1: the usual single image).
    pub images: u32,
    /// `--dir`.
    pub dir: Option<PathBuf>,
    /// `--image-size`, bytes.
    pub image_size: u64,
    /// `--scratch-dir`.
    pub scratch_dir: PathBuf,
    /// `--keep-image` (run only).
    pub keep_image: bool,
    /// `--force-wipe` (run only).
    pub force_wipe: bool,
    /// `--yes` (run only).
    pub yes: bool,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// The flags a plan file has keys for too (`--rounds`, `--runtime`, `--steady-state`…),
    /// declared once in [`super::knobs::PlanValues`] and put over the plan file's by its
    /// `over`.
    pub values: super::knobs::PlanValues,
    /// `--margin`: the equivalence margin in percent for every metric.
    pub margin: Option<u32>,
    /// `--file-size` as written (`256M`, `4xram`).
    pub file_size: Option<String>,
    /// `--only`.
    pub only: Vec<String>,
    /// `--skip`.
    pub skip: Vec<String>,
    /// `--quiet-threshold`, bytes.
    pub quiet_threshold: u64,
    /// `--quiet-timeout`.
    pub quiet_timeout: Duration,
    /// `--engine`.
    pub engine: Option<EngineChoice>,
    /// `--fio-job` files.
    pub fio_job: Vec<PathBuf>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--corpus-from`.
    pub corpus_from: Option<PathBuf>,
    /// `--corpus-file`.
    pub corpus_file: Option<PathBuf>,
    /// `--threads`.
    pub threads: usize,
    /// `--tool-timeout`.
    pub tool_timeout: Duration,
    /// `--claims-for`: only what these claims need (the command narrows the plan before
    /// resolving it, `claims::subset`).
    pub claims_for: Vec<String>,
    /// The flags a workload kind owns, by flag, as given (`--image-archive`: a user's
    /// container image for every container workload): declared by the kind
    /// (`Workload::flags`, its clap argument built from that by `cli::kind_flags`), applied
    /// after resolving ([`super::resolve::apply_kind_flags`]);
    /// given alone, one may choose a profile ([`Overrides::kind_profile`]).
    pub kind_flags: Vec<(String, std::ffi::OsString)>,
    /// `--replay`: traces `fsbench record` wrote, each a `replay` workload (applied after
    /// resolving, `workload::replay::kind::apply_flag`).
    pub replay: Vec<PathBuf>,
}

impl Default for Overrides {
    /// The flags' defaults (a cli test checks that clap's agree).
    fn default() -> Self {
        Overrides {
            fs: Vec::new(),
            age: None,
            plan: None,
            profile: None,
            device: None,
            more_devices: Vec::new(),
            images: 1,
            dir: None,
            image_size: 8 << 30,
            scratch_dir: PathBuf::from("/var/tmp"),
            keep_image: false,
            force_wipe: false,
            yes: false,
            out: None,
            values: Default::default(),
            margin: None,
            file_size: None,
            only: Vec::new(),
            skip: Vec::new(),
            quiet_threshold: 1 << 20,
            quiet_timeout: Duration::from_secs(120),
            engine: None,
            fio_job: Vec::new(),
            seed: None,
            corpus_from: None,
            corpus_file: None,
            threads: 1,
            tool_timeout: Duration::from_secs(300),
            claims_for: Vec::new(),
            kind_flags: Vec::new(),
            replay: Vec::new(),
        }
    }
}

impl Overrides {
    /// These overrides with the profile a kind's flag asks for when it comes without
    /// `--plan` and `--profile` (`--image-archive` alone: the containers profile), as the kind
    /// declares it (`Workload::flags`).
    pub fn kind_profile(mut self) -> Overrides {
        if self.plan.is_none() && self.profile.is_none() {
            self.profile = crate::workload::registry::flags()
                .filter(|f| self.kind_flags.iter().any(|(given, _)| given == f.flag()))
                .find_map(|f| f.alone)
                .map(str::to_string);
        }
        self
    }
}
