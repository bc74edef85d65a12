//! The one judgement of a question from its per-round values: does the quantity lie in a
//! region (a claim's direction, a claim's size band)?
//!
//! Rounds are interleaved, so each round yields one value of the quantity asked about (a
//! paired ratio a_r / b_r, or one setup's value). [`judge`] takes those values and the region
//! and says inside, outside or open. Today's statistic is the whole min–max range of the
//! values on one side of the region (the range of n values covers their median with
//! probability 1 − 2·0.5ⁿ); a sequential statistic can replace the body of [`judge`] without
//! any caller changing, since callers only pass values and a region and read a [`Judgement`].

/// Where the quantity must lie: `[low, high]`, with open (strict) ends where `strict_*` says.
/// An infinite end is unbounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    /// Lower bound (`f64::NEG_INFINITY` when none).
    pub low: f64,
    /// Upper bound (`f64::INFINITY` when none).
    pub high: f64,
    /// Whether a value equal to `low` is outside.
    pub strict_low: bool,
    /// Whether a value equal to `high` is outside.
    pub strict_high: bool,
}

impl Region {
    /// Strictly above `t`.
    pub fn above(t: f64) -> Region {
        Region {
            low: t,
            high: f64::INFINITY,
            strict_low: true,
            strict_high: false,
        }
    }
    /// Strictly below `t`.
    pub fn below(t: f64) -> Region {
        Region {
            low: f64::NEG_INFINITY,
            high: t,
            strict_low: false,
            strict_high: true,
        }
    }
    /// Within `[low, high]`, ends included.
    pub fn between(low: f64, high: f64) -> Region {
        Region {
            low,
            high,
            strict_low: false,
            strict_high: false,
        }
    }
    /// Whether one value lies in the region.
    pub fn contains(&self, x: f64) -> bool {
        let lo = if self.strict_low {
            x > self.low
        } else {
            x >= self.low
        };
        let hi = if self.strict_high {
            x < self.high
        } else {
            x <= self.high
        };
        lo && hi
    }
}

/// What the values say about the region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Settled: the quantity lies in the region.
    Inside,
    /// Settled: it lies outside.
    Outside,
    /// Not settled: the values straddle a bound.
    Straddles,
    /// Not settled: too few values to judge (one round of a noisy quantity).
    TooFew,
}

/// How many values a quantity needs before it can be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// A noisy measurement: at least two rounds (one has no spread to judge against).
    Noisy,
    /// What the filesystem does (a probe's yes/no): one round settles it.
    Exact,
}

/// Judge per-round `values` (finite; any order) against `region`: inside when every value
/// lies in it, outside when none does, else straddling. Empty `values` are [`Judgement::TooFew`].
pub fn judge(values: &[f64], region: &Region, evidence: Evidence) -> Judgement {
    let enough = match evidence {
        Evidence::Noisy => 2,
        Evidence::Exact => 1,
    };
    if values.len() < enough {
        return Judgement::TooFew;
    }
    let inside = values.iter().filter(|x| region.contains(**x)).count();
    if inside == values.len() {
        Judgement::Inside
    } else if inside == 0 && !straddles_between(values, region) {
        Judgement::Outside
    } else {
        Judgement::Straddles
    }
}

/// [`judge`] for a run that went on until settled (`--until-settled`): the sequential
/// interval of the per-round ratios ([`super::sequential::Rule::interval`]) instead of their
/// range — inside when the whole interval lies in the region, outside when none of it does —
/// so the verdict keeps the rule's error rate under optional stopping.
pub fn judge_sequential(
    values: &[f64],
    region: &Region,
    rule: &super::sequential::Rule,
) -> Judgement {
    match rule.interval(values) {
        Some(iv) => judge_interval(iv, region),
        None => Judgement::TooFew,
    }
}

/// Judge an interval `(lo, hi)` of the quantity against `region`: inside when all of it lies
/// in the region, outside when none of it does, else straddling.
pub fn judge_interval((lo, hi): (f64, f64), region: &Region) -> Judgement {
    let below = if region.strict_low {
        hi <= region.low
    } else {
        hi < region.low
    };
    let above = if region.strict_high {
        lo >= region.high
    } else {
        lo > region.high
    };
    if region.contains(lo) && region.contains(hi) {
        Judgement::Inside
    } else if below || above {
        Judgement::Outside
    } else {
        Judgement::Straddles
    }
}

/// A band can be missed on both sides by different rounds (one below, one above): no value
/// inside, yet the range covers the band, so it is not settled outside.
fn straddles_between(values: &[f64], region: &Region) -> bool {
    let below = values.iter().any(|x| *x < region.low);
    let above = values.iter().any(|x| *x > region.high);
    below && above
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_outside_straddles() {
        let r = Region::below(1.0);
        assert_eq!(judge(&[0.4, 0.5], &r, Evidence::Noisy), Judgement::Inside);
        assert_eq!(judge(&[1.0, 1.2], &r, Evidence::Noisy), Judgement::Outside);
        assert_eq!(
            judge(&[0.9, 1.1], &r, Evidence::Noisy),
            Judgement::Straddles
        );
        assert_eq!(judge(&[0.5], &r, Evidence::Noisy), Judgement::TooFew);
        assert_eq!(judge(&[0.0], &r, Evidence::Exact), Judgement::Inside);
        let band = Region::between(0.5, 0.7);
        assert_eq!(
            judge(&[0.4, 0.8], &band, Evidence::Noisy),
            Judgement::Straddles
        );
        assert_eq!(
            judge(&[0.2, 0.3], &band, Evidence::Noisy),
            Judgement::Outside
        );
        assert!(!Region::above(1.0).contains(1.0));
        assert!(band.contains(0.5) && band.contains(0.7));
    }
}
