//! `fsbench history check`: did the newest run of a (device, setup, workload, metric) regress
//! against its history?
//!
//! Two gates, both must pass for a regression:
//! 1. **A step over the runs.** Each run is its median (log scale, so a step is a ratio). The
//!    series is fitted with the L1 Potts model, as asv's step detection does (`asv.step_detect`,
//!    after Friedrich et al., "Complexity penalized M-estimation", 2008): piecewise-constant
//!    levels minimizing Σ|zᵢ − level| + γ·(number of segments), solved exactly by dynamic
//!    programming. γ scales with the noise between runs (σ̂: 1.4826 × the median absolute
//!    successive difference ÷ √2, floored at 0.5 %) as γ = σ̂·(3 + 2 ln n), so a lone noisy
//!    run rarely opens a segment. The newest run's segment is compared with the one before;
//!    the change must be worse than `threshold` (default 5 %, asv's default too).
//! 2. **A test on the rounds.** The rounds of the newest segment's runs against the rounds of
//!    the segment before: Welch's t on log values (`stats::change`), with Benjamini–Hochberg
//!    control over every series checked (`stats::fdr`) at q = `alpha`.

use crate::metrics::Direction;
use crate::stats::descriptive::median;

/// What is checked, with its history oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Device key.
    pub device: String,
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// Metric id.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Runs, oldest first.
    pub runs: Vec<Point>,
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Run id.
    pub run_id: i64,
    /// When it started.
    pub started_at: String,
    /// Its rounds' values.
    pub rounds: Vec<f64>,
}

/// How strict the check is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Smallest change counted, as a fraction (0.05: 5 %).
    pub threshold: f64,
    /// False-discovery rate over every series checked.
    pub alpha: f64,
    /// How many of the newest runs of a series are looked at.
    pub window: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: 0.05,
            alpha: 0.05,
            window: 50,
        }
    }
}

/// A change of the newest run's level.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    /// Device key.
    pub device: String,
    /// Setup.
    pub setup: String,
    /// Workload.
    pub workload: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Median of the runs before the step.
    pub before: f64,
    /// Median of the runs since the step.
    pub now: f64,
    /// Change in percent (now against before).
    pub pct: f64,
    /// Rounds test p-value, and after the correction across series.
    pub p: f64,
    /// Benjamini–Hochberg q-value.
    pub q: f64,
    /// The first run of the new level.
    pub since_run: i64,
    /// The newest run.
    pub newest_run: i64,
    /// Runs in the series.
    pub runs: usize,
    /// Worse (a regression) or better.
    pub regression: bool,
}

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Report {
    /// Series looked at.
    pub series: usize,
    /// Series with enough history (at least three runs, two rounds each).
    pub judged: usize,
    /// Regressions beyond noise.
    pub regressions: Vec<Change>,
    /// Improvements beyond noise.
    pub improvements: Vec<Change>,
}

/// The noise between runs: σ̂ of successive differences, floored.
fn noise(z: &[f64]) -> f64 {
    let d: Vec<f64> = z.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let s = if d.is_empty() {
        0.0
    } else {
        1.4826 * median(&d) / 2f64.sqrt()
    };
    s.max(0.005)
}

/// Exact L1 Potts fit: the start index of every segment (the first is 0).
pub fn potts_l1(z: &[f64], gamma: f64) -> Vec<usize> {
    let n = z.len();
    // cost[i][j]: L1 deviation of z[i..=j] from its median.
    let seg_cost = |i: usize, j: usize| {
        let m = median(&z[i..=j]);
        z[i..=j].iter().map(|x| (x - m).abs()).sum::<f64>()
    };
    let mut best = vec![0.0f64; n + 1];
    let mut start = vec![0usize; n + 1];
    for j in 1..=n {
        best[j] = f64::INFINITY;
        for i in 0..j {
            let c = best[i] + seg_cost(i, j - 1) + gamma;
            if c < best[j] {
                best[j] = c;
                start[j] = i;
            }
        }
    }
    let mut cuts = Vec::new();
    let mut j = n;
    while j > 0 {
        cuts.push(start[j]);
        j = start[j];
    }
    cuts.reverse();
    cuts
}

/// The newest level against the one before, before the rounds' correction: `None` without a
/// step or enough history.
fn step(s: &Series, dir: Direction, opts: &Options) -> Option<(Change, f64)> {
    let runs = &s.runs[s.runs.len().saturating_sub(opts.window)..];
    if runs.len() < 3 || dir == Direction::Neutral {
        return None;
    }
    let meds: Vec<f64> = runs.iter().map(|r| median(&r.rounds)).collect();
    if !meds.iter().all(|m| m.is_finite() && *m > 0.0) {
        return None;
    }
    let z: Vec<f64> = meds.iter().map(|m| m.ln()).collect();
    let sigma = noise(&z);
    let gamma = sigma * (3.0 + 2.0 * (z.len() as f64).ln());
    let cuts = potts_l1(&z, gamma);
    let last = *cuts.last()?;
    if last == 0 {
        return None;
    }
    let prev = cuts.iter().rev().nth(1).copied().unwrap_or(0);
    let before = median(&meds[prev..last]);
    let now = median(&meds[last..]);
    let ratio = now / before;
    let worse = match dir {
        Direction::HigherIsBetter => ratio < 1.0,
        _ => ratio > 1.0,
    };
    // Symmetric in log terms: 5 % slower and the matching 4.8 % fewer IOPS both count.
    if ratio.ln().abs() < (1.0 + opts.threshold).ln() {
        return None;
    }
    let a: Vec<f64> = runs[prev..last]
        .iter()
        .flat_map(|r| r.rounds.clone())
        .collect();
    let b: Vec<f64> = runs[last..].iter().flat_map(|r| r.rounds.clone()).collect();
    let p = crate::stats::change::log_difference(&a, &b)
        .map(|c| c.p_value())
        .filter(|p| !p.is_nan())
        .unwrap_or(1.0);
    Some((
        Change {
            device: s.device.clone(),
            setup: s.setup.clone(),
            workload: s.workload.clone(),
            metric: s.metric.clone(),
            unit: s.unit.clone(),
            before,
            now,
            pct: (ratio - 1.0) * 100.0,
            p,
            q: f64::NAN,
            since_run: runs[last].run_id,
            newest_run: runs[runs.len() - 1].run_id,
            runs: runs.len(),
            regression: worse,
        },
        p,
    ))
}

/// Check every series; `direction` says which way is better for a metric id.
pub fn check(all: &[Series], direction: impl Fn(&str) -> Direction, opts: &Options) -> Report {
    let mut report = Report {
        series: all.len(),
        ..Default::default()
    };
    let mut candidates = Vec::new();
    let mut pvals = Vec::new();
    for s in all {
        let enough = s.runs.len() >= 3 && s.runs.iter().all(|r| r.rounds.len() >= 2);
        let dir = direction(&s.metric);
        if !enough || dir == Direction::Neutral {
            continue;
        }
        report.judged += 1;
        // Series without a step are part of the family with p = 1: they were tested too.
        match step(s, dir, opts) {
            Some((c, p)) => {
                candidates.push(Some(c));
                pvals.push(p);
            }
            None => {
                candidates.push(None);
                pvals.push(1.0);
            }
        }
    }
    let q = crate::stats::fdr::bh_adjust(&pvals);
    for (c, q) in candidates.into_iter().zip(q) {
        let Some(mut c) = c else { continue };
        if q > opts.alpha {
            continue;
        }
        c.q = q;
        if c.regression {
            report.regressions.push(c);
        } else {
            report.improvements.push(c);
        }
    }
    let order = |a: &Change, b: &Change| b.pct.abs().total_cmp(&a.pct.abs());
    report.regressions.sort_by(order);
    report.improvements.sort_by(order);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic ±`spread` wobble (no RNG: the test must not be flaky).
    fn wobble(i: usize, spread: f64) -> f64 {
        let x = ((i * 7919 + 13) % 97) as f64 / 96.0; // in [0, 1]
        1.0 + spread * (2.0 * x - 1.0)
    }

    fn series(levels: &[f64], spread: f64) -> Series {
        Series {
            device: "d".into(),
            setup: "ext4".into(),
            workload: "randread".into(),
            metric: "seconds".into(),
            unit: "s".into(),
            runs: levels
                .iter()
                .enumerate()
                .map(|(i, l)| Point {
                    run_id: i as i64 + 1,
                    started_at: String::new(),
                    rounds: (0..3).map(|k| l * wobble(i * 3 + k, spread)).collect(),
                })
                .collect(),
        }
    }

    fn lower(_: &str) -> Direction {
        Direction::LowerIsBetter
    }

    #[test]
    fn potts_finds_one_step() {
        let z = [0.0, 0.01, -0.01, 0.0, 0.3, 0.31, 0.29];
        assert_eq!(potts_l1(&z, 0.1), vec![0, 4]);
        assert_eq!(potts_l1(&z[..4], 0.1), vec![0]);
    }

    #[test]
    fn a_thirty_percent_slowdown_is_a_regression() {
        let s = series(&[10.0, 10.0, 10.0, 10.0, 13.0], 0.02);
        let r = check(&[s], lower, &Options::default());
        assert_eq!(r.judged, 1);
        assert_eq!(r.regressions.len(), 1, "{r:?}");
        let c = &r.regressions[0];
        assert!((c.pct - 30.0).abs() < 5.0, "{c:?}");
        assert_eq!(c.since_run, 5);
    }

    #[test]
    fn an_aa_history_is_not_flagged() {
        for spread in [0.01, 0.03] {
            let s = series(&[10.0; 8], spread);
            let r = check(&[s], lower, &Options::default());
            assert!(
                r.regressions.is_empty() && r.improvements.is_empty(),
                "{r:?}"
            );
        }
    }

    #[test]
    fn faster_is_an_improvement_and_higher_is_better_is_respected() {
        let s = series(&[10.0, 10.0, 10.0, 7.0], 0.01);
        let r = check(std::slice::from_ref(&s), lower, &Options::default());
        assert_eq!((r.regressions.len(), r.improvements.len()), (0, 1), "{r:?}");
        let r = check(&[s], |_| Direction::HigherIsBetter, &Options::default());
        assert_eq!(r.regressions.len(), 1, "{r:?}");
    }

    #[test]
    fn too_short_a_history_is_not_judged() {
        let s = series(&[10.0, 13.0], 0.01);
        let r = check(&[s], lower, &Options::default());
        assert_eq!(r.judged, 0);
    }
}
