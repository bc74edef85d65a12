//! xoshiro256++: the offset and data generator. Small, fast, seedable, good enough statistics.
//!
//! Written out here (a dozen lines) so the hot path inlines it without trait indirection.

/// xoshiro256++ state.
#[derive(Debug, Clone)]
pub struct Xoshiro {
    s: [u64; 4],
}

/// splitmix64 step: expands one seed into well-mixed words (the seeding xoshiro's authors
/// recommend).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Xoshiro {
    /// A generator seeded from one u64.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        Xoshiro {
            s: [
                splitmix(&mut sm),
                splitmix(&mut sm),
                splitmix(&mut sm),
                splitmix(&mut sm),
            ],
        }
    }

    /// Next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `[0, n)` (Lemire's multiply-shift; the bias is below 2^-40 for the
    /// block counts we use).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// A fresh seed for runs without `--seed` (fio's randrepeat=0); see [`crate::host::sys::fresh_seed`].
pub use crate::host::sys::fresh_seed;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_uniform_enough() {
        let (mut a, mut b) = (Xoshiro::new(42), Xoshiro::new(42));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut hits = [0u32; 10];
        for _ in 0..100_000 {
            hits[a.below(10) as usize] += 1;
        }
        assert!(
            hits.iter().all(|&h| (9_000..11_000).contains(&h)),
            "{hits:?}"
        );
        assert_ne!(fresh_seed(), fresh_seed());
    }
}
