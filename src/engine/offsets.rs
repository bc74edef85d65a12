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

/// A full-period walk over `[0, n)` in scrambled order without memory: an LCG modulo the next
/// power of two (full period by Hull–Dobell: c odd, a ≡ 1 mod 4), skipping values ≥ n. The
/// output is then xor-scrambled with a seed-dependent mask inside the power-of-two range
/// (a bijection there, so still a permutation), which hides the LCG's weak low bits.
#[derive(Debug, Clone)]
struct Permutation {
    n: u64,
    mask: u64,
    a: u64,
    c: u64,
    x: u64,
    xor: u64,
    left: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro) -> Self {
        let m = n.next_power_of_two().max(4);
        let mask = m - 1;
        Permutation {
            n,
            mask,
            a: ((rng.next_u64() & mask) & !3) | 1 | 4, // ≡ 1 mod 4 (bit 2 set to avoid a = 1)
            c: (rng.next_u64() & mask) | 1,
            x: rng.next_u64() & mask,
            xor: rng.next_u64() & mask,
            left: n,
        }
    }

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        loop {
            self.x = (self.a.wrapping_mul(self.x).wrapping_add(self.c)) & self.mask;
            let v = self.x ^ self.xor;
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
