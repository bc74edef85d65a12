//! The offset and data generator: xoshiro256++ from `rand_xoshiro` (small, fast, seedable,
//! good enough statistics), behind the two calls the hot path makes.
//!
//! fsbench used to carry its own copy; `bench/rng-vs-rand_xoshiro.sh` measured the crate as
//! fast on `next_u64` and `below` and produces the same stream for the same seed (both seed
//! through splitmix64), so offsets of old and new runs with one `--seed` agree.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// xoshiro256++ state.
#[derive(Debug, Clone)]
pub struct Xoshiro(Xoshiro256PlusPlus);

/// splitmix64 step: expands one seed into well-mixed words (the seeding xoshiro's authors
/// recommend; the engine derives per-job seeds with it).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Xoshiro {
    /// A generator seeded from one u64 (splitmix64 expansion).
    pub fn new(seed: u64) -> Self {
        Xoshiro(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// Next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
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
    fn stream_is_the_former_hand_written_xoshiro_s() {
        // First outputs of fsbench's own xoshiro256++ (splitmix64-seeded) for seed 42, so a
        // recorded --seed still gives the same offsets.
        let mut sm = 42u64;
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix(&mut sm);
        }
        let mut x = Xoshiro::new(42);
        for _ in 0..64 {
            let want = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
            let t = s[1] << 17;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = s[3].rotate_left(45);
            assert_eq!(x.next_u64(), want);
        }
    }

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
