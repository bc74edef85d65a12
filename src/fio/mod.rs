//! fio as a cross-check backend: render a job as fio arguments, run fio, parse its JSON.
//!
//! The native engine earns trust by agreeing with fio on the same job; this module makes "the
//! same job" precise. [`args`] renders a [`JobSpec`] with the engine's semantics, [`run`]
//! executes it and returns the same [`IoReport`] the engine produces (with `engine = "fio"`),
//! and [`command_line`] prints it for people who want to reproduce a step by hand.

mod args;
pub mod jobfile;
mod parse;
mod process;

pub use args::{FIO_SEED_MASK, PERCENTILE_LIST, args, command_line};
pub use parse::{JobEntry, parse_jobs, parse_output};

/// Limit of a size-based phase (a hang guard only).
pub const JOBFILE_SIZE_LIMIT: Duration = SIZE_BASED_LIMIT;

use crate::engine::{IoReport, JobSpec};
use crate::host::command;
use std::time::Duration;

/// Slack on top of ramp + runtime before a time-based fio is considered hung (covers layout).
const TIME_BASED_SLACK: Duration = Duration::from_secs(30 * 60);
/// Size-based jobs end when their bytes are moved; this only guards against a hang.
const SIZE_BASED_LIMIT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Run `spec` with fio and report it in the engine's terms.
///
/// When `spec.seed` is `None` a fresh seed is drawn here and passed as `randseed`, so every run
/// differs (fio's `randrepeat=0`) yet the report records which sequence was used, as the engine
/// does (masked to the 63 bits fio accepts).
///
/// When a stop is requested ([`crate::cancel`]) fio gets SIGINT, ends early and still prints
/// its JSON; the run then returns [`crate::Error::Interrupted`] rather than a partial report.
pub fn run(spec: &JobSpec) -> crate::Result<IoReport> {
    if spec.runtime.is_some_and(|rt| rt.as_micros() == 0) {
        // fio reads runtime=0 as "no limit": a time-based job would never end.
        return Err(crate::Error::invalid(
            "--runtime",
            "must be at least 1us for fio (0 means no limit to fio); give e.g. 10s, or drop --runtime for a size-based job",
        ));
    }
    if !command::available("fio") {
        return Err(crate::Error::tool(
            "fio",
            "fio is not installed or not on PATH; install it (e.g. `apt-get install fio`) or use --engine fsbench",
        ));
    }
    let mut spec = spec.clone();
    let seed = spec.seed.unwrap_or_else(fresh_seed) & args::FIO_SEED_MASK;
    spec.seed = Some(seed);
    let mut argv = vec!["fio".to_string()];
    argv.extend(args(&spec));
    let timeout = match spec.runtime {
        Some(rt) => rt + spec.ramp + TIME_BASED_SLACK,
        None => SIZE_BASED_LIMIT,
    };
    let out = process::run(&argv, timeout)?;
    if crate::cancel::requested() {
        return Err(crate::Error::Interrupted);
    }
    let parsed = parse_output(&out.stdout);
    let mut report = match (out.status, parsed) {
        (Some(0), Ok(report)) => report,
        // fio prints a full (empty) JSON report even when it fails: show its stderr instead.
        (status, parsed) => {
            let why =
                stderr_summary(&out.stderr)
                    .or(parsed.err())
                    .unwrap_or_else(|| match status {
                        Some(code) => format!("exit status {code} without a message"),
                        None => "killed by a signal".to_string(),
                    });
            return Err(crate::Error::tool(command::display(&argv), why));
        }
    };
    report.seed = seed;
    report.backend = spec.backend.as_str().to_string();
    Ok(report)
}

/// Run fio on a job file with `cwd` as its working directory (where fio writes logs that
/// the file asks for), JSON output; the raw output is returned for the caller to parse.
pub fn run_jobfile(
    job_file: &std::path::Path,
    cwd: &std::path::Path,
    timeout: Duration,
) -> crate::Result<command::ToolOutput> {
    if !command::available("fio") {
        return Err(crate::Error::tool(
            "fio",
            "fio is not installed or not on PATH; install it (e.g. `apt-get install fio`) or use --engine native",
        ));
    }
    let argv = vec![
        "fio".to_string(),
        "--output-format=json".to_string(),
        job_file.display().to_string(),
    ];
    let out = process::run_in(&argv, cwd, timeout)?;
    if crate::cancel::requested() {
        return Err(crate::Error::Interrupted);
    }
    Ok(out)
}

/// fio's failure in one line: its stderr, else the exit status.
pub fn failure_message(out: &command::ToolOutput) -> String {
    stderr_summary(&out.stderr).unwrap_or_else(|| match out.status {
        Some(code) => format!("exit status {code} without a message"),
        None => "killed by a signal".to_string(),
    })
}

/// fio's stderr on one line (it spreads one failure over several), or None when silent.
fn stderr_summary(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

use crate::host::sys::fresh_seed;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_is_folded_to_one_line() {
        let err = "fsbench: you need to specify size=\nfio: pid=0, err=22/file:filesetup.c:1155\n";
        assert_eq!(
            stderr_summary(err).unwrap(),
            "fsbench: you need to specify size=; fio: pid=0, err=22/file:filesetup.c:1155"
        );
        assert_eq!(stderr_summary(" \n"), None);
    }

    #[test]
    fn zero_runtime_is_refused_before_fio_starts() {
        let spec = JobSpec {
            filename: "/nonexistent/x".into(),
            runtime: Some(Duration::from_nanos(500)),
            ..JobSpec::default()
        };
        let e = run(&spec).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        assert!(e.to_string().starts_with("--runtime: "), "{e}");
    }

    #[test]
    fn seeds_differ() {
        assert_ne!(fresh_seed(), fresh_seed());
    }
}
