//! The "Until settled" lines of a `--until-settled` run: the stopping rule, why the run
//! stopped, and per question (claim or headline row) the round it settled at or why not.

use crate::report::open_questions::questions;
use crate::results::Results;

/// The lines, or none for a run without `--until-settled`.
pub fn lines(results: &Results) -> Vec<String> {
    let Some(s) = &results.settle else {
        return Vec::new();
    };
    let Some(rule) = crate::report::open_questions::rule_of(results) else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "Until settled: {} to {} rounds within {} min{}; a settled verdict is wrong at most \
         {:.0} % of the time ({}, {} looks). Stopped after round {}: {}.",
        s.min_rounds,
        s.max_rounds,
        s.budget_s / 60,
        match s.last_look {
            Some(l) if l < s.max_rounds => format!(" (the budget fits rounds up to {l})"),
            _ => String::new(),
        },
        s.alpha * 100.0,
        s.method,
        rule.looks(),
        s.rounds_run,
        s.stop.word()
    )];
    for q in questions(results) {
        let n = q.ratios.len();
        out.push(match q.settled_at(&rule) {
            Some(at) => format!(
                "{}: {} at round {at} (settled)",
                q.what,
                q.verdict(&rule, at).unwrap_or("settled")
            ),
            None => format!(
                "{}: open after {n} round(s) ({}){}",
                q.what,
                s.stop.word(),
                rule.interval(&q.ratios.ratios)
                    .map(|(lo, hi)| format!(", interval {lo:.2}–{hi:.2}"))
                    .unwrap_or_default()
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::{IOPS, SECONDS};
    use crate::results::{Sample, SettleRecord, SettleStop, SetupInfo};

    #[test]
    fn each_question_says_when_it_settled_or_why_it_did_not() {
        let mut r = Results::new();
        for s in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: s.into(),
                fs: s.into(),
                ..Default::default()
            });
        }
        let rows: [(&str, &str, [f64; 4]); 4] = [
            ("ext4", "untar", [1.0, 1.01, 0.99, 1.0]),
            ("xfs", "untar", [2.0, 2.02, 1.99, 2.01]),
            ("ext4", "randread", [90.0, 104.0, 96.0, 110.0]),
            ("xfs", "randread", [100.0, 100.0, 100.0, 100.0]),
        ];
        for (setup, w, values) in rows {
            let metric = if w == "untar" { SECONDS } else { IOPS };
            for (i, v) in values.into_iter().enumerate() {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: w.into(),
                    metric: metric.into(),
                    unit: String::new(),
                    round: i as u32 + 1,
                    value: v,
                });
            }
        }
        assert!(lines(&r).is_empty());
        r.settle = Some(SettleRecord {
            method: "t".into(),
            alpha: 0.1,
            min_rounds: 3,
            max_rounds: 4,
            budget_s: 600,
            rounds_run: 4,
            stop: SettleStop::MaxRounds,
            ..Default::default()
        });
        let l = lines(&r).join("\n");
        assert!(l.contains("Stopped after round 4: max rounds."), "{l}");
        assert!(
            l.contains("headline seconds: ext4 vs xfs: leader at round 3 (settled)"),
            "{l}"
        );
        assert!(
            l.contains("ext4-xfs-randread-tie: open after 4 round(s) (max rounds)"),
            "{l}"
        );
    }
}
