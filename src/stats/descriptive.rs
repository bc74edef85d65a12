//! Descriptive statistics over a handful of rounds: median, spread, mean, standard deviation.
//!
//! Benchmarks run 3–5 rounds, so everything here is exact and allocation-light; quantiles use
//! linear interpolation between order statistics (Hyndman & Fan type 7, what R and NumPy do by
//! default) so results match what a reader would get by hand.

/// Median of `values` (mean of the two middle values for even n); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    sort(&mut v);
    median_sorted(&v)
}

/// Median of an already sorted slice.
pub fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Quantile `q` in [0, 1] of an already sorted slice (type 7 interpolation).
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Arithmetic mean; NaN when empty.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation (n − 1 in the denominator); 0 for fewer than two values.
pub fn stddev(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (values.len() - 1) as f64).sqrt()
}

/// Sort floats ascending; NaNs go last so they never masquerade as a minimum.
pub fn sort(v: &mut [f64]) {
    v.sort_by(|a, b| a.total_cmp(b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        // R: quantile(c(1,2,3,4,5,6,7,8,9,10), 0.9) == 9.1
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((quantile_sorted(&v, 0.9) - 9.1).abs() < 1e-12);
        // R: sd(c(2,4,4,4,5,5,7,9)) == 2.13809
        let s = stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!((s - 2.138_089_935).abs() < 1e-6);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
    }
}
