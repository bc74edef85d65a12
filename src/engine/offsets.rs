//! Which I/O comes next: direction (read/write by `rwmixread`) and offset inside the job's
//! region (sequential, uniform random for time-based jobs, or a random permutation that visits
//! every block exactly once for size-based random jobs, like fio's random map).

use super::job::RwMode;
use super::rng::Xoshiro;

/// One planned I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    /// True for a write.
    pub write: bool,
    /// Byte offset in the file.
    pub offset: u64,
}

/// A random permutation of `[0, n)` without memory, like fio's random map: a 4-round Feistel
/// network is a keyed bijection on `[0, 2^bits)`; walking a counter through it and skipping
/// values ≥ n (cycle walking) yields every block exactly once in a well-mixed order. `bits`
/// is even and at most two above log2(n), so on average fewer than four steps per block.
#[derive(Debug, Clone)]
struct Permutation {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; 4],
    counter: u64,
    left: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro) -> Self {
        let mut bits = 64 - n.saturating_sub(1).leading_zeros();
        bits = bits.max(2);
        bits += bits % 2;
        let half = bits / 2;
        Permutation {
            n,
            half,
            mask: (1u64 << half) - 1,
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
            counter: 0,
            left: n,
        }
    }

    #[inline(always)]
    fn encrypt(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for k in self.keys {
            let f = ((r ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 29) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        loop {
            let v = self.encrypt(self.counter);
            self.counter += 1;
            if v < self.n {
                self.left -= 1;
                return Some(v);
            }
        }
    }
}

/// Generates the I/Os of one job.
#[derive(Debug, Clone)]
pub struct OffsetGen {
    rw: RwMode,
    rwmixread: u64,
    start: u64,
    bs: u64,
    blocks: u64,
    time_based: bool,
    cursor: u64,
    issued: u64,
    perm: Option<Permutation>,
    rng: Xoshiro,
}

impl OffsetGen {
    /// A generator over `blocks` blocks of `bs` bytes starting at `start`.
    pub fn new(
        rw: RwMode,
        rwmixread: u8,
        start: u64,
        bs: u64,
        blocks: u64,
        time_based: bool,
        seed: u64,
    ) -> Self {
        let mut rng = Xoshiro::new(seed);
        let perm = (rw.random() && !time_based).then(|| Permutation::new(blocks, &mut rng));
        OffsetGen {
            rw,
            rwmixread: rwmixread as u64,
            start,
            bs,
            blocks,
            time_based,
            cursor: 0,
            issued: 0,
            perm,
            rng,
        }
    }

    /// The next I/O, or `None` when a size-based job has covered its region.
    #[inline]
    pub fn next_io(&mut self) -> Option<NextIo> {
        let block = if let Some(p) = &mut self.perm {
            p.next()?
        } else if self.rw.random() {
            self.rng.below(self.blocks)
        } else {
            if self.cursor == self.blocks {
                if !self.time_based {
                    return None;
                }
                self.cursor = 0;
            }
            self.cursor += 1;
            self.cursor - 1
        };
        self.issued += 1;
        let write = match self.rw {
            RwMode::Read | RwMode::Randread => false,
            RwMode::Write | RwMode::Randwrite => true,
            RwMode::Randrw => self.rng.below(100) >= self.rwmixread,
        };
        Some(NextIo {
            write,
            offset: self.start + block * self.bs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_visits_every_block_once() {
        for n in [1u64, 2, 3, 5, 100, 1000, 4096, 5000] {
            let mut g = OffsetGen::new(RwMode::Randread, 0, 8192, 512, n, false, n);
            let mut seen = vec![false; n as usize];
            while let Some(io) = g.next_io() {
                let b = ((io.offset - 8192) / 512) as usize;
                assert!(!seen[b], "block {b} twice (n={n})");
                seen[b] = true;
            }
            assert!(seen.iter().all(|&s| s), "n={n}");
        }
    }

    #[test]
    fn permutation_is_well_mixed() {
        // Consecutive blocks of a random walk should rarely be neighbours, and the low bit
        // should not alternate (it did with a plain power-of-two LCG).
        let n = 1 << 16;
        let mut g = OffsetGen::new(RwMode::Randwrite, 0, 0, 1, n, false, 3);
        let v: Vec<u64> = std::iter::from_fn(|| g.next_io())
            .map(|i| i.offset)
            .collect();
        let near = v.windows(2).filter(|w| w[0].abs_diff(w[1]) <= 1).count();
        assert!(near < 10, "{near} neighbouring steps");
        let flips = v.windows(2).filter(|w| (w[0] ^ w[1]) & 1 == 1).count() as f64;
        assert!((flips / n as f64 - 0.5).abs() < 0.02, "{flips}");
    }

    #[test]
    fn sequential_wraps_only_when_time_based() {
        let mut g = OffsetGen::new(RwMode::Write, 0, 0, 4096, 3, false, 1);
        let offs: Vec<u64> = std::iter::from_fn(|| g.next_io())
            .map(|i| i.offset)
            .collect();
        assert_eq!(offs, vec![0, 4096, 8192]);
        let mut g = OffsetGen::new(RwMode::Read, 0, 0, 4096, 2, true, 1);
        let offs: Vec<u64> = (0..5).map(|_| g.next_io().unwrap().offset).collect();
        assert_eq!(offs, vec![0, 4096, 0, 4096, 0]);
    }

    #[test]
    fn mix_is_close_to_requested() {
        let mut g = OffsetGen::new(RwMode::Randrw, 70, 0, 4096, 1 << 20, true, 9);
        let n = 200_000;
        let reads = (0..n).filter(|_| !g.next_io().unwrap().write).count();
        let frac = reads as f64 / n as f64;
        assert!((frac - 0.70).abs() < 0.01, "{frac}");
    }
}
