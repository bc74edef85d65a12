//! Run options that are not part of the plan itself: where, how, and where results go.
//! Saved with the plan as `OUT/plan.json` so `--resume OUT` repeats the original invocation.

use super::Plan;
use crate::scratch::TargetKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Which load generator runs the I/O jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// fsbench's own io_uring/psync engine (`native` is the same).
    #[value(alias = "native")]
    Fsbench,
    /// fio, driven with the equivalent job (cross-check).
    Fio,
}

/// Everything besides the plan that shapes a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Target.
    pub target: TargetKind,
    /// The target's devices after the first (`--images N`, repeated `--device`).
    #[serde(
        default,
        skip_serializing_if = "crate::scratch::multi::Multi::is_single"
    )]
    pub multi: crate::scratch::multi::Multi,
    /// Consent to wipe a device without the typed confirmation (`--yes`).
    pub yes: bool,
    /// Output directory.
    pub out: PathBuf,
    /// Load generator.
    pub engine: EngineChoice,
    /// Run seed (step seeds derive from it).
    pub seed: u64,
    /// Threads for metadata workloads.
    pub threads: usize,
    /// Timeout for mkfs, mount, zpool and friends.
    pub tool_timeout: Duration,
    /// The RAM filesystem (`tmpfs`, `ramfs`) the target's data lands on, from the host facts;
    /// `fsbench plan` says so. Absent in older plan.json files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_in_ram: Option<String>,
    /// What the default set of filesystems left out on this host and how to add it back
    /// ([`crate::plan::resolve::default_left_out`]); the plan summary prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_note: Option<String>,
    /// Why a round that could run by steps runs by setup instead (the images would not fit,
    /// [`crate::plan::resolve::order`]); the plan summary prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_setup_note: Option<String>,
    /// Setups of a shipped profile left out because this kernel lacks what they set (a
    /// scheduler, a sysctl), each with why and how to get it; the plan summary prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Keep the run in memory: no OUT directory (no plan.json, journal or results.json), so
    /// it cannot be resumed; the caller renders `runner::Outcome::results` itself
    /// (`fsbench meta --mpi`, whose ranks run a metadata plan). Never in plan.json.
    #[serde(skip)]
    pub in_memory: bool,
}

/// What `OUT/plan.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// fsbench version that wrote it.
    pub fsbench_version: String,
    /// The command line as typed.
    pub argv: Vec<String>,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// The resolved plan.
    pub plan: Plan,
    /// The options.
    pub options: RunOptions,
}

impl Invocation {
    /// `plan` on directory `dir` as this process's own target, kept in memory (no OUT
    /// written): how `fsbench meta`, `fsbench meta --mpi` and `fsbench io --mpi` run (each
    /// rank its own directory).
    pub fn in_memory_on_dir(plan: Plan, dir: PathBuf, seed: u64, threads: usize) -> Invocation {
        Self::in_memory(
            plan,
            TargetKind::Dir { path: dir.clone() },
            dir,
            seed,
            threads,
        )
    }

    /// `plan` on `target` kept in memory: nothing is written to `out` (no plan.json, journal
    /// or results.json; it names where the run stands), the caller renders the outcome.
    /// `fsbench io` runs so on the user's own file ([`TargetKind::File`]).
    pub fn in_memory(
        plan: Plan,
        target: TargetKind,
        out: PathBuf,
        seed: u64,
        threads: usize,
    ) -> Invocation {
        Invocation {
            fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            argv: std::env::args().collect(),
            started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            plan,
            options: RunOptions {
                out,
                target,
                multi: Default::default(),
                yes: false,
                engine: EngineChoice::Fsbench,
                seed,
                threads,
                tool_timeout: std::time::Duration::from_secs(600),
                target_in_ram: None,
                default_note: None,
                by_setup_note: None,
                left_out: Vec::new(),
                in_memory: true,
            },
        }
    }

    /// Path of the saved invocation inside an output directory.
    pub fn path(out: &std::path::Path) -> PathBuf {
        out.join("plan.json")
    }

    /// Save atomically.
    pub fn save(&self) -> crate::Result<()> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| crate::Error::Other(format!("cannot serialize plan: {e}")))?;
        crate::results::write_atomic(&Self::path(&self.options.out), &text)
    }

    /// Load the invocation of an earlier run for `--resume OUT`.
    pub fn load(out: &std::path::Path) -> crate::Result<Invocation> {
        let p = Self::path(out);
        let text = std::fs::read_to_string(&p).map_err(|e| {
            crate::Error::invalid(
                "--resume",
                format!(
                    "{} has no readable plan.json ({e}); give the OUT directory of an earlier fsbench run",
                    out.display()
                ),
            )
        })?;
        let mut inv: Invocation = serde_json::from_str(&text).map_err(|e| {
            crate::Error::invalid(
                "--resume",
                format!("{}: not an fsbench plan: {e}", p.display()),
            )
        })?;
        inv.options.out = out.to_path_buf();
        Ok(inv)
    }
}
