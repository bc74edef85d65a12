//! Run-until-steady (`--steady-state`): the job runs time-based up to a limit, the main thread
//! watches the jobs' per-second I/O counts while they run and stops every job once the last N
//! one-second windows meet SNIA's criteria ([`crate::measure::steady`]); the figures of that
//! window are then reported beside the whole run's.
//!
//! The job threads publish their count of the current second with one relaxed store per I/O
//! into a per-job array of atomics (no lock, no read-modify-write); the watcher reads a second
//! only once it closed, plus a margin for the threads' clocks starting a few µs apart.

use super::report::{LatencyNs, SteadyReport, SteadyWindow};
use crate::measure::steady::{SteadyCriteria, excursions, is_steady};
use crate::measure::{LatencyHistogram, SecondLatency, SecondSeries};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a job may run looking for a steady state when no limit is given.
pub const DEFAULT_MAX: Duration = Duration::from_secs(300);

/// A second is read this long after it closed, so the last completions of every job landed.
const MARGIN_S: f64 = 0.1;

/// Run until steady: the criteria and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySpec {
    /// When the last N seconds count as steady.
    pub criteria: SteadyCriteria,
    /// The job stops here, steady or not (the measured window, ramp excluded).
    pub max: Duration,
}

impl Default for SteadySpec {
    fn default() -> Self {
        SteadySpec {
            criteria: SteadyCriteria::default(),
            max: DEFAULT_MAX,
        }
    }
}

impl SteadySpec {
    /// The criteria parsed from `N,RANGE,SLOPE` (empty: SNIA's 5,20,10) and the limit;
    /// `Err` names the flag at fault.
    pub fn parse(criteria: &str, max: Duration) -> crate::Result<SteadySpec> {
        let criteria = SteadyCriteria::parse(criteria)
            .map_err(|e| crate::Error::invalid("--steady-state", e))?;
        SteadySpec::new(criteria, max)
    }

    /// The criteria and the limit, which must leave room for the criteria's N seconds.
    pub fn new(criteria: SteadyCriteria, max: Duration) -> crate::Result<SteadySpec> {
        if max < Duration::from_secs(criteria.windows as u64) {
            return Err(crate::Error::invalid(
                "--steady-max",
                format!(
                    "{max:?} is shorter than the {} one-second windows the criteria need; give at \
                     least {} s",
                    criteria.windows, criteria.windows
                ),
            ));
        }
        Ok(SteadySpec { criteria, max })
    }
}

/// One job's live per-second I/O counts, indexed by second of the measured window.
pub(crate) type Live = Arc<[AtomicU64]>;

/// A live array with room for every second up to `max` (later seconds are not watched).
pub(crate) fn live(max: Duration) -> Live {
    (0..max.as_secs() as usize + 2)
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// Watch the jobs from the opening of the measured window `t0` until the criteria hold (then
/// set `stop` and return the number of seconds it took) or `done()` / `stop` / Ctrl-C.
pub(crate) fn watch(
    c: &SteadyCriteria,
    lives: &[Live],
    t0: Instant,
    done: impl Fn() -> bool,
    stop: &AtomicBool,
) -> Option<usize> {
    let len = lives.iter().map(|l| l.len()).min().unwrap_or(0);
    let mut series: Vec<f64> = Vec::with_capacity(len);
    loop {
        if done() || stop.load(Ordering::SeqCst) || crate::cancel::requested() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
        let closed = (t0.elapsed().as_secs_f64() - MARGIN_S).floor().max(0.0) as usize;
        while series.len() < closed.min(len) {
            let s = series.len();
            series.push(
                lives
                    .iter()
                    .map(|l| l[s].load(Ordering::Relaxed))
                    .sum::<u64>() as f64,
            );
            if let Some(end) = first_steady_end(&series, c) {
                stop.store(true, Ordering::SeqCst);
                return Some(end);
            }
        }
    }
}

/// The end of the trailing window when the series' last `windows` values are steady.
fn first_steady_end(series: &[f64], c: &SteadyCriteria) -> Option<usize> {
    let n = c.windows.max(2);
    (series.len() >= n && is_steady(&series[series.len() - n..], c)).then_some(series.len())
}

/// The report: with the window `[end − N, end)` when the watcher saw it steady, else how far
/// the last N whole seconds of `iops` were from the criteria.
pub(crate) fn report(
    spec: &SteadySpec,
    end: Option<usize>,
    iops: &[f64],
    runtime_s: f64,
    series: &SecondSeries,
    lat: &SecondLatency,
) -> SteadyReport {
    let n = spec.criteria.windows;
    let window = end.map(|end| summarise(series, lat, end - n..end));
    // Not reached: how far the last whole seconds were (a trailing partial second is noise).
    let whole = &iops[..iops.len().min(runtime_s.floor() as usize)];
    let last = match end {
        Some(end) => iops.get(end - n..end).and_then(excursions),
        None if whole.len() >= n => excursions(&whole[whole.len() - n..]),
        None => None,
    };
    SteadyReport {
        criteria: spec.criteria,
        max_s: spec.max.as_secs_f64(),
        reached: end.is_some(),
        at_s: end.map(|e| e as u64),
        window,
        range_pct: last.map(|l| l.0),
        slope_pct: last.map(|l| l.1),
    }
}

/// Rates and latency over the seconds `secs` of the measured window.
pub(crate) fn summarise(
    series: &SecondSeries,
    lat: &SecondLatency,
    secs: std::ops::Range<usize>,
) -> SteadyWindow {
    let span = secs.len().max(1) as f64;
    let (mut ios, mut writes, mut bytes) = (0, 0, 0);
    for s in secs.clone() {
        ios += series.ios_at(s);
        writes += series.writes_at(s);
        bytes += series.bytes_at(s);
    }
    let buckets = lat.buckets(secs.clone());
    let lo = buckets.iter().map(|b| b[0]).min().unwrap_or(0);
    let hi = buckets.iter().map(|b| b[0]).max().unwrap_or(0);
    // The exact sum is not kept per second: the mean comes from the bucket values.
    let sum: u128 = buckets.iter().map(|b| b[0] as u128 * b[1] as u128).sum();
    let h = LatencyHistogram::from_sparse(&buckets, lo, hi, sum);
    SteadyWindow {
        start_s: secs.start as u64,
        end_s: secs.end as u64,
        read_ios: ios - writes,
        write_ios: writes,
        bytes,
        iops: ios as f64 / span,
        read_iops: (ios - writes) as f64 / span,
        write_iops: writes as f64 / span,
        bw_bytes: bytes as f64 / span,
        lat_ns: latency_ns(&h),
    }
}

/// Percentiles of a histogram in the report's form.
pub(crate) fn latency_ns(h: &LatencyHistogram) -> LatencyNs {
    LatencyNs {
        min: h.min(),
        mean: h.mean(),
        max: h.max(),
        p50: h.quantile(0.50),
        p90: h.quantile(0.90),
        p99: h.quantile(0.99),
        p99_9: h.quantile(0.999),
        p99_99: h.quantile(0.9999),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_and_limit_are_checked() {
        let s = SteadySpec::parse("", DEFAULT_MAX).unwrap();
        assert_eq!(s.criteria, SteadyCriteria::default());
        let s = SteadySpec::parse("8, 15, 5%", Duration::from_secs(60)).unwrap();
        assert_eq!(
            (
                s.criteria.windows,
                s.criteria.range_pct,
                s.criteria.slope_pct
            ),
            (8, 15.0, 5.0)
        );
        for bad in ["5,20", "x,20,10", "1,20,10", "5,0,10", "5,20,-1"] {
            assert!(SteadySpec::parse(bad, DEFAULT_MAX).is_err(), "{bad}");
        }
        let e = SteadySpec::parse("10,20,10", Duration::from_secs(5)).unwrap_err();
        assert!(e.to_string().contains("--steady-max"), "{e}");
    }

    #[test]
    fn the_watcher_stops_the_jobs_once_the_live_counts_are_steady() {
        let c = SteadyCriteria::default();
        let l = live(Duration::from_secs(20));
        // Six seconds already closed: a burst, then five on a plateau.
        for (s, v) in [400, 100, 101, 99, 100, 100].iter().enumerate() {
            l[s].store(*v, Ordering::Relaxed);
        }
        let stop = AtomicBool::new(false);
        let t0 = Instant::now() - Duration::from_secs(6);
        let end = watch(&c, &[l], t0, || false, &stop);
        assert_eq!(end, Some(6));
        assert!(stop.load(Ordering::SeqCst), "the jobs are told to stop");
    }

    #[test]
    fn the_watcher_returns_when_the_jobs_end_unsteady() {
        let l = live(Duration::from_secs(20));
        for (s, v) in [100, 300, 100, 300, 100, 300].iter().enumerate() {
            l[s].store(*v, Ordering::Relaxed);
        }
        let stop = AtomicBool::new(false);
        let t0 = Instant::now() - Duration::from_secs(6);
        let calls = std::cell::Cell::new(0);
        let done = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        assert_eq!(
            watch(&SteadyCriteria::default(), &[l], t0, done, &stop),
            None
        );
        assert!(!stop.load(Ordering::SeqCst));
    }

    #[test]
    fn the_window_has_its_own_rates_and_percentiles() {
        let mut series = SecondSeries::with_capacity(4);
        let mut lat = SecondLatency::default();
        // Second 0: a slow burst; seconds 1–2: 3 I/Os each, one of them a write, 1 ms.
        for _ in 0..10 {
            series.add(0, 4096, true);
            lat.record(0, 50_000_000);
        }
        for s in 1..3 {
            for k in 0..3 {
                series.add(s, 4096, k == 0);
                lat.record(s, 1_000_000);
            }
        }
        let w = summarise(&series, &lat, 1..3);
        assert_eq!((w.start_s, w.end_s), (1, 3));
        assert_eq!((w.read_ios, w.write_ios), (4, 2));
        assert_eq!((w.iops, w.read_iops, w.write_iops), (3.0, 2.0, 1.0));
        assert_eq!(w.bw_bytes, 3.0 * 4096.0);
        let near = |x: u64, want: u64| (x as f64 - want as f64).abs() / (want as f64) < 0.01;
        assert!(
            near(w.lat_ns.p99, 1_000_000),
            "the burst's 50 ms is outside the window: {:?}",
            w.lat_ns
        );
    }

    #[test]
    fn not_reached_reports_how_far_the_last_window_was() {
        let spec = SteadySpec::default();
        let iops = [100.0, 80.0, 120.0, 80.0, 120.0, 100.0, 55.0];
        let r = report(
            &spec,
            None,
            &iops,
            6.5,
            &SecondSeries::default(),
            &SecondLatency::default(),
        );
        assert!(!r.reached && r.window.is_none() && r.at_s.is_none());
        // The last five whole seconds (80, 120, 80, 120, 100): range 40 % of a mean of 100.
        assert!((r.range_pct.unwrap() - 40.0).abs() < 1e-9, "{r:?}");
    }
}
