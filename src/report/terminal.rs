//! Terminal exporter: the 30-second report — verdict per workload class, the headline table in
//! seed 000's layout, the measured claims, the warnings — fitted to the terminal width
//! (`COLUMNS`, default 100); `--wide` appends every table with its per-round ranges. No colours,
//! so the output is the same on a terminal, in a pipe and in a snapshot.

use super::boxed;
use super::model::{Mark, Row, Table, cell_text, unit_text};
use super::{Exporter, Report};

/// Terminal width when `COLUMNS` is unset or unreadable.
pub const DEFAULT_WIDTH: usize = 100;

/// Terminal exporter.
pub struct Terminal {
    /// Append every table (all metrics, (min–max) across rounds) after the short form.
    pub wide: bool,
}

impl Exporter for Terminal {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let mut s = render_with(report, terminal_width());
        if self.wide {
            s.push('\n');
            s.push_str(&render_tables(report));
        } else {
            s.push_str(
                "\nEvery metric with its (min–max) across rounds: add --wide, or use --format md or html.\n",
            );
        }
        Ok(s.into_bytes())
    }
}

/// The width to fit: `COLUMNS` when it is a sensible number, else [`DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(DEFAULT_WIDTH)
}

use boxed::width;

fn table(t: &Table, setups: &[String]) -> String {
    let mut header = vec!["Test".to_string(), "Unit".to_string()];
    header.extend(setups.iter().cloned());
    let mut lines: Vec<Vec<String>> = vec![header];
    for r in &t.rows {
        let mut line = vec![r.label.clone(), unit_text(r)];
        for c in &r.cells {
            line.push(match c {
                None => "–".into(),
                Some(c) => {
                    let text = cell_text(&c.summary);
                    match c.mark {
                        Mark::None => text,
                        m => format!("{text} {}", m.symbol()),
                    }
                }
            });
        }
        lines.push(line);
    }
    grid(&t.title, &lines, 2)
}

/// A boxed table under `title`: the first of `lines` is the header, the first `text_cols`
/// columns are left-aligned and the rest right-aligned (so magnitudes line up). The one table
/// style of the terminal report, which `fsbench history show` prints through too.
pub fn grid(title: &str, lines: &[Vec<String>], text_cols: usize) -> String {
    let cols = lines.first().map_or(0, Vec::len);
    let w: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .map(|l| l.get(i).map_or(0, |c| width(c)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = |l: char, m: char, r: char| {
        let parts: Vec<String> = w.iter().map(|n| "─".repeat(n + 2)).collect();
        format!("{l}{}{r}\n", parts.join(&m.to_string()))
    };
    let mut out = format!("{title}\n");
    out.push_str(&rule('┌', '┬', '┐'));
    for (li, line) in lines.iter().enumerate() {
        out.push('│');
        for (i, wi) in w.iter().enumerate() {
            let cell = line.get(i).map_or("", String::as_str);
            let pad = " ".repeat(wi - width(cell));
            if i < text_cols || li == 0 {
                out.push_str(&format!(" {cell}{pad} │"));
            } else {
                out.push_str(&format!(" {pad}{cell} │"));
            }
        }
        out.push('\n');
        if li == 0 {
            out.push_str(&rule('├', '┼', '┤'));
        }
    }
    out.push_str(&rule('└', '┴', '┘'));
    out
}

/// Wrap `text` to `w` columns, the first line after `first`, the rest after `indent`.
fn para(first: &str, indent: &str, text: &str, w: usize) -> String {
    let mut out = String::new();
    for (i, line) in boxed::wrap(text, w.saturating_sub(width(indent)))
        .into_iter()
        .enumerate()
    {
        out.push_str(if i == 0 { first } else { indent });
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Headline cell: the median with its mark (ranges are in `--wide` and the other formats).
fn headline_cell(c: &Option<super::model::Cell>) -> String {
    match c {
        None => "–".into(),
        Some(c) => {
            let v = format!(
                "{}{}",
                crate::metrics::format_value(&c.summary.metric, c.summary.median, &c.summary.unit),
                c.steady_flag()
            );
            match c.mark {
                Mark::None => v,
                m => format!("{v} {}", m.symbol()),
            }
        }
    }
}

/// The headline table (seed 000's layout) fitted to `max_width` columns.
pub fn headline_table(rows: &[Row], setups: &[String], max_width: usize) -> String {
    let mut header = vec!["Test".to_string()];
    header.extend(setups.iter().cloned());
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut l = vec![
                format!("{} {}", r.label, r.direction.arrow())
                    .trim_end()
                    .to_string(),
            ];
            l.extend(r.cells.iter().map(headline_cell));
            l
        })
        .collect();
    boxed::render(&header, &body, max_width)
}

/// One line per workload class: who to use, and whether the lead is beyond noise.
pub fn verdict_lines(report: &Report) -> Vec<String> {
    report
        .recommendations
        .iter()
        .map(|r| {
            if let Some(d) = &r.durability {
                return format!("{}: {}", r.class, d.text);
            }
            let standing = if r.standing.is_empty() {
                String::new()
            } else {
                format!("; {}", r.standing)
            };
            let basis = if r.basis.is_empty() {
                String::new()
            } else {
                format!("; {}", r.basis)
            };
            let unable = if r.unable.is_empty() {
                String::new()
            } else {
                format!("; {}", r.unable)
            };
            format!(
                "{}: {} ({}){standing}{basis}{unable}",
                r.class, r.winner, r.lead
            )
        })
        .collect()
}

/// The short report (verdicts, headline table, measured claims, warnings) within `w` columns.
pub fn render_with(report: &Report, w: usize) -> String {
    let mut out = String::new();
    let n = crate::stats::rounds(&report.results.summary);
    if !report.recommendations.is_empty() {
        out.push_str("Verdict per workload class\n");
        for line in verdict_lines(report) {
            out.push_str(&para("  • ", "    ", &line, w));
        }
        out.push('\n');
    }
    if !report.headline.is_empty() {
        let mut steady = super::model::steady_legend(&report.headline)
            .map(|l| format!("; {l}"))
            .unwrap_or_default();
        if n < 2 {
            steady.push_str("; one round has no noise estimate, so every lead counts as a tie");
        }
        out.push_str(&para(
            "",
            "",
            &format!(
                "Headline tests, median of {n} round(s): ★ ahead beyond noise, = equivalent, ≈ not separated, ▽ behind, ↑↓ better{steady}"
            ),
            w,
        ));
        out.push_str(&headline_table(&report.headline, &report.setups, w));
        if let Some(floor) = super::noise::summary(&report.headline, n) {
            out.push_str(&para("", "", &floor, w));
        }
        let counts = super::count::counts(report);
        for line in [counts.decided_text(), counts.error_text()]
            .into_iter()
            .flatten()
        {
            out.push_str(&para("", "", &line, w));
        }
        out.push('\n');
    }
    // Only the claims this run measured are listed; the rest are counted (md/html list them
    // with what each needs).
    if report
        .claims
        .iter()
        .any(|c| c.outcome != crate::claims::Outcome::NotMeasured)
    {
        out.push_str(&crate::claims::render::text(&report.claims, true));
        out.push('\n');
    }
    out.push_str(&crate::claims::aging::text(&report.results));
    let settled = super::settled_lines::lines(&report.results);
    if let Some((first, rest)) = settled.split_first() {
        out.push_str(&para("", "", first, w));
        for l in rest {
            out.push_str(&para("  ", "    ", l, w));
        }
        out.push('\n');
    }
    if !report.warnings.is_empty() {
        out.push_str("Warnings\n");
        for x in &report.warnings {
            out.push_str(&para("  ! ", "    ", x, w));
        }
    }
    out
}

/// Every table at its natural width, with (min–max) across rounds, and the evidence behind
/// each verdict (what `--wide` adds).
pub fn render_tables(report: &Report) -> String {
    let mut out = String::new();
    let n = crate::stats::rounds(&report.results.summary);
    out.push_str(&format!(
        "All metrics: median of {n} round(s), (min–max) across rounds.\n\n"
    ));
    for t in &report.tables {
        if t.kind == super::model::TableKind::Details {
            continue;
        }
        out.push_str(&table(t, &report.setups));
        out.push('\n');
    }
    for t in report
        .tables
        .iter()
        .filter(|t| t.kind == super::model::TableKind::Details)
    {
        out.push_str(&table(t, &report.setups));
        out.push('\n');
    }
    if !report.recommendations.is_empty() {
        out.push_str("Recommendations\n");
        for r in &report.recommendations {
            out.push_str(&format!("  • {} — {}\n", r.class, r.text));
        }
    }
    out
}

/// The short terminal report at the width of the terminal (what `fsbench run` prints).
pub fn render(report: &Report) -> String {
    render_with(report, terminal_width())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::{
        AVAIL_BYTES, BW_MIB_S, IOPS, LAT_P99_MS, OPS_PER_S, READ_IOPS, STEADY_REACHED, WRITE_IOPS,
    };
    use crate::results::{Results, Sample, SetupInfo};

    fn fits(text: &str, w: usize) {
        for line in text.lines() {
            assert!(
                width(line) <= w,
                "{} > {w} columns: {line}\n{text}",
                width(line)
            );
        }
    }

    /// Four setups with long names and wide numbers, on every headline workload.
    fn four_setups() -> Results {
        let mut r = Results::new();
        let setups = [
            "ext4-data-writeback",
            "xfs-reflink",
            "btrfs-zstd-3-ssd",
            "zfs-rs16k",
        ];
        for (i, name) in setups.iter().enumerate() {
            r.setups.push(SetupInfo {
                name: name.to_string(),
                fs: name.split('-').next().unwrap().to_string(),
                ..Default::default()
            });
            for hl in crate::workload::registry::headlines() {
                let metric = hl.metrics[0];
                let base = match metric {
                    IOPS | READ_IOPS | WRITE_IOPS | OPS_PER_S => 1_234_567.0,
                    BW_MIB_S => 12_345.6,
                    AVAIL_BYTES => 400e9,
                    _ => 12.345,
                };
                for round in 1..=3u32 {
                    r.samples.push(Sample {
                        setup: name.to_string(),
                        workload: hl.workload.into(),
                        metric: metric.into(),
                        unit: match metric {
                            IOPS | READ_IOPS | WRITE_IOPS => "IOPS",
                            OPS_PER_S => "ops/s",
                            BW_MIB_S => "MiB/s",
                            AVAIL_BYTES => "bytes",
                            LAT_P99_MS => "ms",
                            _ => "s",
                        }
                        .into(),
                        round,
                        value: base * (1.0 + 0.3 * i as f64) * (1.0 + 0.01 * f64::from(round)),
                    });
                }
            }
        }
        r
    }

    #[test]
    fn four_setups_fit_in_100_columns() {
        let report = Report::new(&four_setups());
        assert_eq!(report.setups.len(), 4);
        assert_eq!(
            report.headline.len(),
            crate::workload::registry::headlines().len()
        );
        let text = render_with(&report, 100);
        fits(&text, 100);
        // Every setup and every headline test is still there (wrapped or split, not dropped).
        let header: String = text
            .lines()
            .skip_while(|l| !l.starts_with('┌'))
            .skip(1)
            .take_while(|l| !l.starts_with('├'))
            .collect();
        for s in [
            "ext4-",
            "data-",
            "writeback",
            "xfs-",
            "reflink",
            "btrfs-zstd-",
            "3-ssd",
            "zfs-rs16k",
        ] {
            assert!(header.contains(s), "{s} missing from the header:\n{text}");
        }
        assert!(text.contains("2,392,591 ★"), "{text}");
        assert!(text.contains("4K random read, IOPS ↑"), "{text}");
        // Narrower terminals still fit, by splitting the setups over two tables.
        let narrow = headline_table(&report.headline, &report.setups, 60);
        fits(&narrow, 60);
        assert!(narrow.matches('┌').count() >= 2, "{narrow}");
    }

    #[test]
    fn steady_state_is_flagged_in_the_headline_cells_and_explained() {
        let mut r = four_setups();
        // randread ran with --steady-state; randwrite did not (its steady_reached is ignored).
        r.workloads.push(crate::results::WorkloadInfo {
            id: "randread".into(),
            kind: "io".into(),
            params: serde_json::json!({"job": {"steady": {"windows": 5}}}),
            fio_command: None,
        });
        // randread on the first setup steady in all 3 rounds, on the second not in round 2.
        for (setup, workload, reached) in [
            ("ext4-data-writeback", "randread", [1.0, 1.0, 1.0]),
            ("xfs-reflink", "randread", [1.0, 0.0, 1.0]),
            ("xfs-reflink", "randwrite", [0.0, 0.0, 0.0]),
        ] {
            for (i, v) in reached.iter().enumerate() {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: workload.into(),
                    metric: STEADY_REACHED.into(),
                    unit: "bool".into(),
                    round: i as u32 + 1,
                    value: *v,
                });
            }
        }
        let report = Report::new(&r);
        let row = report
            .headline
            .iter()
            .find(|r| r.workload == "randread" && r.metric == IOPS)
            .unwrap();
        let steady: Vec<_> = row
            .cells
            .iter()
            .map(|c| c.as_ref().unwrap().steady)
            .collect();
        use super::super::model::Steady;
        assert_eq!(
            steady,
            [
                Some(Steady::Reached),
                Some(Steady::NotReached(1)),
                None,
                None
            ]
        );
        let text = render_with(&report, 100);
        fits(&text, 100);
        assert!(text.contains("1,259,258ˢ"), "{text}");
        assert!(text.contains("1,637,036!"), "{text}");
        assert!(text.contains("steady window"), "{text}");
        // The same job's p99 is flagged; randwrite ran without --steady-state: no flag.
        assert!(text.contains("16.4!"), "{text}");
        let randwrite = text
            .lines()
            .find(|l| l.contains("4K random write"))
            .unwrap();
        assert!(
            !randwrite.contains('!') && !randwrite.contains('ˢ'),
            "{text}"
        );
        // Without --steady-state nothing is flagged and the legend says nothing about it.
        let plain = render_with(&Report::new(&four_setups()), 100);
        assert!(!plain.contains('ˢ') && !plain.contains("steady"), "{plain}");
    }

    #[test]
    fn the_fixture_fits_in_100_columns_and_opens_with_the_verdict() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results-sample.json"
        );
        let report = Report::new(&Results::load(std::path::Path::new(path)).unwrap());
        let text = render_with(&report, 100);
        fits(&text, 100);
        assert!(text.starts_with("Verdict per workload class\n"), "{text}");
        let verdict = text.find("Verdict").unwrap();
        let table = text.find("┌").unwrap();
        let warnings = text.find("Warnings").unwrap_or(usize::MAX);
        assert!(verdict < table && table < warnings, "{text}");
        // The short form has no per-round ranges; --wide has them.
        assert!(!text.contains("More metrics"));
        assert!(render_tables(&report).contains("More metrics"));
    }
}
