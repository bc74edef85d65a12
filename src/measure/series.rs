//! Per-second IOPS and bandwidth: a per-thread counter array indexed by elapsed second.
//!
//! Each I/O adds to the slot of the second it completed in, which costs an index and two adds;
//! threads' arrays are summed at the end.

/// I/Os and bytes per elapsed second of the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondSeries {
    ios: Vec<u64>,
    bytes: Vec<u64>,
}

impl SecondSeries {
    /// A series with room for `seconds` slots, so the hot path does not allocate.
    pub fn with_capacity(seconds: usize) -> Self {
        SecondSeries {
            ios: vec![0; seconds],
            bytes: vec![0; seconds],
        }
    }

    /// Count one I/O of `bytes` completed during second `sec` of the window.
    #[inline]
    pub fn add(&mut self, sec: usize, bytes: u64) {
        if sec >= self.ios.len() {
            // Rare (once per second at most, size-based jobs only): grow.
            self.ios.resize(sec + 1, 0);
            self.bytes.resize(sec + 1, 0);
        }
        self.ios[sec] += 1;
        self.bytes[sec] += bytes;
    }

    /// Forget everything (keeps the allocation).
    pub fn reset(&mut self) {
        self.ios.iter_mut().for_each(|c| *c = 0);
        self.bytes.iter_mut().for_each(|c| *c = 0);
    }

    /// Add another thread's series.
    pub fn merge(&mut self, other: &SecondSeries) {
        if other.ios.len() > self.ios.len() {
            self.ios.resize(other.ios.len(), 0);
            self.bytes.resize(other.bytes.len(), 0);
        }
        for (i, (n, b)) in other.ios.iter().zip(&other.bytes).enumerate() {
            self.ios[i] += n;
            self.bytes[i] += b;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_rates() {
        let mut a = SecondSeries::with_capacity(2);
        let mut b = SecondSeries::with_capacity(1);
        a.add(0, 4096);
        a.add(1, 4096);
        b.add(0, 4096);
        b.add(2, 8192);
        a.merge(&b);
        assert_eq!(a.iops(2.5), vec![2.0, 1.0, 2.0]);
        assert_eq!(a.bandwidth(2.0), vec![8192.0, 4096.0]);
        assert_eq!(a.iops(2.05), vec![2.0, 1.0]);
    }
}
