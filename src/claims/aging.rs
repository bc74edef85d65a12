//! Fresh against aged (docs/aging.md): each aged setup (`age=`) beside its fresh twin (the
//! setup of the same filesystem with the same options but no aging), the aged/fresh ratio
//! of every judged headline metric with its interval, and where aging changes the ranking
//! of the filesystems.
//!
//! The ratio is paired by round like every comparison: rounds are interleaved, so round r of
//! the fresh and of the aged setup ran under the same host conditions, and the judgement is
//! [`crate::stats::paired`]'s, the one statistic every other row uses.

use crate::metrics::{self, Direction, MetricKey, Role};
use crate::results::{Results, SetupInfo};
use crate::stats::paired::{self, Judgement, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The section's title.
pub const TITLE: &str = "Fresh against aged";

/// One metric of one aged setup against its fresh twin.
#[derive(Debug, Clone, PartialEq)]
pub struct AgedRatio {
    /// The fresh setup's name.
    pub fresh: String,
    /// The aged setup's name.
    pub aged: String,
    /// Workload id.
    pub workload: String,
    /// The metric.
    pub metric: MetricKey,
    /// aged against fresh ([`paired::compare`]: a ratio above 1 means the aged setup did
    /// better, whatever the metric's direction).
    pub judgement: Judgement,
}

fn is_aged(s: &SetupInfo) -> bool {
    s.options
        .contains_key(crate::fs::setup::variant_keys::AGE_KEY)
}

/// The fresh twin of an aged setup: the same filesystem and options without `age`, else
/// the first fresh setup of the same filesystem.
pub fn fresh_twin<'a>(results: &'a Results, aged: &SetupInfo) -> Option<&'a SetupInfo> {
    let mut want = aged.options.clone();
    want.remove(crate::fs::setup::variant_keys::AGE_KEY);
    let fresh = || {
        results
            .setups
            .iter()
            .filter(|s| !is_aged(s) && s.fs == aged.fs)
    };
    fresh()
        .find(|s| s.options == want)
        .or_else(|| fresh().next())
}

fn rounds(
    results: &Results,
    setup: &str,
    workload: &str,
    metric: &MetricKey,
) -> BTreeMap<u32, f64> {
    results
        .samples
        .iter()
        .filter(|s| s.setup == setup && s.workload == workload && &s.metric == metric)
        .filter(|s| s.value.is_finite())
        .map(|s| (s.round, s.value))
        .collect()
}

/// The judged headline metrics recorded in `results`, per workload, in the file's order.
fn judged(results: &Results) -> Vec<(String, MetricKey)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for s in &results.samples {
        let d = metrics::def(&s.metric);
        // The job's shape decides between IOPS and MiB/s (a 1 MiB job is judged in MiB/s).
        if crate::stats::judged::role_in(results, &s.workload, &s.metric) == Role::Measured
            && d.headline
            && d.direction != Direction::Neutral
            && seen.insert((s.workload.clone(), s.metric.to_string()))
        {
            out.push((s.workload.clone(), s.metric.clone()));
        }
    }
    out
}

/// Every aged setup's ratios against its fresh twin.
pub fn fresh_vs_aged(results: &Results) -> Vec<AgedRatio> {
    let mut out = Vec::new();
    let metrics = judged(results);
    for aged in results.setups.iter().filter(|s| is_aged(s)) {
        let Some(fresh) = fresh_twin(results, aged) else {
            continue;
        };
        for (w, m) in &metrics {
            let j = paired::compare(results, w, m, &aged.name, &fresh.name);
            if j.rounds > 0 && j.ratio.is_finite() {
                out.push(AgedRatio {
                    fresh: fresh.name.clone(),
                    aged: aged.name.clone(),
                    workload: w.clone(),
                    metric: m.clone(),
                    judgement: j,
                });
            }
        }
    }
    out
}

/// One metric on which aging changed the order of the filesystems' medians.
#[derive(Debug, Clone)]
pub struct RankingChange {
    /// The sentence: both orders with the percentages.
    pub text: String,
    /// Whether the paired rounds decide the fresh pair one way and the aged pair the other.
    pub beyond_noise: bool,
}

/// Where aging changes the order of the filesystems on a metric: the fresh setups ranked
/// by their median, then their aged twins; one sentence per change.
pub fn ranking_changes(results: &Results, ratios: &[AgedRatio]) -> Vec<RankingChange> {
    let mut out = Vec::new();
    let mut keys: Vec<(&str, &MetricKey)> = ratios
        .iter()
        .map(|r| (r.workload.as_str(), &r.metric))
        .collect();
    keys.dedup();
    let mut done = BTreeSet::new();
    for (w, m) in keys {
        if !done.insert((w.to_string(), m.to_string())) {
            continue;
        }
        let pairs: Vec<&AgedRatio> = ratios
            .iter()
            .filter(|r| r.workload == w && &r.metric == m)
            .collect();
        if pairs.len() < 2 {
            continue;
        }
        let med = |setup: &str| {
            let v: Vec<f64> = rounds(results, setup, w, m).into_values().collect();
            crate::stats::descriptive::median(&v)
        };
        let higher = metrics::def(m).direction == Direction::HigherIsBetter;
        let order = |names: Vec<(String, f64)>| {
            let mut v = names;
            v.sort_by(|a, b| {
                if higher {
                    b.1.total_cmp(&a.1)
                } else {
                    a.1.total_cmp(&b.1)
                }
            });
            v
        };
        let fresh = order(
            pairs
                .iter()
                .map(|p| (p.fresh.clone(), med(&p.fresh)))
                .collect(),
        );
        let aged = order(
            pairs
                .iter()
                .map(|p| (p.aged.clone(), med(&p.aged)))
                .collect(),
        );
        let twin_of = |aged: &str| {
            pairs
                .iter()
                .find(|p| p.aged == aged)
                .map(|p| p.fresh.clone())
        };
        let aged_as_fresh: Vec<String> = aged.iter().filter_map(|(a, _)| twin_of(a)).collect();
        let fresh_names: Vec<String> = fresh.iter().map(|(f, _)| f.clone()).collect();
        if aged_as_fresh != fresh_names {
            let beyond_noise =
                swap_beyond_noise(results, w, m, &fresh_names, &aged_as_fresh, &pairs);
            let noise = if beyond_noise {
                "beyond noise: both orders are decided by the paired rounds"
            } else {
                "not beyond noise: the paired rounds do not decide both orders"
            };
            let show = |v: &[(String, f64)]| {
                let best = v[0].1;
                v.iter()
                    .map(|(n, x)| {
                        if *x == best {
                            n.clone()
                        } else {
                            format!("{n} {:+.0} %", 100.0 * (x / best - 1.0))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" > ")
            };
            out.push(RankingChange {
                text: format!(
                    "aging changes the ranking on {w} {}: fresh {}; aged {} ({noise})",
                    metrics::label(m),
                    show(&fresh),
                    show(&aged)
                ),
                beyond_noise,
            });
        }
    }
    out
}

/// Whether a swap is beyond noise: for the first two setups whose order aging swapped, the
/// one paired statistic ([`paired::compare`]) decides the fresh pair one way and the aged
/// pair the other.
fn swap_beyond_noise(
    results: &Results,
    w: &str,
    m: &MetricKey,
    fresh_order: &[String],
    aged_order: &[String],
    pairs: &[&AgedRatio],
) -> bool {
    let Some(k) = (0..fresh_order.len()).find(|&i| fresh_order[i] != aged_order[i]) else {
        return false;
    };
    let (x, y) = (&fresh_order[k], &aged_order[k]);
    let aged_of = |f: &String| pairs.iter().find(|p| &p.fresh == f).map(|p| p.aged.clone());
    let (Some(ax), Some(ay)) = (aged_of(x), aged_of(y)) else {
        return false;
    };
    let fresh = paired::compare(results, w, m, x, y).outcome;
    let aged = paired::compare(results, w, m, &ax, &ay).outcome;
    matches!(
        (fresh, aged),
        (Outcome::Ahead, Outcome::Behind) | (Outcome::Behind, Outcome::Ahead)
    )
}

/// The outcome in the section's words (the aged setup is `a`).
fn aged_words(o: Outcome) -> &'static str {
    match o {
        Outcome::Ahead => "better aged, beyond noise",
        Outcome::Behind => "worse aged, beyond noise",
        Outcome::Equivalent => "equivalent",
        Outcome::NotSeparated => "not separated",
    }
}

/// The section as Markdown (empty when the run has no aged setup with a fresh twin).
pub fn markdown(results: &Results) -> String {
    let ratios = fresh_vs_aged(results);
    if ratios.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## {TITLE}\n\nEach aged setup against its fresh twin, judged like every other comparison \
         (the paired per-round ratios, docs/reports.md): + is better aged, − worse, with the \
         interval at the stated coverage.\n\n\
         | Aged | Fresh | Test | aged vs fresh (interval) | judgement | rounds (coverage) |\n|---|---|---|---|---|---|\n"
    );
    for r in &ratios {
        let _ = writeln!(
            out,
            "| {} | {} | {} {} {} | {} | {} | {} ({:.0} %) |",
            r.aged,
            r.fresh,
            r.workload,
            metrics::label(&r.metric),
            metrics::def(&r.metric).direction.arrow(),
            paired::percent_text(&r.judgement),
            aged_words(r.judgement.outcome),
            r.judgement.rounds,
            100.0 * (1.0 - r.judgement.alpha)
        );
    }
    let changes = ranking_changes(results, &ratios);
    out.push('\n');
    if changes.is_empty() {
        out.push_str("Aging leaves the ranking of the filesystems as it was fresh.\n");
    }
    for c in changes {
        let _ = writeln!(out, "- {}", c.text);
    }
    out.push('\n');
    out
}

/// The ranking changes beyond noise as terminal lines, and a count of the others (empty when
/// there are none): a reordering of medians the paired rounds do not decide is not news, and
/// a run of six setups has a dozen of them.
pub fn text(results: &Results) -> String {
    let ratios = fresh_vs_aged(results);
    let mut out = String::new();
    let (beyond, within): (Vec<_>, Vec<_>) = ranking_changes(results, &ratios)
        .into_iter()
        .partition(|c| c.beyond_noise);
    for c in &beyond {
        let _ = writeln!(out, "  • {}", c.text);
    }
    if !within.is_empty() {
        let _ = writeln!(
            out,
            "  • aging reorders the medians on {} other metric(s), none beyond noise (the \
             Markdown report lists them)",
            within.len()
        );
    }
    if !out.is_empty() {
        out.insert_str(0, &format!("{TITLE}\n"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The claims `--profile aged` measures (not the claims profile: they need aged twins).
    pub(in crate::claims) const AGED_PROFILE_CLAIMS: &[&str] = &[
        "btrfs-aged-seqread-slower",
        "xfs-aged-fewer-extents-than-ext4",
    ];

    #[test]
    fn the_aged_profile_has_what_its_claims_select() {
        let plan = crate::plan::profiles::load("aged").unwrap();
        let twins = plan.aged_twins.expect("aged_twins");
        let ids: Vec<&str> = plan.workloads.iter().map(|w| w.id.as_str()).collect();
        for id in AGED_PROFILE_CLAIMS {
            let c = super::super::all()
                .into_iter()
                .find(|c| c.id == *id)
                .expect(id);
            // `age` is the runner's own record (runner::age), not a plan workload.
            assert!(
                c.workload == "age" || ids.contains(&c.workload.as_str()),
                "{id}"
            );
            for sel in std::iter::once(&c.a).chain(c.b.as_ref()) {
                let s = super::super::Selector::parse(sel);
                if let Some((_, v)) = s.options.iter().find(|(k, _)| k == "age") {
                    assert_eq!(*v, twins, "{id}: {sel} selects the profile's twins");
                }
            }
        }
    }

    #[test]
    fn a_consistent_drop_with_aging_is_judged_worse_beyond_noise() {
        let rule = crate::stats::sequential::Rule {
            alpha: crate::stats::sequential::DEFAULT_ALPHA,
            min_rounds: 3,
            max_rounds: 3,
        };
        // Aged at half the fresh rate in every round: worse beyond noise.
        let j = paired::judge(&[0.5, 0.52, 0.49], &rule, 0.10);
        assert_eq!(j.outcome, Outcome::Behind);
        assert_eq!(aged_words(j.outcome), "worse aged, beyond noise");
        // A round that disagrees leaves it open.
        let j = paired::judge(&[0.5, 1.3, 0.8], &rule, 0.10);
        assert_eq!(j.outcome, Outcome::NotSeparated);
    }
}
