//! The steady-state criteria of SNIA's Performance Test Specification, over any series: a
//! measurement window of the last `windows` values is steady when its range (max − min) is
//! within `range_pct` % of its mean and the least-squares line through it changes by no more
//! than `slope_pct` % of the mean across the window (PTS defaults: 5, 20 %, 10 %). SNIA applies
//! them to rounds of about a minute (`engine::steady`, `--steady-state`); on one-second values
//! (the quick mode, the after-the-fact look at every job's series) they are only a quick check.

use serde::{Deserialize, Serialize};

/// Criteria of a steady window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyCriteria {
    /// Number of consecutive one-second values in the window.
    pub windows: usize,
    /// Largest allowed range, percent of the window's mean.
    pub range_pct: f64,
    /// Largest allowed change of the fitted line across the window, percent of the mean.
    pub slope_pct: f64,
}

impl Default for SteadyCriteria {
    /// SNIA PTS: 5 rounds, excursion within 20 %, slope excursion within 10 %.
    fn default() -> Self {
        SteadyCriteria {
            windows: 5,
            range_pct: 20.0,
            slope_pct: 10.0,
        }
    }
}

impl SteadyCriteria {
    /// Parse `N,RANGE,SLOPE` (`5,20,10`: five one-second windows, range within 20 % of their
    /// mean, fitted line moving at most 10 %); an empty string is the SNIA default.
    pub fn parse(s: &str) -> Result<SteadyCriteria, String> {
        let t = s.trim();
        if t.is_empty() {
            return Ok(SteadyCriteria::default());
        }
        let parts: Vec<&str> = t.split(',').map(str::trim).collect();
        let [n, range, slope] = parts.as_slice() else {
            return Err(format!(
                "'{s}': write N,RANGE,SLOPE such as 5,20,10 (5 one-second windows, range within \
                 20 % of their mean, trend within 10 %)"
            ));
        };
        let windows: usize = n.parse().map_err(|_| {
            format!("'{n}': the number of windows must be a whole number such as 5")
        })?;
        if !(2..=3600).contains(&windows) {
            return Err(format!("'{n}': the number of windows must be 2 to 3600"));
        }
        let pct = |v: &str, what: &str| -> Result<f64, String> {
            let x: f64 = v
                .trim_end_matches('%')
                .parse()
                .map_err(|_| format!("'{v}': the {what} must be a percentage such as 20"))?;
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(format!("'{v}': the {what} must be above 0 %"))
            }
        };
        Ok(SteadyCriteria {
            windows,
            range_pct: pct(range, "range")?,
            slope_pct: pct(slope, "slope")?,
        })
    }
}

impl std::fmt::Display for SteadyCriteria {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} s within {} % range / {} % slope",
            self.windows, self.range_pct, self.slope_pct
        )
    }
}

/// How far one window strays, in percent of its mean: its range (max − min) and how far the
/// least-squares line through it moves across the window. `None` when the mean is not
/// positive (no I/O) or the window has fewer than two values.
pub fn excursions(w: &[f64]) -> Option<(f64, f64)> {
    let n = w.len();
    if n < 2 {
        return None;
    }
    let mean = w.iter().sum::<f64>() / n as f64;
    // A mean of zero (no I/O) or NaN is never steady.
    if mean.is_nan() || mean <= 0.0 {
        return None;
    }
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    // Least-squares slope per second, times the window's span: how far the fitted line moves.
    let xm = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let moved = (sxy / sxx * (n - 1) as f64).abs();
    Some((100.0 * (hi - lo) / mean, 100.0 * moved / mean))
}

/// Whether `w` (one window) meets the criteria.
pub fn is_steady(w: &[f64], c: &SteadyCriteria) -> bool {
    if w.len() < c.windows.max(2) {
        return false;
    }
    excursions(w).is_some_and(|(range, slope)| range <= c.range_pct && slope <= c.slope_pct)
}

/// The first second (0-based index of the window's last value + 1, i.e. the number of
/// seconds it took) at which the trailing `windows` values of `series` are steady.
pub fn steady_at(series: &[f64], c: &SteadyCriteria) -> Option<usize> {
    let n = c.windows.max(2);
    (n..=series.len()).find(|&end| is_steady(&series[end - n..end], c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_series_is_steady_once_the_window_fills() {
        let c = SteadyCriteria::default();
        assert_eq!(steady_at(&[100.0; 8], &c), Some(5));
        assert_eq!(
            steady_at(&[100.0; 4], &c),
            None,
            "fewer values than windows"
        );
        assert_eq!(
            steady_at(&[0.0; 8], &c),
            None,
            "no I/O is not a steady state"
        );
    }

    #[test]
    fn a_burst_then_a_plateau_is_steady_after_the_burst() {
        // Fresh-out-of-box burst decaying onto 100: steady once five seconds sit on the plateau.
        let s = [
            400.0, 300.0, 200.0, 120.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0,
        ];
        assert_eq!(steady_at(&s, &SteadyCriteria::default()), Some(9));
    }

    #[test]
    fn range_and_slope_are_checked_separately() {
        let c = SteadyCriteria::default();
        // Range 30 % of the mean: not steady, though the trend is flat.
        assert!(!is_steady(&[85.0, 115.0, 85.0, 115.0, 100.0], &c));
        // Range 16 % (within 20 %) but a steady climb of 16 % across the window (over 10 %).
        assert!(!is_steady(&[92.0, 96.0, 100.0, 104.0, 108.0], &c));
        // Range 8 %, line moves 8 %: steady.
        assert!(is_steady(&[96.0, 98.0, 100.0, 102.0, 104.0], &c));
        // Looser criteria accept the climb.
        let loose = SteadyCriteria {
            slope_pct: 20.0,
            ..c
        };
        assert!(is_steady(&[92.0, 96.0, 100.0, 104.0, 108.0], &loose));
    }

    #[test]
    fn limits_are_inclusive_at_the_boundary() {
        let c = SteadyCriteria::default();
        // Range exactly 20 % of the mean (90…110 around 100), no trend: steady.
        let w = [100.0, 90.0, 110.0, 100.0, 100.0];
        assert_eq!(excursions(&w).unwrap().0, 20.0);
        assert!(is_steady(&w, &c));
        // Just over: not.
        assert!(!is_steady(&[100.0, 89.9, 110.1, 100.0, 100.0], &c));
        // A line moving exactly 10 % of the mean across the window: steady; a hair more: not.
        let w = [95.0, 97.5, 100.0, 102.5, 105.0];
        assert_eq!(excursions(&w).unwrap(), (10.0, 10.0));
        assert!(is_steady(&w, &c));
        assert!(!is_steady(&[94.9, 97.5, 100.0, 102.5, 105.1], &c));
    }

    #[test]
    fn a_series_that_never_settles_is_not_reached() {
        // Swinging ±30 % for a minute: the range fails in every window.
        let s: Vec<f64> = (0..60)
            .map(|i| if i % 2 == 0 { 70.0 } else { 130.0 })
            .collect();
        assert_eq!(steady_at(&s, &SteadyCriteria::default()), None);
        // A steady climb of 4 % a second: every window's range is 16 % (passes) but its line
        // moves 16 % (fails), so the slope alone keeps it from being steady.
        let climb: Vec<f64> = (0..30).map(|i| 100.0 * 1.04f64.powi(i)).collect();
        for w in climb.windows(5) {
            let (range, slope) = excursions(w).unwrap();
            assert!(range <= 20.0 && slope > 10.0, "{range} {slope}");
        }
        assert_eq!(steady_at(&climb, &SteadyCriteria::default()), None);
    }

    #[test]
    fn criteria_parse_from_the_flag() {
        assert_eq!(SteadyCriteria::parse(""), Ok(SteadyCriteria::default()));
        assert_eq!(
            SteadyCriteria::parse("10, 15%, 5"),
            Ok(SteadyCriteria {
                windows: 10,
                range_pct: 15.0,
                slope_pct: 5.0
            })
        );
        for bad in [
            "5",
            "5,20,10,1",
            "five,20,10",
            "1,20,10",
            "5,0,10",
            "5,20,inf",
        ] {
            assert!(SteadyCriteria::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            SteadyCriteria::default().to_string(),
            "5 s within 20 % range / 10 % slope"
        );
    }
}
