//! The questions a run answers, as `fsbench run --until-settled` and the report's "until
//! settled" lines see them: which are still open after each round, and at which round each
//! settled. Two kinds of question count:
//!
//! - **a claim** the claims table judges (`claims::evaluate`), on the ratios its verdict
//!   reads: open while the sequential interval straddles the claim's region (a probe's
//!   yes/no and a fact are settled by one round, and are not questions);
//! - **a headline row** as the table shows it (each row its own metric: a 70/30 mix's read
//!   and write rows, not a total): its leader (the report's) against each other setup the
//!   row marks, on the ratios the mark reads (the disk's pace taken out where it is) and at
//!   the level the marks use ([`crate::stats::paired::leader_alpha`]): settled once ahead,
//!   behind or equivalent within the metric's margin, open while not separated.
//!
//! The statistic is [`crate::stats::paired`]'s (over [`crate::stats::sequential`]'s rule), the
//! one every output reads, so a settled verdict keeps its stated error rate however many
//! rounds it took and the report's marks, claims and "Until settled" lines agree.

use crate::metrics;
use crate::results::Results;
use crate::runner::more_rounds::Judge;
use crate::stats::paired::{self, Outcome};
use crate::stats::sequential::Rule;
use std::collections::{BTreeMap, BTreeSet};

/// One question and its paired per-round ratios, in round order.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The workload that answers it (an extra round runs it).
    pub workload: String,
    /// A claim's id, or `headline <metric>: <leader> vs <other>`.
    pub what: String,
    /// The setups it compares (an extra round runs only these: a question needs two).
    pub setups: Vec<String>,
    /// Paired ratios, round order, and the ratios each look judged
    /// ([`crate::stats::adjusted::Ratios::at`]).
    pub ratios: crate::stats::adjusted::Ratios,
    /// What settles it.
    pub test: Test,
}

/// What settles a question.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    /// A claim: its interval wholly inside or wholly outside its direction's region, and,
    /// where the wording gives a magnitude and the direction holds, the same for its size band.
    Claim {
        /// The direction's region.
        direction: crate::stats::region::Region,
        /// The size band, when the claim states a magnitude.
        size: Option<crate::stats::region::Region>,
    },
    /// A headline row (ratios oriented so > 1 favours the leader): ahead beyond noise, or
    /// equivalent within `margin` (the metric registry's).
    Leader {
        /// The equivalence margin (a fraction).
        margin: f64,
        /// Setups in the row: the leader's comparisons are judged at
        /// [`paired::leader_alpha`], as the marks are.
        setups: usize,
    },
}

impl Question {
    /// The verdict the first `n` rounds give (`None`: still open).
    pub fn verdict(&self, rule: &Rule, n: usize) -> Option<&'static str> {
        let r = self.ratios.at(n.min(self.ratios.len()));
        match self.test {
            Test::Claim { direction, size } => {
                crate::claims::claim_verdict(r, &direction, size.as_ref(), rule)
            }
            Test::Leader { margin, setups } => {
                let rule = Rule {
                    alpha: paired::leader_alpha(rule.alpha, setups),
                    ..*rule
                };
                // Decided as the count reads it: a leader shown behind once the disk's pace
                // is taken out is decided too (its mark is a shared lead).
                match paired::look(r, &rule, margin).0 {
                    Outcome::Ahead => Some("leader"),
                    Outcome::Equivalent => Some("equivalent"),
                    Outcome::Behind => Some("behind"),
                    Outcome::NotSeparated => None,
                }
            }
        }
    }

    /// The round at which it first settled (looks from the rule's minimum on), if it did.
    pub fn settled_at(&self, rule: &Rule) -> Option<usize> {
        (rule.min_rounds..=self.ratios.len()).find(|&n| self.verdict(rule, n).is_some())
    }
}

/// The stopping rule a `--until-settled` run used, from its record, its looks ending at the
/// last one its budget fitted (`None`: a run of fixed rounds).
pub fn rule_of(results: &Results) -> Option<Rule> {
    results
        .settle
        .as_ref()
        .map(|_| paired::rule_for(results, 0))
}

/// Every question `results` can answer: the measured claims, then the headline rows.
pub fn questions(results: &Results) -> Vec<Question> {
    let mut q = claim_questions(results);
    q.extend(headline_questions(results));
    q
}

/// The claims and headline rows of a run, as the runner's [`Judge`].
pub struct ClaimsAndHeadline;

impl Judge for ClaimsAndHeadline {
    fn open(&self, results: &Results, rule: &Rule) -> BTreeMap<String, BTreeSet<String>> {
        let mut open: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for q in questions(results) {
            if q.verdict(rule, q.ratios.len()).is_none() {
                open.entry(q.workload).or_default().extend(q.setups);
            }
        }
        open
    }

    fn questions(&self, results: &Results) -> usize {
        questions(results).len()
    }
}

/// Every measured claim the claims table judges (`claims::evaluate`: confirmed, refuted or
/// inconclusive; facts and probes aside, as [`crate::report::count`] counts them), on the
/// ratios its verdict reads (the disk's pace taken out where the run measured it).
fn claim_questions(results: &Results) -> Vec<Question> {
    use crate::claims::Outcome::{Confirmed, Inconclusive, Refuted};
    let mut out = Vec::new();
    for c in crate::claims::evaluate(results) {
        // A yes/no, or a count of what crash states showed, is what the filesystem does: its
        // one round settles it; a fact (usable space) is the same every round.
        if c.fact
            || metrics::settles_in_one_round(&c.claim.metric)
            || !matches!(c.outcome, Confirmed | Refuted | Inconclusive)
        {
            continue;
        }
        let workload = c.claim.workload.clone();
        let metric: crate::metrics::MetricKey = c.claim.metric.into();
        let ratios = match c.setups.as_slice() {
            [a, b] => crate::stats::adjusted::ratios(results, &workload, &metric, a, b),
            [a] => crate::stats::adjusted::Ratios::plain(
                paired::per_round(results, a, &workload, &metric)
                    .into_values()
                    .collect(),
            ),
            _ => continue,
        };
        if ratios.is_empty() {
            continue;
        }
        out.push(Question {
            workload,
            what: c.claim.id.clone(),
            setups: c.setups.clone(),
            ratios,
            test: Test::Claim {
                direction: c.claim.region(),
                size: c.claim.size_region(),
            },
        });
    }
    out
}

/// Every question the headline table's marks answer: per row shown (its own metric: a mix's
/// read and write rows each, not a total), the row's leader against each other setup with a
/// judgement, on the ratios that judgement reads ([`paired::oriented_ratios`]: adjusted where
/// the marks are) and at the level the marks use ([`paired::leader_alpha`]).
fn headline_questions(results: &Results) -> Vec<Question> {
    let mut summarized = results.clone();
    crate::stats::summarize(&mut summarized);
    let setups = crate::report::model::setup_order(&summarized);
    let tables = crate::report::model::tables(&summarized);
    let mut out = Vec::new();
    for row in crate::report::headline::rows(&tables) {
        let Some(best) = crate::report::model::leader(&row) else {
            continue;
        };
        let present = row.cells.iter().flatten().count();
        for (i, cell) in row.cells.iter().enumerate() {
            let Some(j) = cell.as_ref().and_then(|c| c.versus_leader) else {
                continue;
            };
            if j.interval.is_none() {
                continue;
            }
            let (leader, other) = (&setups[best], &setups[i]);
            out.push(Question {
                workload: row.workload.clone(),
                what: format!("headline {}: {leader} vs {other}", row.metric),
                setups: vec![leader.clone(), other.clone()],
                ratios: paired::oriented_ratios(results, &row.workload, &row.metric, leader, other),
                test: Test::Leader {
                    margin: j.margin,
                    setups: present,
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricKey;
    use crate::results::{Sample, SetupInfo};

    fn results(rows: &[(&str, &str, &str, &[f64])]) -> Results {
        let mut r = Results::new();
        for (setup, _, _, _) in rows {
            if !r.setups.iter().any(|s| s.name == *setup) {
                r.setups.push(SetupInfo {
                    name: setup.to_string(),
                    fs: setup.to_string(),
                    ..Default::default()
                });
            }
        }
        for (setup, workload, metric, values) in rows {
            for (i, v) in values.iter().enumerate() {
                r.samples.push(Sample {
                    setup: setup.to_string(),
                    workload: workload.to_string(),
                    metric: MetricKey::parse(metric),
                    unit: String::new(),
                    round: i as u32 + 1,
                    value: *v,
                });
            }
        }
        r
    }

    #[test]
    fn every_setup_against_the_leader_is_a_question() {
        let rule = Rule::new(3, 6);
        // xfs leads by the geometric mean though ext4 has the higher median; btrfs is far
        // behind (settled), ext4 close (open): only ext4 and xfs run the extra rounds.
        let r = results(&[
            ("ext4", "untar", "seconds", &[1.0, 1.3, 1.0]),
            ("xfs", "untar", "seconds", &[1.05, 1.05, 1.05]),
            ("btrfs", "untar", "seconds", &[3.0, 3.1, 2.9]),
        ]);
        let leader: Vec<String> = questions(&r)
            .into_iter()
            .filter(|q| matches!(q.test, Test::Leader { .. }))
            .map(|q| q.what)
            .collect();
        assert_eq!(
            leader,
            [
                "headline seconds: xfs vs ext4",
                "headline seconds: xfs vs btrfs"
            ]
        );
        let open = ClaimsAndHeadline.open(&r, &rule);
        assert_eq!(
            open["untar"],
            ["ext4".to_string(), "xfs".to_string()].into()
        );
    }

    #[test]
    fn a_clear_leader_settles_and_a_close_race_stays_open() {
        let rule = Rule::new(3, 15);
        let clear = results(&[
            ("ext4", "untar", "seconds", &[1.0, 1.02, 0.99]),
            ("xfs", "untar", "seconds", &[2.0, 2.05, 1.98]),
        ]);
        assert!(ClaimsAndHeadline.open(&clear, &rule).is_empty());
        let all = questions(&clear);
        let q = all
            .iter()
            .find(|q| matches!(q.test, Test::Leader { .. }))
            .unwrap();
        assert_eq!(
            (q.verdict(&rule, 3), q.settled_at(&rule)),
            (Some("leader"), Some(3))
        );
        let close = results(&[
            ("ext4", "untar", "seconds", &[1.0, 1.2, 0.9]),
            ("xfs", "untar", "seconds", &[1.1, 1.0, 1.05]),
        ]);
        // Open, with the two setups the question compares (an extra round runs only them).
        let open = ClaimsAndHeadline.open(&close, &rule);
        assert_eq!(open.keys().collect::<Vec<_>>(), ["untar"]);
        assert_eq!(
            open["untar"],
            ["ext4".to_string(), "xfs".to_string()].into()
        );
        let all = questions(&close);
        let q = all
            .iter()
            .find(|q| matches!(q.test, Test::Leader { .. }))
            .unwrap();
        assert_eq!(q.what, "headline seconds: ext4 vs xfs");
    }

    #[test]
    fn an_open_claim_names_its_workload() {
        let rule = Rule::new(3, 15);
        // ext4/xfs randread 0.97 (0.89–1.04) against the 0.9–1.111 tie: open.
        let r = results(&[
            ("ext4", "randread", "iops", &[89.0, 97.0, 104.0]),
            ("xfs", "randread", "iops", &[100.0, 100.0, 100.0]),
        ]);
        let q = questions(&r);
        let tie = q
            .iter()
            .find(|q| q.what == "ext4-xfs-randread-tie")
            .unwrap();
        assert_eq!(
            (tie.workload.as_str(), tie.verdict(&rule, 3)),
            ("randread", None)
        );
        assert!(ClaimsAndHeadline.open(&r, &rule).contains_key("randread"));
    }

    #[test]
    fn a_lead_in_every_round_is_ahead_where_the_range_rule_saw_a_tie() {
        // ext4 ahead of xfs every round by 10–20 %, one slow round for both: the ranges
        // overlap (a tie by the old range rule) while the paired ratios all favour ext4.
        let mut r = results(&[
            ("ext4", "untar", "seconds", &[1.0, 1.0, 1.9, 1.0, 1.0, 1.0]),
            ("xfs", "untar", "seconds", &[1.15, 1.2, 2.2, 1.1, 1.2, 1.15]),
        ]);
        let cmp = |r: &Results, a: &str, b: &str| {
            paired::compare(r, "untar", &crate::metrics::registry::SECONDS.into(), a, b)
        };
        assert_eq!(cmp(&r, "ext4", "xfs").outcome, Outcome::Ahead);
        assert_eq!(cmp(&r, "xfs", "ext4").outcome, Outcome::Behind);
        // A settled run's rule ends at the last look its budget fitted, not at --max-rounds:
        // four looks (rounds 3 to 6), as the runner stopped on them.
        r.settle = Some(crate::results::SettleRecord {
            alpha: 0.1,
            min_rounds: 3,
            max_rounds: 15,
            last_look: Some(6),
            ..Default::default()
        });
        assert_eq!(rule_of(&r).unwrap().looks(), 4);
        assert_eq!(cmp(&r, "ext4", "xfs").outcome, Outcome::Ahead);
    }

    #[test]
    fn a_mix_is_judged_on_the_rows_shown_not_on_its_total() {
        // 70/30 mix: ext4 reads clearly faster, xfs writes clearly faster, the total a tie.
        let r = results(&[
            ("ext4", "randrw70", "read_iops", &[140.0, 142.0, 139.0]),
            ("xfs", "randrw70", "read_iops", &[100.0, 101.0, 99.0]),
            ("ext4", "randrw70", "write_iops", &[40.0, 41.0, 39.0]),
            ("xfs", "randrw70", "write_iops", &[80.0, 81.0, 79.0]),
            ("ext4", "randrw70", "iops", &[180.0, 170.0, 190.0]),
            ("xfs", "randrw70", "iops", &[180.0, 190.0, 170.0]),
        ]);
        let what: Vec<String> = questions(&r)
            .into_iter()
            .filter(|q| matches!(q.test, Test::Leader { .. }))
            .map(|q| q.what)
            .collect();
        assert_eq!(
            what,
            [
                "headline read_iops: ext4 vs xfs",
                "headline write_iops: xfs vs ext4"
            ]
        );
        // Both rows are clear: nothing open, though the total is a coin flip.
        assert!(ClaimsAndHeadline.open(&r, &Rule::new(3, 6)).is_empty());
    }

    #[test]
    fn a_per_run_control_keeps_open_what_a_per_question_one_decides() {
        // xfs behind by about 10 % every round, a little noise: decided at α = 10 %, not at
        // α/m for a run of 40 questions (each judged at 0.25 %).
        let r = results(&[
            ("ext4", "untar", "seconds", &[1.0, 1.02, 0.98]),
            ("xfs", "untar", "seconds", &[1.08, 1.14, 1.08]),
        ]);
        let per_question = Rule::new(3, 3);
        let per_run = Rule {
            alpha: crate::stats::family::alpha_per_question(
                per_question.alpha,
                Some(&crate::results::ErrorRecord::per_run(40)),
            ),
            ..per_question
        };
        assert!(ClaimsAndHeadline.open(&r, &per_question).is_empty());
        assert_eq!(
            ClaimsAndHeadline.open(&r, &per_run)["untar"],
            ["ext4".to_string(), "xfs".to_string()].into()
        );
        assert_eq!(ClaimsAndHeadline.questions(&r), questions(&r).len());
    }
}
