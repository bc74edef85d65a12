//! The order setups run in, round by round: a Williams design.
//!
//! A round runs its setups one after another, so a setup's place in the round (first after
//! the image is made, right after a heavy neighbour) can colour its figures. A plain rotation
//! puts every setup in every place, but not after every other setup: with three setups over
//! five rounds XFS ran right after ext4 three times and never right before it. A Williams
//! design balances both: over its period every setup runs in every place equally often and
//! right after each other setup equally often.
//!
//! **Construction** (Williams, 1949). The first row is `0, 1, n−1, 2, n−2, 3, …`; row `p`
//! adds `p` to every entry (mod n). For an even n the n rows are the design, and the reverse
//! of row `p` is row `p + n/2`; for an odd n the n rows and their n reverses (2n rounds) are.
//! Rounds take a row, then its reverse, then the next row and its reverse…: after every even
//! number of rounds each ordered pair that occurred has occurred in both orders, so a run
//! that stops short of the period is as balanced as it can be. [`balance`] says how balanced
//! a given number of rounds is.

/// Rounds after which the design is fully balanced for `n` setups (n even: n; odd: 2n; one
/// setup: 1).
pub fn period(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        n if n % 2 == 0 => n,
        n => 2 * n,
    }
}

/// The Williams square's row `p` for `n` setups.
fn row(n: usize, p: usize) -> Vec<usize> {
    (0..n)
        .map(|j| {
            // 0, 1, n−1, 2, n−2, …
            let first = if j == 0 {
                0
            } else if j % 2 == 1 {
                j.div_ceil(2)
            } else {
                n - j / 2
            };
            (first + p) % n
        })
        .collect()
}

/// The order of `n` setups in round `round` (1-based; indices 0..n).
pub fn order(n: usize, round: u32) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let k = (round.max(1) as usize - 1) % period(n);
    let mut r = row(n, k / 2);
    if k % 2 == 1 {
        r.reverse();
    }
    r
}

/// How balanced the first `rounds` rounds of `n` setups are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    /// Rounds counted.
    pub rounds: usize,
    /// Rounds to full balance ([`period`]).
    pub period: usize,
    /// Fewest and most times a setup ran right after another given one, over every ordered
    /// pair of distinct setups.
    pub after: (usize, usize),
    /// Fewest and most times a setup ran in a given place of the round.
    pub place: (usize, usize),
}

impl Balance {
    /// Whether each setup ran right after each other one, and in each place, equally often.
    pub fn full(&self) -> bool {
        self.after.0 == self.after.1 && self.place.0 == self.place.1
    }

    /// "balanced (each setup right after each other 1 time, in each place 1)" or "each setup
    /// right after each other 0–2 times, in each place 1–2 (balanced every 6 rounds)".
    pub fn words(&self) -> String {
        let range = |(a, b): (usize, usize)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        };
        let what = format!(
            "each setup right after each other {} time(s), in each place {}",
            range(self.after),
            range(self.place)
        );
        if self.full() {
            format!("balanced ({what})")
        } else {
            format!("{what}; balanced every {} rounds", self.period)
        }
    }
}

/// The balance of the first `rounds` rounds for `n` setups (two setups or more).
pub fn balance(n: usize, rounds: usize) -> Balance {
    let mut after = vec![vec![0usize; n]; n];
    let mut place = vec![vec![0usize; n]; n];
    for r in 1..=rounds {
        let o = order(n, r as u32);
        for (i, &s) in o.iter().enumerate() {
            place[s][i] += 1;
        }
        for w in o.windows(2) {
            after[w[0]][w[1]] += 1;
        }
    }
    let span = |xs: Vec<usize>| {
        (
            xs.iter().copied().min().unwrap_or(0),
            xs.iter().copied().max().unwrap_or(0),
        )
    };
    let pairs = (0..n)
        .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
        .map(|(a, b)| after[a][b])
        .collect();
    Balance {
        rounds,
        period: period(n),
        after: span(pairs),
        place: span(place.into_iter().flatten().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_is_a_permutation_and_the_period_balances_fully() {
        for n in 2..=8 {
            for r in 1..=(3 * period(n)) as u32 {
                let mut o = order(n, r);
                o.sort_unstable();
                assert_eq!(o, (0..n).collect::<Vec<_>>(), "n {n} round {r}");
            }
            let b = balance(n, period(n));
            assert!(b.full(), "n {n}: {b:?}");
            // Even: each ordered pair once in n rounds; odd: twice in 2n.
            assert_eq!(b.after.0, if n % 2 == 0 { 1 } else { 2 }, "n {n}");
            assert!(balance(n, 2 * period(n)).full());
        }
    }

    #[test]
    fn a_short_run_is_balanced_in_both_orders_after_every_even_round() {
        // Three setups, five rounds (the default): the rotation ran ext4 → xfs three times
        // and xfs → ext4 never.
        for n in 2..=6 {
            for rounds in (2..=period(n)).step_by(2) {
                let mut after = vec![vec![0i64; n]; n];
                for r in 1..=rounds as u32 {
                    for w in order(n, r).windows(2) {
                        after[w[0]][w[1]] += 1;
                    }
                }
                let symmetric = (0..n).all(|a| (0..n).all(|b| after[a][b] == after[b][a]));
                assert!(symmetric, "n {n}, {rounds} rounds: {after:?}");
            }
        }
        let five = balance(3, 5);
        assert!(five.after.1 - five.after.0 <= 1, "{five:?}");
        assert!(!five.full());
        assert!(
            five.words().contains("balanced every 6 rounds"),
            "{}",
            five.words()
        );
        assert_eq!(order(3, 1), [0, 1, 2]);
        assert_eq!(order(3, 2), [2, 1, 0]);
        assert_eq!(order(4, 1), [0, 1, 3, 2]);
        assert_eq!(order(1, 7), [0]);
    }
}
