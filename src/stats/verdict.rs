//! Host noise inside one results file: when a setup's rounds disagree too much to trust.
//! (Whether two setups differ is [`super::paired`]'s job; whether something changed between
//! two files, [`super::change`]'s.)

use crate::results::Summary;

/// Rounds of one setup that disagree by more than this ratio (max/min) suggest a noisy host.
pub const HOST_NOISE_RATIO: f64 = 1.2;

/// Fewest rounds per side for `compare` to judge significance at all.
pub const MIN_ROUNDS: usize = super::change::MIN_ROUNDS;

/// Whether the rounds of one setup disagree by more than [`HOST_NOISE_RATIO`].
pub fn host_noisy(s: &Summary) -> bool {
    s.n >= 2 && s.min > 0.0 && s.max / s.min > HOST_NOISE_RATIO
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(median: f64, min: f64, max: f64) -> Summary {
        Summary {
            n: 3,
            median,
            min,
            max,
            ci_low: min,
            ci_high: max,
            ci_coverage: 0.75,
            ..Default::default()
        }
    }

    #[test]
    fn host_noise() {
        // Seed 000: ext4 random writes 77,199–95,909 over three rounds: a noisy host.
        assert!(host_noisy(&s(87_983.0, 77_199.0, 95_909.0)));
        assert!(!host_noisy(&s(1.91, 1.88, 1.95)));
        let one = Summary {
            n: 1,
            ..s(1.0, 1.0, 2.0)
        };
        assert!(!host_noisy(&one));
    }
}
