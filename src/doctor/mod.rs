//! `fsbench doctor`: what on this host or target would skew a benchmark, why, and the fix.
//!
//! Half of the published filesystem advice is about the host, not the filesystem (a scheduler
//! on NVMe, a virtual disk that claims to spin, a data file the page cache can hold). The
//! doctor looks before you measure, in three steps kept apart so each can be tested alone:
//!
//! 1. [`facts::gather`] reads sysfs, /proc and PATH — never writes, never opens a device;
//! 2. [`checks::CHECKS`], a registry of small pure functions over [`facts::Facts`], each
//!    turning facts into zero or more [`Finding`]s (unit tests feed them fake facts);
//! 3. [`render`] prints them as a table fitted to the terminal, or as JSON.
//!
//! `fsbench run` runs the same checks once its target exists and records the findings in
//! `results.json` (warnings, notes, and `host_findings`). [`install`] adds the packages the
//! requested setups need (`--install-missing`).
//!
//! How to add a check: write `fn my_check(f: &Facts) -> Vec<Finding>` in `checks.rs`, add
//! one [`checks::Check`] line to `CHECKS`, and a unit test over fake facts below it.

pub mod checks;
pub mod facts;
pub mod in_run;
pub mod install;
pub mod render;
pub mod tools;

use serde::Serialize;

// Findings are part of results.json, so their types live in the schema (`results.rs`).
pub use crate::results::{Finding, Severity};

/// The doctor's answer: the facts it looked at, what it found, and which checks passed.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// What was gathered (so a reader can check the doctor's reasoning).
    pub facts: facts::Facts,
    /// Findings, warnings first, in registry order within a severity.
    pub findings: Vec<Finding>,
    /// Codes of the checks that found nothing.
    pub passed: Vec<String>,
}

/// Run every check of the registry over `facts`.
pub fn diagnose(facts: facts::Facts) -> Diagnosis {
    let mut findings = Vec::new();
    let mut passed = Vec::new();
    for c in checks::CHECKS {
        let found = (c.run)(&facts);
        if found.is_empty() {
            passed.push(c.code.to_string());
        }
        findings.extend(found);
    }
    // Stable sort: registry order is kept within a severity.
    findings.sort_by_key(|f| f.severity);
    Diagnosis {
        facts,
        findings,
        passed,
    }
}
