//! Command-line definitions (clap). Each subcommand's flags live in their own file; the
//! `commands` module resolves them into typed options and runs them.

use clap::{Parser, Subcommand};

pub mod claims;
pub mod compare;
pub mod corpus;
pub mod doctor;
pub mod history;
pub mod io;
pub mod kind_flags;
pub mod knob_flags;
pub mod meta;
pub mod record;
pub mod report;
pub mod run;
pub mod shell;
pub mod steady_flags;
pub mod suggest;
pub mod tune;

/// fsbench: which Linux filesystem, with which options, is best for my workload on this disk?
///
/// fsbench formats one scratch device (or, by default, a loop-attached image file) as each
/// candidate filesystem in turn, runs the same I/O and metadata workloads on each, repeats the
/// rounds interleaved, and reports medians, spread, tail latency and recommendations.
#[derive(Debug, Parser)]
#[command(name = "fsbench", version, about, long_about, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// fsbench's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Format, mount and benchmark every filesystem on the same disk (the main command).
    Run(run::RunArgs),
    /// Print the expanded steps of a run (and, with --emit-fio, equivalent fio commands).
    Plan(run::PlanArgs),
    /// Find the mkfs and mount options that make a workload faster, prove the gain in fresh
    /// rounds, and say which options do not matter (docs/tune.md).
    Tune(tune::TuneArgs),
    /// Run one ad-hoc I/O job with fio's vocabulary (like `fio`, one job).
    Io(io::IoArgs),
    /// Run metadata and small-file workloads on an existing directory.
    Meta(meta::MetaArgs),
    /// Write the synthetic small-file corpus as a tarball.
    Corpus(corpus::CorpusArgs),
    /// Run a command and record its calls on files under a directory, for `run --replay`.
    Record(record::RecordArgs),
    /// Re-render a results.json as a table, Markdown, CSV, JSON or HTML.
    Report(report::ReportArgs),
    /// Compare two results files: deltas and whether they are significant.
    Compare(compare::CompareArgs),
    /// Every checkable statement of the seeds: its claim (and verdict in a results file) or
    /// why it has none; coverage counts and contradicting claims side by side.
    Claims(claims::ClaimsArgs),
    /// Every run recorded: list, show, trend, check for regressions, import, export.
    History(history::HistoryArgs),
    /// Check the host and target for what would skew a benchmark (read-only), and the fixes.
    Doctor(doctor::DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Write man pages: fsbench.1 and one per subcommand (or print fsbench.1).
    Man(shell::ManArgs),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Value names of flags that take a number or a size: each such flag has a row in the
    /// parameter table, and its `--help` shows the row's range.
    const NUMERIC: &[&str] = &["N", "SIZE", "TIME", "X", "DURATION", "PERCENT"];

    #[test]
    fn every_numeric_flag_has_a_row_and_shows_its_range() {
        let mut seen = 0;
        let cmd = super::Cli::command();
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let names = arg.get_value_names().unwrap_or_default();
                if !names.iter().any(|n| NUMERIC.contains(&n.as_str())) {
                    continue;
                }
                let flag = format!("--{long}");
                let row = crate::plan::params::by_flag(&flag).unwrap_or_else(|| {
                    panic!(
                        "fsbench {} {flag}: add a row to src/plan/params",
                        sub.get_name()
                    )
                });
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    help.contains(&row.range_text()),
                    "fsbench {} {flag}: use help = P::ROW.help() ({help})",
                    sub.get_name()
                );
                seen += 1;
            }
        }
        assert!(seen > 30, "{seen}");
    }

    /// Every flag of `run` and `plan` has a row, in the parameter table (numbers) or the flag
    /// and plan-key table (the rest), and shows that row's help; a choice's row lists what
    /// clap accepts.
    #[test]
    fn every_flag_of_run_and_plan_has_a_row_and_its_help() {
        use crate::plan::{knobs, params};
        let cmd = super::Cli::command();
        let mut seen = 0;
        for sub in cmd
            .get_subcommands()
            .filter(|s| ["run", "plan"].contains(&s.get_name()))
        {
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if ["help", "version"].contains(&long) {
                    continue;
                }
                let flag = format!("--{long}");
                if params::by_flag(&flag).is_some() {
                    seen += 1;
                    continue;
                }
                // A flag a workload kind owns has its row from the kind's declaration.
                let kind_row = || {
                    knobs::kind_rows()
                        .into_iter()
                        .find(|k| k.flags.contains(&flag.as_str()))
                };
                let row = knobs::by_flag(&flag)
                    .cloned()
                    .or_else(kind_row)
                    .unwrap_or_else(|| {
                        panic!(
                            "fsbench {} {flag}: add a row to src/plan/knobs.rs (or, for a number, \
                         src/plan/params)",
                            sub.get_name()
                        )
                    });
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    arg.is_hide_set() || help == row.help(),
                    "fsbench {} {flag}: use help = K::ROW.help() ({help})",
                    sub.get_name()
                );
                if let knobs::Value::Choice(names) = row.value {
                    let accepted: Vec<String> = arg
                        .get_possible_values()
                        .iter()
                        .flat_map(|v| v.get_name_and_aliases().map(str::to_string))
                        .collect();
                    assert_eq!(accepted, names, "fsbench {} {flag}", sub.get_name());
                }
                seen += 1;
            }
        }
        assert!(seen > 80, "{seen}");
    }
}
