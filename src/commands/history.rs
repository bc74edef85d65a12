//! `fsbench history`: list, show, trend, check, import and export runs of the history store,
//! and the run lookup `compare --against` uses. The store is read through
//! [`crate::history::lookup`] and rendered by [`crate::report::history`].

use crate::cli::history::{
    CheckArgs, ExportArgs, HistoryArgs, HistoryCommand, ImportArgs, ListArgs, ShowArgs, StoreArgs,
    TrendArgs,
};
use crate::error::{EXIT_OK, EXIT_REGRESSION};
use crate::history::check;
use crate::history::runs::Recorded;
use crate::history::trend;
use crate::history::{Filter, History, Location, lookup};
use crate::results::Results;
use crate::{Error, Result};
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
    emit(&crate::report::history::list(&rows, &h.shown()));
    Ok(EXIT_OK)
}

fn show(store: &StoreArgs, a: &ShowArgs) -> Result<i32> {
    let mut h = open(store)?;
    let id = lookup::run_id(&mut h, &a.run, "RUN")?;
    let (row, mut r) = lookup::get(&mut h, id, "RUN")?;
    if r.summary.is_empty() {
        crate::stats::summarize(&mut r);
    }
    if a.json {
        emit(&json(&serde_json::json!({"run": row, "results": r}))?);
        return Ok(EXIT_OK);
    }
    emit(&crate::report::history::show(&row, &r));
    Ok(EXIT_OK)
}

fn trend_cmd(store: &StoreArgs, a: &TrendArgs) -> Result<i32> {
    let mut h = open(store)?;
    let key = (a.setup.as_str(), a.workload.as_str(), a.metric.as_str());
    let (dev_key, dev_label, unit, pts) = lookup::points(&mut h, a.device.as_deref(), key)?;
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
    emit(&crate::report::history::trend(&title, &dev_label, &pts));
    Ok(EXIT_OK)
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
    let all = lookup::series(&mut h, a.device.as_deref())?;
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
    emit(&crate::report::history::check(
        &report,
        a.threshold,
        a.alpha,
    ));
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
    let id = lookup::run_id(&mut h, &a.run, "RUN")?;
    let (_, r) = lookup::get(&mut h, id, "RUN")?;
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
            let id = lookup::run_id(&mut h, "last", "--against")?;
            let (row, r) = lookup::get(&mut h, id, "--against")?;
            (
                r,
                format!(
                    "run {} ({})",
                    row.id,
                    crate::report::history::short_time(&row.started_at)
                ),
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
        lookup::run_id(&mut h, against, "--against")?
    };
    let (row, a) = lookup::get(&mut h, a_id, "--against")?;
    let a_name = format!(
        "run {} ({})",
        row.id,
        crate::report::history::short_time(&row.started_at)
    );
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
