//! The steady-state plot of the HTML report (`--steady-state`): for each job run until steady,
//! its IOPS per round with the window the criteria judged, the window's mean, the band the
//! range criterion allows around it (±10 % for SNIA's 20 %) and the least-squares line
//! through it — the plot an SSD reviewer expects from the SNIA PTS.
//!
//! Read from `results.json` alone: the rounds are the `steady_round_iops` series, the criteria
//! the job's parameters; the window is found again the way the engine found it (the first
//! steady run of N rounds, else the last N rounds, marked not steady).

use super::super::Report;
use super::linear_axis;
use crate::engine::until_steady::{first_steady_end, fit};
use crate::measure::snia_criteria::{SteadyCriteria, excursions};
use crate::report::svg::{self, Series};

/// The series the rounds are recorded under.
const ROUNDS: &str = crate::workload::io::ROUND_SERIES;

/// A job's criteria from its recorded parameters (`params.job.steady.criteria`).
fn criteria(report: &Report, workload: &str) -> SteadyCriteria {
    report
        .results
        .workloads
        .iter()
        .find(|w| w.id == workload)
        .and_then(|w| w.params.pointer("/job/steady/criteria"))
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default()
}

/// What the plot shows of one job's rounds: the window (0-based, end exclusive), whether it
/// was steady, its mean and slope per round.
#[derive(Debug, PartialEq)]
pub(super) struct Judged {
    pub window: std::ops::Range<usize>,
    pub steady: bool,
    pub mean: f64,
    pub slope: f64,
}

/// Find the window in `rounds` as the engine did; `None` with fewer rounds than the window.
pub(super) fn judge(rounds: &[f64], c: &SteadyCriteria) -> Option<Judged> {
    let n = c.windows.max(2);
    let (end, steady) = match first_steady_end(rounds, c) {
        Some(end) => (end, true),
        None if rounds.len() >= n => (rounds.len(), false),
        None => return None,
    };
    let window = end - n..end;
    let (mean, slope) = fit(&rounds[window.clone()])?;
    Some(Judged {
        window,
        steady,
        mean,
        slope,
    })
}

/// One chart per job and setup (its first round recorded, like the latency-over-time charts).
pub(super) fn charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut out = Vec::new();
    for w in super::super::model::workload_order(r) {
        let c = criteria(report, &w);
        for (si, setup) in report.setups.iter().enumerate() {
            let Some(rec) = r
                .series
                .iter()
                .filter(|s| s.workload == w && s.setup == *setup && s.metric == ROUNDS)
                .filter(|s| !s.values.is_empty())
                .min_by_key(|s| s.round)
            else {
                continue;
            };
            out.push(chart(
                &format!("{} on {setup}", super::super::model::names(r, &w).0),
                &rec.values,
                &c,
                si,
            ));
        }
    }
    out
}

/// The plot of one job's rounds.
fn chart(title: &str, rounds: &[f64], c: &SteadyCriteria, color: usize) -> String {
    let x = |i: usize| (i + 1) as f64;
    let mut series = vec![Series {
        name: "IOPS".into(),
        color,
        dashed: false,
        points: rounds.iter().enumerate().map(|(i, v)| (x(i), *v)).collect(),
    }];
    let judged = judge(rounds, c);
    let mut hi = rounds.iter().copied().fold(0.0, f64::max);
    let verdict = match &judged {
        Some(j) => {
            let (a, b) = (j.window.start, j.window.end - 1);
            let half = c.range_pct / 2.0;
            let flat = |name: String, v: f64, color: usize| Series {
                name,
                color,
                dashed: true,
                points: vec![(x(a), v), (x(b), v)],
            };
            hi = hi.max(j.mean * (1.0 + half / 100.0));
            series.push(flat("mean".into(), j.mean, 7));
            series.push(flat(
                format!("±{half} % band"),
                j.mean * (1.0 + half / 100.0),
                5,
            ));
            series.push(flat(
                format!("±{half} % band"),
                j.mean * (1.0 - half / 100.0),
                5,
            ));
            // The least-squares line passes through the mean at the window's middle.
            let mid = (a + b) as f64 / 2.0;
            let at = |i: usize| j.mean + j.slope * (i as f64 - mid);
            series.push(Series {
                name: "fit".into(),
                color: 3,
                dashed: false,
                points: vec![(x(a), at(a)), (x(b), at(b))],
            });
            let (range, slope) = excursions(&rounds[j.window.clone()]).unwrap_or_default();
            format!(
                "{} over rounds {}–{} ({range:.0} %, {slope:.0} %)",
                if j.steady { "steady" } else { "not steady" },
                a + 1,
                b + 1
            )
        }
        None => format!("not steady: fewer than {} rounds", c.windows),
    };
    // Whole rounds on the x axis, about five ticks.
    let n = rounds.len().max(2);
    let step = n.div_ceil(5).max(1);
    let x_axis = svg::Axis {
        label: "steady-state round".into(),
        ticks: (1..=n)
            .filter(|k| k % step == 0 || *k == 1)
            .map(|k| (k as f64, k.to_string()))
            .collect(),
    };
    svg::lines(
        &format!("{title}: {verdict}"),
        &x_axis,
        &linear_axis("IOPS", 0.0, hi),
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_its_mean_band_and_slope_are_drawn() {
        let rounds = [
            62_000.0, 58_000.0, 53_500.0, 49_000.0, 45_000.0, 41_000.0, 37_500.0, 14_200.0,
            13_600.0, 14_000.0, 13_300.0, 14_100.0,
        ];
        let c = SteadyCriteria::default();
        let j = judge(&rounds, &c).unwrap();
        assert_eq!((j.window.clone(), j.steady), (7..12, true));
        assert!((j.mean - 13_840.0).abs() < 1e-6);
        let svg = chart("randwrite on ext4", &rounds, &c, 0);
        for want in [
            "steady over rounds 8–12",
            "mean",
            "±10 % band",
            "fit",
            "IOPS",
        ] {
            assert!(svg.contains(want), "{want}");
        }
        // A series that never settles: the last five rounds, marked not steady.
        let swing = [100.0, 140.0, 100.0, 140.0, 100.0, 140.0];
        let j = judge(&swing, &c).unwrap();
        assert_eq!((j.window, j.steady), (1..6, false));
        assert!(chart("x", &swing, &c, 0).contains("not steady over rounds 2–6"));
        assert!(judge(&[1.0, 2.0], &c).is_none());
    }
}
