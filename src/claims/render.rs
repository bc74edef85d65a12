//! The "What the articles say vs this disk" section, as terminal text and as Markdown.

use super::{ClaimResult, Outcome};

/// Title of the section in every format.
pub const TITLE: &str = "What the articles say vs this disk";

fn ratio(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// "0.45 (0.41–0.52)" for a ratio of two setups; a claim about one setup's value is written as
/// the metric registry writes that metric ("yes", "1.9 ratio"). Else the reason it was not
/// measured.
fn measured(r: &ClaimResult) -> String {
    let id = r.claim.metric.as_str();
    let text = |x: f64| match r.claim.b {
        Some(_) => ratio(x),
        None => crate::metrics::format_with_unit(id, x, crate::metrics::def(id).unit),
    };
    match (r.measured, r.interval) {
        (Some(m), Some((lo, hi))) if r.n >= 2 && r.adjusted.is_some() => format!(
            "{} ({}–{}), adjusted for the disk's pace",
            text(m),
            text(lo),
            text(hi)
        ),
        (Some(m), Some((lo, hi))) if r.n >= 2 => {
            format!("{} ({}–{})", text(m), text(lo), text(hi))
        }
        (Some(m), _) => text(m),
        _ => "—".into(),
    }
}

/// "ext4/xfs randread IOPS": the setups, the workload and the metric's registry label.
fn what(r: &ClaimResult) -> String {
    let c = &r.claim;
    let m = crate::metrics::label(&c.metric);
    match r.setups.as_slice() {
        [a, b] => format!("{a}/{b} {} {m}", c.workload),
        [a] => format!("{a} {} {m}", c.workload),
        _ => format!("{} {m}", c.workload),
    }
}

fn counts(results: &[ClaimResult]) -> String {
    // By the word a reader sees: a claim whose size is refuted is not counted as confirmed.
    let words = [
        "confirmed",
        "size refuted",
        "size open",
        "refuted",
        "inconclusive",
        "not measured",
        "not comparable here",
    ];
    // A claim about a fact (usable space) is checked, not judged: counted on its own.
    let judged: Vec<&ClaimResult> = results.iter().filter(|r| !is_fact(r)).collect();
    let mut parts: Vec<String> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let n = judged.iter().filter(|r| word(r) == *w).count();
            // The four direction verdicts always; the rest when they occur.
            (n > 0 || i == 0 || (3..=5).contains(&i)).then(|| format!("{n} {w}"))
        })
        .collect();
    let facts = results.iter().filter(|r| is_fact(r)).count();
    if facts > 0 {
        parts.push(format!("{facts} about a fact (checked, not judged)"));
    }
    parts.join(", ")
}

/// A judged-or-checked claim whose metric is a fact.
fn is_fact(r: &ClaimResult) -> bool {
    r.fact && judged(r)
}

/// The verdict a reader sees first: the direction's, unless the direction holds and the
/// size does not ("size refuted") or is not settled ("size open"): CONFIRMED means the
/// sentence holds, its magnitude included.
pub fn word(r: &ClaimResult) -> &'static str {
    match (r.outcome, r.size.map(|z| z.outcome)) {
        (Outcome::Confirmed, Some(Outcome::Refuted)) => "size refuted",
        (Outcome::Confirmed, Some(Outcome::Inconclusive)) => "size open",
        (o, _) => o.word(),
    }
}

/// Whether a claim was judged at all (measured and comparable here).
fn judged(r: &ClaimResult) -> bool {
    !matches!(r.outcome, Outcome::NotMeasured | Outcome::NotComparable)
}

/// The two verdicts of a claim whose wording gives a magnitude: "direction confirmed, size
/// refuted: 0.68 against the article's 0.43 (band 0.33–0.57; as b/a 1.47× against 2.3×)".
pub fn size_text(r: &ClaimResult) -> Option<String> {
    let z = r.size?;
    if !judged(r) {
        return None;
    }
    let m = r.measured?;
    let mut s = format!(
        "direction {}, size {}: {} against the article's {} (band {}–{}",
        r.outcome.word(),
        z.outcome.word(),
        ratio(m),
        ratio(z.figure),
        ratio(z.band.0),
        ratio(z.band.1)
    );
    // "2.3x faster" is a/b = 0.43: the inverse reads as the article put it.
    if z.figure < 1.0 && r.claim.b.is_some() && m > 0.0 {
        s.push_str(&format!(
            "; as b/a {}× against {}×",
            ratio(1.0 / m),
            ratio(1.0 / z.figure)
        ));
    }
    s.push(')');
    Some(s)
}

fn coverage_note(results: &[ClaimResult]) -> String {
    let cov: std::collections::BTreeSet<u64> = results
        .iter()
        .filter(|r| r.interval.is_some())
        .map(|r| (r.coverage * 1000.0).round() as u64)
        .collect();
    let parts: Vec<String> = cov
        .iter()
        .map(|c| format!("{:.1} %", *c as f64 / 10.0))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(
            "Ratios are a/b per interleaved round: geometric mean (Student's t interval of the paired log ratios, covering the true ratio with probability {} per claim).",
            parts.join(", ")
        )
    }
}

/// Plain text, lines under 100 columns; `measured_only` leaves the "not measured" claims out
/// of the list (their count stays in the summary line).
pub fn text(results: &[ClaimResult], measured_only: bool) -> String {
    let mut s = textwrap(&format!("{TITLE}: {}", counts(results)), 98, "");
    let note = coverage_note(results);
    if !note.is_empty() {
        s.push_str(&textwrap(&note, 98, "  "));
    }
    let mut group: Option<&str> = None;
    for r in results {
        if measured_only && r.outcome == Outcome::NotMeasured {
            continue;
        }
        let g = r.claim.group.as_deref();
        let contradicts = g.is_some() && g == group;
        group = g;
        let mark = if contradicts { "  ↔ " } else { "  " };
        s.push_str(&format!(
            "{mark}{:<12} {}\n",
            word(r).to_uppercase(),
            r.claim.claim
        ));
        let detail = if r.outcome == Outcome::NotMeasured {
            format!(
                "{}; seed {}: {}",
                r.reason, r.claim.source, r.claim.seed_figure
            )
        } else {
            let mut d = format!(
                "{}: {} (claim {}; seed {}: {})",
                what(r),
                measured(r),
                r.claim.expectation(),
                r.claim.source,
                r.claim.seed_figure
            );
            if !r.reason.is_empty() {
                d.push_str(&format!("; {}", r.reason));
            }
            if let Some(z) = size_text(r) {
                d.push_str(&format!("; {z}"));
            }
            d
        };
        s.push_str(&textwrap(&detail, 98, "               "));
    }
    s
}

/// Markdown: a summary line, the coverage note and one table row per claim.
pub fn markdown(results: &[ClaimResult]) -> String {
    let mut s = format!("## {TITLE}\n\n{}.", counts(results));
    let note = coverage_note(results);
    if !note.is_empty() {
        s.push(' ');
        s.push_str(&note);
    }
    s.push_str(" Claims marked ↔ contradict the one above them.");
    s.push_str(&left_out(results));
    s.push_str("\n\n");
    s.push_str("| verdict | claim | measured | claim says | seed's figure | source |\n");
    s.push_str("|---|---|---|---|---|---|\n");
    let mut group: Option<&str> = None;
    for r in results.iter().filter(|r| r.outcome != Outcome::NotMeasured) {
        let g = r.claim.group.as_deref();
        let mark = if g.is_some() && g == group {
            "↔ "
        } else {
            ""
        };
        group = g;
        let m = if r.outcome == Outcome::NotMeasured {
            r.reason.clone()
        } else {
            let mut m = format!("{}: {}", what(r), measured(r));
            if !r.reason.is_empty() {
                m.push_str(&format!(" — {}", r.reason));
            }
            if let Some(z) = size_text(r) {
                m.push_str(&format!(" — {z}"));
            }
            m
        };
        s.push_str(&format!(
            "| {mark}**{}** | {} | {} | {} | {} | {} |\n",
            word(r),
            r.claim.claim.replace('|', "\\|"),
            m.replace('|', "\\|"),
            r.claim.expectation(),
            r.claim.seed_figure.replace('|', "\\|"),
            r.claim.source
        ));
    }
    s
}

/// One row of the HTML claims table, already formatted.
#[derive(Debug, serde::Serialize)]
pub struct Row {
    /// "↔ " when it contradicts the row above.
    pub mark: &'static str,
    /// Verdict word.
    pub verdict: &'static str,
    /// CSS class: the verdict, kebab-case.
    pub class: String,
    /// The claim.
    pub claim: String,
    /// What was measured, or why not.
    pub measured: String,
    /// The claim's accepted range.
    pub expect: String,
    /// The seed's figure.
    pub seed: String,
    /// Seed file and section.
    pub source: String,
}

/// " N claims this run did not measure are left out …", or nothing when it measured all.
pub fn left_out(results: &[ClaimResult]) -> String {
    match results
        .iter()
        .filter(|r| r.outcome == Outcome::NotMeasured)
        .count()
    {
        0 => String::new(),
        n => format!(
            " The {n} claim(s) this run did not measure are left out; `fsbench claims` lists \
             every claim and what measures it."
        ),
    }
}

/// The claims this run measured as rows for the HTML report ([`left_out`] counts the rest).
pub fn rows(results: &[ClaimResult]) -> Vec<Row> {
    let mut group: Option<&str> = None;
    results
        .iter()
        .filter(|r| r.outcome != Outcome::NotMeasured)
        .map(|r| {
            let g = r.claim.group.as_deref();
            let mark = if g.is_some() && g == group {
                "↔ "
            } else {
                ""
            };
            group = g;
            let mut measured = if r.outcome == Outcome::NotMeasured {
                r.reason.clone()
            } else if r.reason.is_empty() {
                format!("{}: {}", what(r), measured(r))
            } else {
                format!("{}: {} — {}", what(r), measured(r), r.reason)
            };
            if let Some(z) = size_text(r) {
                measured.push_str(&format!(" — {z}"));
            }
            Row {
                mark,
                verdict: word(r),
                class: word(r).replace(' ', "-"),
                claim: r.claim.claim.clone(),
                measured,
                expect: r.claim.expectation(),
                seed: r.claim.seed_figure.clone(),
                source: r.claim.source.clone(),
            }
        })
        .collect()
}

/// Wrap `text` at `width` columns, every line indented by `indent` (the first included).
fn textwrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.chars().count() + word.chars().count() + 1 > width && line.trim() != "" {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(indent);
        }
        if line.trim() != "" {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.trim() != "" {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::IOPS;
    use crate::results::{Results, Sample, SetupInfo};

    #[test]
    fn text_fits_100_columns_and_counts_everything() {
        let mut res = Results {
            setups: vec![
                SetupInfo {
                    name: "ext4".into(),
                    fs: "ext4".into(),
                    ..Default::default()
                },
                SetupInfo {
                    name: "btrfs".into(),
                    fs: "btrfs".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        for r in 1..=3 {
            for (s, v) in [("ext4", 1000.0), ("btrfs", 550.0 + r as f64 * 10.0)] {
                res.samples.push(Sample {
                    setup: s.into(),
                    workload: "randwrite".into(),
                    metric: IOPS.into(),
                    unit: "IOPS".into(),
                    round: r,
                    value: v,
                });
            }
        }
        let all = super::super::evaluate(&res);
        let t = text(&all, false);
        for l in t.lines() {
            assert!(l.chars().count() <= 100, "too wide: {l}");
        }
        assert!(t.contains("CONFIRMED") && t.contains("REFUTED") && t.contains("NOT MEASURED"));
        assert!(t.contains("↔"), "contradicting claims are marked");
        // Markdown lists the measured claims (and its header row); the rest are counted.
        let md = markdown(&all);
        let measured = all
            .iter()
            .filter(|r| r.outcome != Outcome::NotMeasured)
            .count();
        assert!(measured > 0 && measured < all.len());
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            measured + 1
        );
        let rest = all.len() - measured;
        assert!(
            md.contains(&format!(
                "The {rest} claim(s) this run did not measure are left out"
            )),
            "{md}"
        );
        assert_eq!(rows(&all).len(), measured);
    }
}
