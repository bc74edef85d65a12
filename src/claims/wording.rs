//! The claims' wording against what they test: a magnitude in a claim's sentence ("about
//! 2.3x", "roughly 60 %", "about a third") must be its `size`, on the claimed side, with the
//! seed's own ratio inside the band; a claim without one has no `size`; a `between` claim is
//! a tie.

use super::{Assertion, Claim, all, size_band};

/// The magnitude a sentence gives after "about"/"roughly", as a number (2.3, 1/3, 0.6, 1.13).
/// Bounds ("under a fifth", "more than doubles", "up to 35 %") are not magnitudes.
fn magnitude(sentence: &str) -> Option<f64> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| matches!(*w, "about" | "roughly" | "approximately"))?;
    let next = |k: usize| words.get(at + k).copied().unwrap_or("");
    let number = |w: &str| w.trim_end_matches(['x', '%']).parse::<f64>().ok();
    match next(1) {
        "half" => Some(0.5),
        "twice" => Some(2.0),
        "a" => match next(2).trim_end_matches(',') {
            "third" => Some(1.0 / 3.0),
            "quarter" => Some(0.25),
            "fifth" => Some(0.2),
            _ => None,
        },
        w if w.contains(':') => {
            let (x, y) = w.split_once(':')?;
            Some(x.parse::<f64>().ok()? / y.parse::<f64>().ok()?)
        }
        w => {
            let x = number(w)?;
            let percent = w.ends_with('%') || next(2) == "%";
            if !percent {
                Some(x)
            } else if next(2) == "of" || next(3) == "of" {
                // "roughly 60 % of ext4's": a share.
                Some(x / 100.0)
            } else {
                // "by about 13 %", "about 11 % more": a gain.
                Some(1.0 + x / 100.0)
            }
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 0.02
}

/// What is wrong with one claim's wording against its fields, if anything.
fn disagreement(c: &Claim) -> Option<String> {
    let said = magnitude(&c.claim);
    match (said, c.size) {
        (None, Some(s)) => return Some(format!("size {s} but the wording gives no magnitude")),
        (Some(m), None) => return Some(format!("the wording says {m:.3} but there is no size")),
        _ => {}
    }
    if c.assertion == Assertion::Between && !c.claim.contains(" tie ") {
        return Some("a between range is for ties; a magnitude is a size".into());
    }
    let (Some(m), Some(size)) = (said, c.size) else {
        return None;
    };
    // "2.3x faster" in seconds is a/b = 1/2.3: either orientation of the wording's number.
    if !close(size, m) && !close(size, 1.0 / m) {
        return Some(format!("the wording says {m:.3}, size is {size}"));
    }
    if !c.region().contains(size) {
        return Some(format!(
            "size {size} is not on the claimed side ({})",
            c.expectation()
        ));
    }
    let (lo, hi) = size_band(size);
    if c.seed_ratio > 0.0 && !(lo..=hi).contains(&c.seed_ratio) {
        return Some(format!(
            "the seed's ratio {} lies outside the size band {lo:.3}–{hi:.3}",
            c.seed_ratio
        ));
    }
    None
}

#[test]
fn magnitudes_are_read_from_the_wording() {
    let m = |s: &str| magnitude(s).map(|x| (x * 1000.0).round() / 1000.0);
    assert_eq!(m("ext4 deletes a tree about 2.3x faster"), Some(2.3));
    assert_eq!(m("in about a third of XFS's time"), Some(0.333));
    assert_eq!(m("run at roughly 60 % of ext4's"), Some(0.6));
    assert_eq!(m("beats ext4 by about 13 %"), Some(1.13));
    assert_eq!(m("about 11 % more TPS"), Some(1.11));
    assert_eq!(m("compresses about 2.4:1"), Some(2.4));
    assert_eq!(m("takes about twice ext4's time"), Some(2.0));
    assert_eq!(m("reach under a fifth of ext4's"), None);
    assert_eq!(m("more than doubles"), None);
}

#[test]
fn every_claims_wording_agrees_with_what_it_tests() {
    let bad: Vec<String> = all()
        .iter()
        .filter_map(|c| disagreement(c).map(|d| format!("{}: {d}", c.id)))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    // The test can fail: a claim that says "about 2.3x" but tests only the direction.
    let mut c = all()
        .into_iter()
        .find(|c| c.id == "ext4-rm-faster-than-xfs")
        .unwrap();
    c.size = None;
    assert!(disagreement(&c).is_some());
    c.size = Some(2.3);
    assert!(
        disagreement(&c).is_some(),
        "2.3 is on the wrong side of < 1"
    );
    assert!(all().iter().filter(|c| c.size.is_some()).count() >= 8);
}

#[test]
fn the_band_rule() {
    let (lo, hi) = size_band(2.3);
    assert!(
        (lo - 1.744).abs() < 0.01 && (hi - 3.033).abs() < 0.01,
        "{lo} {hi}"
    );
    let (lo, hi) = size_band(1.13);
    assert!(
        (lo - 1.076).abs() < 0.01 && (hi - 1.187).abs() < 0.01,
        "{lo} {hi}"
    );
    // Symmetric in log space: a third is 3x inverted.
    let (lo, hi) = size_band(1.0 / 3.0);
    let (ilo, ihi) = size_band(3.0);
    assert!((lo - 1.0 / ihi).abs() < 1e-12 && (hi - 1.0 / ilo).abs() < 1e-12);
}
