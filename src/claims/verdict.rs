//! One verdict per claim from a results file.
//!
//! Rounds are interleaved across setups, so round r of setup a and round r of setup b ran side
//! by side under the same host conditions: the claim's ratio is taken per round (a_r / b_r),
//! and the one statistic of [`crate::stats::paired`] judges it: Student's t interval on the
//! paired log ratios at the run's error rate (one look at α = 10 % in a run of fixed rounds;
//! the stopping rule's looks in a `--until-settled` run, decided at the first look that
//! settles it — the same rule, the same looks as [`crate::report::open_questions`]). A claim is confirmed
//! when the whole interval lies inside the asserted range, refuted when it lies wholly
//! outside, and inconclusive when it straddles a bound or only one round exists (a probe's
//! yes/no excepted: one round of it settles the claim).

use super::{Claim, Selector};
use crate::metrics::MetricId;
use crate::results::{Results, SetupInfo};
use crate::stats::region::{self, Evidence, Judgement};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the measurement says about a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The whole measured range satisfies the claim.
    Confirmed,
    /// The whole measured range contradicts it.
    Refuted,
    /// The range straddles the claim's bound, or there is a single round.
    Inconclusive,
    /// The run lacks a setup, workload or metric the claim needs.
    NotMeasured,
    /// Measured, but on a host the claim does not speak about (zfs-fuse for an OpenZFS claim,
    /// a loop image for a device claim): never confirmed or refuted.
    NotComparable,
}

impl Outcome {
    /// Upper-case word for tables.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Confirmed => "confirmed",
            Outcome::Refuted => "refuted",
            Outcome::Inconclusive => "inconclusive",
            Outcome::NotMeasured => "not measured",
            Outcome::NotComparable => "not comparable here",
        }
    }
}

/// A claim and what this run says about it.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    /// The claim (id, text, seed figure…).
    #[serde(skip)]
    pub claim: Claim,
    /// Claim id (for JSON).
    pub id: String,
    /// The direction verdict: does the ratio lie on the claimed side (or, for a tie, in its
    /// range)?
    pub outcome: Outcome,
    /// The size verdict, when the wording gives a magnitude ([`Claim::size`]).
    pub size: Option<SizeVerdict>,
    /// Setup names used for a and b.
    pub setups: Vec<String>,
    /// Geometric mean of the paired per-round ratios judged (or of the values, for one-setup
    /// claims; a probe's yes/no: their median).
    pub measured: Option<f64>,
    /// Smallest and largest paired ratio.
    pub range: Option<(f64, f64)>,
    /// The t interval of the ratio the verdict was read from (`None`: one round, or a probe).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// Paired rounds.
    pub n: usize,
    /// The rounds the verdict was read at (the first settling look of a `--until-settled`
    /// run; else every paired round).
    #[serde(default)]
    pub rounds: usize,
    /// Probability that `interval` covers the true ratio at its look (1 − α per look).
    pub coverage: f64,
    /// Why it is not measured or inconclusive, in words.
    pub reason: String,
    /// The slope the ratios were adjusted with for the disk's own pace
    /// ([`crate::stats::adjusted`]); absent when the plain ratios were judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<f64>,
    /// The claim is about a fact (a metric the registry calls fixed, such as usable space after
    /// mkfs): checked against the recorded value, never judged, and not counted among the
    /// decided questions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fact: bool,
}

/// Whether the measured ratio is as large as the article's figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SizeVerdict {
    /// Confirmed (every round inside the band), refuted (none), inconclusive.
    pub outcome: Outcome,
    /// The article's figure as a ratio a/b ([`Claim::size`]).
    pub figure: f64,
    /// The band accepted around it ([`super::size_band`]).
    pub band: (f64, f64),
}

fn find_setup<'a>(results: &'a Results, sel: &str) -> Option<&'a SetupInfo> {
    Selector::parse(sel).find(&results.setups)
}

/// Why the run's kernel cannot test `claim` ([`Claim::kernel_before`]), if it cannot. Only a
/// run of the claim's workload is told so; any other run has not measured it.
fn removed_here(claim: &Claim, results: &Results) -> Option<String> {
    if !results.workloads.iter().any(|w| w.id == claim.workload) {
        return None;
    }
    let before = super::kernel_version(claim.kernel_before.as_deref()?)?;
    let why = claim
        .removed
        .as_deref()
        .unwrap_or("its setup no longer exists");
    match super::kernel_version(&results.host.kernel) {
        Some(have) if have < before => None,
        Some(_) => Some(format!(
            "{why}; this host runs Linux {}",
            results.host.kernel
        )),
        None => Some(format!("{why}; the run did not record its kernel")),
    }
}

fn values(results: &Results, setup: &str, workload: &str, metric: MetricId) -> BTreeMap<u32, f64> {
    results
        .samples
        .iter()
        .filter(|s| s.setup == setup && s.workload == workload && s.metric == metric)
        .filter(|s| s.value.is_finite())
        .map(|s| (s.round, s.value))
        .collect()
}

fn not_measured(claim: &Claim, reason: String) -> ClaimResult {
    let reason = match &claim.needs {
        Some(needs) => format!("{reason} (needs {needs})"),
        None => reason,
    };
    ClaimResult {
        claim: claim.clone(),
        id: claim.id.clone(),
        outcome: Outcome::NotMeasured,
        size: None,
        setups: Vec::new(),
        measured: None,
        range: None,
        interval: None,
        n: 0,
        rounds: 0,
        coverage: 0.0,
        reason,
        adjusted: None,
        fact: false,
    }
}

/// Whether the run's host facts meet every requirement of `claim`: `Err` names the first one
/// that fails and what the run had instead.
fn applies(claim: &Claim, results: &Results, setups: &[&SetupInfo]) -> Result<(), String> {
    use super::Requirement;
    for req in &claim.requires {
        let t = &results.target;
        let why = match req {
            Requirement::Openzfs => setups
                .iter()
                .find(|s| s.substitute().is_some())
                .map(|s| format!("{} ran on {}", s.name, s.implementation)),
            Requirement::RealDevice => {
                (t.kind != "device").then(|| format!("the target is {}", target_words(t)))
            }
            Requirement::Rotational => (t.rotational != Some(true))
                .then(|| format!("the target reports rotational={}", rot(t.rotational))),
            Requirement::NonRotational => (t.rotational != Some(false))
                .then(|| format!("the target reports rotational={}", rot(t.rotational))),
        };
        if let Some(why) = why {
            return Err(format!("needs {}: {why}", req.words()));
        }
    }
    Ok(())
}

fn target_words(t: &crate::results::TargetInfo) -> String {
    match t.kind.as_str() {
        "image" => "an image on a loop device".into(),
        "dir" => "a directory".into(),
        "file" => "a file".into(),
        "" => "not recorded".into(),
        other => other.into(),
    }
}

fn rot(r: Option<bool>) -> &'static str {
    match r {
        Some(true) => "1",
        Some(false) => "0",
        None => "unknown",
    }
}

/// Judge one claim against a results file.
pub fn judge(claim: &Claim, results: &Results) -> ClaimResult {
    if let Some(why) = removed_here(claim, results) {
        return ClaimResult {
            outcome: Outcome::NotComparable,
            ..not_measured(claim, why)
        };
    }
    let Some(a) = find_setup(results, &claim.a) else {
        return not_measured(claim, format!("no setup {} in this run", claim.a));
    };
    let b = match &claim.b {
        Some(sel) => match find_setup(results, sel) {
            Some(b) => Some(b),
            None => return not_measured(claim, format!("no setup {sel} in this run")),
        },
        None => None,
    };
    let va = values(results, &a.name, &claim.workload, claim.metric);
    if va.is_empty() {
        return not_measured(
            claim,
            format!(
                "{} has no {} / {} samples",
                a.name, claim.workload, claim.metric
            ),
        );
    }
    let mut adjusted = None;
    let ratios: crate::stats::adjusted::Ratios = match b {
        Some(b) => {
            let vb = values(results, &b.name, &claim.workload, claim.metric);
            if vb.is_empty() {
                return not_measured(
                    claim,
                    format!(
                        "{} has no {} / {} samples",
                        b.name, claim.workload, claim.metric
                    ),
                );
            }
            let r = crate::stats::adjusted::ratios(
                results,
                &claim.workload,
                &claim.metric.into(),
                &a.name,
                &b.name,
            );
            adjusted = r.beta;
            r
        }
        None => crate::stats::adjusted::Ratios::plain(va.values().copied().collect()),
    };
    let paired = &ratios.ratios;
    let mut setups = vec![a.name.clone()];
    setups.extend(b.map(|b| b.name.clone()));
    if paired.is_empty() {
        return not_measured(
            claim,
            "no round where both setups have a non-zero value".to_string(),
        );
    }
    let n = paired.len();
    let mut sorted = paired.clone();
    crate::stats::descriptive::sort(&mut sorted);
    let (lo, hi) = (sorted[0], sorted[n - 1]);
    let used: Vec<&SetupInfo> = std::iter::once(a).chain(b).collect();
    let (fact, exact) = exactness(claim, results);
    let rule = crate::stats::paired::rule_for(results, n);
    // The look the verdict is read at: the first that settles direction and size, else all.
    let at = if exact {
        n
    } else {
        (rule.min_rounds..n)
            .find(|&k| {
                let size = claim.size_region();
                claim_verdict(ratios.at(k), &claim.region(), size.as_ref(), &rule).is_some()
            })
            .unwrap_or(n)
    };
    // Each look on the ratios it judged (in a settled run, adjusted on the rounds up to it).
    let judged = ratios.at(at);
    // One setup's quantity that reads zero (a new snapshot's share of space) has no log: its
    // interval is the values' own, not a ratio's.
    let on_values = b.is_none() && judged.iter().any(|x| *x <= 0.0);
    let judge = |r: &region::Region| judge_region(judged, r, exact, on_values, &rule);
    let interval = (!exact)
        .then(|| interval_of(judged, on_values, &rule))
        .flatten();
    let measured = if exact || judged.iter().any(|x| *x <= 0.0) {
        crate::stats::descriptive::median_sorted(&sorted)
    } else {
        let logs: Vec<f64> = judged.iter().map(|x| x.ln()).collect();
        crate::stats::descriptive::mean(&logs).exp()
    };
    let result = |outcome, size, reason| ClaimResult {
        claim: claim.clone(),
        id: claim.id.clone(),
        outcome,
        size,
        setups: setups.clone(),
        measured: Some(measured),
        range: Some((lo, hi)),
        interval,
        n,
        rounds: at,
        coverage: if exact || interval.is_none() {
            0.0
        } else {
            1.0 - rule.alpha_at(at)
        },
        reason,
        adjusted,
        fact,
    };
    if let Err(why) = applies(claim, results, &used) {
        return result(Outcome::NotComparable, None, why);
    }
    let (outcome, reason) = match judge(&claim.region()) {
        Judgement::TooFew => (
            Outcome::Inconclusive,
            "one round only, or a value that is not positive: no interval to judge by".to_string(),
        ),
        Judgement::Inside => (Outcome::Confirmed, String::new()),
        Judgement::Outside => (Outcome::Refuted, String::new()),
        Judgement::Straddles => (
            Outcome::Inconclusive,
            format!("the t interval straddles {}", claim.expectation()),
        ),
    };
    let size = claim.size.zip(claim.size_region()).map(|(figure, band)| {
        let outcome = match judge(&band) {
            Judgement::Inside => Outcome::Confirmed,
            Judgement::Outside => Outcome::Refuted,
            Judgement::Straddles | Judgement::TooFew => Outcome::Inconclusive,
        };
        SizeVerdict {
            outcome,
            figure,
            band: (band.low, band.high),
        }
    });
    result(outcome, size, reason)
}

/// Whether `claim` is about a fact, and whether one round settles it. A probe's yes/no, or
/// what a run's crash states showed, is what the filesystem does, not a sample of a noisy
/// quantity: one round settles it (both run once per setup, in the capability phase). A fact
/// (usable space, fixed by mkfs) is the same every round: checked on its value, never given an
/// interval (a zero-width one would look like a precise measurement).
fn exactness(claim: &Claim, results: &Results) -> (bool, bool) {
    let fact = crate::stats::judged::role_in(results, &claim.workload, &claim.metric)
        == crate::metrics::Role::Fact;
    (
        fact,
        crate::metrics::settles_in_one_round(&claim.metric) || fact,
    )
}

/// Judge every shipped claim, contradicting claims next to each other.
pub fn evaluate(results: &Results) -> Vec<ClaimResult> {
    let claims = super::all();
    let mut out: Vec<ClaimResult> = Vec::with_capacity(claims.len());
    let mut placed = vec![false; claims.len()];
    for i in 0..claims.len() {
        if placed[i] {
            continue;
        }
        placed[i] = true;
        out.push(judge(&claims[i], results));
        if let Some(g) = &claims[i].group {
            for j in i + 1..claims.len() {
                if !placed[j] && claims[j].group.as_ref() == Some(g) {
                    placed[j] = true;
                    out.push(judge(&claims[j], results));
                }
            }
        }
    }
    out
}

/// What the judged values say about region `r`: one round settles an exact quantity; a
/// quantity of one setup that reads zero is judged on its own values' interval; a ratio on
/// the stopping rule's interval of its logs.
fn judge_region(
    judged: &[f64],
    r: &region::Region,
    exact: bool,
    on_values: bool,
    rule: &crate::stats::sequential::Rule,
) -> Judgement {
    if exact {
        region::judge(judged, r, Evidence::Exact)
    } else {
        interval_of(judged, on_values, rule)
            .map_or(Judgement::TooFew, |iv| region::judge_interval(iv, r))
    }
}

/// The interval a noisy claim is read on: of the values themselves (`on_values`), else of the
/// ratio (the stopping rule's, on logs).
fn interval_of(
    judged: &[f64],
    on_values: bool,
    rule: &crate::stats::sequential::Rule,
) -> Option<(f64, f64)> {
    if on_values {
        rule.interval_of_values(judged)
    } else {
        rule.interval(judged)
    }
}

/// A claim's verdict from paired `ratios` at one look (`None`: still open): its direction,
/// then, where the wording gives a magnitude and the direction holds, its size band.
pub fn claim_verdict(
    ratios: &[f64],
    direction: &crate::stats::region::Region,
    size: Option<&crate::stats::region::Region>,
    rule: &crate::stats::sequential::Rule,
) -> Option<&'static str> {
    use crate::stats::region::{Judgement, judge_sequential};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricKey;
    use crate::metrics::registry::{IOPS, LOST_ACKED_OPS};

    #[test]
    fn a_claim_naming_an_unregistered_metric_is_refused() {
        let claim = |metric: &str| {
            format!(
                "[[claim]]\nid = \"x\"\nsource = \"s\"\nclaim = \"c\"\na = \"ext4\"\n\
                 workload = \"randread\"\nmetric = \"{metric}\"\nassert = \"above\"\n\
                 threshold = 1.0\nseed_figure = \"f\"\nseed_ratio = 1.0\n"
            )
        };
        let parse = |t: &str| toml::from_str::<crate::claims::ClaimsFile>(t);
        assert_eq!(parse(&claim("iops")).unwrap().claim[0].metric, IOPS);
        let err = parse(&claim("iops_but_new"))
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains("not in metrics::registry"), "{err}");
    }
    use crate::results::Sample;

    fn setup(name: &str, fs: &str, opts: &[(&str, &str)]) -> SetupInfo {
        SetupInfo {
            name: name.into(),
            fs: fs.into(),
            options: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    fn results(setups: Vec<SetupInfo>, samples: &[(&str, &str, &str, u32, f64)]) -> Results {
        Results {
            setups,
            samples: samples
                .iter()
                .map(|&(setup, workload, metric, round, value)| Sample {
                    setup: setup.into(),
                    workload: workload.into(),
                    metric: MetricKey::parse(metric),
                    unit: String::new(),
                    round,
                    value,
                })
                .collect(),
            ..Default::default()
        }
    }

    fn claim(id: &str) -> Claim {
        super::super::all()
            .into_iter()
            .find(|c| c.id == id)
            .unwrap()
    }

    fn rm(ext4: [f64; 3], xfs: [f64; 3]) -> Results {
        let mut s = Vec::new();
        for r in 0..3 {
            s.push(("ext4", "rm-tree", "seconds", r as u32 + 1, ext4[r]));
            s.push(("xfs", "rm-tree", "seconds", r as u32 + 1, xfs[r]));
        }
        results(
            vec![setup("ext4", "ext4", &[]), setup("xfs", "xfs", &[])],
            &s,
        )
    }

    /// One round of crash states per setup, as `fsbench run --only crash-…` records them.
    fn crash(kernel: &str, rows: &[(&str, &str, &str, f64)]) -> Results {
        let setups = rows
            .iter()
            .map(|(name, mount, _, _)| setup(name, "ext4", &[("mount", mount)]))
            .collect();
        let samples: Vec<(&str, &str, &str, u32, f64)> = rows
            .iter()
            .map(|(name, _, w, lost)| (*name, *w, "lost_acked_ops", 1, *lost))
            .collect();
        let mut r = results(setups, &samples);
        r.host.kernel = kernel.into();
        r
    }

    #[test]
    fn crash_claims_are_settled_by_one_round_of_states() {
        let r = crash(
            "6.18.0",
            &[
                ("nb", "data=writeback,barrier=0", "crash-fsync", 7.0),
                ("wb", "data=writeback", "crash-append", 0.0),
            ],
        );
        let lost = judge(&claim("ext4-nobarrier-loses-fsynced"), &r);
        assert_eq!(lost.outcome, Outcome::Confirmed, "{lost:?}");
        assert_eq!(lost.setups, ["nb"]);
        let kept = judge(&claim("ext4-writeback-keeps-fsynced"), &r);
        assert_eq!(kept.outcome, Outcome::Confirmed, "{kept:?}");
        assert_eq!(
            kept.setups,
            ["wb"],
            "the plain data=writeback setup, not the other"
        );
        // The claims can fail: barrier=0 that lost nothing, data=writeback that lost some.
        let r = crash(
            "6.18.0",
            &[
                ("nb", "data=writeback,barrier=0", "crash-fsync", 0.0),
                ("wb", "data=writeback", "crash-append", 2.0),
            ],
        );
        assert_eq!(
            judge(&claim("ext4-nobarrier-loses-fsynced"), &r).outcome,
            Outcome::Refuted
        );
        assert_eq!(
            judge(&claim("ext4-writeback-keeps-fsynced"), &r).outcome,
            Outcome::Refuted
        );
    }

    #[test]
    fn xfs_nobarrier_is_not_comparable_on_a_kernel_without_it() {
        let c = claim("xfs-nobarrier-loses-fsynced");
        // A run without its workload has not measured it.
        let mut r = crash("6.18.0-1-amd64", &[]);
        assert_eq!(judge(&c, &r).outcome, Outcome::NotMeasured);
        // A run of it, whatever setups it holds: the option does not exist on this kernel.
        r.workloads.push(crate::results::WorkloadInfo {
            id: "crash-fsync".into(),
            kind: "crash".into(),
            params: serde_json::Value::Null,
            fio_command: None,
        });
        assert_eq!(judge(&c, &r).outcome, Outcome::NotComparable);
        r.setups
            .push(setup("xfs-nb", "xfs", &[("mount", "nobarrier")]));
        r.samples.push(Sample {
            setup: "xfs-nb".into(),
            workload: "crash-fsync".into(),
            metric: LOST_ACKED_OPS.into(),
            unit: String::new(),
            round: 1,
            value: 3.0,
        });
        let v = judge(&c, &r);
        assert_eq!(v.outcome, Outcome::NotComparable, "{v:?}");
        assert!(v.reason.contains("4.19"), "{}", v.reason);
        assert!(v.reason.contains("6.18.0-1-amd64"), "{}", v.reason);
        r.host.kernel = String::new();
        assert_eq!(judge(&c, &r).outcome, Outcome::NotComparable);
        // On an older kernel it is measured like any other.
        r.host.kernel = "4.14.0".into();
        assert_eq!(judge(&c, &r).outcome, Outcome::Confirmed);
    }

    #[test]
    fn a_share_of_zero_in_every_round_is_judged_on_the_values() {
        // A new Btrfs snapshot's space share: exactly 0 every round (no log to take).
        let zero = |v: [f64; 3]| {
            let s: Vec<_> = (0..3)
                .map(|r| {
                    (
                        "btrfs",
                        "backup",
                        "snapshot_space_share",
                        r as u32 + 1,
                        v[r],
                    )
                })
                .collect();
            results(vec![setup("btrfs", "btrfs", &[])], &s)
        };
        let c = claim("btrfs-snapshot-free-at-creation");
        let r = judge(&c, &zero([0.0, 0.0, 0.0]));
        assert_eq!(r.outcome, Outcome::Confirmed, "{r:?}");
        assert_eq!(r.interval, Some((0.0, 0.0)));
        // One round at 0, two well above the bound: the values' own interval straddles it.
        let r = judge(&c, &zero([0.0, 0.03, 0.05]));
        assert_eq!(r.outcome, Outcome::Inconclusive, "{r:?}");
        // Every round above it, one at 0.0 still: refuted when the interval clears the bound.
        let r = judge(&c, &zero([0.0, 0.5, 0.5]));
        assert_ne!(r.outcome, Outcome::Confirmed, "{r:?}");
    }

    #[test]
    fn confirmed_when_every_round_agrees() {
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([1.9, 2.0, 2.1], [4.3, 4.4, 4.0]),
        );
        assert_eq!(r.outcome, Outcome::Confirmed, "{r:?}");
        assert_eq!(r.n, 3);
        // One look at α = 10 %: a 90 % t interval, inside the range of the rounds.
        assert!((r.coverage - 0.9).abs() < 1e-12);
        let (ilo, ihi) = r.interval.unwrap();
        assert!(ilo < r.measured.unwrap() && r.measured.unwrap() < ihi);
        let (lo, hi) = r.range.unwrap();
        assert!(lo < r.measured.unwrap() && r.measured.unwrap() < hi);
    }

    #[test]
    fn direction_and_size_are_two_verdicts() {
        // ext4 1.47x faster: the direction of "about 2.3x faster" holds, its size does not.
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([2.0, 2.1, 1.9], [2.9, 3.1, 2.8]),
        );
        assert_eq!(r.outcome, Outcome::Confirmed, "{r:?}");
        let z = r.size.expect("a sized claim");
        assert_eq!(z.outcome, Outcome::Refuted, "{r:?}");
        assert!(z.band.0 < 0.435 && 0.435 < z.band.1);
        let text = super::super::render::size_text(&r).unwrap();
        assert!(
            text.starts_with("direction confirmed, size refuted: 0.68 against the article's 0.43"),
            "{text}"
        );
        assert!(text.contains("1.47× against 2.30×"), "{text}");
        assert_eq!(super::super::render::word(&r), "size refuted");
        // 2.3x in every round: both hold.
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([2.0, 2.1, 1.9], [4.6, 4.8, 4.4]),
        );
        assert_eq!(r.size.unwrap().outcome, Outcome::Confirmed, "{r:?}");
        assert_eq!(super::super::render::word(&r), "confirmed");
    }

    #[test]
    fn a_claim_is_judged_only_where_it_applies() {
        let mut zfs = setup("zfs", "zfs", &[]);
        zfs.implementation = "zfs-fuse 0.7.2".into();
        let mut s = Vec::new();
        for r in 1..=3 {
            s.push(("zfs", "fsync-write", "iops", r, 300.0));
            s.push(("ext4", "fsync-write", "iops", r, 200.0));
        }
        let mut res = results(vec![zfs, setup("ext4", "ext4", &[])], &s);
        let r = judge(&claim("zfs-fsync-beats-ext4"), &res);
        assert_eq!(r.outcome, Outcome::NotComparable, "{r:?}");
        assert!(
            r.reason.contains("OpenZFS") && r.reason.contains("zfs-fuse"),
            "{}",
            r.reason
        );
        assert!(r.measured.is_some(), "the figures are still shown");
        res.setups[0].implementation = "OpenZFS 2.2".into();
        assert_eq!(
            judge(&claim("zfs-fsync-beats-ext4"), &res).outcome,
            Outcome::Confirmed
        );
        // A scheduler claim on a loop image is not comparable; on a device it is judged.
        let mut s = Vec::new();
        for r in 1..=3 {
            s.push(("bfq", "randread", "lat_p99_ms", r, 2.0));
            s.push(("none", "randread", "lat_p99_ms", r, 1.0));
        }
        let mut res = results(
            vec![
                setup("bfq", "ext4", &[("sched", "bfq")]),
                setup("none", "ext4", &[("sched", "none")]),
            ],
            &s,
        );
        res.target.kind = "image".into();
        let r = judge(&claim("sched-bfq-adds-latency"), &res);
        assert_eq!(r.outcome, Outcome::NotComparable, "{r:?}");
        assert!(r.reason.contains("loop device"), "{}", r.reason);
        res.target.kind = "device".into();
        assert_eq!(
            judge(&claim("sched-bfq-adds-latency"), &res).outcome,
            Outcome::Confirmed
        );
    }

    #[test]
    fn refuted_when_every_round_disagrees() {
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([4.0, 4.1, 4.2], [2.0, 2.1, 1.9]),
        );
        assert_eq!(r.outcome, Outcome::Refuted, "{r:?}");
    }

    #[test]
    fn inconclusive_at_the_boundary() {
        // Round 2's ratio is above 1, the others below: the range straddles the bound.
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([1.9, 2.2, 2.0], [2.0, 2.0, 2.1]),
        );
        assert_eq!(r.outcome, Outcome::Inconclusive, "{r:?}");
        assert!(r.reason.contains("< 1"), "{}", r.reason);
        // A ratio exactly at the bound in every round is not "below" it: refuted.
        let r = judge(
            &claim("ext4-rm-faster-than-xfs"),
            &rm([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]),
        );
        assert_eq!(r.outcome, Outcome::Refuted, "{r:?}");
    }

    #[test]
    fn not_measured_names_what_is_missing() {
        let r = judge(&claim("zfs-16k-randread"), &rm([1.0; 3], [1.0; 3]));
        assert_eq!(r.outcome, Outcome::NotMeasured);
        assert!(r.reason.contains("zfs+recordsize:16K"), "{}", r.reason);
        let r = judge(&claim("ext4-xfs-randread-tie"), &rm([1.0; 3], [1.0; 3]));
        assert_eq!(r.outcome, Outcome::NotMeasured);
        assert!(r.reason.contains("randread / iops"), "{}", r.reason);
        // A plain selector does not pick a variant.
        let res = results(
            vec![setup("e", "ext4", &[("mount", "data=writeback")])],
            &[("e", "randread", "iops", 1, 5.0)],
        );
        assert_eq!(
            judge(&claim("ext4-xfs-randread-tie"), &res).outcome,
            Outcome::NotMeasured
        );
    }

    #[test]
    fn single_setup_claims_and_single_rounds() {
        let res = results(
            vec![setup("b", "btrfs", &[])],
            &[
                ("b", "probe-corruption", "detected", 1, 1.0),
                ("b", "probe-corruption", "detected", 2, 1.0),
            ],
        );
        assert_eq!(
            judge(&claim("btrfs-detects-corruption"), &res).outcome,
            Outcome::Confirmed
        );
        // Probes run once per setup: one round of a yes/no settles it.
        let probed_once = results(
            vec![setup("b", "btrfs", &[])],
            &[("b", "probe-corruption", "detected", 1, 1.0)],
        );
        let r = judge(&claim("btrfs-detects-corruption"), &probed_once);
        assert_eq!((r.outcome, r.n), (Outcome::Confirmed, 1));
        let one = rm([1.0, f64::NAN, f64::NAN], [2.0, f64::NAN, f64::NAN]);
        let r = judge(&claim("ext4-rm-faster-than-xfs"), &one);
        assert_eq!(r.outcome, Outcome::Inconclusive);
        assert_eq!(r.n, 1);
    }

    #[test]
    fn contradicting_claims_are_adjacent() {
        let all = evaluate(&rm([1.0; 3], [1.0; 3]));
        let pos: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, r)| r.claim.group.as_deref() == Some("btrfs-randwrite"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(pos.len(), 3);
        assert!(pos.windows(2).all(|w| w[1] == w[0] + 1), "{pos:?}");
    }
}
