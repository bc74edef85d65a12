//! Reading the history store for the `fsbench history` and `compare --against` views: a run
//! by id or `last`, the finished runs, one metric's points and every series (what
//! `report::history` renders and `history::check` judges).

use super::check::{Point, Series};
use super::trend::TrendPoint;
use super::{Filter, History, RunRow};
use crate::results::Results;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// A run id from `last` or a number.
pub fn run_id(h: &mut History, text: &str, what: &str) -> Result<i64> {
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

/// A recorded run, or exit 2 naming the id (`what`: the argument that named it).
pub fn get(h: &mut History, id: i64, what: &str) -> Result<(RunRow, Results)> {
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

/// The store's finished (not partial) runs, on one device when `device` is given, by id.
pub fn finished_runs(h: &mut History, device: Option<&str>) -> Result<BTreeMap<i64, RunRow>> {
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
pub fn points(
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
