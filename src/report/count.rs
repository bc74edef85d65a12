//! What a run decided, counted honestly, and the error it carries.
//!
//! A **question** is a judged comparison of two setups on a measured metric: each headline
//! row's leader against each other setup ([`super::model::Cell::versus_leader`]) and each
//! measured claim. Facts (usable space, fixed by mkfs: the registry's `Role::Fact`) and
//! probes (a yes/no settled by its one round) are stated, not judged, so they are not
//! questions. A question is **decided** when the one statistic ([`crate::stats::paired`])
//! reads it as ahead, behind or equivalent (a claim: confirmed or refuted), and a **close
//! call** when it was still open after the minimum rounds (every round of a fixed-rounds
//! run; the first look of a `--until-settled` run), whether or not the extra rounds settled
//! it later.
//!
//! The error: each decided question is wrong with probability at most α (the run's rule,
//! [`crate::stats::paired::rule_for`]), so the expected number of wrong decisions among the
//! run's questions is at most α × questions; and all of it is about this host as it was
//! during the run.

use super::Report;
use serde::Serialize;

/// The run's questions and what became of them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Counts {
    /// Judged comparisons (headline leader against each other setup, measured claims).
    pub questions: usize,
    /// Of those, decided (ahead, behind, equivalent; confirmed, refuted).
    pub decided: usize,
    /// Questions open after the minimum rounds (decided later or never).
    pub close_calls: usize,
    /// Of the close calls, those the extra rounds of a `--until-settled` run decided.
    pub close_calls_settled: usize,
    /// The minimum rounds: the first look.
    pub min_rounds: usize,
    /// The run's error rate per question (α).
    pub alpha: f64,
    /// The expected number of wrong decisions among the questions, at most: α × questions.
    pub expected_wrong_at_most: f64,
    /// The error control (`--error`): per question, or per run (familywise, each question at
    /// α/m: then `alpha` is that share and the chance of any wrong decision is at most
    /// `alpha_run`).
    pub error_control: crate::results::ErrorControl,
    /// The level the run asked for: α per question, or per run the familywise bound.
    pub alpha_run: f64,
}

/// One question's fate: decided, and the rounds it was read at.
struct Fate {
    decided: bool,
    rounds: usize,
}

/// Count `report`'s questions.
pub fn counts(report: &Report) -> Counts {
    let results = &report.results;
    let rounds = crate::stats::rounds(&results.summary);
    let rule = crate::stats::paired::rule_for(results, rounds);
    let mut fates: Vec<Fate> = report
        .headline
        .iter()
        .flat_map(|row| row.cells.iter().flatten())
        .filter_map(|c| c.versus_leader)
        .filter(|j| j.interval.is_some())
        .map(|j| Fate {
            decided: j.outcome.decided(),
            rounds: j.rounds,
        })
        .collect();
    fates.extend(
        report
            .claims
            .iter()
            .filter(|c| !c.fact && !crate::metrics::settles_in_one_round(&c.claim.metric))
            .filter(|c| {
                use crate::claims::Outcome::*;
                matches!(c.outcome, Confirmed | Refuted | Inconclusive)
            })
            .map(|c| Fate {
                decided: c.outcome != crate::claims::Outcome::Inconclusive,
                rounds: c.rounds,
            }),
    );
    let min = rule.min_rounds;
    let close = |f: &&Fate| !(f.decided && f.rounds <= min);
    let questions = fates.len();
    Counts {
        questions,
        decided: fates.iter().filter(|f| f.decided).count(),
        close_calls: fates.iter().filter(close).count(),
        close_calls_settled: fates.iter().filter(close).filter(|f| f.decided).count(),
        min_rounds: min,
        alpha: rule.alpha,
        expected_wrong_at_most: rule.alpha * questions as f64,
        error_control: results
            .error
            .as_ref()
            .map_or(crate::results::ErrorControl::PerQuestion, |e| e.control),
        alpha_run: match &results.error {
            Some(e) if e.control == crate::results::ErrorControl::PerRun => {
                rule.alpha * e.questions.max(1) as f64
            }
            _ => rule.alpha,
        },
    }
}

impl Counts {
    /// "Decided 12 of 40 questions …; 28 close calls open after 5 rounds": one sentence for
    /// the terminal's noise paragraph. `None` without a question.
    pub fn decided_text(&self) -> Option<String> {
        if self.questions == 0 {
            return None;
        }
        let mut s = format!(
            "Decided {} of {} questions (each other setup against a headline row's leader, and \
             the measured claims; facts and probes are stated, not counted)",
            self.decided, self.questions
        );
        if self.close_calls > 0 {
            s.push_str(&format!(
                "; {} close call(s) open after {} round(s)",
                self.close_calls, self.min_rounds
            ));
            if self.close_calls_settled > 0 {
                s.push_str(&format!(
                    ", {} settled by the extra rounds",
                    self.close_calls_settled
                ));
            }
        }
        s.push('.');
        Some(s)
    }

    /// The error the run carries, in one sentence (every format prints it). `None` without a
    /// question.
    pub fn error_text(&self) -> Option<String> {
        if self.questions == 0 {
            return None;
        }
        const HOST: &str = "It holds for this host as it was during this run: another run, \
                            on another day, can differ.";
        Some(match self.error_control {
            crate::results::ErrorControl::PerQuestion => format!(
                "Error: each decision may be wrong with probability at most {:.0} % (α, per \
                 question); over this run's {} questions that is at most {:.1} wrong \
                 decision(s) expected. {HOST}",
                self.alpha * 100.0,
                self.questions,
                self.expected_wrong_at_most
            ),
            crate::results::ErrorControl::PerRun => format!(
                "Error: per run ({}), the chance that any of this run's {} decisions is wrong \
                 is at most {:.0} %, each question judged at {:.2} % (α/{}). {HOST}",
                crate::results::ERROR_METHOD,
                self.questions,
                self.alpha_run * 100.0,
                self.alpha * 100.0,
                self.questions.max(1)
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Results, Sample, SetupInfo, WorkloadInfo};

    /// ext4 and xfs: a clear random-read lead and usable space (a fact).
    fn run() -> Results {
        let mut r = Results::new();
        for s in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: s.into(),
                fs: s.into(),
                ..Default::default()
            });
        }
        r.workloads.push(WorkloadInfo {
            id: "randread".into(),
            kind: "io".into(),
            params: serde_json::json!({"rw": "randread"}),
            fio_command: None,
        });
        r.workloads.push(WorkloadInfo {
            id: "usable-space".into(),
            kind: "usable-space".into(),
            ..Default::default()
        });
        for round in 1..=3u32 {
            let f = 1.0 + 0.01 * f64::from(round);
            for (setup, iops, avail) in [("ext4", 100.0 * f, 9.4e9), ("xfs", 150.0 * f, 9.9e9)] {
                for (w, m, v) in [
                    ("randread", "iops", iops),
                    ("usable-space", "avail_bytes", avail),
                ] {
                    r.samples.push(Sample {
                        setup: setup.into(),
                        workload: w.into(),
                        metric: crate::metrics::MetricKey::parse(m),
                        unit: String::new(),
                        round,
                        value: v,
                    });
                }
            }
        }
        r
    }

    #[test]
    fn facts_are_neither_marked_nor_counted() {
        let rep = Report::new(&run());
        let space = rep
            .tables
            .iter()
            .flat_map(|t| t.rows.iter())
            .find(|r| r.metric == crate::metrics::registry::AVAIL_BYTES)
            .expect("usable space row");
        assert!(
            space
                .cells
                .iter()
                .flatten()
                .all(|c| c.mark == super::super::model::Mark::None && c.versus_leader.is_none()),
            "{space:?}"
        );
        let c = counts(&rep);
        // The random-read comparison is a question; usable space and its claims are not.
        let claims_judged = rep
            .claims
            .iter()
            .filter(|c| {
                !c.fact
                    && matches!(
                        c.outcome,
                        crate::claims::Outcome::Confirmed
                            | crate::claims::Outcome::Refuted
                            | crate::claims::Outcome::Inconclusive
                    )
            })
            .count();
        assert_eq!(c.questions, 1 + claims_judged, "{c:?}");
        assert!(c.decided >= 1 && c.decided <= c.questions, "{c:?}");
        assert!(
            rep.claims.iter().any(|c| c.fact),
            "a usable-space claim is a fact"
        );
        assert!((c.expected_wrong_at_most - 0.1 * c.questions as f64).abs() < 1e-9);
        let text = c.error_text().unwrap();
        assert!(
            text.contains("at most 10 %") && text.contains("this host"),
            "{text}"
        );
        // A fixed-rounds run: the close calls are exactly the undecided questions.
        assert_eq!(c.close_calls, c.questions - c.decided);
        assert_eq!(c.close_calls_settled, 0);
    }

    #[test]
    fn a_per_run_control_shares_alpha_and_says_so() {
        let mut r = run();
        let m = counts(&Report::new(&r)).questions;
        r.error = Some(crate::results::ErrorRecord::per_run(m));
        let c = counts(&Report::new(&r));
        assert_eq!(c.questions, m, "the count does not depend on the level");
        assert_eq!(c.error_control, crate::results::ErrorControl::PerRun);
        assert!((c.alpha - 0.1 / m as f64).abs() < 1e-12, "{c:?}");
        assert!((c.alpha_run - 0.1).abs() < 1e-12, "{c:?}");
        assert!((c.expected_wrong_at_most - 0.1).abs() < 1e-9, "{c:?}");
        let text = c.error_text().unwrap();
        assert!(
            text.contains("per run (Bonferroni")
                && text.contains(&format!("any of this run's {m} decisions"))
                && text.contains("at most 10 %"),
            "{text}"
        );
    }
}
