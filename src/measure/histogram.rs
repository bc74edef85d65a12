//! Log-linear latency histogram (HDR-style): ≤ 1 % relative error, exact min/max, mergeable.
//!
//! Values below 256 ns get one bucket each. Above that, every power of two is split into 128
//! equal buckets, so a bucket is at most 1/128 of its lower bound wide; reporting its midpoint
//! keeps the relative error under 0.4 %. 7424 `u64` counters cover the whole `u64` range, so
//! recording is one `leading_zeros`, a shift and an increment: no allocation, no branches on
//! ranges, cheap enough to sit on every I/O.

/// log2 of the number of buckets per power of two.
const SUB_BITS: u32 = 7;
/// Buckets per power of two.
const SUB: u64 = 1 << SUB_BITS;
/// Values below this get an exact bucket each.
const LINEAR: u64 = 2 * SUB;
/// Total number of buckets (covers every u64).
const BUCKETS: usize = (LINEAR + (64 - SUB_BITS as u64 - 1) * SUB) as usize;

/// A latency histogram in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyHistogram {
    /// Lazily allocated so that `Default` stays cheap for unused directions.
    counts: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

/// Bucket index of a value.
#[inline(always)]
fn index_of(v: u64) -> usize {
    if v < LINEAR {
        v as usize
    } else {
        let msb = 63 - v.leading_zeros();
        let shift = msb - SUB_BITS;
        let m = v >> shift; // in [SUB, 2*SUB)
        (LINEAR + (shift as u64 - 1) * SUB + (m - SUB)) as usize
    }
}

/// Lowest value and width of a bucket.
fn bounds_of(idx: usize) -> (u64, u64) {
    let idx = idx as u64;
    if idx < LINEAR {
        (idx, 1)
    } else {
        let rel = idx - LINEAR;
        let shift = rel / SUB + 1;
        let m = rel % SUB + SUB;
        (m << shift, 1u64 << shift)
    }
}

/// The value that stands for a bucket: its midpoint (inside the bucket, so it maps back).
fn representative(idx: usize) -> u64 {
    let (low, width) = bounds_of(idx);
    low + (width - 1) / 2
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Record one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
            self.min = u64::MAX;
        }
        // SAFETY-free fast path: index_of is always < BUCKETS for any u64.
        self.counts[index_of(ns)] += 1;
        self.count += 1;
        self.sum += ns as u128;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Add every count of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        if self.counts.is_empty() {
            *self = other.clone();
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forget everything recorded (keeps the allocation; used when a ramp ends).
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact minimum (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min }
    }

    /// Exact maximum (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Sum of all values, ns.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Value at quantile `q` in [0, 1] (e.g. 0.99), within 1 %.
    ///
    /// Like fio, the answer is the smallest recorded value with at least `q × count` values at
    /// or below it, reported as its bucket's midpoint clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = q.clamp(0.0, 1.0);
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return representative(i).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Non-empty buckets as `[representative value, count]`.
    pub fn to_sparse(&self) -> Vec<[u64; 2]> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| [representative(i), *c])
            .collect()
    }

    /// Rebuild from [`Self::to_sparse`] output plus the exact min, max and sum.
    pub fn from_sparse(buckets: &[[u64; 2]], min: u64, max: u64, sum: u128) -> Self {
        let mut h = LatencyHistogram::new();
        for &[value, count] in buckets {
            h.counts[index_of(value)] += count;
            h.count += count;
        }
        if h.count > 0 {
            h.min = min;
            h.max = max;
            h.sum = sum;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiny deterministic generator so the tests need no extra crate.
    struct SplitMix(u64);
    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Exact quantile with the same rank rule as the histogram.
    fn exact(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    fn check(values: Vec<u64>) {
        let mut h = LatencyHistogram::new();
        for &v in &values {
            h.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for q in [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            let want = exact(&sorted, q) as f64;
            let got = h.quantile(q) as f64;
            let err = (got - want).abs() / want.max(1.0);
            assert!(err <= 0.01, "q={q}: got {got}, want {want}, error {err}");
        }
        assert_eq!(h.min(), sorted[0]);
        assert_eq!(h.max(), *sorted.last().unwrap());
        assert_eq!(h.count(), values.len() as u64);
        let sum: u128 = values.iter().map(|&v| v as u128).sum();
        assert_eq!(h.sum(), sum);
    }

    #[test]
    fn every_value_maps_inside_its_bucket() {
        let mut r = SplitMix(7);
        for _ in 0..200_000 {
            let v = r.next() >> (r.next() % 64);
            let i = index_of(v);
            assert!(i < BUCKETS);
            let (low, width) = bounds_of(i);
            assert!(v >= low && v - low < width, "v={v} low={low} width={width}");
            assert_eq!(index_of(representative(i)), i);
            if low >= LINEAR {
                assert!(width as f64 / low as f64 <= 1.0 / SUB as f64);
            }
        }
        assert_eq!(index_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn uniform_distribution() {
        let mut r = SplitMix(1);
        check((0..100_000).map(|_| 1_000 + r.next() % 99_000).collect());
    }

    #[test]
    fn exponential_distribution() {
        let mut r = SplitMix(2);
        check(
            (0..200_000)
                .map(|_| (-(1.0 - r.unit()).ln() * 50_000.0) as u64 + 1)
                .collect(),
        );
    }

    #[test]
    fn lognormal_heavy_tail() {
        let mut r = SplitMix(3);
        check(
            (0..200_000)
                .map(|_| {
                    // Box–Muller.
                    let (u1, u2) = (r.unit().max(1e-12), r.unit());
                    let n = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                    (10.0 + 1.5 * n).exp() as u64 + 1
                })
                .collect(),
        );
    }

    #[test]
    fn merge_equals_recording_everything() {
        let mut r = SplitMix(4);
        let vals: Vec<u64> = (0..50_000).map(|_| r.next() % 10_000_000).collect();
        let (mut a, mut b, mut all) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for (i, &v) in vals.iter().enumerate() {
            if i % 3 == 0 { &mut a } else { &mut b }.record(v);
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let mut empty = LatencyHistogram::default();
        empty.merge(&all);
        assert_eq!(empty, all);
    }

    #[test]
    fn sparse_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in [5u64, 5, 300, 70_000, 1 << 40] {
            h.record(v);
        }
        let back = LatencyHistogram::from_sparse(&h.to_sparse(), h.min(), h.max(), h.sum());
        assert_eq!(back, h);
        assert_eq!(h.to_sparse().len(), 4);
    }

    #[test]
    fn empty_is_zero() {
        let h = LatencyHistogram::default();
        assert_eq!((h.count(), h.min(), h.max(), h.quantile(0.5)), (0, 0, 0, 0));
        assert_eq!(h.mean(), 0.0);
    }
}
