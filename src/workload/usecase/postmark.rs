//! Debian's `postmark` (NetApp's mail-server benchmark: many small files created, read,
//! appended and deleted in a mix of transactions) as a cross-check of the maildir workload.
//! Skipped with a note where it is not installed. PostMark times in whole seconds, so its own
//! transactions/s is coarse; the step's wall time is recorded beside it.

use crate::Error;
use crate::host::command::{OnCancel, run_child};
use crate::metrics::registry as m;
use crate::workload::{Metric, WorkloadOutput};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// PostMark's sizes (plan-file keys of `kind = "postmark"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostmarkParams {
    /// Files in the initial pool (`set number`).
    pub files: u32,
    /// Transactions (`set transactions`).
    pub transactions: u32,
}

impl Default for PostmarkParams {
    /// 5,000 files of 500 B–100 KB and 20,000 transactions.
    fn default() -> Self {
        PostmarkParams {
            files: 5_000,
            transactions: 20_000,
        }
    }
}

impl PostmarkParams {
    /// Take its keys out of a plan file's table (what is missing keeps its value).
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        for key in ["files", "transactions"] {
            let Some(v) = t.remove(key) else { continue };
            let n = v
                .as_integer()
                .filter(|n| (1..=100_000_000).contains(n))
                .ok_or_else(|| {
                    format!("{key} must be a whole number from 1 to 100000000, not {v}")
                })? as u32;
            if key == "files" {
                self.files = n;
            } else {
                self.transactions = n;
            }
        }
        Ok(())
    }
}

/// PostMark's own transactions/s from its report (`N seconds of transactions (R per second)`).
fn parse_rate(report: &str) -> Option<f64> {
    let line = report
        .lines()
        .find(|l| l.contains("seconds of transactions"))?;
    let inner = line.split('(').nth(1)?;
    inner.split_whitespace().next()?.parse().ok()
}

/// Run PostMark in `dir/postmark`, removed afterwards.
pub fn run(
    dir: &Path,
    p: &PostmarkParams,
    seed: u64,
    timeout: Duration,
) -> crate::Result<WorkloadOutput> {
    let work = dir.join("postmark");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| Error::io("cannot create", &work, e))?;
    let _cleanup = super::RemoveOnDrop(work.clone());
    let cfg = work.join("postmark.cfg");
    std::fs::write(
        &cfg,
        format!(
            "set location {}\nset number {}\nset transactions {}\nset size 500 100000\n\
             set seed {}\nrun\nquit\n",
            work.display(),
            p.files,
            p.transactions,
            seed % 2_000_000_000
        ),
    )
    .map_err(|e| Error::io("cannot write", &cfg, e))?;
    let mut cmd = std::process::Command::new("postmark");
    cmd.arg(&cfg);
    let start = Instant::now();
    let out = run_child(&mut cmd, "postmark", timeout, OnCancel::Kill)?;
    let secs = start.elapsed().as_secs_f64();
    if out.status != Some(0) {
        return Err(Error::tool("postmark", out.combined().trim().to_string()));
    }
    let rate = parse_rate(&out.stdout).ok_or_else(|| {
        Error::tool(
            "postmark",
            format!(
                "no \"seconds of transactions\" line in its report: {}",
                out.stdout.trim()
            ),
        )
    })?;
    let mut w = WorkloadOutput::default();
    w.metrics
        .push(Metric::new(m::POSTMARK_TX_PER_S, "tx/s", rate));
    w.metrics.push(Metric::new(m::SECONDS, "s", secs));
    Ok(w)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_rate_is_read_from_the_report() {
        let r = "Time:\n\t2 seconds total\n\t2 seconds of transactions (250 per second)\n";
        assert_eq!(super::parse_rate(r), Some(250.0));
        assert_eq!(super::parse_rate("Time:\n"), None);
    }
}
