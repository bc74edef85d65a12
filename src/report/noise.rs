//! The run's noise floor per headline row, in the terminal and HTML reports (Markdown and JSON
//! carry it as a column and a field): the paired noise measured (the standard deviation of the
//! per-round log ratios of the leader and its noisiest rival, [`super::model::noise_floor`]) and
//! the rounds that would tell ±10 % apart at it ([`crate::stats::paired::rounds_to_resolve`]).
//! The terminal gets one compact paragraph: the rows this run's rounds already resolve are
//! counted, the others named with what they would need.

use super::model::{Row, noise_floor};
use serde::Serialize;

/// One headline row's noise floor.
#[derive(Debug, Clone, Serialize)]
pub struct Floor {
    /// The row's label (`4K random read, IOPS`).
    pub test: String,
    /// Paired noise, a fraction (0.06: about 6 % per round).
    pub noise: f64,
    /// Rounds that tell ±10 % apart at that noise (`None`: more than 100).
    pub rounds_for_10pct: Option<usize>,
}

impl Floor {
    /// "9 % (5 rounds)".
    pub fn text(&self) -> String {
        format!(
            "{:.0} % ({} rounds)",
            self.noise * 100.0,
            self.rounds_for_10pct
                .map_or("> 100".to_string(), |n| n.to_string())
        )
    }
}

/// The noise floor of every ranked headline row (rows without a paired comparison are left
/// out).
pub fn floors(rows: &[Row]) -> Vec<Floor> {
    rows.iter()
        .filter_map(|r| {
            noise_floor(r).map(|(noise, n)| Floor {
                test: r.label.clone(),
                noise,
                rounds_for_10pct: n,
            })
        })
        .collect()
}

/// Every ranked row as text cells, for a table: test, noise (`9 %`), rounds (`5`, `> 100`).
pub fn cells(rows: &[Row]) -> Vec<[String; 3]> {
    floors(rows)
        .into_iter()
        .map(|f| {
            [
                f.test.clone(),
                format!("{:.0} %", f.noise * 100.0),
                f.rounds_for_10pct
                    .map_or("> 100".to_string(), |n| n.to_string()),
            ]
        })
        .collect()
}

/// What the numbers are, for a legend.
pub const LEGEND: &str = "Paired noise: the standard deviation of the per-round log ratios of \
    the leader and its noisiest rival (about the ratio's spread per round); the rounds: how many \
    would find a true 10 % difference beyond noise 4 times in 5 at that noise (one look at the \
    comparison's level: α = 10 %, 2α/k in a row of k setups; 80 % power).";

/// One paragraph for the terminal: the rows `rounds` already resolve at ±10 %, counted with
/// their noise range, then each other row with its noise and the rounds it needs. `None`
/// without a ranked row.
pub fn summary(rows: &[Row], rounds: usize) -> Option<String> {
    let all = floors(rows);
    if all.is_empty() {
        return None;
    }
    let (done, more): (Vec<&Floor>, Vec<&Floor>) = all
        .iter()
        .partition(|f| f.rounds_for_10pct.is_some_and(|n| n <= rounds));
    let mut parts = Vec::new();
    if !done.is_empty() {
        let lo = done.iter().map(|f| f.noise).fold(f64::INFINITY, f64::min);
        let hi = done.iter().map(|f| f.noise).fold(0.0, f64::max);
        parts.push(format!(
            "{rounds} round(s) tell ±10 % apart in {} of {} rows (noise {:.0}–{:.0} %)",
            done.len(),
            all.len(),
            lo * 100.0,
            hi * 100.0
        ));
    }
    if !more.is_empty() {
        let named: Vec<String> = more
            .iter()
            .map(|f| format!("{} {}", f.test, f.text()))
            .collect();
        parts.push(format!("more rounds for {}", named.join("; ")));
    }
    let adjusted: Vec<&str> = rows
        .iter()
        .filter(|r| {
            r.cells
                .iter()
                .flatten()
                .filter_map(|c| c.versus_leader)
                .any(|j| j.adjusted.is_some())
        })
        .map(|r| r.label.as_str())
        .collect();
    if !adjusted.is_empty() {
        parts.push(format!(
            "the disk's own pace (read beside the image before each job) taken out of {}",
            adjusted.join("; ")
        ));
    }
    Some(format!(
        "Noise floor (paired, per round; rounds to tell ±10 % apart at 80 % power): {}.",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Report;
    use crate::results::{Results, Sample, SetupInfo};

    /// Two setups on the headline random read: tight rounds, then noisy ones.
    fn run(noisy: bool) -> Results {
        let mut r = Results::new();
        for name in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: name.into(),
                fs: name.into(),
                ..Default::default()
            });
        }
        let wobble = [1.0, 1.3, 0.8];
        for round in 1..=3u32 {
            let w = if noisy {
                wobble[round as usize - 1]
            } else {
                1.0
            };
            for (setup, v) in [("ext4", 100.0 + f64::from(round)), ("xfs", 90.0 * w)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "randread".into(),
                    metric: crate::metrics::registry::IOPS.into(),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                });
            }
        }
        r
    }

    #[test]
    fn resolved_rows_are_counted_and_the_others_named() {
        let quiet = Report::new(&run(false));
        let text = summary(&quiet.headline, 3).expect("a ranked row");
        assert!(
            text.contains("3 round(s) tell ±10 % apart in 1 of 1 rows"),
            "{text}"
        );
        let noisy = Report::new(&run(true));
        let f = &floors(&noisy.headline)[0];
        assert!(
            f.noise > 0.1 && f.rounds_for_10pct.is_none_or(|n| n > 3),
            "{f:?}"
        );
        let text = summary(&noisy.headline, 3).unwrap();
        assert!(
            text.contains("more rounds for") && text.contains(&f.text()),
            "{text}"
        );
        assert!(summary(&[], 3).is_none());
    }
}
