//! Noise verdicts inside one results file: when two setups tie, when a host is too noisy.
//! (Whether something changed between two files is [`super::change`]'s job.)

use crate::results::Summary;

/// Rounds of one setup that disagree by more than this ratio (max/min) suggest a noisy host.
pub const HOST_NOISE_RATIO: f64 = 1.2;

/// Fewest rounds per side for `compare` to judge significance at all.
pub const MIN_ROUNDS: usize = super::change::MIN_ROUNDS;

/// Two setups tie on a metric when the intervals of their medians overlap (at n = 3 these are
/// the min–max ranges, see [`super::median_interval`]), or when the gap between the medians is
/// smaller than the run-to-run spread (max − min) of either of them. With one round on
/// either side there is no noise estimate, so no lead can be beyond it: that is a tie too.
pub fn tie(a: &Summary, b: &Summary) -> bool {
    if a.n < 2 || b.n < 2 {
        return true;
    }
    let overlap = a.ci_low <= b.ci_high && b.ci_low <= a.ci_high;
    let gap = (a.median - b.median).abs();
    let spread = (a.max - a.min).max(b.max - b.min);
    overlap || gap < spread
}

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
    fn ties_and_noise() {
        // Seed 000: ext4 random writes 77,199–95,909, XFS 74,567–93,966: a tie.
        assert!(tie(
            &s(87_983.0, 77_199.0, 95_909.0),
            &s(82_863.0, 74_567.0, 93_966.0)
        ));
        assert!(host_noisy(&s(87_983.0, 77_199.0, 95_909.0)));
        // rm -rf 1.91 s vs 4.35 s with tight rounds: not a tie.
        assert!(!tie(&s(1.91, 1.88, 1.95), &s(4.35, 4.30, 4.41)));
        assert!(!host_noisy(&s(1.91, 1.88, 1.95)));
        // The same gap from one round each: no noise estimate, so no lead beyond it.
        let one = |v: f64| Summary { n: 1, ..s(v, v, v) };
        assert!(tie(&one(1.91), &one(4.35)));
    }
}
