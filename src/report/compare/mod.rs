//! `fsbench compare`: match setups and workloads of two results files, and judge each metric
//! with the one statistic every fsbench output uses ([`judge`]: paired per-round log ratios
//! when A and B come from one run, Welch's t interval on log values for separate runs): better
//! or worse beyond noise, equivalent within the metric's margin, or not separated, with the
//! interval and the rounds that would tell ±10 % apart; beyond the host's drift when there are
//! control setups.
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
pub mod judge;
pub mod provenance;
pub mod render;
pub mod split;

pub use html::render_html;
pub use render::{render_json, render_markdown, render_text};

use crate::metrics::{self, MetricKey};
use crate::results::Results;
use crate::stats::paired::{Judgement, Outcome};
use crate::stats::sequential::DEFAULT_ALPHA;
use crate::stats::{descriptive, judged, paired};
pub use judge::Pairing;
use judge::{Judged, Rounds};
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
    /// Shown to lie within ±margin of A (beyond the drift, when there is a control).
    Equivalent,
    /// Neither beyond noise nor shown equivalent: the interval straddles no change and reaches
    /// past the margin.
    NotSeparated,
    /// A control setup that moved beyond noise: drift, since nothing changed in it.
    Drifted,
    /// A control setup shown to lie within ±margin.
    Steady,
    /// Shown, not judged (derived quantity or fixed fact).
    NotJudged {
        /// Why.
        reason: String,
    },
    /// Fewer than two paired rounds, or unpaired fewer than
    /// [`crate::stats::unpaired::MIN_ROUNDS_A_SIDE`] a side.
    TooFewRounds,
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
    /// How the rounds were judged (`None`: not judged).
    pub pairing: Option<Pairing>,
    /// The one statistic's judgement (beyond the control's drift when there is one), oriented
    /// as everywhere: `ratio` > 1 means B is better than A (for a metric without a better
    /// direction, B is higher). It reads geometric means; the Δ columns above are of medians.
    pub judgement: Option<Judgement>,
    /// The judged change of B against A in percent (the judgement's ratio, not oriented):
    /// geometric mean and interval; what the forest plot draws.
    pub change_pct: Option<(f64, Option<(f64, f64)>)>,
    /// The outcome.
    pub verdict: Verdict,
}

/// Counts of one family of judgements (the tested setups' metrics, or the control's).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Family {
    /// Metrics judged.
    pub judged: usize,
    /// Moved beyond noise (better, worse, changed; for the control: drifted).
    pub flagged: usize,
    /// Shown equivalent within their margins.
    pub equivalent: usize,
    /// Not separated.
    pub not_separated: usize,
    /// How many chance alone calls changed when nothing changed: judged × α (each judgement
    /// is wrong at most α of the time; there is no correction across metrics).
    pub expected_by_chance: f64,
    /// Fewest rounds judged (pairs, or the smaller side) among the judged metrics.
    pub min_rounds: usize,
    /// Median over the judged metrics of the rounds that would tell ±10 % apart at their
    /// noise (`None`: more than 100).
    pub median_rounds_for_10pct: Option<usize>,
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
    /// How the rounds of A and B are judged together (a paired row with no round in common
    /// falls back to unpaired; each row says its own).
    pub pairing: Pairing,
    /// Host, target and shared-tool differences (each concerns every setup).
    pub host_differences: Vec<String>,
    /// Setups present in both, with their role.
    pub setups: Vec<SetupMatch>,
    /// How the control was chosen.
    pub control_choice: ControlChoice,
    /// The one statistic's two-sided error rate per judgement (its intervals are 1 − α).
    pub alpha: f64,
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
    /// A and B are the odd and even rounds of one run (`--split-rounds`): pair A's k-th round
    /// with B's k-th.
    pub split_rounds: bool,
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

    let timing = provenance::timing(a, b);
    let pairing = if opts.split_rounds {
        Pairing::Halves
    } else if matches!(timing, Timing::SameRun { .. }) {
        Pairing::SameRounds
    } else {
        Pairing::Independent
    };
    // The run's `--margin` when both sides (or the one that has it) judged by one.
    let margin_of = |m: &MetricKey| {
        b.margin
            .or(a.margin)
            .unwrap_or_else(|| metrics::def(m).margin)
    };
    let mut rows = Vec::new();
    let workloads = super::model::workload_order(a);
    for setup in &matched {
        for w in &workloads {
            for (m, unit) in metrics_of(a, setup, w) {
                let (ra, rb) = (
                    paired::per_round(a, setup, w, &m),
                    paired::per_round(b, setup, w, &m),
                );
                if rb.is_empty() {
                    continue;
                }
                let role = role_of(setup);
                // Tested setups are judged against the drift of the control setups on the same
                // test; the controls themselves against zero (their movement is the drift).
                let ctl: Vec<(Rounds, Rounds)> = if role == Role::Tested {
                    controls
                        .iter()
                        .map(|c| {
                            (
                                paired::per_round(a, c, w, &m),
                                paired::per_round(b, c, w, &m),
                            )
                        })
                        .filter(|(x, y)| !x.is_empty() && !y.is_empty())
                        .collect()
                } else {
                    Vec::new()
                };
                let metric_role = metrics::lookup(&m).map(|_| judged::role_in(a, w, &m));
                let margin = margin_of(&m);
                rows.push(row(
                    setup,
                    w,
                    (&m, &unit, metric_role),
                    role,
                    (pairing, margin),
                    (&ra, &rb),
                    &ctl,
                ));
            }
        }
    }
    let tested = family(&rows, Role::Tested);
    let control = family(&rows, Role::Control);
    let drift = controls
        .iter()
        .filter_map(|c| setup_drift(&rows, c))
        .collect();
    Ok(Comparison {
        a: a_name.into(),
        b: b_name.into(),
        a_ran: (a.started_at.clone(), a.finished_at.clone()),
        b_ran: (b.started_at.clone(), b.finished_at.clone()),
        timing,
        pairing,
        host_differences,
        setups,
        control_choice,
        alpha: DEFAULT_ALPHA,
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

/// A row with its judgement.
fn row(
    setup: &str,
    workload: &str,
    (m, unit, metric_role): (&MetricKey, &str, Option<judged::Role>),
    role: Role,
    (pairing, margin): (Pairing, f64),
    (ra, rb): (&Rounds, &Rounds),
    controls: &[(Rounds, Rounds)],
) -> CompareRow {
    let va: Vec<f64> = ra.values().copied().collect();
    let vb: Vec<f64> = rb.values().copied().collect();
    let (ma, mb) = (descriptive::median(&va), descriptive::median(&vb));
    let delta_pct = if ma != 0.0 {
        (mb - ma) / ma.abs() * 100.0
    } else {
        f64::NAN
    };
    let median = |v: &Rounds| descriptive::median(&v.values().copied().collect::<Vec<f64>>());
    let ratios: Vec<f64> = controls
        .iter()
        .map(|(ca, cb)| median(cb) / median(ca))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let control_delta_pct = (!ratios.is_empty() && unit != "bool").then(|| {
        let log_mean = ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64;
        log_mean.exp_m1() * 100.0
    });
    let beyond_control_pct =
        control_delta_pct.map(|c| ((1.0 + delta_pct / 100.0) / (1.0 + c / 100.0) - 1.0) * 100.0);
    let direction = metrics::direction(m);
    let (mut judgement, mut used) = (None, None);
    let verdict = if unit == "bool" {
        // Probes are yes/no facts, not noisy measurements.
        if va == vb {
            Verdict::Same
        } else {
            Verdict::Differs
        }
    } else if let Some(reason) = judged::why_not(metric_role) {
        Verdict::NotJudged { reason }
    } else {
        match judge::judge(pairing, (ra, rb), controls, direction, margin) {
            Judged::TooFewRounds => Verdict::TooFewRounds,
            Judged::NotPositive => Verdict::NotPositive,
            Judged::Yes(p, j) => {
                judgement = Some(j);
                used = Some(p);
                verdict_of(role, direction, j.outcome)
            }
        }
    };
    // The change of B against A, not oriented: a lower-is-better ratio is A / B.
    let change_pct = judgement.map(|j| {
        let plain = |r: f64| {
            let r = if direction == metrics::Direction::LowerIsBetter {
                1.0 / r
            } else {
                r
            };
            (r - 1.0) * 100.0
        };
        let iv = j.interval.map(|(lo, hi)| {
            let (x, y) = (plain(lo), plain(hi));
            (x.min(y), x.max(y))
        });
        (plain(j.ratio), iv)
    });
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
        pairing: used,
        judgement,
        change_pct,
        verdict,
    }
}

/// A judged row's verdict: the one statistic's outcome in `compare`'s words (a control's
/// movement is drift; a metric without a better direction only changes).
fn verdict_of(role: Role, direction: metrics::Direction, outcome: Outcome) -> Verdict {
    match (role, outcome) {
        (_, Outcome::NotSeparated) => Verdict::NotSeparated,
        (Role::Control, Outcome::Equivalent) => Verdict::Steady,
        (Role::Control, _) => Verdict::Drifted,
        (Role::Tested, Outcome::Equivalent) => Verdict::Equivalent,
        (Role::Tested, _) if direction == metrics::Direction::Neutral => Verdict::Changed,
        (Role::Tested, Outcome::Ahead) => Verdict::Better,
        (Role::Tested, _) => Verdict::Worse,
    }
}

/// The counts of one family's judgements.
fn family(rows: &[CompareRow], role: Role) -> Family {
    let judged: Vec<(&CompareRow, &Judgement)> = rows
        .iter()
        .filter(|r| r.role == role)
        .filter_map(|r| r.judgement.as_ref().map(|j| (r, j)))
        .collect();
    let count = |f: fn(&Verdict) -> bool| judged.iter().filter(|(r, _)| f(&r.verdict)).count();
    // Median rounds for ±10 %, "more than 100" sorting last.
    let mut need: Vec<usize> = judged
        .iter()
        .map(|(_, j)| j.rounds_for_10pct.unwrap_or(usize::MAX))
        .collect();
    need.sort_unstable();
    Family {
        judged: judged.len(),
        flagged: count(Verdict::flagged),
        equivalent: count(|v| matches!(v, Verdict::Equivalent | Verdict::Steady)),
        not_separated: count(|v| *v == Verdict::NotSeparated),
        expected_by_chance: judged.len() as f64 * DEFAULT_ALPHA,
        min_rounds: judged.iter().map(|(_, j)| j.rounds).min().unwrap_or(0),
        median_rounds_for_10pct: need
            .get(need.len() / 2)
            .copied()
            .filter(|n| *n != usize::MAX),
    }
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
            ..Options::default()
        };
        let c = compare(&a, &b, "a", "b", &opts).unwrap();
        assert_eq!(c.control_choice, ControlChoice::Explicit);
        assert_eq!(verdict_of(&c, "ext4"), Verdict::Equivalent);
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
