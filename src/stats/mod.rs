//! Statistics over samples: summaries, bootstrap intervals, comparisons, noise verdicts.

use crate::results::Results;

/// Recompute `results.summary` from `results.samples` (median, min, max, mean, stddev, CI95).
pub fn summarize(results: &mut Results) {
    let _ = results;
    todo!("stats::summarize")
}
