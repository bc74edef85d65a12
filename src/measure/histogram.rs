//! Log-linear latency histogram (HDR-style): ≤ 1 % relative error, exact min/max, mergeable.

/// A latency histogram in nanoseconds.
#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    _private: (),
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        todo!()
    }
    /// Record one latency.
    pub fn record(&mut self, ns: u64) {
        let _ = ns;
        todo!()
    }
    /// Add every count of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let _ = other;
        todo!()
    }
    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        todo!()
    }
    /// Exact minimum (0 when empty).
    pub fn min(&self) -> u64 {
        todo!()
    }
    /// Exact maximum (0 when empty).
    pub fn max(&self) -> u64 {
        todo!()
    }
    /// Exact mean.
    pub fn mean(&self) -> f64 {
        todo!()
    }
    /// Sum of all values, ns.
    pub fn sum(&self) -> u128 {
        todo!()
    }
    /// Value at quantile `q` in [0, 1] (e.g. 0.99), within 1 %.
    pub fn quantile(&self, q: f64) -> u64 {
        let _ = q;
        todo!()
    }
    /// Non-empty buckets as `[representative value, count]`.
    pub fn to_sparse(&self) -> Vec<[u64; 2]> {
        todo!()
    }
    /// Rebuild from [`Self::to_sparse`] output plus the exact min, max and sum.
    pub fn from_sparse(buckets: &[[u64; 2]], min: u64, max: u64, sum: u128) -> Self {
        let _ = (buckets, min, max, sum);
        todo!()
    }
}
