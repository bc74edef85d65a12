//! Recommendations computed from the results: for each workload class, who wins, by how much,
//! and whether the lead is beyond run-to-run noise, quoting the numbers. Classes with no
//! measured workload are omitted; nothing here is canned text about filesystems.

use super::model::{Mark, Row, Table};
use crate::metrics::{self, Class, Direction};
use crate::stats::metric;
use serde::Serialize;

/// One workload class verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// Class name (`Small files and metadata`).
    pub class: String,
    /// Winning setup (most wins in the class), if any row could be ranked.
    pub winner: String,
    /// Rows the winner leads (alone or shared within noise).
    pub wins: usize,
    /// Rows ranked in this class.
    pub tests: usize,
    /// True when none of the winner's leads is beyond noise.
    pub within_noise: bool,
    /// One quoted comparison per ranked row.
    pub evidence: Vec<String>,
    /// The sentence a reader sees.
    pub text: String,
}

/// Which class a workload belongs to, by id.
fn class_of(workload: &str) -> Option<&'static str> {
    let w = workload;
    if w.starts_with("crash-") {
        // Durability is counted (lost acknowledged operations), not timed: not a speed class.
        None
    } else if matches!(w, "untar" | "find-cold" | "rm-tree")
        || [
            "small", "meta", "create", "stat", "fs_mark", "fsmark", "maildir",
        ]
        .iter()
        .any(|k| w.contains(k))
    {
        Some("Small files and metadata")
    } else if w.contains("fsync") || w.contains("sync-write") {
        Some("fsync-heavy (databases' commit path, mail)")
    } else if w.starts_with("rand") || w.contains("db") || w.contains("oltp") {
        Some("Random I/O and databases")
    } else if w.starts_with("seq") || w == "layout" || w.contains("large") {
        Some("Sequential and large files")
    } else if w == "usable-space" {
        Some("Space efficiency")
    } else {
        None
    }
}

const CLASSES: [&str; 5] = [
    "Small files and metadata",
    "Random I/O and databases",
    "fsync-heavy (databases' commit path, mail)",
    "Sequential and large files",
    "Space efficiency",
];

/// The metric that decides a workload: its judged throughput, else its judged time, else its
/// usable space (the registry's class and the row's role in that workload; see
/// [`metrics::deciding_rank`]).
fn primary(r: &Row) -> Option<(u8, usize)> {
    metrics::deciding_rank(&r.metric, r.role)
}

/// Compute the recommendations from the report tables.
pub fn recommend(tables: &[Table], setups: &[String]) -> Vec<Recommendation> {
    let mut out = Vec::new();
    for class in CLASSES {
        // One deciding row per workload of the class.
        let mut rows: Vec<&Row> = Vec::new();
        for t in tables {
            for r in &t.rows {
                if class_of(&r.workload) != Some(class) || r.direction == Direction::Neutral {
                    continue;
                }
                let Some(rank) = primary(r) else {
                    continue;
                };
                match rows.iter().position(|x| x.workload == r.workload) {
                    Some(i) if primary(rows[i]).is_none_or(|x| x > rank) => rows[i] = r,
                    Some(_) => {}
                    None => rows.push(r),
                }
            }
        }
        rows.retain(|r| r.cells.iter().filter(|c| c.is_some()).count() >= 2);
        if rows.is_empty() {
            continue;
        }
        let mut wins = vec![0usize; setups.len()];
        let mut clear = vec![0usize; setups.len()];
        // Leads on the medians alone: when every lead is within noise this breaks the tie,
        // so the setup named is never one the quoted medians show behind.
        let mut ahead = vec![0usize; setups.len()];
        for r in &rows {
            let best = (0..setups.len())
                .filter_map(|i| Some((i, r.cells.get(i)?.as_ref()?.summary.median)))
                .reduce(|a, b| if r.direction.better(b.1, a.1) { b } else { a });
            if let Some((i, _)) = best {
                ahead[i] += 1;
            }
        }
        for r in &rows {
            for (i, c) in r.cells.iter().enumerate() {
                match c.as_ref().map(|c| c.mark) {
                    Some(Mark::Best) => {
                        wins[i] += 1;
                        clear[i] += 1;
                    }
                    Some(Mark::Tied) => wins[i] += 1,
                    _ => {}
                }
            }
        }
        let w = (0..setups.len())
            .max_by_key(|&i| (wins[i], clear[i], ahead[i], std::cmp::Reverse(i)))
            .expect("setups");
        let evidence: Vec<String> = rows.iter().filter_map(|r| quote(r, w, setups)).collect();
        let within_noise = clear[w] == 0;
        let mut text = format!(
            "{}: best or tied-best in {} of {} test(s)",
            setups[w],
            wins[w],
            rows.len()
        );
        if within_noise {
            text.push_str(", but every lead is within run-to-run noise (a tie)");
        }
        if !evidence.is_empty() {
            text.push_str(". ");
            text.push_str(&evidence.join("; "));
        }
        text.push('.');
        out.push(Recommendation {
            class: class.to_string(),
            winner: setups[w].clone(),
            wins: wins[w],
            tests: rows.len(),
            within_noise,
            evidence,
            text,
        });
    }
    out
}

/// "rm -rf 1.91 s vs 4.35 s on xfs (2.3× faster)" for setup `w` against the best other setup
/// (or, when `w` is not the best, against the best).
fn quote(r: &Row, w: usize, setups: &[String]) -> Option<String> {
    let mine = r.cells.get(w)?.as_ref()?;
    let dir = r.direction;
    let other = (0..r.cells.len())
        .filter(|&i| i != w)
        .filter_map(|i| r.cells[i].as_ref().map(|c| (i, c)))
        .reduce(|a, b| {
            if dir.better(b.1.summary.median, a.1.summary.median) {
                b
            } else {
                a
            }
        })?;
    let (a, b) = (mine.summary.median, other.1.summary.median);
    let ratio = match dir {
        Direction::HigherIsBetter => a / b,
        _ => b / a,
    };
    let unit = |v: f64| metrics::format_with_unit(&r.metric, v, &r.unit);
    let word = if matches!(r.class, Class::Throughput | Class::Time) {
        ("faster", "slower")
    } else if dir == Direction::LowerIsBetter {
        ("lower", "higher")
    } else {
        ("more", "less")
    };
    let verdict = if !ratio.is_finite() {
        String::new()
    } else if ratio >= 1.0 {
        format!(" ({} {})", times(ratio), word.0)
    } else {
        format!(" ({} {})", times(1.0 / ratio), word.1)
    };
    let noise = match mine.mark {
        Mark::Tied => ", within noise",
        _ => "",
    };
    let verdict = if noise.is_empty() {
        verdict
    } else {
        verdict.replace(')', &format!("{noise})"))
    };
    Some(format!(
        "{} {} vs {} on {}{}",
        metric::workload_short(&r.workload),
        unit(a),
        unit(b),
        setups[other.0],
        verdict
    ))
}

/// A ratio as people say it: "2.3×", or "12 %" for small gaps.
fn times(r: f64) -> String {
    if r < 1.1 {
        format!("{:.0} %", (r - 1.0) * 100.0)
    } else {
        format!("{r:.1}×")
    }
}

#[cfg(test)]
mod tests {
    use crate::report::Report;
    use crate::results::{Results, Sample, SetupInfo};

    fn results(rows: &[(&str, &str, &str, &str, [f64; 3])]) -> Results {
        let mut r = Results::new();
        for (setup, workload, metric, unit, vals) in rows {
            if !r.setups.iter().any(|s| s.name == *setup) {
                r.setups.push(SetupInfo {
                    name: setup.to_string(),
                    fs: setup.to_string(),
                    ..Default::default()
                });
            }
            for (i, v) in vals.iter().enumerate() {
                r.samples.push(Sample {
                    setup: setup.to_string(),
                    workload: workload.to_string(),
                    metric: metric.to_string(),
                    unit: unit.to_string(),
                    round: i as u32 + 1,
                    value: *v,
                });
            }
        }
        r
    }

    #[test]
    fn quotes_numbers_and_flags_noise() {
        let r = results(&[
            ("ext4", "rm-tree", "seconds", "s", [1.90, 1.91, 1.93]),
            ("xfs", "rm-tree", "seconds", "s", [4.30, 4.35, 4.41]),
            (
                "ext4",
                "randread",
                "iops",
                "IOPS",
                [80_000.0, 81_000.0, 90_000.0],
            ),
            (
                "xfs",
                "randread",
                "iops",
                "IOPS",
                [79_000.0, 82_000.0, 88_000.0],
            ),
        ]);
        let rep = Report::new(&r);
        let small = rep
            .recommendations
            .iter()
            .find(|x| x.class.starts_with("Small"))
            .unwrap();
        assert_eq!(small.winner, "ext4");
        assert!(!small.within_noise);
        assert!(
            small
                .text
                .contains("rm -rf 1.91 s vs 4.35 s on xfs (2.3× faster)"),
            "{}",
            small.text
        );
        let rand = rep
            .recommendations
            .iter()
            .find(|x| x.class.starts_with("Random"))
            .unwrap();
        assert!(rand.within_noise, "{}", rand.text);
        assert!(rand.text.contains("within noise"));
        // Classes that were not measured are omitted.
        assert!(
            !rep.recommendations
                .iter()
                .any(|x| x.class.starts_with("Space"))
        );
    }

    #[test]
    fn a_tie_names_the_setup_ahead_on_the_medians_not_the_first_listed() {
        // Overlapping rounds (a tie within noise), but xfs has the higher median.
        let r = results(&[
            (
                "ext4",
                "randread",
                "iops",
                "IOPS",
                [17_000.0, 17_788.0, 19_500.0],
            ),
            (
                "xfs",
                "randread",
                "iops",
                "IOPS",
                [16_900.0, 18_702.0, 19_400.0],
            ),
        ]);
        let rep = Report::new(&r);
        let rand = rep
            .recommendations
            .iter()
            .find(|x| x.class.starts_with("Random"))
            .unwrap();
        assert!(rand.within_noise, "{}", rand.text);
        assert_eq!(rand.winner, "xfs", "{}", rand.text);
    }

    #[test]
    fn warnings_cover_fuse_failures_and_few_rounds() {
        let mut r = results(&[("zfs", "untar", "seconds", "s", [5.0, 5.1, 5.0])]);
        r.samples.retain(|s| s.round == 1);
        r.setups[0].implementation = "zfs-fuse".into();
        r.failures.push(crate::results::Failure {
            setup: "zfs".into(),
            workload: "rm-tree".into(),
            round: 1,
            error: "boom".into(),
        });
        let w = Report::new(&r).warnings.join("\n");
        assert!(w.contains("zfs-fuse"), "{w}");
        assert!(w.contains("zfs rm-tree round 1: boom"), "{w}");
        assert!(w.contains("Only 1 round(s)"), "{w}");
    }
}
