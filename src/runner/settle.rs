//! `--until-settled`: after the minimum rounds, more interleaved rounds — every setup, only
//! the workloads of the questions still open — until each is settled, the budget is spent or
//! the round limit is reached.
//!
//! Which questions are open is not the runner's to know (claims and the headline sit above
//! it): the command installs a [`Judge`]. The statistic and its error rate under this optional
//! stopping are [`crate::stats::sequential`]'s.

use crate::plan::{Kind, Plan};
use crate::results::{Results, SettleRecord, SettleStop};
use crate::stats::sequential::Rule;
use std::collections::BTreeSet;

/// Decides, from the results so far, which workloads still carry an open question.
pub trait Judge {
    /// Workload ids whose claim or headline comparison `rule` has not settled yet in
    /// `results` (its samples so far, every round).
    fn open(&self, results: &Results, rule: &Rule) -> BTreeSet<String>;
}

/// The stopping rule of a plan's `--until-settled`.
pub fn rule(plan: &Plan) -> Option<Rule> {
    let s = plan.settle?;
    Some(Rule::new(plan.rounds as usize, s.max_rounds as usize))
}

/// The rule narrowed to the looks the budget leaves room for: fixed once, after the minimum
/// rounds and before the first look, from the time left and what a full round took — never
/// from the ratios — so spending α over these looks alone keeps its bound, and a run whose
/// budget fits three more rounds is not charged for thirteen looks it will never take.
pub fn looks_that_fit(rule: &Rule, budget_left_s: f64, full_round_s: f64) -> Rule {
    let fit = if full_round_s > 0.0 && budget_left_s.is_finite() {
        (budget_left_s.max(0.0) / full_round_s).floor() as usize
    } else {
        rule.max_rounds
    };
    Rule {
        max_rounds: rule
            .max_rounds
            .min(rule.min_rounds + fit)
            .max(rule.min_rounds),
        ..*rule
    }
}

/// The workloads an extra round runs so that `open` can be measured: the open ones, the
/// `layout` that writes their data file, the baselines their scaling factors divide by, and
/// every prerequisite (a workload whose results are not recorded).
pub fn workloads_for(plan: &Plan, open: &BTreeSet<String>) -> BTreeSet<String> {
    let mut run: BTreeSet<String> = open.clone();
    let chosen: Vec<_> = plan
        .workloads
        .iter()
        .filter(|w| open.contains(&w.id))
        .collect();
    let needs_file = chosen
        .iter()
        .any(|w| crate::workload::registry::of(w.kind).needs(w).data_file);
    for w in &plan.workloads {
        if !w.record || (needs_file && w.kind == Kind::Layout) {
            run.insert(w.id.clone());
        }
    }
    for w in chosen {
        if let Some(b) = &w.baseline {
            run.insert(b.clone());
        }
    }
    run
}

/// The record of a settled run for `results.json`.
pub fn record(
    plan: &Plan,
    configured: &Rule,
    rule: &Rule,
    rounds_run: u32,
    stop: SettleStop,
    open: &BTreeSet<String>,
    extra: Vec<(u32, Vec<String>)>,
) -> SettleRecord {
    SettleRecord {
        method: "Student-t interval on paired log ratios, O'Brien-Fleming-type boundary \
                 c*sqrt(N/n) over the looks the budget fits"
            .into(),
        alpha: rule.alpha,
        min_rounds: plan.rounds,
        max_rounds: configured.max_rounds as u32,
        last_look: Some(rule.max_rounds as u32),
        budget_s: plan.settle.map_or(0, |s| s.budget.as_secs()),
        rounds_run,
        stop,
        still_open: open.iter().cloned().collect(),
        extra_rounds: extra
            .into_iter()
            .map(|(round, workloads)| crate::results::ExtraRound { round, workloads })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::plan::resolve::{Source, resolve};
    use crate::plan::{Invocation, Overrides};

    fn resolved(o: Overrides) -> crate::Result<Invocation> {
        resolve(
            &Source::read(&o)?,
            &o,
            &crate::host::facts::HostFacts::fixed(),
            vec![],
        )
    }

    #[test]
    fn until_settled_resolves_with_its_defaults_and_refuses_bounds_alone() {
        let inv = resolved(Overrides {
            values: crate::plan::PlanValues {
                until_settled: true,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        let s = inv.plan.settle.unwrap();
        assert_eq!((s.budget.as_secs(), s.max_rounds), (1800, 15));
        assert_eq!(rule(&inv.plan).unwrap().looks(), 13);
        // Three more full rounds fit the budget: four looks (rounds 3 to 6), not thirteen.
        let fit = looks_that_fit(&rule(&inv.plan).unwrap(), 1000.0, 300.0);
        assert_eq!((fit.min_rounds, fit.max_rounds, fit.looks()), (3, 6, 4));
        assert_eq!(
            looks_that_fit(&fit, 1e9, 1.0).max_rounds,
            6,
            "never past --max-rounds"
        );
        assert_eq!(
            looks_that_fit(&fit, -5.0, 300.0).looks(),
            1,
            "the minimum is one look"
        );
        let e = resolved(Overrides {
            values: crate::plan::PlanValues {
                max_rounds: Some(5),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--until-settled"), "{e}");
        let e = resolved(Overrides {
            values: crate::plan::PlanValues {
                until_settled: true,
                rounds: Some(5),
                max_rounds: Some(4),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("below --rounds 5"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn an_extra_round_brings_the_layout_an_io_job_reads() {
        let inv = resolved(Overrides::default()).unwrap();
        let open: BTreeSet<String> = ["randread".to_string()].into();
        let run = workloads_for(&inv.plan, &open);
        assert!(run.contains("randread"));
        assert!(run.contains("layout"), "{run:?}");
        assert!(!run.contains("untar"), "{run:?}");
        let meta: BTreeSet<String> = ["untar".to_string()].into();
        assert!(!workloads_for(&inv.plan, &meta).contains("layout"));
    }
}
