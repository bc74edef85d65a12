//! Steady-state detection on a per-second series, after SNIA's Performance Test Specification:
//! a measurement window of the last `windows` values is steady when its range (max − min) is
//! within `range_pct` % of its mean and the least-squares line through it changes by no more
//! than `slope_pct` % of the mean across the window (PTS defaults: 5 windows, 20 %, 10 %).

/// Criteria of a steady window.
#[derive(Debug, Clone, Copy, PartialEq)]
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

/// Whether `w` (one window) meets the criteria.
pub fn is_steady(w: &[f64], c: &SteadyCriteria) -> bool {
    let n = w.len();
    if n < c.windows.max(2) {
        return false;
    }
    let mean = w.iter().sum::<f64>() / n as f64;
    // A mean of zero (no I/O) or NaN is never steady.
    if mean.is_nan() || mean <= 0.0 {
        return false;
    }
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if hi - lo > c.range_pct / 100.0 * mean {
        return false;
    }
    // Least-squares slope per second, times the window's span: how far the fitted line moves.
    let xm = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    (slope * (n - 1) as f64).abs() <= c.slope_pct / 100.0 * mean
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
}
