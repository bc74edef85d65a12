//! `--until-settled`: after the minimum rounds, more interleaved rounds — only the setups and
//! workloads of the questions still open (a question compares two setups: each setup runs the
//! workloads of its own open questions) — until each is settled, the budget is spent or the
//! round limit is reached. An extra round runs as the minimum rounds did: by steps when the
//! plan's rounds are (each open step on every setup that runs it, back to back), else setup
//! by setup. A setup missing from an extra round has no samples in it, and the paired
//! statistic pairs only the rounds both sides of a question ran.
//!
//! Which questions are open is not the runner's to know (claims and the headline sit above
//! it): the command installs a [`Judge`]. The statistic and its error rate under this optional
//! stopping are [`crate::stats::sequential`]'s.

use crate::plan::{Kind, Plan};
use crate::results::{Results, SettleRecord, SettleStop};
use crate::stats::sequential::Rule;
use std::collections::{BTreeMap, BTreeSet};

/// Decides, from the results so far, which workloads still carry an open question, and
/// between which setups.
pub trait Judge {
    /// Workload id → the setup names of its claims and headline comparisons `rule` has not
    /// settled yet in `results` (its samples so far, every round).
    fn open(&self, results: &Results, rule: &Rule) -> BTreeMap<String, BTreeSet<String>>;

    /// How many questions `results` asks (decided or not): the m a per-run error control
    /// shares α over ([`crate::stats::family`]).
    fn questions(&self, results: &Results) -> usize;
}

/// What each setup runs in an extra round for the `open` questions: setup name → its open
/// workloads with what they need ([`workloads_for`]); a setup no open question names is
/// left out.
pub fn per_setup(
    plan: &Plan,
    open: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    plan.setups
        .iter()
        .filter_map(|s| {
            let mine: BTreeSet<String> = open
                .iter()
                .filter(|(_, setups)| setups.contains(&s.name))
                .map(|(w, _)| w.clone())
                .collect();
            (!mine.is_empty()).then(|| (s.name.clone(), workloads_for(plan, &mine)))
        })
        .collect()
}

/// The stopping rule of a plan's `--until-settled`.
pub fn rule(plan: &Plan) -> Option<Rule> {
    let s = plan.settle?;
    Some(Rule::new(plan.rounds as usize, s.max_rounds as usize))
}

/// The rule narrowed to the looks the budget leaves room for: fixed once, after the minimum
/// rounds and before the first look, from the time left and what an extra round will take
/// (`round_s`: the runner estimates the first extra round as it would really run, with the
/// setups and workloads still open under the configured rule, whose boundary is the
/// strictest, so no narrower rule leaves more open) — never from how close a ratio is to a
/// bound — so spending α over these looks alone keeps its bound, and a run whose budget fits
/// three more rounds is not charged for thirteen looks it will never take.
pub fn looks_that_fit(rule: &Rule, budget_left_s: f64, round_s: f64) -> Rule {
    let fit = if round_s > 0.0 && budget_left_s.is_finite() {
        (budget_left_s.max(0.0) / round_s).floor() as usize
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
    extra: Vec<crate::results::ExtraRound>,
) -> SettleRecord {
    SettleRecord {
        method: "Student-t interval on paired log ratios, Lan-DeMets O'Brien-Fleming-type \
                 alpha spending on the p-value scale over the looks the budget fits"
            .into(),
        // The level asked for: a per-run control divides it by the run's questions wherever
        // the rule is read (`stats::paired::rule_for`).
        alpha: configured.alpha,
        min_rounds: plan.rounds,
        max_rounds: configured.max_rounds as u32,
        last_look: Some(rule.max_rounds as u32),
        budget_s: plan.settle.map_or(0, |s| s.budget.as_secs()),
        rounds_run,
        stop,
        still_open: open.iter().cloned().collect(),
        extra_rounds: extra,
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
                rounds: Some(3),
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

    #[test]
    fn an_extra_round_runs_only_the_setups_an_open_question_compares() {
        let inv = resolved(Overrides {
            fs: vec!["ext4,xfs,btrfs".into()],
            ..Default::default()
        })
        .unwrap();
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let open: BTreeMap<String, BTreeSet<String>> = [
            ("randread".to_string(), set(&["ext4", "xfs"])),
            ("untar".to_string(), set(&["xfs", "btrfs"])),
        ]
        .into();
        let by = per_setup(&inv.plan, &open);
        assert_eq!(by.keys().collect::<Vec<_>>(), ["btrfs", "ext4", "xfs"]);
        // ext4 runs randread (and its layout), not untar; btrfs untar only; xfs both.
        assert!(by["ext4"].contains("randread") && by["ext4"].contains("layout"));
        assert!(!by["ext4"].contains("untar"), "{by:?}");
        assert!(by["btrfs"].contains("untar") && !by["btrfs"].contains("randread"));
        assert!(by["xfs"].contains("untar") && by["xfs"].contains("randread"));
        // Only ext4 against xfs open: btrfs sits the extra round out.
        let open: BTreeMap<String, BTreeSet<String>> =
            [("randread".to_string(), set(&["ext4", "xfs"]))].into();
        assert!(!per_setup(&inv.plan, &open).contains_key("btrfs"));
    }
}
