//! An A/A pair from one run: its odd rounds against its even rounds.
//!
//! The rounds of one run are interleaved across setups, so host drift hits the two halves
//! alike; what `compare` flags between them is chance, and how often that happens is the
//! false-alarm rate the statistics promise. Samples, histograms and series are split by round
//! number; the summary is left out (every reader recomputes it from the samples).

use crate::results::Results;
use std::collections::BTreeSet;

/// (odd rounds, even rounds) of `r`; an error when the run has fewer than two rounds.
pub fn split_rounds(r: &Results) -> crate::Result<(Results, Results)> {
    let rounds: BTreeSet<u32> = r.samples.iter().map(|s| s.round).collect();
    if rounds.len() < 2 {
        return Err(crate::Error::invalid(
            "--split-rounds",
            format!(
                "the file has {} round(s); an odd/even split needs at least 2 (6 or more to \
                 judge 3 against 3)",
                rounds.len()
            ),
        ));
    }
    let half = |odd: bool| {
        let keep = |round: u32| (round % 2 == 1) == odd;
        let mut h = r.clone();
        h.samples.retain(|s| keep(s.round));
        h.histograms.retain(|x| keep(x.round));
        h.series.retain(|x| keep(x.round));
        h.failures.retain(|x| x.round == 0 || keep(x.round));
        h.summary.clear();
        h
    };
    Ok((half(true), half(false)))
}

/// Round numbers of each half, for labels: `rounds 1, 3, 5`.
pub fn rounds_label(r: &Results) -> String {
    let rounds: BTreeSet<u32> = r.samples.iter().map(|s| s.round).collect();
    let list: Vec<String> = rounds.iter().map(u32::to_string).collect();
    format!("rounds {}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::IOPS;
    use crate::results::Sample;

    #[test]
    fn odd_and_even_rounds() {
        let mut r = Results::new();
        for round in 1..=6 {
            r.samples.push(Sample {
                setup: "ext4".into(),
                workload: "randread".into(),
                metric: IOPS.into(),
                unit: "IOPS".into(),
                round,
                value: f64::from(round),
            });
        }
        let (odd, even) = split_rounds(&r).unwrap();
        assert_eq!(
            odd.values("ext4", "randread", &IOPS.into()),
            [1.0, 3.0, 5.0]
        );
        assert_eq!(
            even.values("ext4", "randread", &IOPS.into()),
            [2.0, 4.0, 6.0]
        );
        assert_eq!(rounds_label(&odd), "rounds 1, 3, 5");
        r.samples.retain(|s| s.round == 1);
        assert!(split_rounds(&r).is_err());
    }
}
