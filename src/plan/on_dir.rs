//! The one way a command builds a plan for an existing directory in memory (`fsbench io`
//! and `fsbench meta`, with and without `--mpi`): one plain `dir` setup, one round, nothing
//! that needs a filesystem of fsbench's making. The commands then set only what their flags
//! give (runtime, ramp, data file size, corpus), so a new `Plan` field is decided here once,
//! not in every command.

use super::{Plan, QuietSpec, WorkloadSpec};
use std::time::Duration;

impl Plan {
    /// `workloads` on one directory, one round, 5 s per I/O job with no ramp, no data file,
    /// the default corpus; no warm-up run, steady-state rule, preconditioning, extra rounds
    /// or disk reference (one coordinated round across ranks shares nothing to warm up, and
    /// a directory has no device of fsbench's to condition).
    pub fn on_dir(name: &str, description: &str, workloads: Vec<WorkloadSpec>) -> Plan {
        let flags = super::Overrides::default();
        Plan {
            name: name.into(),
            description: description.into(),
            setups: vec![crate::fs::SetupSpec::plain("dir")],
            workloads,
            rounds: 1,
            runtime: Duration::from_secs(5),
            ramp: Duration::ZERO,
            // No data file: a workload that needs one brings its own size.
            file_size: 0,
            corpus: Default::default(),
            quiet: QuietSpec {
                window: Duration::from_secs(1),
                threshold: flags.quiet_threshold,
                timeout: flags.quiet_timeout,
            },
            steady: None,
            precondition: false,
            precondition_device: None,
            settle: None,
            error: Default::default(),
            margin: None,
            // One round through the runner: nothing to warm up, no extra rounds.
            switches: Default::default(),
            disk_ref: false,
            by_step: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_plan_is_one_round_of_one_dir_setup() {
        let p = Plan::on_dir("meta", "fsbench meta", Vec::new());
        assert_eq!(p.rounds, 1);
        assert_eq!(p.setups.len(), 1);
        assert_eq!(p.setups[0].name, "dir");
        assert!(!p.switches.warmup && p.settle.is_none() && p.steady.is_none());
    }
}
