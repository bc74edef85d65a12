//! Crash states under the volatile-write-cache model: at a crash point (a log position), the
//! device holds every write before the last flush at or before that point, plus some subset
//! of the writes after that flush, which were still in its volatile cache. Pure logic.

use crate::host::recorder::Entry;

/// Which of the cached (unflushed) writes made it to the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subset {
    /// None: the cache was lost whole.
    None,
    /// All: the cache reached the medium in order.
    All,
    /// Each write kept with probability ½, from this seed (reordered persistence).
    Random(u64),
}

/// One crash state to build and check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CrashState {
    /// 0-based number among the run's states.
    pub index: usize,
    /// The crash point: entries `..point` had been served when the power went.
    pub point: usize,
    /// Which unflushed writes persisted.
    pub subset: Subset,
}

use super::oracle::mix;

/// `n` states with crash points spread evenly over a log of `len` entries (the last one at
/// its end), the subset cycling none, all, random (seeded from `seed` and the state).
pub fn plan(len: usize, n: usize, seed: u64) -> Vec<CrashState> {
    (0..n)
        .map(|i| CrashState {
            index: i,
            point: (i + 1) * len / n,
            subset: match i % 3 {
                0 => Subset::None,
                1 => Subset::All,
                _ => Subset::Random(mix(seed ^ i as u64)),
            },
        })
        .collect()
}

/// Indices (into `entries`) of the writes the state's device holds, in log order.
pub fn writes(entries: &[Entry], s: &CrashState) -> Vec<usize> {
    let point = s.point.min(entries.len());
    let flushed = entries[..point]
        .iter()
        .rposition(|e| *e == Entry::Flush)
        .map_or(0, |i| i + 1);
    let is_write = |i: &usize| matches!(entries[*i], Entry::Write { .. });
    let mut out: Vec<usize> = (0..flushed).filter(is_write).collect();
    let mut rng = match s.subset {
        Subset::Random(seed) => seed,
        _ => 0,
    };
    for i in (flushed..point).filter(is_write) {
        let keep = match s.subset {
            Subset::None => false,
            Subset::All => true,
            Subset::Random(_) => {
                rng = mix(rng);
                rng & 1 == 1
            }
        };
        if keep {
            out.push(i);
        }
    }
    out
}

/// How many acknowledgements (marks in order) fall at or before the crash point: those
/// operations' flushes are all before it, so the state must hold them.
pub fn acked(marks: &[usize], point: usize) -> u64 {
    marks.iter().filter(|m| **m <= point).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(o: u64) -> Entry {
        Entry::Write {
            offset: o,
            data: vec![1],
        }
    }

    #[test]
    fn flushed_writes_are_always_held_cached_ones_by_subset() {
        // 0 w, 1 w, 2 flush, 3 w, 4 w, 5 flush, 6 w
        let log = vec![w(0), w(1), Entry::Flush, w(3), w(4), Entry::Flush, w(6)];
        let at = |point, subset| {
            writes(
                &log,
                &CrashState {
                    index: 0,
                    point,
                    subset,
                },
            )
        };
        assert_eq!(at(2, Subset::None), Vec::<usize>::new());
        assert_eq!(at(2, Subset::All), vec![0, 1]);
        assert_eq!(at(3, Subset::None), vec![0, 1]);
        assert_eq!(at(5, Subset::All), vec![0, 1, 3, 4]);
        assert_eq!(at(6, Subset::None), vec![0, 1, 3, 4]);
        assert_eq!(at(7, Subset::All), vec![0, 1, 3, 4, 6]);
        let r = at(5, Subset::Random(42));
        assert!(r.starts_with(&[0, 1]) && r.len() <= 4);
        assert_eq!(r, at(5, Subset::Random(42)), "a seed replays");
        // Random subsets differ across seeds somewhere.
        let many: std::collections::BTreeSet<Vec<usize>> =
            (0..32).map(|s| at(5, Subset::Random(s))).collect();
        assert!(many.len() > 1);
    }

    #[test]
    fn plan_spreads_points_and_cycles_subsets() {
        let p = plan(100, 6, 7);
        assert_eq!(
            p.iter().map(|s| s.point).collect::<Vec<_>>(),
            [16, 33, 50, 66, 83, 100]
        );
        assert_eq!(p[0].subset, Subset::None);
        assert_eq!(p[1].subset, Subset::All);
        assert!(matches!(p[2].subset, Subset::Random(_)));
        assert_eq!(acked(&[3, 10, 40], 10), 2);
        assert_eq!(acked(&[3, 10, 40], 2), 0);
    }
}
