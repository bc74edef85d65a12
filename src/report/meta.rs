//! `fsbench meta`'s output: one row per workload and metric (a failed workload one `FAILED`
//! row and its error under the table), or with `--json` the samples and failures as one
//! object. `commands::meta` runs the workloads and prints this.

use crate::workload::Metric;
use std::fmt::Write as _;

/// A value in the table: seconds to the millisecond, counts and rates whole.
fn fmt_value(m: &Metric) -> String {
    if m.unit == "s" {
        format!("{:.3}", m.value)
    } else {
        format!("{:.0}", m.value)
    }
}

/// The whole output, each line ending in a newline: `samples` in order (`None`: the workload
/// failed, a row of the table and never a sample), `failures` the workloads' errors.
pub fn render(
    samples: &[(String, Option<Metric>)],
    failures: &[(&str, String)],
    json: bool,
) -> String {
    let mut out = String::new();
    if json {
        let s: Vec<_> = samples
            .iter()
            .filter_map(|(w, m)| {
                let m = m.as_ref()?;
                Some(serde_json::json!({"workload": w, "metric": m.metric, "unit": m.unit, "value": m.value}))
            })
            .collect();
        let f: Vec<_> = failures
            .iter()
            .map(|(w, e)| serde_json::json!({"workload": w, "error": e}))
            .collect();
        let _ = writeln!(out, "{}", serde_json::json!({"samples": s, "failures": f}));
        return out;
    }
    let mut t = comfy_table::Table::new();
    t.set_header(["workload", "metric", "value", "unit"]);
    for (w, m) in samples {
        t.add_row(match m {
            Some(m) => [
                w.to_string(),
                m.metric.to_string(),
                fmt_value(m),
                m.unit.clone(),
            ],
            None => [
                w.to_string(),
                "FAILED".into(),
                "(error below)".into(),
                String::new(),
            ],
        });
    }
    let _ = writeln!(out, "{t}");
    for (_, e) in failures {
        let _ = writeln!(out, "failed: {e}");
    }
    out
}
