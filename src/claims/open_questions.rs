//! The questions a run answers, as `fsbench run --until-settled` and the report's "until
//! settled" lines see them: which are still open after each round, and at which round each
//! settled. Two kinds of question count:
//!
//! - **a claim** (`claims/claims.toml`) whose setups both ran: open while the sequential
//!   interval of its paired ratios straddles the claim's region (a probe's yes/no is settled
//!   by its one round);
//! - **a headline row**: per workload, its deciding metric (throughput, then time, as the
//!   recommendations pick it, facts never) on the leader (the best geometric mean, as the
//!   report picks it) against each other setup: settled once leader ÷ other (oriented so
//!   that a ratio above 1 is better) is ahead beyond noise, or shown equivalent within the
//!   metric's margin, at the level the marks use ([`crate::stats::paired::leader_alpha`]);
//!   open while not separated.
//!
//! The statistic is [`crate::stats::paired`]'s (over [`crate::stats::sequential`]'s rule), the
//! one every output reads, so a settled verdict keeps its stated error rate however many
//! rounds it took and the report's marks, claims and "Until settled" lines agree.

use crate::metrics::{self, Direction, MetricId};
use crate::results::Results;
use crate::runner::more_rounds::Judge;
use crate::stats::paired::{self, Outcome, paired};
use crate::stats::region::{Judgement, Region, judge_sequential};
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
    /// Paired ratios, round order.
    pub ratios: Vec<f64>,
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

/// A claim's verdict from paired `ratios` at one look (`None`: still open): its direction,
/// then, where the wording gives a magnitude and the direction holds, its size band.
pub fn claim_verdict(
    ratios: &[f64],
    direction: &Region,
    size: Option<&Region>,
    rule: &Rule,
) -> Option<&'static str> {
    match judge_sequential(ratios, direction, rule) {
        Judgement::Outside => Some("refuted"),
        Judgement::Inside => match size.map(|b| judge_sequential(ratios, b, rule)) {
            None => Some("confirmed"),
            Some(Judgement::Inside) => Some("confirmed, size confirmed"),
            Some(Judgement::Outside) => Some("confirmed, size refuted"),
            Some(_) => None,
        },
        _ => None,
    }
}

impl Question {
    /// The verdict the first `n` rounds give (`None`: still open).
    pub fn verdict(&self, rule: &Rule, n: usize) -> Option<&'static str> {
        let r = &self.ratios[..n.min(self.ratios.len())];
        match self.test {
            Test::Claim { direction, size } => claim_verdict(r, &direction, size.as_ref(), rule),
            Test::Leader { margin, setups } => {
                let rule = Rule {
                    alpha: paired::leader_alpha(rule.alpha, setups),
                    ..*rule
                };
                match paired::look(r, &rule, margin).0 {
                    Outcome::Ahead => Some("leader"),
                    Outcome::Equivalent => Some("equivalent"),
                    Outcome::Behind | Outcome::NotSeparated => None,
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
}

/// Per round, one setup's values of one workload and metric.
fn per_round(
    results: &Results,
    setup: &str,
    workload: &str,
    metric: MetricId,
) -> BTreeMap<u32, f64> {
    paired::per_round(results, setup, workload, &metric.into())
}

/// Every measured claim (probes aside: a yes/no is settled by its one round).
fn claim_questions(results: &Results) -> Vec<Question> {
    let mut out = Vec::new();
    for c in crate::claims::all() {
        // A yes/no, or a count of what crash states showed, is what the filesystem does: its
        // one round settles it.
        if metrics::settles_in_one_round(&c.metric) {
            continue;
        }
        // A fact (usable space) is the same every round: nothing to settle.
        if crate::stats::judged::role_in(results, &c.workload, &c.metric) == metrics::Role::Fact {
            continue;
        }
        let find = |sel: &str| crate::claims::Selector::parse(sel).find(&results.setups);
        let Some(a) = find(&c.a) else { continue };
        let va = per_round(results, &a.name, &c.workload, c.metric);
        let mut setups = vec![a.name.clone()];
        let ratios = match &c.b {
            Some(sel) => {
                let Some(b) = find(sel) else { continue };
                setups.push(b.name.clone());
                paired(&va, &per_round(results, &b.name, &c.workload, c.metric))
            }
            None => va.values().copied().collect(),
        };
        if ratios.is_empty() {
            continue;
        }
        out.push(Question {
            workload: c.workload.clone(),
            what: c.id.clone(),
            setups,
            ratios,
            test: Test::Claim {
                direction: c.region(),
                size: c.size_region(),
            },
        });
    }
    out
}

/// The metric that decides workload `w` (as the recommendations choose it), if any.
fn deciding_metric(results: &Results, w: &str) -> Option<MetricId> {
    // An id this fsbench does not know never decides.
    let emitted: BTreeSet<MetricId> = results
        .samples
        .iter()
        .filter(|s| s.workload == w)
        .filter_map(|s| s.metric.id())
        .collect();
    emitted
        .into_iter()
        .filter_map(|m| {
            let role = crate::stats::judged::role_in(results, w, &m);
            // A fact decides a verdict's order, but is no question to settle.
            (role == metrics::Role::Measured)
                .then(|| metrics::deciding_rank(&m, role))
                .flatten()
                .map(|rank| (rank, m))
        })
        .min()
        .map(|(_, m)| m)
}

/// Every headline row with two setups or more: its leader (by the geometric mean over the
/// rounds every setup shares, as the report picks it) against each other setup, each the
/// question its mark answers.
fn headline_questions(results: &Results) -> Vec<Question> {
    let workloads: BTreeSet<&str> = results
        .samples
        .iter()
        .map(|s| s.workload.as_str())
        .collect();
    let mut out = Vec::new();
    for w in workloads {
        let Some(m) = deciding_metric(results, w) else {
            continue;
        };
        let direction = metrics::direction(&m);
        if direction == Direction::Neutral {
            continue;
        }
        let present: Vec<(BTreeMap<u32, f64>, &str)> = results
            .setups
            .iter()
            .map(|s| (per_round(results, &s.name, w, m), s.name.as_str()))
            .filter(|(v, _)| !v.is_empty())
            .collect();
        if present.len() < 2 {
            continue;
        }
        let shared: Vec<u32> = present[0]
            .0
            .keys()
            .copied()
            .filter(|r| present.iter().all(|(v, _)| v.contains_key(r)))
            .collect();
        let mut by_setup: Vec<(f64, BTreeMap<u32, f64>, &str)> = present
            .into_iter()
            .map(|(v, name)| {
                let logs: Vec<f64> = shared.iter().map(|r| v[r].ln()).collect();
                let key = if logs.is_empty() || logs.iter().any(|x| !x.is_finite()) {
                    let xs: Vec<f64> = v.values().copied().collect();
                    crate::stats::descriptive::median(&xs).ln()
                } else {
                    crate::stats::descriptive::mean(&logs)
                };
                (key, v, name)
            })
            .collect();
        // Best first.
        by_setup.sort_by(|a, b| {
            let (x, y) = (a.0, b.0);
            let ord = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            if direction == Direction::HigherIsBetter {
                ord.reverse()
            } else {
                ord
            }
        });
        let best = &by_setup[0];
        for other in &by_setup[1..] {
            // Oriented so that > 1 means the leader is better.
            let ratios = match direction {
                Direction::HigherIsBetter => paired(&best.1, &other.1),
                _ => paired(&other.1, &best.1),
            };
            out.push(Question {
                workload: w.to_string(),
                what: format!("headline {m}: {} vs {}", best.2, other.2),
                setups: vec![best.2.to_string(), other.2.to_string()],
                ratios,
                test: Test::Leader {
                    margin: paired::margin_of(results, &m.into()),
                    setups: by_setup.len(),
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
}
