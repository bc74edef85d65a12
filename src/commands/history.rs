//! `fsbench history`: list, show, trend, check, import and export runs of the history store,
//! and the run lookup `compare --against` uses.

use crate::cli::history::{
    CheckArgs, ExportArgs, HistoryArgs, HistoryCommand, ImportArgs, ListArgs, ShowArgs, StoreArgs,
    TrendArgs,
};
use crate::error::{EXIT_OK, EXIT_REGRESSION};
use crate::history::check::{self, Point, Series};
use crate::history::runs::Recorded;
use crate::history::trend::{self, TrendPoint};
use crate::history::{Filter, History, Location, RunRow};
use crate::results::Results;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Run `fsbench history`; returns the exit code.
pub fn run(args: HistoryArgs) -> Result<i32> {
    let store = &args.store;
    match args.command {
        None => list(store, &args.list),
        Some(HistoryCommand::List(a)) => list(store, &a),
        Some(HistoryCommand::Show(a)) => show(store, &a),
        Some(HistoryCommand::Trend(a)) => trend_cmd(store, &a),
        Some(HistoryCommand::Check(a)) => check_cmd(store, &a),
        Some(HistoryCommand::Import(a)) => import(store, &a),
        Some(HistoryCommand::Export(a)) => export(store, &a),
    }
}

/// The store the flags name; `off` is refused for reading commands.
fn location(store: &StoreArgs) -> Result<Location> {
    Location::resolve(store.store.as_deref(), store.store_password_file.as_deref())?.ok_or_else(
        || {
            Error::invalid(
                "--store",
                "FSBENCH_STORE=off switches recording off; name a store to read with --store",
            )
        },
    )
}

/// Open the store for reading (a missing SQLite file is bad input, exit 2).
pub fn open(store: &StoreArgs) -> Result<History> {
    History::open(&location(store)?, false)
}

fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

fn json(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| Error::Other(format!("cannot encode JSON: {e}")))
}

/// A run id from `last` or a number.
fn run_id(h: &mut History, text: &str, what: &str) -> Result<i64> {
    if text == "last" {
        return h
            .list(&Filter::default())?
            .first()
            .map(|r| r.id)
            .ok_or_else(|| Error::invalid(what, format!("{} holds no runs yet", h.shown())));
    }
    text.parse().map_err(|_| {
        Error::invalid(
            what,
            format!("{text:?} is not a run id (a number from `fsbench history`, or `last`)"),
        )
    })
}

/// A recorded run, or exit 2 naming the id.
fn get(h: &mut History, id: i64, what: &str) -> Result<(RunRow, Results)> {
    h.get(id)?.ok_or_else(|| {
        Error::invalid(
            what,
            format!(
                "no run {id} in {} (`fsbench history` lists them)",
                h.shown()
            ),
        )
    })
}

fn table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(crate::report::terminal::terminal_width() as u16);
    t
}

/// `2026-12-01T21:05:09Z` → `2026-12-01 21:05`.
fn short_time(t: &str) -> String {
    t.get(..16).unwrap_or(t).replace('T', " ")
}

fn list(store: &StoreArgs, a: &ListArgs) -> Result<i32> {
    let loc = location(store)?;
    if let Location::Sqlite(p) = &loc
        && !p.exists()
    {
        if a.json {
            emit("[]\n");
        } else {
            eprintln!(
                "fsbench: no runs recorded yet in {} (every `fsbench run` adds one)",
                p.display()
            );
        }
        return Ok(EXIT_OK);
    }
    let mut h = History::open(&loc, false)?;
    let mut rows = h.list(&a.filter.filter())?;
    rows.truncate(a.limit);
    if a.json {
        emit(&json(&rows)?);
        return Ok(EXIT_OK);
    }
    if rows.is_empty() {
        eprintln!("fsbench: no runs in {} match", h.shown());
        return Ok(EXIT_OK);
    }
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
    for r in &rows {
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
    emit(&format!("{t}\n"));
    if rows.iter().any(|r| r.source != "run") {
        emit(
            "* recorded by `fsbench io`/`meta` or imported (`fsbench history show ID` says which)\n",
        );
    }
    emit(&format!("store: {}\n", h.shown()));
    Ok(EXIT_OK)
}

fn show(store: &StoreArgs, a: &ShowArgs) -> Result<i32> {
    let mut h = open(store)?;
    let id = run_id(&mut h, &a.run, "RUN")?;
    let (row, mut r) = get(&mut h, id, "RUN")?;
    if r.summary.is_empty() {
        crate::stats::summarize(&mut r);
    }
    if a.json {
        emit(&json(&serde_json::json!({"run": row, "results": r}))?);
        return Ok(EXIT_OK);
    }
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
    s += &summary_grid(&r.summary);
    emit(&s);
    Ok(EXIT_OK)
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
    crate::report::terminal::grid("Summary (median, min and max over rounds)", &lines, 4)
}

/// The store's finished (not partial) runs, on one device when `device` is given, by id.
fn finished_runs(h: &mut History, device: Option<&str>) -> Result<BTreeMap<i64, RunRow>> {
    let filter = Filter {
        device: device.map(str::to_string),
        ..Default::default()
    };
    Ok(h.list(&filter)?
        .into_iter()
        .filter(|r| !r.partial)
        .map(|r| (r.id, r))
        .collect())
}

/// Runs oldest first, each with its rounds of `(setup, workload, metric)`, on one device.
fn points(
    h: &mut History,
    device: Option<&str>,
    key: (&str, &str, &str),
) -> Result<(String, String, String, Vec<TrendPoint>)> {
    let runs = finished_runs(h, device)?;
    let mut rounds: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let mut unit = String::new();
    for s in h.samples(Some(key))? {
        if runs.contains_key(&s.run_id) {
            unit = s.unit.clone();
            rounds.entry(s.run_id).or_default().push(s.value);
        }
    }
    let mut with: Vec<&RunRow> = rounds.keys().filter_map(|id| runs.get(id)).collect();
    with.sort_by(|a, b| (&a.started_at, a.id).cmp(&(&b.started_at, b.id)));
    let Some(newest) = with.last() else {
        return Err(Error::invalid(
            "--setup/--workload/--metric",
            format!(
                "no recorded run has {} {} {}{} (`fsbench history show ID` lists a run's metrics)",
                key.0,
                key.1,
                key.2,
                device
                    .map(|d| format!(" on a device matching {d:?}"))
                    .unwrap_or_default()
            ),
        ));
    };
    // One device only: the newest run's, unless --device chose.
    let (dev_key, dev_label) = (newest.device_key.clone(), newest.device_label.clone());
    let pts = with
        .iter()
        .filter(|r| r.device_key == dev_key)
        .filter_map(|r| {
            TrendPoint::of(
                r.id,
                &r.started_at,
                &r.kernel,
                &r.fsbench_version,
                &rounds[&r.id],
            )
        })
        .collect();
    Ok((dev_key, dev_label, unit, pts))
}

fn trend_cmd(store: &StoreArgs, a: &TrendArgs) -> Result<i32> {
    let mut h = open(store)?;
    let key = (a.setup.as_str(), a.workload.as_str(), a.metric.as_str());
    let (dev_key, dev_label, unit, pts) = points(&mut h, a.device.as_deref(), key)?;
    let title = format!("{} · {} · {} ({unit})", a.setup, a.workload, a.metric);
    if let Some(path) = &a.html {
        let page = trend::html(&title, &unit, &dev_label, &pts);
        crate::results::write_atomic(path, page.as_bytes())?;
        eprintln!("fsbench: trend chart: {}", path.display());
    }
    if a.json {
        emit(&json(&serde_json::json!({
            "device_key": dev_key, "device": dev_label, "setup": a.setup,
            "workload": a.workload, "metric": a.metric, "unit": unit, "runs": pts
        }))?);
        return Ok(EXIT_OK);
    }
    let mut s = format!(
        "{title} on {dev_label}, {} runs, oldest first\n  {}\n",
        pts.len(),
        trend::sparkline(&pts)
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
            trend::changes(&pts, i).join(", "),
        ]);
    }
    s += &format!("{t}\n");
    emit(&s);
    Ok(EXIT_OK)
}

/// Every (device, setup, workload, metric) series of the store, oldest run first.
pub fn series(h: &mut History, device: Option<&str>) -> Result<Vec<Series>> {
    let runs = finished_runs(h, device)?;
    type Key = (String, String, String, String);
    /// Each run's rounds, by (start, id) so they come out oldest first.
    type Rounds = BTreeMap<(String, i64), Vec<f64>>;
    let mut by: BTreeMap<Key, (String, Rounds)> = BTreeMap::new();
    for s in h.samples(None)? {
        let Some(run) = runs.get(&s.run_id) else {
            continue;
        };
        let e = by
            .entry((run.device_key.clone(), s.setup, s.workload, s.metric))
            .or_insert_with(|| (s.unit.clone(), BTreeMap::new()));
        e.1.entry((run.started_at.clone(), run.id))
            .or_default()
            .push(s.value);
    }
    Ok(by
        .into_iter()
        .map(|((device, setup, workload, metric), (unit, pts))| Series {
            device,
            setup,
            workload,
            metric,
            unit,
            runs: pts
                .into_iter()
                .map(|((started_at, run_id), rounds)| Point {
                    run_id,
                    started_at,
                    rounds,
                })
                .collect(),
        })
        .collect())
}

fn check_cmd(store: &StoreArgs, a: &CheckArgs) -> Result<i32> {
    if !(a.threshold >= 0.0 && a.threshold < 1000.0) {
        return Err(Error::invalid("--threshold", "a percentage, e.g. 5"));
    }
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        return Err(Error::invalid(
            "--alpha",
            "a false-discovery rate in (0, 1), e.g. 0.05",
        ));
    }
    let mut h = open(store)?;
    let all = series(&mut h, a.device.as_deref())?;
    let opts = check::Options {
        threshold: a.threshold / 100.0,
        alpha: a.alpha,
        ..Default::default()
    };
    let report = check::check(&all, |m: &str| crate::metrics::direction(m), &opts);
    let code = if report.regressions.is_empty() {
        EXIT_OK
    } else {
        EXIT_REGRESSION
    };
    if a.json {
        emit(&json(&report)?);
        return Ok(code);
    }
    let mut s = format!(
        "checked {} series ({} with three runs or more): {} regressed, {} improved \
         (beyond {}% and q ≤ {})\n",
        report.series,
        report.judged,
        report.regressions.len(),
        report.improvements.len(),
        a.threshold,
        a.alpha
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
    emit(&s);
    Ok(code)
}

fn import(store: &StoreArgs, a: &ImportArgs) -> Result<i32> {
    let loc = location(store)?;
    // Every file loads before anything is written: a typo imports nothing.
    let mut loaded = Vec::new();
    for p in &a.paths {
        let file = if p.is_dir() {
            p.join("results.json")
        } else {
            p.clone()
        };
        let r = Results::load(&file)?;
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        loaded.push((dir, r));
    }
    let mut h = History::open(&loc, true)?;
    for (dir, r) in &loaded {
        let shown = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        match h.record(r, "import", &shown.display().to_string())? {
            Recorded::New(id) => {
                eprintln!("fsbench: history: {} recorded as run {id}", dir.display())
            }
            Recorded::Already(id) => {
                eprintln!("fsbench: history: {} is already run {id}", dir.display())
            }
        }
    }
    eprintln!("fsbench: store: {}", h.shown());
    Ok(EXIT_OK)
}

fn export(store: &StoreArgs, a: &ExportArgs) -> Result<i32> {
    let mut h = open(store)?;
    let id = run_id(&mut h, &a.run, "RUN")?;
    let (_, r) = get(&mut h, id, "RUN")?;
    match &a.output {
        Some(path) => r.save(path)?,
        None => emit(&json(&r)?),
    }
    Ok(EXIT_OK)
}

/// For `compare --against`: B (a results file, or the newest run in the store) and A (run
/// `against`, or with `last` the newest earlier run of the same device and setups), with
/// their names, and what differs between their hosts.
pub fn against(
    store: &StoreArgs,
    against: &str,
    b_file: Option<&Path>,
) -> Result<(Results, Results, String, String)> {
    let mut h = open(store)?;
    let (b, b_name, b_id) = match b_file {
        Some(p) => {
            let mut r = Results::load(p)?;
            crate::history::identity::enrich(&mut r);
            (r, p.display().to_string(), None)
        }
        None => {
            let id = run_id(&mut h, "last", "--against")?;
            let (row, r) = get(&mut h, id, "--against")?;
            (
                r,
                format!("run {} ({})", row.id, short_time(&row.started_at)),
                Some(id),
            )
        }
    };
    let a_id = if against == "last" {
        let key = crate::history::identity::device(&b).key;
        let setups: Vec<&str> = b.setups.iter().map(|s| s.name.as_str()).collect();
        h.list(&Filter::default())?
            .into_iter()
            .filter(|r| Some(r.id) != b_id && !r.partial)
            .filter(|r| r.device_key == key && r.setups == setups)
            .find(|r| r.started_at < b.started_at)
            .map(|r| r.id)
            .ok_or_else(|| {
                Error::invalid(
                    "--against",
                    format!(
                        "no earlier run in {} on the same device ({key}) with the same setups \
                         ({}); name one with --against RUN (`fsbench history` lists them)",
                        h.shown(),
                        setups.join(",")
                    ),
                )
            })?
    } else {
        run_id(&mut h, against, "--against")?
    };
    let (row, a) = get(&mut h, a_id, "--against")?;
    let a_name = format!("run {} ({})", row.id, short_time(&row.started_at));
    for (what, x, y) in [
        ("host", &a.host.hostname, &b.host.hostname),
        ("kernel", &a.host.kernel, &b.host.kernel),
        ("fsbench version", &a.fsbench_version, &b.fsbench_version),
    ] {
        if x != y {
            eprintln!("fsbench: note: the {what} differs: {x} ({a_name}) vs {y} ({b_name})");
        }
    }
    Ok((a, b, a_name, b_name))
}
