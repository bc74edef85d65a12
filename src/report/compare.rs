//! `fsbench compare`: match setups and workloads of two results files, and say for each metric
//! how much it moved and whether that is more than noise.
//!
//! Refuses (exit 2) when a workload present in both files ran with different parameters:
//! comparing a 4k random read with a 16k one would be a wrong answer, not a small one.

use crate::results::Results;
use crate::stats::{bootstrap, metric, verdict};
use serde::Serialize;
use std::fmt::Write;

/// One compared (setup, workload, metric).
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Setup name (matched by name).
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Rounds in A and in B.
    pub n_a: usize,
    /// Rounds in B.
    pub n_b: usize,
    /// The statistics of the change.
    pub change: verdict::Change,
    /// `better`, `worse`, `no significant change`, `changed` (neutral metric) or
    /// `too few rounds to judge`.
    pub verdict: String,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Path or label of A.
    pub a: String,
    /// Path or label of B.
    pub b: String,
    /// Matched rows.
    pub rows: Vec<CompareRow>,
    /// Setups only in A.
    pub only_in_a: Vec<String>,
    /// Setups only in B.
    pub only_in_b: Vec<String>,
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

/// Compare two results files; an error (exit 2) when a shared workload's parameters differ.
pub fn compare(a: &Results, b: &Results, a_name: &str, b_name: &str) -> crate::Result<Comparison> {
    let diffs = param_differences(a, b);
    if !diffs.is_empty() {
        let text: Vec<String> = diffs
            .iter()
            .map(|(w, d)| {
                format!(
                    "workload '{w}' ran with different parameters ({})",
                    d.join(", ")
                )
            })
            .collect();
        return Err(crate::Error::invalid(
            "compare",
            format!(
                "{}; the numbers are not comparable. Re-run one side with the same plan or profile.",
                text.join("; ")
            ),
        ));
    }
    let setups_a = super::model::setup_order(a);
    let setups_b = super::model::setup_order(b);
    let workloads = super::model::workload_order(a);
    let mut rows = Vec::new();
    for setup in setups_a.iter().filter(|s| setups_b.contains(s)) {
        for w in &workloads {
            let mut metrics: Vec<(String, String)> = Vec::new();
            for s in a
                .samples
                .iter()
                .filter(|s| &s.setup == setup && &s.workload == w)
            {
                if !metrics.iter().any(|(m, _)| *m == s.metric) {
                    metrics.push((s.metric.clone(), s.unit.clone()));
                }
            }
            for (m, unit) in metrics {
                let va = a.values(setup, w, &m);
                let vb = b.values(setup, w, &m);
                if vb.is_empty() {
                    continue;
                }
                let change = verdict::compare(&va, &vb, bootstrap::seed_for(&[setup, w, &m]));
                let dir = metric::direction(&m);
                let verdict = if unit == "bool" {
                    // Probes are yes/no facts, not noisy measurements.
                    if va == vb { "no change" } else { "changed" }.to_string()
                } else {
                    match change.significant {
                        None => "too few rounds to judge".to_string(),
                        Some(false) => "no significant change".to_string(),
                        Some(true) => match dir {
                            metric::Direction::Neutral => "changed".to_string(),
                            d if d.better(change.median_b, change.median_a) => "better".to_string(),
                            _ => "worse".to_string(),
                        },
                    }
                };
                rows.push(CompareRow {
                    setup: setup.clone(),
                    workload: w.clone(),
                    metric: m,
                    unit,
                    n_a: va.len(),
                    n_b: vb.len(),
                    change,
                    verdict,
                });
            }
        }
    }
    Ok(Comparison {
        a: a_name.into(),
        b: b_name.into(),
        rows,
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

fn delta(c: &verdict::Change) -> String {
    if c.delta_pct.is_finite() {
        format!("{:+.1} %", c.delta_pct)
    } else {
        "–".into()
    }
}

fn how(r: &CompareRow) -> String {
    match (r.change.method, r.change.p_value) {
        ("mann-whitney", Some(p)) => format!("Mann–Whitney p={p:.3}"),
        ("bootstrap", _) => "bootstrap 95 % CI of Δmedian".to_string(),
        _ => format!("n={}/{}", r.n_a, r.n_b),
    }
}

fn lines(c: &Comparison) -> Vec<[String; 7]> {
    c.rows
        .iter()
        .map(|r| {
            [
                r.setup.clone(),
                format!("{} {}", r.workload, r.metric),
                metric::format_value(r.change.median_a, &r.unit),
                metric::format_value(r.change.median_b, &r.unit),
                delta(&r.change),
                r.verdict.clone(),
                how(r),
            ]
        })
        .collect()
}

const HEAD: [&str; 7] = ["Setup", "Test", "A", "B", "Δ", "Verdict", "Judged by"];

fn footer(c: &Comparison) -> String {
    let mut out = String::new();
    let sig = c
        .rows
        .iter()
        .filter(|r| r.change.significant == Some(true))
        .count();
    let judged = c
        .rows
        .iter()
        .filter(|r| r.change.significant.is_some())
        .count();
    if judged == 0 {
        out.push_str("Too few rounds to judge any change (need 3 or more per side).\n");
    } else if sig == 0 {
        out.push_str(&format!(
            "No significant change in any of {judged} judged metric(s) (α = 0.05).\n"
        ));
    } else {
        out.push_str(&format!(
            "{sig} of {judged} judged metric(s) changed significantly (α = 0.05).\n"
        ));
    }
    if !c.only_in_a.is_empty() {
        out.push_str(&format!("Only in A: {}\n", c.only_in_a.join(", ")));
    }
    if !c.only_in_b.is_empty() {
        out.push_str(&format!("Only in B: {}\n", c.only_in_b.join(", ")));
    }
    out
}

/// Plain-text table of a comparison.
pub fn render_text(c: &Comparison) -> String {
    let rows = lines(c);
    let w: Vec<usize> = (0..7)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([HEAD[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("A = {}\nB = {}\n\n", c.a, c.b);
    let fmt = |cells: [&str; 7]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(w[i] - cell.chars().count());
            if (2..=4).contains(&i) {
                let _ = write!(s, "{pad}{cell}  ");
            } else {
                let _ = write!(s, "{cell}{pad}  ");
            }
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&fmt(HEAD));
    for r in &rows {
        out.push_str(&fmt([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]]));
    }
    out.push('\n');
    out.push_str(&footer(c));
    out
}

/// Markdown table of a comparison.
pub fn render_markdown(c: &Comparison) -> String {
    let mut out = format!("# fsbench compare\n\nA = `{}`, B = `{}`\n\n", c.a, c.b);
    out.push_str(&format!(
        "| {} |\n|---|---|---:|---:|---:|---|---|\n",
        HEAD.join(" | ")
    ));
    for r in lines(c) {
        let cells: Vec<String> = r.iter().map(|x| x.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    out.push_str(&footer(c));
    out
}

/// JSON of a comparison.
pub fn render_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::param_differences;
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
}
