//! `fsbench compare`: match setups and workloads of two results files, and say for each metric
//! how much it moved, whether that is more than noise, more than the host's drift, and what
//! the rounds could have detected at all.
//!
//! This file builds the comparison *model* (what is judged and the numbers); [`render`] only
//! formats it (terminal, Markdown, JSON); [`forest`] draws the forest plot and [`html`] the page.
//! [`provenance`] says when the two ran and what differs besides the numbers; [`split`] makes
//! an A/A pair out of one interleaved run (odd against even rounds).
//!
//! Refuses (exit 2) when a workload present in both files ran with different parameters:
//! comparing a 4k random read with a 16k one would be a wrong answer, not a small one.

pub mod forest;
pub mod html;
pub mod provenance;
pub mod render;
pub mod split;

pub use html::render_html;
pub use render::{render_json, render_markdown, render_text};

use crate::metrics::{self, MetricKey};
use crate::results::Results;
use crate::stats::change::{self, ALPHA, Judgement};
use crate::stats::{descriptive, fdr, judged};
use provenance::Timing;
use serde::Serialize;

/// Whether a setup is judged or serves as the control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Judged: better, worse or no change (against the control's drift when there is one).
    Tested,
    /// Did not change between A and B: its movement is the drift the others are judged against.
    Control,
}

/// How the control setups were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlChoice {
    /// Some setups changed and some did not: the unchanged ones are the control.
    Automatic,
    /// Named with `--control`.
    Explicit,
    /// No control: every setup changed, or nothing fsbench records differs at all.
    None,
}

/// A setup present in both files.
#[derive(Debug, Clone, Serialize)]
pub struct SetupMatch {
    /// Setup name.
    pub name: String,
    /// Judged or control.
    pub role: Role,
    /// What differs in its configuration (empty: unchanged), host-wide differences excluded.
    pub differences: Vec<String>,
}

/// The outcome for one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Moved the good way, beyond noise (and beyond the control's drift, when there is one).
    Better,
    /// Moved the bad way, beyond noise (and drift).
    Worse,
    /// Moved beyond noise, on a metric without a better direction.
    Changed,
    /// Within noise (and drift).
    NoChange,
    /// A control setup that moved beyond noise: drift, since nothing changed in it.
    Drifted,
    /// A control setup within noise.
    Steady,
    /// Shown, not judged (derived quantity or fixed fact).
    NotJudged {
        /// Why.
        reason: String,
    },
    /// Fewer than [`change::MIN_ROUNDS`] rounds on a side.
    TooFewRounds,
    /// Every round identical on both sides, yet A and B differ: nothing to judge the gap by.
    NoSpread,
    /// Zero or negative values: a ratio is meaningless.
    NotPositive,
    /// A yes/no probe with the same answer.
    Same,
    /// A yes/no probe whose answer changed.
    Differs,
}

impl Verdict {
    /// Whether this verdict is a flagged change (better, worse, changed, drifted).
    pub fn flagged(&self) -> bool {
        matches!(
            self,
            Verdict::Better | Verdict::Worse | Verdict::Changed | Verdict::Drifted
        )
    }
}

/// One compared (setup, workload, metric).
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Setup name (matched by name).
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// The metric.
    pub metric: MetricKey,
    /// Unit.
    pub unit: String,
    /// Judged or control.
    pub role: Role,
    /// The metric's role in this workload (from the metric registry and the job's block
    /// size); `None` when the registry does not know the id.
    pub metric_role: Option<judged::Role>,
    /// Rounds in A.
    pub n_a: usize,
    /// Rounds in B.
    pub n_b: usize,
    /// Median of A.
    pub median_a: f64,
    /// Median of B.
    pub median_b: f64,
    /// (median B − median A) / |median A| in percent; NaN when A's median is 0.
    pub delta_pct: f64,
    /// The control setups' change of medians on the same test, in percent (geometric mean
    /// over the controls); `None` without a control.
    pub control_delta_pct: Option<f64>,
    /// `(1 + Δ) / (1 + control Δ) − 1`, in percent: the change beyond the control's drift.
    pub beyond_control_pct: Option<f64>,
    /// The test (raw, the control's drift, beyond the drift) when the metric is judged. It
    /// compares mean log values; the Δ columns above are of medians.
    pub judgement: Option<Judgement>,
    /// Benjamini–Hochberg adjusted p-value within the row's family (tested or control).
    pub q_value: Option<f64>,
    /// The outcome.
    pub verdict: Verdict,
}

/// Counts of one family of tests (the tested setups' metrics, or the control's).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Family {
    /// Metrics tested.
    pub judged: usize,
    /// Flagged after the Benjamini–Hochberg correction.
    pub flagged: usize,
    /// Would have been flagged at p < α without the correction.
    pub flagged_uncorrected: usize,
    /// How many chance alone flags without the correction when nothing changed: judged × α.
    pub expected_by_chance: f64,
    /// Fewest rounds on a side among the tested metrics.
    pub min_rounds: usize,
    /// Median over the tested metrics of the smallest detectable change (± %).
    pub median_detectable_pct: f64,
}

/// How much one control setup moved between A and B.
#[derive(Debug, Clone, Serialize)]
pub struct SetupDrift {
    /// Setup name.
    pub setup: String,
    /// Median over its judged metrics of |change of medians| in percent.
    pub median_abs_pct: f64,
    /// The metric that moved most: `workload metric` and its change in percent.
    pub largest: (String, f64),
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Path or label of A.
    pub a: String,
    /// Path or label of B.
    pub b: String,
    /// A's start and end (RFC 3339; empty when unknown).
    pub a_ran: (String, String),
    /// B's start and end.
    pub b_ran: (String, String),
    /// Interleaved in one run, or separate runs how far apart.
    pub timing: Timing,
    /// Host, target and shared-tool differences (each concerns every setup).
    pub host_differences: Vec<String>,
    /// Setups present in both, with their role.
    pub setups: Vec<SetupMatch>,
    /// How the control was chosen.
    pub control_choice: ControlChoice,
    /// Significance level.
    pub alpha: f64,
    /// The false-discovery correction used across metrics.
    pub correction: &'static str,
    /// Matched rows.
    pub rows: Vec<CompareRow>,
    /// The tested setups' family.
    pub tested: Family,
    /// The control setups' family (their drift against zero).
    pub control: Family,
    /// How far each control setup moved.
    pub drift: Vec<SetupDrift>,
    /// Setups only in A.
    pub only_in_a: Vec<String>,
    /// Setups only in B.
    pub only_in_b: Vec<String>,
}

/// Choices of the caller.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Setups to use as the control instead of the automatic choice (e.g. the filesystems an
    /// out-of-band change such as a sysctl did not touch).
    pub control: Vec<String>,
}

/// Flatten a JSON value into `dotted.key = value` pairs.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// Parameter differences of workloads present in both files, as `name: a vs b` strings.
pub fn param_differences(a: &Results, b: &Results) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for wa in &a.workloads {
        let Some(wb) = b.workloads.iter().find(|w| w.id == wa.id) else {
            continue;
        };
        let (mut fa, mut fb) = (Vec::new(), Vec::new());
        flatten("", &wa.params, &mut fa);
        flatten("", &wb.params, &mut fb);
        // The random seed differs between runs by design (fio's randrepeat=0); it changes
        // which blocks are hit, not what is measured.
        let is_seed = |k: &String| k == "seed" || k.ends_with(".seed");
        fa.retain(|(k, _)| !is_seed(k));
        fb.retain(|(k, _)| !is_seed(k));
        let mut diffs = Vec::new();
        for (k, va) in &fa {
            match fb.iter().find(|(kb, _)| kb == k) {
                Some((_, vb)) if vb != va => diffs.push(format!("{k} {va} vs {vb}")),
                None => diffs.push(format!("{k} {va} vs (absent)")),
                _ => {}
            }
        }
        for (k, vb) in &fb {
            if !fa.iter().any(|(ka, _)| ka == k) {
                diffs.push(format!("{k} (absent) vs {vb}"));
            }
        }
        if !diffs.is_empty() {
            out.push((wa.id.clone(), diffs));
        }
    }
    out
}

/// Compare two results files; an error (exit 2) when a shared workload's parameters differ
/// or `--control` names a setup that is not in both.
pub fn compare(
    a: &Results,
    b: &Results,
    a_name: &str,
    b_name: &str,
    opts: &Options,
) -> crate::Result<Comparison> {
    refuse_different_parameters(a, b)?;
    let setups_a = super::model::setup_order(a);
    let setups_b = super::model::setup_order(b);
    let matched: Vec<String> = setups_a
        .iter()
        .filter(|s| setups_b.contains(s))
        .cloned()
        .collect();
    let host_differences = provenance::host_differences(a, b);
    let (setups, control_choice) = roles(a, b, &matched, &host_differences, opts)?;
    let role_of = |name: &str| {
        setups
            .iter()
            .find(|s| s.name == name)
            .map_or(Role::Tested, |s| s.role)
    };
    let controls: Vec<&str> = setups
        .iter()
        .filter(|s| s.role == Role::Control)
        .map(|s| s.name.as_str())
        .collect();

    let mut rows = Vec::new();
    let workloads = super::model::workload_order(a);
    for setup in &matched {
        for w in &workloads {
            for (m, unit) in metrics_of(a, setup, w) {
                let va = a.values(setup, w, &m);
                let vb = b.values(setup, w, &m);
                if vb.is_empty() {
                    continue;
                }
                let role = role_of(setup);
                // Tested setups are judged against the drift of the control setups on the same
                // test; the controls themselves against zero (their movement is the drift).
                let ctl: Vec<(Vec<f64>, Vec<f64>)> = if role == Role::Tested {
                    controls
                        .iter()
                        .map(|c| (a.values(c, w, &m), b.values(c, w, &m)))
                        .filter(|(x, y)| !x.is_empty() && !y.is_empty())
                        .collect()
                } else {
                    Vec::new()
                };
                let ctl_refs: Vec<(&[f64], &[f64])> = ctl
                    .iter()
                    .map(|(x, y)| (x.as_slice(), y.as_slice()))
                    .collect();
                let metric_role = metrics::lookup(&m).map(|_| judged::role_in(a, w, &m));
                rows.push(row(
                    setup,
                    w,
                    (&m, &unit, metric_role),
                    role,
                    &va,
                    &vb,
                    &ctl_refs,
                ));
            }
        }
    }
    let tested = decide(&mut rows, Role::Tested);
    let control = decide(&mut rows, Role::Control);
    let drift = controls
        .iter()
        .filter_map(|c| setup_drift(&rows, c))
        .collect();
    Ok(Comparison {
        a: a_name.into(),
        b: b_name.into(),
        a_ran: (a.started_at.clone(), a.finished_at.clone()),
        b_ran: (b.started_at.clone(), b.finished_at.clone()),
        timing: provenance::timing(a, b),
        host_differences,
        setups,
        control_choice,
        alpha: ALPHA,
        correction: fdr::METHOD,
        rows,
        tested,
        control,
        drift,
        only_in_a: setups_a
            .iter()
            .filter(|s| !setups_b.contains(s))
            .cloned()
            .collect(),
        only_in_b: setups_b
            .iter()
            .filter(|s| !setups_a.contains(s))
            .cloned()
            .collect(),
    })
}

fn refuse_different_parameters(a: &Results, b: &Results) -> crate::Result<()> {
    let diffs = param_differences(a, b);
    if diffs.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = diffs
        .iter()
        .map(|(w, d)| {
            format!(
                "workload '{w}' ran with different parameters ({})",
                d.join(", ")
            )
        })
        .collect();
    Err(crate::Error::invalid(
        "compare",
        format!(
            "{}; the numbers are not comparable. Re-run one side with the same plan or profile.",
            text.join("; ")
        ),
    ))
}

/// Roles of the matched setups. Automatic: when some setups changed and others did not (and
/// nothing host-wide differs), the unchanged ones are the control. When nothing differs at
/// all, or everything does, there is no control and every setup is judged against zero.
fn roles(
    a: &Results,
    b: &Results,
    matched: &[String],
    host_differences: &[String],
    opts: &Options,
) -> crate::Result<(Vec<SetupMatch>, ControlChoice)> {
    for c in &opts.control {
        if !matched.contains(c) {
            return Err(crate::Error::invalid(
                "--control",
                format!(
                    "no setup named '{c}' in both files; setups in both: {}",
                    if matched.is_empty() {
                        "none".to_string()
                    } else {
                        matched.join(", ")
                    }
                ),
            ));
        }
    }
    let mut setups: Vec<SetupMatch> = matched
        .iter()
        .map(|name| SetupMatch {
            name: name.clone(),
            role: Role::Tested,
            differences: provenance::setup_differences(a, b, name),
        })
        .collect();
    if !opts.control.is_empty() {
        for s in &mut setups {
            if opts.control.contains(&s.name) {
                s.role = Role::Control;
            }
        }
        return Ok((setups, ControlChoice::Explicit));
    }
    let unchanged = |s: &SetupMatch| s.differences.is_empty() && host_differences.is_empty();
    let n_unchanged = setups.iter().filter(|s| unchanged(s)).count();
    if n_unchanged == 0 || n_unchanged == setups.len() {
        return Ok((setups, ControlChoice::None));
    }
    for s in &mut setups {
        if s.differences.is_empty() {
            s.role = Role::Control;
        }
    }
    Ok((setups, ControlChoice::Automatic))
}

/// Metrics of one (setup, workload) in A, first-seen order, with their unit.
fn metrics_of(r: &Results, setup: &str, workload: &str) -> Vec<(MetricKey, String)> {
    let mut out: Vec<(MetricKey, String)> = Vec::new();
    for s in r
        .samples
        .iter()
        .filter(|s| s.setup == setup && s.workload == workload)
    {
        if !out.iter().any(|(m, _)| *m == s.metric) {
            out.push((s.metric.clone(), s.unit.clone()));
        }
    }
    out
}

/// A row with its test, before the correction across metrics decides (`verdict` is then
/// provisional for judged rows: [`decide`] settles it).
#[allow(clippy::too_many_arguments)]
fn row(
    setup: &str,
    workload: &str,
    (m, unit, metric_role): (&MetricKey, &str, Option<judged::Role>),
    role: Role,
    va: &[f64],
    vb: &[f64],
    controls: &[(&[f64], &[f64])],
) -> CompareRow {
    let (ma, mb) = (descriptive::median(va), descriptive::median(vb));
    let delta_pct = if ma != 0.0 {
        (mb - ma) / ma.abs() * 100.0
    } else {
        f64::NAN
    };
    let ratios: Vec<f64> = controls
        .iter()
        .map(|(ca, cb)| descriptive::median(cb) / descriptive::median(ca))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let control_delta_pct = (!ratios.is_empty() && unit != "bool").then(|| {
        let log_mean = ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64;
        log_mean.exp_m1() * 100.0
    });
    let beyond_control_pct =
        control_delta_pct.map(|c| ((1.0 + delta_pct / 100.0) / (1.0 + c / 100.0) - 1.0) * 100.0);
    let mut judgement = None;
    let verdict = if unit == "bool" {
        // Probes are yes/no facts, not noisy measurements.
        if va == vb {
            Verdict::Same
        } else {
            Verdict::Differs
        }
    } else if let Some(reason) = judged::why_not(metric_role) {
        Verdict::NotJudged { reason }
    } else if va.len() < change::MIN_ROUNDS || vb.len() < change::MIN_ROUNDS {
        Verdict::TooFewRounds
    } else {
        match change::judge(va, vb, controls) {
            None => Verdict::NotPositive,
            Some(j) if j.decisive().p.is_nan() => {
                judgement = Some(j);
                Verdict::NoSpread
            }
            Some(j) => {
                judgement = Some(j);
                Verdict::NoChange
            }
        }
    };
    CompareRow {
        setup: setup.into(),
        workload: workload.into(),
        metric: m.clone(),
        unit: unit.into(),
        role,
        metric_role,
        n_a: va.len(),
        n_b: vb.len(),
        median_a: ma,
        median_b: mb,
        delta_pct,
        control_delta_pct,
        beyond_control_pct,
        judgement,
        q_value: None,
        verdict,
    }
}

/// Correct the p-values of one family (Benjamini–Hochberg) and settle its verdicts.
fn decide(rows: &mut [CompareRow], role: Role) -> Family {
    let members: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].role == role && rows[i].verdict == Verdict::NoChange)
        .collect();
    let p: Vec<f64> = members
        .iter()
        .map(|&i| rows[i].judgement.as_ref().expect("judged").decisive().p)
        .collect();
    let q = fdr::bh_adjust(&p);
    let mut fam = Family {
        judged: members.len(),
        expected_by_chance: members.len() as f64 * ALPHA,
        ..Default::default()
    };
    let mut detectable = Vec::new();
    for (k, &i) in members.iter().enumerate() {
        let r = &mut rows[i];
        let mv = *r.judgement.as_ref().expect("judged").decisive();
        r.q_value = Some(q[k]);
        fam.flagged_uncorrected += usize::from(p[k] < ALPHA);
        detectable.push(mv.detectable_pct);
        fam.min_rounds = if fam.min_rounds == 0 {
            r.n_a.min(r.n_b)
        } else {
            fam.min_rounds.min(r.n_a).min(r.n_b)
        };
        if q[k] > ALPHA {
            r.verdict = if role == Role::Control {
                Verdict::Steady
            } else {
                Verdict::NoChange
            };
            continue;
        }
        fam.flagged += 1;
        r.verdict = match (role, metrics::direction(&r.metric)) {
            (Role::Control, _) => Verdict::Drifted,
            (Role::Tested, metrics::Direction::Neutral) => Verdict::Changed,
            (Role::Tested, d) => {
                // The test's sign decides (beyond drift when there is a control), not the medians.
                let up = mv.pct > 0.0;
                if (d == metrics::Direction::HigherIsBetter) == up {
                    Verdict::Better
                } else {
                    Verdict::Worse
                }
            }
        };
    }
    descriptive::sort(&mut detectable);
    fam.median_detectable_pct = descriptive::median_sorted(&detectable);
    fam
}

fn setup_drift(rows: &[CompareRow], setup: &str) -> Option<SetupDrift> {
    let moves: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.setup == setup)
        .filter(|r| r.judgement.is_some() && r.delta_pct.is_finite())
        .map(|r| (format!("{} {}", r.workload, r.metric), r.delta_pct))
        .collect();
    if moves.is_empty() {
        return None;
    }
    let abs: Vec<f64> = moves.iter().map(|(_, p)| p.abs()).collect();
    let largest = moves
        .iter()
        .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))
        .cloned()
        .expect("non-empty");
    Some(SetupDrift {
        setup: setup.into(),
        median_abs_pct: descriptive::median(&abs),
        largest,
    })
}

#[cfg(test)]
mod tests {
    use super::param_differences;
    use crate::metrics::registry::IOPS;
    use crate::results::{Results, WorkloadInfo};

    fn with(params: serde_json::Value) -> Results {
        let mut r = Results::new();
        r.workloads.push(WorkloadInfo {
            id: "randread".into(),
            params,
            ..Default::default()
        });
        r
    }

    #[test]
    fn seeds_differ_by_design_but_block_sizes_do_not() {
        let a = with(serde_json::json!({"job": {"bs": 4096, "seed": 1}}));
        let b = with(serde_json::json!({"job": {"bs": 4096, "seed": 2}}));
        assert!(param_differences(&a, &b).is_empty());
        let c = with(serde_json::json!({"job": {"bs": 16384, "seed": 2}}));
        let d = param_differences(&a, &c);
        assert_eq!(d.len(), 1);
        assert!(d[0].1[0].contains("job.bs 4096 vs 16384"), "{d:?}");
    }

    /// Two setups, five rounds each: A at 100 and 50, B with both 20 % slower (drift), and
    /// optionally something extra on ext4.
    fn pair(ext4_factor: f64, kernel_b: &str) -> (Results, Results) {
        use crate::results::{Sample, SetupInfo};
        let mk = |factor_all: f64, ext4: f64, kernel: &str| {
            let mut r = Results::new();
            r.host.kernel = kernel.into();
            for (name, base) in [("ext4", 100.0), ("xfs", 50.0)] {
                r.setups.push(SetupInfo {
                    name: name.into(),
                    fs: name.into(),
                    ..Default::default()
                });
                for round in 1..=5u32 {
                    let jitter = 1.0 + 0.01 * f64::from(round % 3);
                    let f = if name == "ext4" { ext4 } else { 1.0 };
                    r.samples.push(Sample {
                        setup: name.into(),
                        workload: "randread".into(),
                        metric: IOPS.into(),
                        unit: "IOPS".into(),
                        round,
                        value: base * factor_all * f * jitter,
                    });
                }
            }
            r
        };
        (mk(1.0, 1.0, "6.18"), mk(0.8, ext4_factor, kernel_b))
    }

    fn verdict_of(c: &super::Comparison, setup: &str) -> super::Verdict {
        c.rows
            .iter()
            .find(|r| r.setup == setup)
            .unwrap()
            .verdict
            .clone()
    }

    #[test]
    fn roles_follow_what_differs() {
        use super::{ControlChoice, Options, Verdict, compare};
        // Nothing recorded differs: no control, judged against zero: a 20 % drop is "worse".
        let (a, b) = pair(1.0, "6.18");
        let c = compare(&a, &b, "a", "b", &Options::default()).unwrap();
        assert_eq!(c.control_choice, ControlChoice::None);
        assert_eq!(verdict_of(&c, "ext4"), Verdict::Worse);
        // Named control: ext4's 20 % is xfs's 20 %, i.e. drift.
        let opts = Options {
            control: vec!["xfs".into()],
        };
        let c = compare(&a, &b, "a", "b", &opts).unwrap();
        assert_eq!(c.control_choice, ControlChoice::Explicit);
        assert_eq!(verdict_of(&c, "ext4"), Verdict::NoChange);
        assert_eq!(verdict_of(&c, "xfs"), Verdict::Drifted);
        // A further halving on ext4 is a change beyond the drift.
        let (a, b2) = pair(0.5, "6.18");
        let c = compare(&a, &b2, "a", "b", &opts).unwrap();
        assert_eq!(verdict_of(&c, "ext4"), Verdict::Worse);
        let row = c.rows.iter().find(|r| r.setup == "ext4").unwrap();
        assert!(
            (row.beyond_control_pct.unwrap() + 50.0).abs() < 1e-9,
            "{row:?}"
        );
        // The kernel changed: every setup changed, none is a control.
        let (a, b3) = pair(1.0, "6.19");
        let c = compare(&a, &b3, "a", "b", &Options::default()).unwrap();
        assert_eq!(c.control_choice, ControlChoice::None);
        assert_eq!(c.host_differences, ["kernel \"6.18\" vs \"6.19\""]);
    }
}
