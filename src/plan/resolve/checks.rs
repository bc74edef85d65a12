//! The overrides' numbers against the parameter table, and what a plan may expand to.

use crate::Error;
use crate::plan::Plan;
use crate::plan::overrides::Overrides;
use crate::plan::params;
use std::time::Duration;

/// The overrides' numbers against the parameter table. clap checks the flags already; this
/// covers library callers and an edited `plan.json` under `--resume`.
pub(super) fn check_ranges(args: &Overrides) -> crate::Result<()> {
    let n = |row: &params::Param, flag: &str, v: Option<u64>| match v {
        Some(v) => row
            .check_u64(v)
            .map(|_| ())
            .map_err(|e| Error::invalid(flag, e)),
        None => Ok(()),
    };
    let d = |row: &params::Param, flag: &str, v: Option<Duration>| match v {
        Some(v) => row
            .check_duration(v)
            .map(|_| ())
            .map_err(|e| Error::invalid(flag, e)),
        None => Ok(()),
    };
    let v = &args.values;
    n(&params::ROUNDS, "--rounds", v.rounds.map(u64::from))?;
    n(&params::THREADS, "--threads", Some(args.threads as u64))?;
    n(
        &params::CORPUS_COPIES,
        "--corpus-copies",
        v.corpus_copies.map(u64::from),
    )?;
    n(&params::IMAGE_SIZE, "--image-size", Some(args.image_size))?;
    n(&params::IMAGES, "--images", Some(u64::from(args.images)))?;
    n(
        &params::QUIET_THRESHOLD,
        "--quiet-threshold",
        Some(args.quiet_threshold),
    )?;
    if let Some(x) = v.corpus_scale {
        params::CORPUS_SCALE
            .check(x)
            .map_err(|e| Error::invalid("--corpus-scale", e))?;
    }
    d(&params::RUNTIME, "--runtime", v.runtime)?;
    d(&params::RAMP, "--ramp", v.ramp)?;
    d(&params::QUIET_WINDOW, "--quiet-window", v.quiet_window)?;
    d(
        &params::QUIET_TIMEOUT,
        "--quiet-timeout",
        Some(args.quiet_timeout),
    )?;
    d(
        &params::TOOL_TIMEOUT,
        "--tool-timeout",
        Some(args.tool_timeout),
    )?;
    Ok(())
}

/// Bound what the plan expands to, so `fsbench plan` (which lists every step and sums the
/// ETA over them) finishes at once for anything accepted.
pub(super) fn check_expansion(plan: &Plan) -> crate::Result<()> {
    params::WORKLOADS
        .check_u64(plan.workloads.len() as u64)
        .map_err(|e| {
            Error::invalid("--plan", format!("{} workloads: {e}", plan.workloads.len()))
        })?;
    let steps = u64::from(plan.rounds) * plan.setups.len() as u64 * plan.workloads.len() as u64;
    params::STEPS.check_u64(steps).map(|_| ()).map_err(|e| {
        Error::invalid(
            "--rounds",
            format!(
                "{} rounds x {} setups x {} workloads = {steps} steps: {e}; use fewer rounds, \
                 setups (--fs) or workloads (--only)",
                plan.rounds,
                plan.setups.len(),
                plan.workloads.len()
            ),
        )
    })
}
