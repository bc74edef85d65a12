//! The disk's own pace taken out of a paired ratio.
//!
//! On a virtual disk most of the noise left after pairing comes a slot at a time: one
//! setup's five minutes of a round fall on a slow patch of the host's disk, and every job of
//! that slot is slow. Right before each I/O job on an image target the runner measures the
//! disk beside the image (a 0.5 s read of a file of its own, outside the filesystem under
//! test: [`crate::metrics::registry::DISK_REF_IOPS`]). Where that reference tracks the job,
//! the paired log ratio is judged after taking out its share:
//!
//! `ln(a/b) − β̂ · ln(ref_a / ref_b)`
//!
//! with β̂ the slope of the job's log value on the reference's, fitted over every setup's
//! rounds of the run on the two-way (round × setup) residuals, where neither the setups' levels
//! nor the rounds' shared noise can lend it a slope. β̂'s own error widens the interval
//! ([`adjust`]); a job that does not track the disk gets a slope near zero and an interval a
//! little wider than the plain one. Only a pace is adjusted (a throughput or a latency, not a
//! cost such as CPU time or write amplification, and never chosen from the data, since
//! choosing from the data what to adjust would make the intervals too narrow). The plain
//! ratio is judged where the reference's level differs by setup (then taking it out would
//! move the ratio, not only narrow it: the premise the error rate rests on), with fewer than
//! [`MIN_PAIR_ROUNDS`]. In a `--until-settled` run each look judges the rounds up to it as
//! they came: the slope fitted on those rounds alone ([`Ratios::at`]), so the report settles a
//! question at the look the run settled it at. docs/reports.md ("The disk's own pace") has the
//! measurements behind it.

use super::student_t;
use crate::metrics::MetricKey;
use crate::metrics::registry::DISK_REF_IOPS;
use crate::results::Results;
use std::collections::BTreeMap;

/// The error rate of the check that chooses the plain ratio where the reference's level
/// differs by setup. At 10 % the check's own false alarms cost the adjusted statistic its
/// stated error rate (the runs it sends back to the plain ratio are the ones whose setups met
/// different patches, where the plain ratio errs most: 10.6 % wrong, simulated); at 5 %
/// the rate holds (9.8 %). `cargo test --lib simulation -- --nocapture` prints the table.
pub const CHECK_ALPHA: f64 = 0.05;

/// The fewest rounds a fit uses: with two, the residuals of three setups have two degrees of
/// freedom, one of which the slope takes.
pub const MIN_ROUNDS: usize = 3;

/// A fitted slope of a job's log value on the reference's log value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The slope β̂.
    pub beta: f64,
    /// Its variance: the residual variance, on (rounds − 1)(setups − 1) − 1 degrees of
    /// freedom, over the reference's residual sum of squares.
    pub var_beta: f64,
    /// The reference's residual sum of squares over the grid (what a pair's share of the
    /// slope's degree of freedom is measured against).
    pub sxx: f64,
}

/// Why a grid was not fitted, or its fit is not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Fewer than two setups or [`MIN_ROUNDS`] complete rounds.
    TooFew,
    /// The reference did not vary once the setups' levels and the rounds' shared part are
    /// taken out: there is no slope to fit.
    Flat,
    /// The reference's level differs by setup (F test at [`CHECK_ALPHA`]).
    DiffersBySetup,
}

/// Two-way residuals of a setups × rounds grid: value − setup mean − round mean + grand mean.
fn residuals(g: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let (s, r) = (g.len(), g[0].len());
    let grand = g.iter().flatten().sum::<f64>() / (s * r) as f64;
    let row: Vec<f64> = g.iter().map(|v| v.iter().sum::<f64>() / r as f64).collect();
    let col: Vec<f64> = (0..r)
        .map(|k| g.iter().map(|v| v[k]).sum::<f64>() / s as f64)
        .collect();
    g.iter()
        .zip(&row)
        .map(|(v, m)| v.iter().zip(&col).map(|(x, c)| x - m - c + grand).collect())
        .collect()
}

/// Upper tail of the F distribution with (`d1`, `d2`) degrees of freedom at `f`.
fn f_upper(f: f64, d1: f64, d2: f64) -> f64 {
    if f <= 0.0 {
        return 1.0;
    }
    // P(F > f) = I_{d2/(d2 + d1 f)}(d2/2, d1/2).
    student_t::inc_beta(d2 / (d2 + d1 * f), d2 / 2.0, d1 / 2.0)
}

/// Fit the log values `y[setup][round]` on the reference's `x[setup][round]` (complete grids,
/// the same shape), or say why the plain ratio is judged instead.
pub fn fit_grid(y: &[Vec<f64>], x: &[Vec<f64>]) -> Result<Fit, Skip> {
    let s = y.len();
    let r = y.first().map_or(0, Vec::len);
    if s < 2 || r < MIN_ROUNDS || x.len() != s || x.iter().chain(y).any(|v| v.len() != r) {
        return Err(Skip::TooFew);
    }
    let df_two_way = (r - 1) * (s - 1);
    let (ey, ex) = (residuals(y), residuals(x));
    let dot = |a: &[Vec<f64>], b: &[Vec<f64>]| -> f64 {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(p, q)| p * q)
            .sum()
    };
    let (sxx, sxy, syy) = (dot(&ex, &ex), dot(&ex, &ey), dot(&ey, &ey));
    if sxx <= 0.0 || !sxx.is_finite() {
        return Err(Skip::Flat);
    }
    // The reference alike across setups: its setup means against its residual noise.
    let grand = x.iter().flatten().sum::<f64>() / (s * r) as f64;
    let between: f64 = x
        .iter()
        .map(|v| (v.iter().sum::<f64>() / r as f64 - grand).powi(2))
        .sum::<f64>()
        * r as f64;
    let f = (between / (s - 1) as f64) / (sxx / df_two_way as f64);
    if f_upper(f, (s - 1) as f64, df_two_way as f64) < CHECK_ALPHA {
        return Err(Skip::DiffersBySetup);
    }
    let df = df_two_way - 1;
    let beta = sxy / sxx;
    let var_beta = ((syy - beta * sxy).max(0.0) / df as f64) / sxx;
    Ok(Fit {
        beta,
        var_beta,
        sxx,
    })
}

/// The fewest paired rounds adjusted: with three, the residuals' own degrees of freedom (two,
/// less the slope's share) make the interval wider than the plain one's.
pub const MIN_PAIR_ROUNDS: usize = 4;

/// The adjusted log ratios of one pair: `d` the job's paired log ratios, `p` the reference's
/// (same rounds), or `None` where the plain ratio is judged instead (fewer than
/// [`MIN_PAIR_ROUNDS`]).
///
/// The mean of the result is the mean of `d − β̂·p`. Its spread is widened so that the
/// t interval at `alpha` the one statistic draws from it ([`super::paired::judge`], n − 1
/// degrees of freedom) is the adjusted mean's own: variance `s²/n + p̄²·var(β̂)`, where `s²`
/// and the t quantile have n − 1 − h degrees of freedom. `h = Σ(p − p̄)² / (2·Sxx)` is the
/// pair's share of the slope's degree of freedom: the slope was fitted on every setup's
/// rounds, these among them, so their residuals came out that much smaller than the noise
/// (the expectation of their sum of squares is σ²·(n − 1 − h)).
pub fn adjust(d: &[f64], p: &[f64], fit: &Fit, alpha: f64) -> Option<Vec<f64>> {
    let n = d.len();
    if n < MIN_PAIR_ROUNDS || p.len() != n {
        return None;
    }
    let nf = n as f64;
    let p_mean = super::descriptive::mean(p);
    let e: Vec<f64> = d.iter().zip(p).map(|(d, p)| d - fit.beta * p).collect();
    let e_mean = super::descriptive::mean(&e);
    let ss: f64 = e.iter().map(|x| (x - e_mean).powi(2)).sum();
    let spp: f64 = p.iter().map(|x| (x - p_mean).powi(2)).sum();
    let df = nf - 1.0 - (spp / (2.0 * fit.sxx)).min(1.0);
    let q = |df: f64| student_t::quantile(1.0 - alpha / 2.0, df);
    // Half-widths squared: the one the adjusted mean needs, and the one judge() would draw.
    let want = q(df).powi(2) * (ss / df / nf + p_mean * p_mean * fit.var_beta);
    let plain = q(nf - 1.0).powi(2) * (ss / (nf - 1.0) / nf);
    let k = if plain > 0.0 {
        (want / plain).sqrt()
    } else {
        1.0
    };
    Some(e.iter().map(|x| e_mean + (x - e_mean) * k).collect())
}

/// Paired ratios of one metric of one workload: `num` over `den` per round, round order, and
/// the slope they were adjusted with (`None`: the plain ratios).
#[derive(Debug, Clone, PartialEq)]
pub struct Ratios {
    /// The per-round ratios (adjusted when `beta` is set).
    pub ratios: Vec<f64>,
    /// The slope β̂ of the adjustment, when one was made.
    pub beta: Option<f64>,
    /// In a `--until-settled` run whose rounds read the disk, the ratios each look judged:
    /// `looks[k − 1]` those of the look at k paired rounds, adjusted on the rounds up to it
    /// alone, as the run saw them when it looked (a later round moves the slope, and with
    /// it every earlier adjusted ratio). `None`: each look judges a prefix of `ratios`.
    pub looks: Option<Vec<Vec<f64>>>,
}

impl Ratios {
    /// Plain ratios, every look a prefix (a single setup's values, a test's numbers).
    pub fn plain(ratios: Vec<f64>) -> Ratios {
        Ratios {
            ratios,
            beta: None,
            looks: None,
        }
    }

    /// The ratios the look at `k` paired rounds judges (k ≤ [`Ratios::len`]; none at 0).
    pub fn at(&self, k: usize) -> &[f64] {
        match &self.looks {
            Some(looks) if k > 0 => &looks[k - 1],
            _ => &self.ratios[..k],
        }
    }

    /// The paired rounds: the last look's.
    pub fn len(&self) -> usize {
        self.ratios.len()
    }

    /// Whether no round paired.
    pub fn is_empty(&self) -> bool {
        self.ratios.is_empty()
    }
}

/// One setup's per-round values of a job's metric and of the reading before it.
type Series = (BTreeMap<u32, f64>, BTreeMap<u32, f64>);

/// One setup's per-round values of `workload`'s `metric` ([`super::paired::per_round`]) up
/// to round `last` (every round: `None`).
fn per_round(
    results: &Results,
    setup: &str,
    workload: &str,
    metric: &str,
    last: Option<u32>,
) -> BTreeMap<u32, f64> {
    let mut m = super::paired::per_round(results, setup, workload, &MetricKey::parse(metric));
    if let Some(last) = last {
        m.retain(|r, _| *r <= last);
    }
    m
}

/// The fit of `workload`'s `metric` in `results` over every setup that ran it, on the rounds
/// up to `last` (every round: `None`) where each has a positive value and a reference;
/// `None` when there is no reference (not an image target, rounds by steps, an older file).
pub fn fit_of(
    results: &Results,
    workload: &str,
    metric: &str,
    last: Option<u32>,
) -> Option<Result<Fit, Skip>> {
    let class = crate::metrics::def(metric).class;
    let pace = matches!(
        class,
        crate::metrics::Class::Throughput | crate::metrics::Class::Latency
    );
    if !pace {
        return None;
    }
    let reference = DISK_REF_IOPS.as_str();
    let mut setups: Vec<Series> = results
        .setups
        .iter()
        .map(|s| {
            (
                per_round(results, &s.name, workload, metric, last),
                per_round(results, &s.name, workload, reference, last),
            )
        })
        .filter(|(y, _)| !y.is_empty())
        .collect();
    if setups.iter().all(|(_, x)| x.is_empty()) {
        return None;
    }
    setups.retain(|(_, x)| !x.is_empty());
    let rounds: Vec<u32> = setups
        .first()
        .map(|(y, _)| y.keys().copied().collect())
        .unwrap_or_default();
    let ok = |m: &BTreeMap<u32, f64>, r: u32| m.get(&r).is_some_and(|v| *v > 0.0);
    let complete: Vec<u32> = rounds
        .into_iter()
        .filter(|r| setups.iter().all(|(y, x)| ok(y, *r) && ok(x, *r)))
        .collect();
    let grid = |pick: fn(&Series) -> &BTreeMap<u32, f64>| {
        setups
            .iter()
            .map(|s| complete.iter().map(|r| pick(s)[r].ln()).collect())
            .collect::<Vec<Vec<f64>>>()
    };
    Some(fit_grid(&grid(|s| &s.0), &grid(|s| &s.1)))
}

/// The paired ratios `num`/`den` of `workload`'s `metric`, round order, with the disk's pace
/// taken out where the run measured it and the checks allow ([`fit_of`], [`adjust`]). In a
/// `--until-settled` run with readings, each look's own ratios too ([`Ratios::looks`]): a
/// look at round R judges what the run judged after round R, the slope fitted on the rounds
/// up to R, so a question is settled in the report at the look the run settled it at.
pub fn ratios(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    num: &str,
    den: &str,
) -> Ratios {
    let all = ratios_through(results, workload, metric, num, den, None);
    let m = metric.as_str();
    let read =
        |setup: &str| !per_round(results, setup, workload, DISK_REF_IOPS.as_str(), None).is_empty();
    if results.settle.is_none() || !(read(num) && read(den)) {
        return all;
    }
    // The paired rounds, in order: the look at k pairs judges the rounds up to the k-th.
    let (a, b) = (
        per_round(results, num, workload, m, None),
        per_round(results, den, workload, m, None),
    );
    let paired: Vec<u32> = a
        .iter()
        .filter(|(r, _)| b.get(r).is_some_and(|y| *y != 0.0))
        .map(|(r, _)| *r)
        .collect();
    // The looks re-read the samples once each: only this workload's (and what the rule
    // reads), not every sample of the run.
    let mut mine = Results::new();
    mine.setups = results.setups.clone();
    mine.settle = results.settle.clone();
    mine.error = results.error.clone();
    mine.samples = results
        .samples
        .iter()
        .filter(|s| s.workload == workload)
        .cloned()
        .collect();
    let looks: Vec<Vec<f64>> = paired
        .iter()
        .map(|r| ratios_through(&mine, workload, metric, num, den, Some(*r)).ratios)
        .collect();
    if looks.len() != all.ratios.len() {
        return all;
    }
    Ratios {
        looks: Some(looks),
        ..all
    }
}

/// [`ratios`] on the rounds up to `last` (every round: `None`), without the looks.
fn ratios_through(
    results: &Results,
    workload: &str,
    metric: &MetricKey,
    num: &str,
    den: &str,
    last: Option<u32>,
) -> Ratios {
    let m = metric.as_str();
    let (a, b) = (
        per_round(results, num, workload, m, last),
        per_round(results, den, workload, m, last),
    );
    let plain = Ratios::plain(super::paired::paired(&a, &b));
    let Some(Ok(fit)) = fit_of(results, workload, m, last) else {
        return plain;
    };
    let reference = DISK_REF_IOPS.as_str();
    let (ra, rb) = (
        per_round(results, num, workload, reference, last),
        per_round(results, den, workload, reference, last),
    );
    let mut d = Vec::new();
    let mut p = Vec::new();
    for (r, x) in &a {
        let Some(y) = b.get(r) else { continue };
        if *y == 0.0 {
            continue;
        }
        // Every paired round must have both references, or the pair is judged plain.
        match (ra.get(r), rb.get(r)) {
            (Some(u), Some(v)) if *x > 0.0 && *y > 0.0 && *u > 0.0 && *v > 0.0 => {
                d.push((x / y).ln());
                p.push((u / v).ln());
            }
            _ => return plain,
        }
    }
    let alpha = super::paired::rule_for(results, d.len()).alpha;
    match adjust(&d, &p, &fit, alpha) {
        Some(e) => Ratios {
            ratios: e.into_iter().map(f64::exp).collect(),
            beta: Some(fit.beta),
            looks: None,
        },
        None => plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid whose job tracks the reference with slope 0.8 plus a little noise of its own.
    fn tracking() -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let x: Vec<Vec<f64>> = vec![
            vec![0.0, -0.3, 0.1, 0.05, -0.5],
            vec![-0.2, 0.1, 0.0, -0.4, 0.2],
            vec![0.1, 0.0, -0.6, 0.1, 0.0],
        ];
        let own = [0.02, -0.01, 0.015, -0.02, 0.005];
        let y = x
            .iter()
            .enumerate()
            .map(|(s, v)| {
                v.iter()
                    .enumerate()
                    .map(|(r, x)| s as f64 * 0.1 + 0.8 * x + own[(r + s) % 5])
                    .collect()
            })
            .collect();
        (y, x)
    }

    #[test]
    fn a_tracking_job_is_fitted_and_its_pair_narrowed_around_the_same_lead() {
        let (y, x) = tracking();
        let fit = fit_grid(&y, &x).unwrap();
        assert!((fit.beta - 0.8).abs() < 0.05, "{fit:?}");
        // Setup 1 against setup 0: a true lead of 0.1 in logs, blurred by the reference.
        let d: Vec<f64> = (0..5).map(|r| y[1][r] - y[0][r]).collect();
        let p: Vec<f64> = (0..5).map(|r| x[1][r] - x[0][r]).collect();
        let e = adjust(&d, &p, &fit, 0.1).unwrap();
        let sd = super::super::descriptive::stddev;
        assert!(sd(&e) < sd(&d) / 2.0, "{e:?} {d:?}");
        let mean = super::super::descriptive::mean(&e);
        assert!((mean - 0.1).abs() < 0.03, "{mean}");
    }

    #[test]
    fn a_slope_near_zero_where_the_job_does_not_track_and_none_where_the_setup_moves_it() {
        let (_, x) = tracking();
        // A job with noise of its own unrelated to the reference.
        let y: Vec<Vec<f64>> = vec![
            vec![0.1, -0.1, 0.2, 0.0, 0.1],
            vec![0.0, 0.2, -0.1, 0.1, -0.2],
            vec![-0.1, 0.0, 0.1, -0.2, 0.15],
        ];
        let fit = fit_grid(&y, &x).unwrap();
        assert!(fit.beta.abs() < 0.5, "{fit:?}");
        let flat = vec![vec![0.0; 5]; 3];
        assert_eq!(fit_grid(&y, &flat), Err(Skip::Flat));
        // The reference of setup 2 ran 30 % faster every round: the setup moves it.
        let (y, mut x) = tracking();
        for v in &mut x[2] {
            *v += 0.3f64.ln_1p() * 3.0;
        }
        assert_eq!(fit_grid(&y, &x), Err(Skip::DiffersBySetup));
        assert_eq!(fit_grid(&y[..1], &x[..1]), Err(Skip::TooFew));
    }

    #[test]
    fn the_widening_carries_the_slopes_error_and_its_share_of_a_degree_of_freedom() {
        let fit = Fit {
            beta: 1.0,
            var_beta: 0.04,
            sxx: 0.5,
        };
        // A pair whose references differ on average (p̄ = 0.1, within noise).
        let d = [0.3, 0.1, 0.25, 0.05, 0.2];
        let p = [0.2, 0.0, 0.15, -0.05, 0.2];
        let e = adjust(&d, &p, &fit, 0.1).unwrap();
        let raw: Vec<f64> = d.iter().zip(&p).map(|(d, p)| d - p).collect();
        let (sd, mean) = (
            super::super::descriptive::stddev,
            super::super::descriptive::mean,
        );
        assert!((mean(&e) - mean(&raw)).abs() < 1e-12);
        // judge()'s half-width on the widened values is t(ν)·√(s²/5 + p̄²·var), s² = SS/ν,
        // ν = 4 − Σ(p − p̄)²/(2·Sxx).
        let ss = sd(&raw).powi(2) * 4.0;
        let spp = sd(&p).powi(2) * 4.0;
        let nu = 4.0 - spp / (2.0 * 0.5);
        let want = student_t::quantile(0.95, nu) * (ss / nu / 5.0 + 0.01 * 0.04).sqrt();
        let got = student_t::quantile(0.95, 4.0) * sd(&e) / 5f64.sqrt();
        assert!((want - got).abs() < 1e-9, "{want} {got}");
        // Three rounds: the plain ratio.
        assert_eq!(adjust(&d[..3], &p[..3], &fit, 0.1), None);
    }

    /// Three setups × five rounds of randread IOPS that follow the disk's reading, xfs 10 %
    /// ahead of ext4 in truth; CPU time beside them.
    fn run() -> Results {
        use crate::results::{Sample, SetupInfo};
        let (y, x) = tracking();
        let mut r = Results::new();
        for (s, name) in ["ext4", "xfs", "btrfs"].iter().enumerate() {
            r.setups.push(SetupInfo {
                name: name.to_string(),
                fs: name.to_string(),
                ..Default::default()
            });
            for round in 0..5 {
                let lead = if s == 1 { 0.1 } else { 0.0 };
                for (metric, v) in [
                    (
                        "iops",
                        50_000.0 * (y[s][round] - 0.1 * s as f64 + lead).exp(),
                    ),
                    ("disk_ref_iops", 40_000.0 * x[s][round].exp()),
                    ("cpu_util", 3.0 * (y[s][round]).exp()),
                ] {
                    r.samples.push(Sample {
                        setup: name.to_string(),
                        workload: "randread".into(),
                        metric: MetricKey::parse(metric),
                        unit: String::new(),
                        round: round as u32 + 1,
                        value: v,
                    });
                }
            }
        }
        r
    }

    #[test]
    fn compare_reads_the_adjusted_ratios_of_a_pace_and_the_plain_ones_elsewhere() {
        use crate::stats::paired::{Outcome, compare};
        let r = run();
        let iops = MetricKey::parse("iops");
        let j = compare(&r, "randread", &iops, "xfs", "ext4");
        assert!(j.adjusted.is_some_and(|b| (b - 0.8).abs() < 0.1), "{j:?}");
        assert_eq!(j.outcome, Outcome::Ahead, "{j:?}");
        assert!((j.ratio - 1.1f64).abs() < 0.05, "{j:?}");
        // A cost is never adjusted.
        let cpu = compare(&r, "randread", &MetricKey::parse("cpu_util"), "xfs", "ext4");
        assert_eq!(cpu.adjusted, None);
        // Without readings (a device target, an older file): the plain ratios.
        let mut plain = run();
        plain.samples.retain(|s| s.metric != DISK_REF_IOPS);
        let p = compare(&plain, "randread", &iops, "xfs", "ext4");
        assert_eq!(p.adjusted, None);
        assert!(p.noise.unwrap() > j.noise.unwrap(), "{p:?} {j:?}");
    }

    #[test]
    fn an_until_settled_run_judges_each_look_on_the_rounds_up_to_it() {
        let iops = MetricKey::parse("iops");
        let fixed = run();
        // Fixed rounds: one look, at every round; a look is a prefix.
        let f = ratios(&fixed, "randread", &iops, "xfs", "ext4");
        assert_eq!(f.looks, None);
        assert_eq!(f.at(3), &f.ratios[..3]);
        let mut settled = run();
        settled.settle = Some(crate::results::SettleRecord {
            alpha: 0.10,
            min_rounds: 3,
            max_rounds: 5,
            last_look: Some(5),
            ..Default::default()
        });
        let s = ratios(&settled, "randread", &iops, "xfs", "ext4");
        // The last look is the whole run's adjusted ratios, as in a run of fixed rounds.
        assert_eq!((s.beta, &s.ratios), (f.beta, &f.ratios));
        let looks = s
            .looks
            .as_ref()
            .expect("looks of a settled run with readings");
        assert_eq!(looks.len(), 5);
        assert!(looks.iter().enumerate().all(|(k, l)| l.len() == k + 1));
        assert_eq!(s.at(5), &s.ratios[..]);
        // At 3 rounds the pair is judged plain (fewer than MIN_PAIR_ROUNDS), as the run saw it,
        // not the first three of ratios adjusted with a slope the later rounds moved.
        let plain = crate::stats::paired::paired(
            &crate::stats::paired::per_round(&settled, "xfs", "randread", &iops),
            &crate::stats::paired::per_round(&settled, "ext4", "randread", &iops),
        );
        assert_eq!(s.at(3), &plain[..3]);
        assert_ne!(s.at(3), &s.ratios[..3]);
        // At 4: adjusted, on the slope of rounds 1–4 alone, which differs from rounds 1–5's.
        let four = fit_of(&settled, "randread", "iops", Some(4))
            .unwrap()
            .unwrap();
        let five = fit_of(&settled, "randread", "iops", None).unwrap().unwrap();
        assert!((four.beta - five.beta).abs() > 1e-6, "{four:?} {five:?}");
        assert_ne!(s.at(4), &s.ratios[..4]);
        assert!(
            s.at(4)
                .iter()
                .zip(&plain)
                .any(|(a, p)| (a - p).abs() > 1e-9)
        );
        // A settled run without readings (rounds by steps): plain prefixes, no looks.
        let mut unread = settled.clone();
        unread.samples.retain(|x| x.metric != DISK_REF_IOPS);
        let u = ratios(&unread, "randread", &iops, "xfs", "ext4");
        assert_eq!((u.looks, u.beta), (None, None));
    }
}
