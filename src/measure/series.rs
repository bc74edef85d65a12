//! Per-second IOPS and bandwidth: a per-thread counter array indexed by elapsed second.
//!
//! Each I/O adds to the slot of the second it completed in, which costs an index and two adds;
//! threads' arrays are summed at the end. Latency over time ([`SecondLatency`]) keeps one
//! histogram for the current second and swaps it out (as sparse buckets) when a completion
//! lands in a later second, so the hot path stays one histogram record.

use super::LatencyHistogram;

/// I/Os and bytes per elapsed second of the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondSeries {
    ios: Vec<u64>,
    bytes: Vec<u64>,
    /// The writes among `ios` (a steady window's read/write split).
    writes: Vec<u64>,
}

impl SecondSeries {
    /// A series with room for `seconds` slots, so the hot path does not allocate.
    pub fn with_capacity(seconds: usize) -> Self {
        SecondSeries {
            ios: vec![0; seconds],
            bytes: vec![0; seconds],
            writes: vec![0; seconds],
        }
    }

    /// Count one I/O of `bytes` (a write or a read) completed during second `sec` of the window.
    #[inline]
    pub fn add(&mut self, sec: usize, bytes: u64, write: bool) {
        if sec >= self.ios.len() {
            // Rare (once per second at most, size-based jobs only): grow.
            self.grow(sec + 1);
        }
        self.ios[sec] += 1;
        self.bytes[sec] += bytes;
        self.writes[sec] += u64::from(write);
    }

    fn grow(&mut self, len: usize) {
        self.ios.resize(len, 0);
        self.bytes.resize(len, 0);
        self.writes.resize(len, 0);
    }

    /// I/Os completed in second `sec` (0 past the end).
    #[inline]
    pub fn ios_at(&self, sec: usize) -> u64 {
        self.ios.get(sec).copied().unwrap_or(0)
    }

    /// Bytes moved in second `sec`.
    pub fn bytes_at(&self, sec: usize) -> u64 {
        self.bytes.get(sec).copied().unwrap_or(0)
    }

    /// Writes completed in second `sec`.
    pub fn writes_at(&self, sec: usize) -> u64 {
        self.writes.get(sec).copied().unwrap_or(0)
    }

    /// Forget everything (keeps the allocation).
    pub fn reset(&mut self) {
        for v in [&mut self.ios, &mut self.bytes, &mut self.writes] {
            v.iter_mut().for_each(|c| *c = 0);
        }
    }

    /// Add another thread's series.
    pub fn merge(&mut self, other: &SecondSeries) {
        if other.ios.len() > self.ios.len() {
            self.grow(other.ios.len());
        }
        for i in 0..other.ios.len() {
            self.ios[i] += other.ios[i];
            self.bytes[i] += other.bytes[i];
            self.writes[i] += other.writes.get(i).copied().unwrap_or(0);
        }
    }

    /// Per-second values as rates over a window of `window_s` seconds: whole seconds as they
    /// are, a trailing partial second scaled to a rate (dropped when shorter than 0.1 s, where
    /// its rate would be noise).
    fn rates(v: &[u64], window_s: f64) -> Vec<f64> {
        let whole = window_s.floor() as usize;
        let frac = window_s - whole as f64;
        let mut out: Vec<f64> = v.iter().take(whole).map(|&x| x as f64).collect();
        out.resize(whole, 0.0);
        if frac >= 0.1 {
            let last = v.get(whole).copied().unwrap_or(0);
            out.push(last as f64 / frac);
        }
        out
    }

    /// IOPS per second over a window of `window_s` seconds.
    pub fn iops(&self, window_s: f64) -> Vec<f64> {
        Self::rates(&self.ios, window_s)
    }

    /// Bytes per second over a window of `window_s` seconds.
    pub fn bandwidth(&self, window_s: f64) -> Vec<f64> {
        Self::rates(&self.bytes, window_s)
    }
}

/// Per-second latency histograms of one thread (or, after [`SecondLatency::merge`], of a job).
#[derive(Debug, Clone, Default)]
pub struct SecondLatency {
    cur_sec: usize,
    cur: LatencyHistogram,
    /// Finished seconds as sparse buckets, indexed by second.
    done: Vec<Vec<[u64; 2]>>,
}

impl SecondLatency {
    /// Record one latency (ns) completed during second `sec` of the window.
    #[inline]
    pub fn record(&mut self, sec: usize, ns: u64) {
        if sec != self.cur_sec {
            self.flush();
            self.cur_sec = sec;
        }
        self.cur.record(ns);
    }

    /// Move the current second's histogram into `done` (once per second: 7424 counters).
    fn flush(&mut self) {
        if self.cur.count() == 0 {
            return;
        }
        if self.done.len() <= self.cur_sec {
            self.done.resize(self.cur_sec + 1, Vec::new());
        }
        self.done[self.cur_sec].extend(self.cur.to_sparse());
        self.cur.reset();
    }

    /// Forget everything (when the ramp ends).
    pub fn reset(&mut self) {
        self.cur.reset();
        self.cur_sec = 0;
        self.done.clear();
    }

    /// Add another thread's seconds (both are flushed first).
    pub fn merge(&mut self, other: &SecondLatency) {
        self.flush();
        let mut o = other.clone();
        o.flush();
        if o.done.len() > self.done.len() {
            self.done.resize(o.done.len(), Vec::new());
        }
        for (mine, theirs) in self.done.iter_mut().zip(o.done) {
            mine.extend(theirs);
        }
    }

    /// The sparse buckets of the seconds `secs` together (a steady window's latency).
    pub fn buckets(&self, secs: std::ops::Range<usize>) -> Vec<[u64; 2]> {
        let mut me = self.clone();
        me.flush();
        secs.filter_map(|s| me.done.get(s))
            .flatten()
            .copied()
            .collect()
    }

    /// Per-second quantiles `qs` in ms over a window of `window_s` seconds (the same seconds
    /// as [`SecondSeries::iops`]); 0 for a second in which nothing completed.
    pub fn quantiles_ms(&self, window_s: f64, qs: &[f64]) -> Vec<Vec<f64>> {
        let mut me = self.clone();
        me.flush();
        let whole = window_s.floor() as usize;
        let n = whole + usize::from(window_s - whole as f64 >= 0.1);
        let mut out = vec![Vec::with_capacity(n); qs.len()];
        for sec in 0..n {
            let b = me.done.get(sec).map(Vec::as_slice).unwrap_or(&[]);
            let lo = b.iter().map(|x| x[0]).min().unwrap_or(0);
            let hi = b.iter().map(|x| x[0]).max().unwrap_or(0);
            let h = LatencyHistogram::from_sparse(b, lo, hi, 0);
            for (o, q) in out.iter_mut().zip(qs) {
                o.push(h.quantile(*q) as f64 / 1e6);
            }
        }
        out
    }
}

/// Seconds whose IOPS fell below 10 % of the job's median second (a commit or transaction
/// group flush that stalled the job; an average hides them).
pub fn stalls(iops: &[f64]) -> usize {
    if iops.is_empty() {
        return 0;
    }
    let mut v = iops.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    iops.iter().filter(|&&x| x < 0.1 * median).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_count_seconds_under_a_tenth_of_the_median() {
        assert_eq!(stalls(&[]), 0);
        assert_eq!(stalls(&[100.0; 10]), 0);
        // One second at 9 % and one at 10 % of the median (100): only the first is a stall.
        let s = [100.0, 9.0, 100.0, 10.0, 120.0, 90.0, 100.0];
        assert_eq!(stalls(&s), 1);
        // A job that completed nothing in two seconds.
        assert_eq!(stalls(&[50.0, 0.0, 60.0, 0.0, 55.0]), 2);
    }

    #[test]
    fn per_second_latency_swaps_and_merges() {
        let mut a = SecondLatency::default();
        let mut b = SecondLatency::default();
        for _ in 0..99 {
            a.record(0, 1_000_000);
        }
        a.record(0, 50_000_000);
        a.record(2, 3_000_000);
        b.record(1, 2_000_000);
        b.record(2, 3_000_000);
        a.merge(&b);
        let q = a.quantiles_ms(3.0, &[0.5, 0.99, 1.0]);
        let near = |x: f64, want: f64| (x - want).abs() / want < 0.01;
        assert!(
            near(q[0][0], 1.0) && near(q[1][0], 1.0) && near(q[2][0], 50.0),
            "{q:?}"
        );
        assert!(near(q[0][1], 2.0) && near(q[0][2], 3.0), "{q:?}");
        // A window with a second in which nothing completed.
        let q = b.quantiles_ms(4.0, &[0.5]);
        assert_eq!(q[0].len(), 4);
        assert_eq!((q[0][0], q[0][3]), (0.0, 0.0));
    }

    #[test]
    fn merge_and_rates() {
        let mut a = SecondSeries::with_capacity(2);
        let mut b = SecondSeries::with_capacity(1);
        a.add(0, 4096, false);
        a.add(1, 4096, true);
        b.add(0, 4096, false);
        b.add(2, 8192, true);
        a.merge(&b);
        assert_eq!(a.iops(2.5), vec![2.0, 1.0, 2.0]);
        assert_eq!(a.bandwidth(2.0), vec![8192.0, 4096.0]);
        assert_eq!(a.iops(2.05), vec![2.0, 1.0]);
        assert_eq!((a.writes_at(1), a.writes_at(2), a.writes_at(9)), (1, 1, 0));
        assert_eq!((a.ios_at(0), a.bytes_at(2)), (2, 8192));
    }
}
