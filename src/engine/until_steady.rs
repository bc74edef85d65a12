//! Run-until-steady (`--steady-state`), by the SNIA Solid State Storage Performance Test
//! Specification's rules: the job runs in *rounds* (60 s each by default, `--steady-round`),
//! and stops once the last N rounds' IOPS (5 by default) range within 20 % of their mean and
//! their least-squares line moves by at most 10 % of it across the window, or after 25
//! rounds (or `--steady-max`, whichever is first). The per-second series inside each round is
//! kept for the charts. A quick mode (`--steady-quick`) judges one-second windows instead:
//! a stability check for a short look, never called SNIA steady state.
//!
//! On a block device steady state is claimed only after preconditioning (SNIA's
//! workload-independent 2 × capacity of 128 KiB sequential writes, `--precondition`); a
//! device that was not preconditioned gets "not preconditioned" and no claim, because a fresh
//! or trimmed SSD is steady on its fresh-out-of-box plateau until its write cliff.
//!
//! The job threads publish their count of the current second with one relaxed store per I/O
//! into a per-job array of atomics (no lock, no read-modify-write); the watcher reads a second
//! only once it closed, plus a margin for the threads' clocks starting a few µs apart, and
//! judges the rounds each time one closes.

use super::report::{LatencyNs, SteadyReport, SteadyWindow};
use crate::Error;
use crate::measure::snia_criteria::{SteadyCriteria, excursions, is_steady};
use crate::measure::{LatencyHistogram, SecondLatency, SecondSeries};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// SNIA's round length: about a minute of the test's workload.
pub const DEFAULT_ROUND: Duration = Duration::from_secs(60);

/// SNIA's round limit: a job that is not steady after this many rounds is reported as such.
pub const ROUND_LIMIT: u32 = 25;

/// Longest round accepted (`--steady-round`).
pub const MAX_ROUND: Duration = Duration::from_secs(3600);

/// How long a quick-mode job (`--steady-quick`) may run looking for a stable stretch when no
/// limit is given.
pub const QUICK_DEFAULT_MAX: Duration = Duration::from_secs(300);

/// A second is read this long after it closed, so the last completions of every job landed.
const MARGIN_S: f64 = 0.1;

/// What the target's flash went through before the rounds: whether steady state can be
/// claimed there at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conditioning {
    /// A file (on a filesystem, an image, a `--dir` target): the page cache and the backing
    /// storage's caches sit between the job and any flash; the rounds are a stability check.
    #[default]
    NotADevice,
    /// A block device written without SNIA's workload-independent preconditioning first.
    NotPreconditioned,
    /// A block device after 2 × its capacity of 128 KiB sequential writes (`--precondition`).
    Preconditioned,
}

/// Run until steady: the criteria over rounds, the round length, the limit, and what the
/// target went through before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySpec {
    /// When the last N rounds (quick mode: seconds) count as steady.
    pub criteria: SteadyCriteria,
    /// The job stops here, steady or not (the measured window, ramp excluded); only whole
    /// rounds count, and never more than [`ROUND_LIMIT`] of them.
    pub max: Duration,
    /// Length of one round (whole seconds); 1 s in the quick mode.
    #[serde(default = "default_round")]
    pub round: Duration,
    /// The quick mode: one-second windows, no round limit beyond `max`, not SNIA.
    #[serde(default)]
    pub quick: bool,
    /// What the target went through before (set by the command from the target).
    #[serde(default)]
    pub conditioning: Conditioning,
}

fn default_round() -> Duration {
    DEFAULT_ROUND
}

impl Default for SteadySpec {
    /// SNIA: 5 rounds of 60 s within 20 % / 10 %, at most 25 rounds.
    fn default() -> Self {
        SteadySpec {
            criteria: SteadyCriteria::default(),
            max: DEFAULT_ROUND * ROUND_LIMIT,
            round: DEFAULT_ROUND,
            quick: false,
            conditioning: Conditioning::NotADevice,
        }
    }
}

impl SteadySpec {
    /// The criteria parsed from `N,RANGE,SLOPE` (empty: SNIA's 5,20,10) with the other
    /// settings as [`SteadySpec::new`] takes them; `Err` names the flag at fault.
    pub fn parse(
        criteria: &str,
        max: Option<Duration>,
        round: Option<Duration>,
        quick: bool,
    ) -> crate::Result<SteadySpec> {
        let criteria =
            SteadyCriteria::parse(criteria).map_err(|e| Error::invalid("--steady-state", e))?;
        SteadySpec::new(criteria, max, round, quick)
    }

    /// The spec these settings ask for, defaults filled in (`--steady-round` 60 s, 1 s in
    /// the quick mode; `--steady-max` 25 rounds, 5 min in the quick mode), not yet checked.
    pub fn assemble(
        criteria: SteadyCriteria,
        max: Option<Duration>,
        round: Option<Duration>,
        quick: bool,
    ) -> SteadySpec {
        let round = round.unwrap_or(if quick {
            Duration::from_secs(1)
        } else {
            DEFAULT_ROUND
        });
        let max = max.unwrap_or(if quick {
            QUICK_DEFAULT_MAX
        } else {
            round.saturating_mul(ROUND_LIMIT)
        });
        SteadySpec {
            criteria,
            max,
            round,
            quick,
            conditioning: Conditioning::NotADevice,
        }
    }

    /// [`SteadySpec::assemble`], checked.
    pub fn new(
        criteria: SteadyCriteria,
        max: Option<Duration>,
        round: Option<Duration>,
        quick: bool,
    ) -> crate::Result<SteadySpec> {
        let s = SteadySpec::assemble(criteria, max, round, quick);
        s.check()?;
        Ok(s)
    }

    /// Every check of the steady-state settings, in one place (exit 2 naming the flag):
    /// `--steady-round` whole seconds from 1 s to 1 h and not with `--steady-quick`; a window
    /// of at most [`ROUND_LIMIT`] rounds (the quick mode: any the criteria allow);
    /// `--steady-max` at least N rounds long.
    pub fn check(&self) -> crate::Result<()> {
        let (round, quick, n) = (self.round, self.quick, self.criteria.windows);
        if quick && round != Duration::from_secs(1) {
            return Err(Error::invalid(
                "--steady-round",
                "has no meaning with --steady-quick, which judges one-second windows; drop one of \
                 them",
            ));
        }
        if round.subsec_nanos() != 0 || round.is_zero() || round > MAX_ROUND {
            return Err(Error::invalid(
                "--steady-round",
                format!(
                    "{}: a round must be whole seconds from 1 s to 1 h (SNIA's is about a minute: \
                     --steady-round 60s)",
                    crate::units::format_duration(round)
                ),
            ));
        }
        if !quick && n > ROUND_LIMIT as usize {
            return Err(Error::invalid(
                "--steady-state",
                format!(
                    "a window of {n} rounds cannot fit in the {ROUND_LIMIT}-round limit; use at \
                     most {ROUND_LIMIT} (SNIA: 5), or --steady-quick for one-second windows"
                ),
            ));
        }
        let need = round * n as u32;
        if self.max < need {
            let what = if quick {
                format!("{n} one-second windows")
            } else {
                format!("{n} rounds of {}", crate::units::format_duration(round))
            };
            return Err(Error::invalid(
                "--steady-max",
                format!(
                    "{} is shorter than the {what} the window needs; give at least {}{}",
                    crate::units::format_duration(self.max),
                    crate::units::format_duration(need),
                    if quick {
                        ""
                    } else {
                        " (or a shorter --steady-round)"
                    }
                ),
            ));
        }
        Ok(())
    }

    /// The same spec for a target that went through `c`.
    pub fn on(mut self, c: Conditioning) -> SteadySpec {
        self.conditioning = c;
        self
    }

    /// Seconds per round (1 in the quick mode).
    pub fn round_s(&self) -> u64 {
        if self.quick {
            1
        } else {
            self.round.as_secs().max(1)
        }
    }

    /// How many rounds the job may run: whole rounds within `max`, at most [`ROUND_LIMIT`]
    /// (the quick mode has no round limit of its own).
    pub fn round_limit(&self) -> u64 {
        let fit = self.max.as_secs() / self.round_s();
        if self.quick {
            fit
        } else {
            fit.min(u64::from(ROUND_LIMIT))
        }
    }

    /// The measured time the job may run: the round limit's whole rounds.
    pub fn limit(&self) -> Duration {
        Duration::from_secs(self.round_limit() * self.round_s())
    }

    /// `5 rounds of 60 s within 20 % range / 10 % slope` (quick: `5 one-second windows …`).
    pub fn criteria_text(&self) -> String {
        let c = &self.criteria;
        let unit = if self.quick {
            "one-second windows".to_string()
        } else {
            format!("rounds of {} s", self.round_s())
        };
        format!(
            "{} {unit} within {} % range / {} % slope",
            c.windows, c.range_pct, c.slope_pct
        )
    }

    /// What the rule is called: SNIA's only for rounds.
    pub fn rule_name(&self) -> &'static str {
        if self.quick {
            "quick mode, not SNIA"
        } else {
            "SNIA PTS rule"
        }
    }
}

/// One job's live per-second I/O counts, indexed by second of the measured window.
pub(crate) type Live = Arc<[AtomicU64]>;

/// A live array with room for every second up to `limit` (later seconds are not watched).
pub(crate) fn live(limit: Duration) -> Live {
    (0..limit.as_secs() as usize + 2)
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// Mean IOPS of each whole round of `round_s` seconds in a per-second count series.
pub fn rounds_of(per_second: &[f64], round_s: usize) -> Vec<f64> {
    per_second
        .chunks_exact(round_s.max(1))
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect()
}

/// The number of rounds it took (the window's end) when the trailing N rounds of `rounds`
/// are steady.
fn trailing_steady(rounds: &[f64], c: &SteadyCriteria) -> Option<usize> {
    let n = c.windows.max(2);
    (rounds.len() >= n && is_steady(&rounds[rounds.len() - n..], c)).then_some(rounds.len())
}

/// The first round at whose end the trailing N rounds were steady (rounds it took), as the
/// watcher sees them one at a time.
pub fn first_steady_end(rounds: &[f64], c: &SteadyCriteria) -> Option<usize> {
    (1..=rounds.len()).find_map(|k| trailing_steady(&rounds[..k], c))
}

/// The least-squares line through a window, for the plot: its mean and its change per round
/// (the line passes through the mean at the window's middle).
pub fn fit(w: &[f64]) -> Option<(f64, f64)> {
    let n = w.len();
    if n < 2 {
        return None;
    }
    let mean = w.iter().sum::<f64>() / n as f64;
    let xm = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    Some((mean, sxy / sxx))
}

/// Watch the jobs from the opening of the measured window `t0` until the last N rounds are
/// steady (then set `stop` and return the number of rounds it took) or `done()` / `stop` /
/// Ctrl-C.
pub(crate) fn watch(
    spec: &SteadySpec,
    lives: &[Live],
    t0: Instant,
    done: impl Fn() -> bool,
    stop: &AtomicBool,
) -> Option<usize> {
    let len = lives.iter().map(|l| l.len()).min().unwrap_or(0);
    let r = spec.round_s() as usize;
    let mut seconds: Vec<f64> = Vec::with_capacity(len);
    let mut rounds: Vec<f64> = Vec::new();
    loop {
        if done() || stop.load(Ordering::SeqCst) || crate::cancel::requested() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
        let closed = (t0.elapsed().as_secs_f64() - MARGIN_S).floor().max(0.0) as usize;
        while seconds.len() < closed.min(len) {
            let s = seconds.len();
            seconds.push(
                lives
                    .iter()
                    .map(|l| l[s].load(Ordering::Relaxed))
                    .sum::<u64>() as f64,
            );
            if !seconds.len().is_multiple_of(r) {
                continue;
            }
            let tail = &seconds[seconds.len() - r..];
            rounds.push(tail.iter().sum::<f64>() / r as f64);
            if let Some(end) = trailing_steady(&rounds, &spec.criteria) {
                stop.store(true, Ordering::SeqCst);
                return Some(end);
            }
        }
    }
}

/// The verdict of a job's rounds and whether steady state is claimed: only when the criteria
/// held, and on a device only after preconditioning.
pub fn verdict(reached: bool, c: Conditioning) -> (&'static str, bool) {
    match (reached, c) {
        (false, _) => ("not steady", false),
        (true, Conditioning::Preconditioned) => ("steady", true),
        (true, Conditioning::NotPreconditioned) => ("not preconditioned", false),
        (true, Conditioning::NotADevice) => ("stable, not a device", false),
    }
}

/// The report: the rounds, with the window the watcher saw steady (ending at round `end`), or
/// how far the last N whole rounds were from the criteria.
pub(crate) fn report(
    spec: &SteadySpec,
    end: Option<usize>,
    runtime_s: f64,
    series: &SecondSeries,
    lat: &SecondLatency,
) -> SteadyReport {
    let n = spec.criteria.windows;
    let r = spec.round_s() as usize;
    // Whole seconds only (a trailing partial second is noise), then whole rounds.
    let per_second: Vec<f64> = (0..runtime_s.floor() as usize)
        .map(|s| series.ios_at(s) as f64)
        .collect();
    let rounds = rounds_of(&per_second, r);
    let judged = match end {
        Some(end) => Some(end.min(rounds.len()).saturating_sub(n)..end.min(rounds.len())),
        None if rounds.len() >= n => Some(rounds.len() - n..rounds.len()),
        None => None,
    }
    .filter(|w| !w.is_empty());
    let w = judged.clone().map(|j| &rounds[j]);
    let ex = w.and_then(excursions);
    let line = w.and_then(fit);
    let window = end.map(|end| summarise(series, lat, (end - n) * r..end * r));
    let (verdict, claimed) = verdict(end.is_some(), spec.conditioning);
    SteadyReport {
        criteria: spec.criteria,
        max_s: spec.max.as_secs_f64(),
        reached: end.is_some(),
        at_s: end.map(|e| (e * r) as u64),
        window,
        range_pct: ex.map(|x| x.0),
        slope_pct: ex.map(|x| x.1),
        round_s: r as f64,
        quick: spec.quick,
        round_limit: spec.round_limit() as u32,
        rounds,
        window_rounds: judged.map(|j| [j.start as u32 + 1, j.end as u32]),
        window_mean: line.map(|l| l.0),
        window_slope: line.map(|l| l.1),
        conditioning: spec.conditioning,
        claimed,
        verdict: verdict.into(),
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

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_default_is_snia_rounds_and_every_flag_is_checked() {
        let s = SteadySpec::parse("", None, None, false).unwrap();
        assert_eq!(s, SteadySpec::default());
        assert_eq!(
            (s.round_s(), s.round_limit(), s.limit()),
            (60, 25, secs(1500))
        );
        assert_eq!(
            s.criteria_text(),
            "5 rounds of 60 s within 20 % range / 10 % slope"
        );
        let s = SteadySpec::parse("8, 15, 5%", Some(secs(60)), Some(secs(5)), false).unwrap();
        assert_eq!((s.criteria.windows, s.round_limit()), (8, 12));
        // More time than 25 rounds: the round limit wins.
        let s = SteadySpec::parse("", Some(secs(3600)), Some(secs(5)), false).unwrap();
        assert_eq!((s.round_limit(), s.limit()), (25, secs(125)));
        // A limit that is not a whole number of rounds: whole rounds only.
        let s = SteadySpec::parse("", Some(secs(33)), Some(secs(5)), false).unwrap();
        assert_eq!(s.round_limit(), 6);
        for bad in [
            "5,20", "x,20,10", "1,20,10", "5,0,10", "5,20,-1", "26,20,10",
        ] {
            let e = SteadySpec::parse(bad, None, Some(secs(2)), false).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains("--steady-state"), "{bad}: {e}");
        }
        let flag = |e: crate::Error| e.to_string();
        let e = SteadySpec::parse("", Some(secs(20)), Some(secs(5)), false).unwrap_err();
        assert!(
            flag(e).contains("--steady-max"),
            "5 rounds of 5 s need 25 s"
        );
        let e = SteadySpec::parse("", None, None, false)
            .and_then(|_| SteadySpec::parse("", Some(secs(299)), None, false))
            .unwrap_err();
        assert!(flag(e).contains("at least 5 min"));
        for bad in [Duration::from_millis(1500), Duration::ZERO, secs(3601)] {
            let e = SteadySpec::parse("", None, Some(bad), false).unwrap_err();
            assert!(flag(e).contains("--steady-round"), "{bad:?}");
        }
        let e = SteadySpec::parse("", None, Some(secs(5)), true).unwrap_err();
        assert!(flag(e).contains("--steady-quick"));
    }

    #[test]
    fn the_quick_mode_judges_seconds_and_is_never_called_snia() {
        let q = SteadySpec::parse("", None, None, true).unwrap();
        assert_eq!((q.round_s(), q.round_limit(), q.max), (1, 300, secs(300)));
        assert_eq!(q.rule_name(), "quick mode, not SNIA");
        assert!(!q.criteria_text().contains("SNIA"));
        assert!(q.criteria_text().starts_with("5 one-second windows"));
        // A 30-second window is fine in the quick mode (no 25-round limit there).
        assert!(SteadySpec::parse("30,20,10", None, None, true).is_ok());
        let e = SteadySpec::parse("", Some(secs(3)), None, true).unwrap_err();
        assert!(e.to_string().contains("--steady-max"), "{e}");
    }

    /// A consumer SSD's write cliff, as the rounds would see it: a fresh-out-of-box burst
    /// that decays, then at round 8 the IOPS fall to a third (the spare area is used up)
    /// and hold there with a few % of noise.
    fn cliff_at_round_8() -> Vec<f64> {
        let before = [
            62_000.0, 58_000.0, 53_500.0, 49_000.0, 45_000.0, 41_000.0, 37_500.0,
        ];
        let after = [
            14_200.0, 13_600.0, 14_000.0, 13_300.0, 14_100.0, 13_800.0, 13_900.0,
        ];
        before.iter().chain(after.iter()).copied().collect()
    }

    #[test]
    fn a_write_cliff_at_round_8_is_not_steady_until_five_rounds_after_it() {
        let rounds = cliff_at_round_8();
        let c = SteadyCriteria::default();
        let end = first_steady_end(&rounds, &c).expect("steady after the cliff");
        // Rounds 8–12 (1-based) form the first steady window: nothing before the cliff.
        assert_eq!(end, 12);
        for k in 5..end {
            assert!(
                !is_steady(&rounds[k - 5..k], &c),
                "rounds {}–{k} were judged steady",
                k - 4
            );
        }
        // The same series through the live watcher, rounds of 2 s: it stops at round 12.
        let l = live(secs(60));
        for (i, v) in rounds.iter().enumerate() {
            for s in 0..2 {
                l[2 * i + s].store(*v as u64, Ordering::Relaxed);
            }
        }
        let spec = SteadySpec::parse("", None, Some(secs(2)), false).unwrap();
        let stop = AtomicBool::new(false);
        let t0 = Instant::now() - secs(2 * rounds.len() as u64);
        assert_eq!(watch(&spec, &[l], t0, || false, &stop), Some(12));
        assert!(stop.load(Ordering::SeqCst), "the jobs are told to stop");
    }

    #[test]
    fn a_flat_fresh_plateau_before_the_cliff_meets_the_criteria_so_a_device_needs_preconditioning()
    {
        // Why steady state is not claimed on a device that was not preconditioned: a fresh
        // drive can hold its burst speed flat for five rounds before the cliff.
        let mut rounds = vec![
            50_000.0, 50_500.0, 49_800.0, 50_200.0, 50_100.0, 49_900.0, 50_000.0,
        ];
        rounds.extend([14_000.0; 7]);
        assert_eq!(
            first_steady_end(&rounds, &SteadyCriteria::default()),
            Some(5)
        );
        assert_eq!(
            verdict(true, Conditioning::NotPreconditioned),
            ("not preconditioned", false)
        );
        assert_eq!(
            verdict(true, Conditioning::Preconditioned),
            ("steady", true)
        );
        assert_eq!(
            verdict(false, Conditioning::Preconditioned),
            ("not steady", false)
        );
        assert!(!verdict(true, Conditioning::NotADevice).1);
    }

    #[test]
    fn the_watcher_returns_when_the_jobs_end_unsteady() {
        let l = live(secs(20));
        for (s, v) in [100, 300, 100, 300, 100, 300].iter().enumerate() {
            l[s].store(*v, Ordering::Relaxed);
        }
        let stop = AtomicBool::new(false);
        let t0 = Instant::now() - secs(6);
        let calls = std::cell::Cell::new(0);
        let done = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        let quick = SteadySpec::parse("", None, None, true).unwrap();
        assert_eq!(watch(&quick, &[l], t0, done, &stop), None);
        assert!(!stop.load(Ordering::SeqCst));
    }

    #[test]
    fn rounds_average_their_seconds_and_drop_a_partial_round() {
        assert_eq!(rounds_of(&[1.0, 3.0, 5.0, 7.0, 9.0], 2), vec![2.0, 6.0]);
        let (mean, slope) = fit(&[96.0, 98.0, 100.0, 102.0, 104.0]).unwrap();
        assert_eq!((mean, slope), (100.0, 2.0));
        assert!(fit(&[1.0]).is_none());
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

    /// A series of `per_round` I/Os per second for rounds of `r` seconds.
    fn series_of(per_round: &[u64], r: usize) -> (SecondSeries, SecondLatency) {
        let mut series = SecondSeries::with_capacity(per_round.len() * r);
        let mut lat = SecondLatency::default();
        for (i, &n) in per_round.iter().enumerate() {
            for s in 0..r {
                for _ in 0..n {
                    series.add(i * r + s, 4096, true);
                    lat.record(i * r + s, 100_000);
                }
            }
        }
        (series, lat)
    }

    #[test]
    fn the_report_lists_the_rounds_the_window_and_its_line() {
        let spec = SteadySpec::parse("", None, Some(secs(2)), false)
            .unwrap()
            .on(Conditioning::Preconditioned);
        let (series, lat) = series_of(&[400, 100, 96, 98, 100, 102, 104], 2);
        let r = report(&spec, Some(7), 14.1, &series, &lat);
        assert_eq!(
            r.rounds,
            vec![400.0, 100.0, 96.0, 98.0, 100.0, 102.0, 104.0]
        );
        assert_eq!(r.window_rounds, Some([3, 7]));
        assert_eq!((r.window_mean, r.window_slope), (Some(100.0), Some(2.0)));
        assert_eq!((r.at_s, r.round_s, r.round_limit), (Some(14), 2.0, 25));
        let w = r.window.as_ref().unwrap();
        assert_eq!((w.start_s, w.end_s, w.iops), (4, 14, 100.0));
        assert!(r.claimed && r.verdict == "steady");
        // The same rounds on a device that was not preconditioned: not claimed.
        let r = report(
            &spec.on(Conditioning::NotPreconditioned),
            Some(7),
            14.1,
            &series,
            &lat,
        );
        assert!(r.reached && !r.claimed && r.verdict == "not preconditioned");
    }

    #[test]
    fn not_reached_reports_how_far_the_last_rounds_were() {
        let spec = SteadySpec::parse("", None, Some(secs(2)), false).unwrap();
        // 15 s: seven whole rounds (the eighth's second half is missing, so it is left out).
        let (series, lat) = series_of(&[100, 80, 120, 80, 120, 100, 55, 300], 2);
        let r = report(&spec, None, 15.0, &series, &lat);
        assert!(!r.reached && r.window.is_none() && r.at_s.is_none());
        assert_eq!(r.rounds.len(), 7);
        assert_eq!(r.window_rounds, Some([3, 7]));
        // Rounds 3–7 are 120, 80, 120, 100, 55.
        let want = excursions(&[120.0, 80.0, 120.0, 100.0, 55.0]).unwrap();
        assert!((r.range_pct.unwrap() - want.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.verdict, "not steady");
    }
}
