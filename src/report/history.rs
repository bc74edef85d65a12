//! `fsbench history`'s text: the list of runs, one run shown, a metric's trend and the
//! regression check, rendered from what the store returned (the command only reads the
//! store and prints these).

use crate::history::RunRow;
use crate::history::check::Report as CheckReport;
use crate::history::trend::{self, TrendPoint};
use crate::results::Results;

/// A table that fits the terminal, in the condensed style of the history views.
fn table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(super::terminal::terminal_width() as u16);
    t
}

/// `2026-12-01T21:05:09Z` → `2026-12-01 21:05`.
pub fn short_time(t: &str) -> String {
    t.get(..16).unwrap_or(t).replace('T', " ")
}

/// The runs of `fsbench history list`, newest first, from the store shown as `store`; a run
/// recorded by another command than `run` is starred and the footnote says why.
pub fn list(rows: &[RunRow], store: &str) -> String {
    let mut t = table();
    t.set_header([
        "run",
        "started (UTC)",
        "host",
        "device",
        "profile",
        "setups",
        "kernel",
        "fsbench",
    ]);
    for r in rows {
        t.add_row([
            format!("{}{}", r.id, if r.source == "run" { "" } else { "*" }),
            short_time(&r.started_at),
            r.hostname.clone(),
            r.device_label.clone(),
            r.profile.clone(),
            r.setups.join(","),
            r.kernel.clone(),
            r.fsbench_version.clone(),
        ]);
    }
    let mut s = format!("{t}\n");
    if rows.iter().any(|r| r.source != "run") {
        s += "* recorded by `fsbench io`/`meta` or imported (`fsbench history show ID` says which)\n";
    }
    s + &format!("store: {store}\n")
}

/// One recorded run (`fsbench history show`): where it came from, host, device, setups and
/// its summary.
pub fn show(row: &RunRow, r: &Results) -> String {
    let mut s = format!(
        "run {}  ({}, recorded {} from {})\n\
         started   {}  finished {}\n\
         host      {}  kernel {}  fsbench {}\n\
         device    {}\n          key {}\n\
         profile   {}  plan hash {}\n",
        row.id,
        row.source,
        row.recorded_at,
        row.results_dir,
        r.started_at,
        r.finished_at,
        row.hostname,
        row.kernel,
        row.fsbench_version,
        row.device_label,
        row.device_key,
        row.profile,
        row.plan_hash
    );
    if !r.host.tool_versions.is_empty() {
        let tools: Vec<String> = r
            .host
            .tool_versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s += &format!("tools     {}\n", tools.join(", "));
    }
    for st in &r.setups {
        s += &format!("setup {} ({}): mount {}\n", st.name, st.fs, st.mount_opts);
        if !st.mkfs_args.is_empty() {
            s += &format!("    mkfs: {}\n", st.mkfs_args.join(" "));
        }
        for (k, v) in st.options.iter().chain(&st.host) {
            s += &format!("    {k} = {v}\n");
        }
    }
    s + &summary_grid(&r.summary)
}

/// The run's summary in the report's table style, each value in its metric's units
/// (`7.8 GiB`, `524,288`) as `fsbench report` writes it.
fn summary_grid(summary: &[crate::results::Summary]) -> String {
    use crate::metrics::format_value;
    let mut lines = vec![
        [
            "setup", "workload", "metric", "unit", "median", "min", "max", "n",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for x in summary {
        let v = |v: f64| format_value(&x.metric, v, &x.unit);
        lines.push(vec![
            x.setup.clone(),
            x.workload.clone(),
            x.metric.to_string(),
            x.unit.clone(),
            v(x.median),
            v(x.min),
            v(x.max),
            x.n.to_string(),
        ]);
    }
    super::terminal::grid("Summary (median, min and max over rounds)", &lines, 4)
}

/// One metric's runs on one device, oldest first (`fsbench history trend`): a sparkline and
/// a row per run with what changed since the run before.
pub fn trend(title: &str, dev_label: &str, pts: &[TrendPoint]) -> String {
    let s = format!(
        "{title} on {dev_label}, {} runs, oldest first\n  {}\n",
        pts.len(),
        trend::sparkline(pts)
    );
    let mut t = table();
    t.set_header([
        "run",
        "started (UTC)",
        "median",
        "range",
        "rounds",
        "changed",
    ]);
    for (i, p) in pts.iter().enumerate() {
        t.add_row([
            p.run_id.to_string(),
            short_time(&p.started_at),
            format!("{:.4}", p.median),
            format!("{:.4} – {:.4}", p.min, p.max),
            p.n.to_string(),
            trend::changes(pts, i).join(", "),
        ]);
    }
    s + &format!("{t}\n")
}

/// The regression check's verdicts (`fsbench history check`): a line of counts, then the
/// regressions and improvements beyond `threshold` percent at false-discovery rate `alpha`.
pub fn check(report: &CheckReport, threshold: f64, alpha: f64) -> String {
    let mut s = format!(
        "checked {} series ({} with three runs or more): {} regressed, {} improved \
         (beyond {}% and q ≤ {})\n",
        report.series,
        report.judged,
        report.regressions.len(),
        report.improvements.len(),
        threshold,
        alpha
    );
    for (what, list) in [
        ("Regressions", &report.regressions),
        ("Improvements", &report.improvements),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut t = table();
        t.set_header([
            "setup",
            "workload",
            "metric",
            "before",
            "now",
            "change",
            "q",
            "since run",
            "device",
        ]);
        for c in list {
            t.add_row([
                c.setup.clone(),
                c.workload.clone(),
                format!("{} ({})", c.metric, c.unit),
                format!("{:.4}", c.before),
                format!("{:.4}", c.now),
                format!("{:+.1} %", c.pct),
                format!("{:.3}", c.q),
                format!("{} (of {})", c.since_run, c.runs),
                c.device.clone(),
            ]);
        }
        s += &format!("{what}:\n{t}\n");
    }
    s
}
