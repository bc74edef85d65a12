//! `fsbench meta`'s output: one row per workload and metric (a failed workload one `FAILED`
//! row and its error under the table), or with `--json` the samples and failures as one
//! object. `commands::meta` runs the workloads and prints this; under `--mpi`, [`mpi`]
//! renders rank 0's all-ranks table (or JSON) from the per-rank rows
//! (`runner::reduce::RankStep`).

use crate::runner::reduce::{RankStep, meta_total};
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

/// `fsbench meta --mpi`'s output (rank 0): per workload (in the order of the rows `all`),
/// all ranks' entries over their common window and the per-rank min–max entries/s, then the
/// failed workloads' errors; with `json`, the samples, the failures, every rank's row
/// (`ranks`), the hosts and the MPI facts. `library` is the MPI library's version, `ranks` the
/// number of ranks.
pub fn mpi(
    all: &[RankStep],
    failures: &[(&str, String)],
    library: &str,
    ranks: u32,
    json: bool,
) -> String {
    let mut hosts: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for s in all {
        if !hosts.contains(&s.host.as_str()) {
            hosts.push(&s.host);
        }
        if !workloads.contains(&s.workload.as_str()) {
            workloads.push(&s.workload);
        }
    }
    let rows: Vec<_> = workloads
        .iter()
        .map(|wl| {
            let steps: Vec<&RankStep> = all.iter().filter(|s| s.workload == *wl).collect();
            let (entries, w, rate) = meta_total(&steps);
            let per: Vec<f64> = steps
                .iter()
                .map(|s| s.entries as f64 / (s.end_s - s.start_s).max(1e-9))
                .collect();
            (*wl, entries, w, rate, per)
        })
        .collect();
    let mut out = String::new();
    let failed: Vec<_> = failures
        .iter()
        .map(|(w, e)| serde_json::json!({"workload": w, "error": e}))
        .collect();
    if json {
        let samples: Vec<_> = rows
            .iter()
            .map(|(wl, entries, w, rate, _)| {
                serde_json::json!({"workload": wl, "metric": "entries_per_s", "unit": "entries/s",
                    "value": rate, "entries": entries, "window_s": w})
            })
            .collect();
        let _ = writeln!(
            out,
            "{}",
            serde_json::json!({"samples": samples, "failures": failed, "ranks": all, "hosts": hosts,
                "mpi": {"library": library, "ranks": ranks, "hosts": hosts}})
        );
        return out;
    }
    let _ = writeln!(
        out,
        "MPI: {ranks} ranks on {} host(s) ({library}); entries/s = all ranks' entries ÷ common \
         window",
        hosts.len(),
    );
    let mut t = comfy_table::Table::new();
    t.set_header([
        "workload",
        "entries (all ranks)",
        "window s",
        "entries/s",
        "per rank min–max entries/s",
    ]);
    for (wl, entries, w, rate, per) in &rows {
        let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per.iter().copied().fold(0.0, f64::max);
        t.add_row([
            wl.to_string(),
            entries.to_string(),
            format!("{w:.3}"),
            format!("{rate:.0}"),
            format!("{lo:.0}–{hi:.0}"),
        ]);
    }
    let _ = writeln!(out, "{t}");
    for (_, e) in failures {
        let _ = writeln!(out, "failed: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rank: i32, entries: u64, start_s: f64, end_s: f64) -> RankStep {
        RankStep {
            rank,
            host: "h".into(),
            workload: "smallfiles".into(),
            entries,
            start_s,
            end_s,
        }
    }

    #[test]
    fn mpi_rows_are_all_ranks_entries_over_the_common_window() {
        let all = [step(0, 300, 0.0, 1.0), step(1, 300, 0.5, 3.0)];
        let v: serde_json::Value = serde_json::from_str(&mpi(&all, &[], "lib", 2, true)).unwrap();
        assert_eq!(v["samples"][0]["entries"], 600);
        assert_eq!(v["samples"][0]["value"], 200.0);
        assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
        assert_eq!(v["mpi"]["ranks"], 2);
        let text = mpi(
            &all,
            &[("untar", "untar: disk full".into())],
            "lib",
            2,
            false,
        );
        assert!(
            text.starts_with("MPI: 2 ranks on 1 host(s) (lib)"),
            "{text}"
        );
        assert!(text.contains("120–300"), "{text}");
        assert!(text.ends_with("failed: untar: disk full\n"), "{text}");
    }
}
