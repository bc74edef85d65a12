//! Terminal exporter: the seed-article tables drawn with box characters, no colours and no
//! terminal-width detection, so the output is the same on a terminal, in a pipe and in a snapshot.

use super::model::{Mark, Table, cell_text, unit_text};
use super::{Exporter, Report};

/// Terminal table exporter.
pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        Ok(render(report).into_bytes())
    }
}

/// Display width of a cell: every character used here (digits, –, ★, ≈, ↑) is one column.
fn width(s: &str) -> usize {
    s.chars().count()
}

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
                    let mark = match c.mark {
                        Mark::Best => " ★",
                        Mark::Tied => " ≈",
                        Mark::None => "",
                    };
                    format!("{}{mark}", cell_text(&c.summary))
                }
            });
        }
        lines.push(line);
    }
    let cols = lines[0].len();
    let w: Vec<usize> = (0..cols)
        .map(|i| lines.iter().map(|l| width(&l[i])).max().unwrap_or(0))
        .collect();
    let rule = |l: char, m: char, r: char| {
        let parts: Vec<String> = w.iter().map(|n| "─".repeat(n + 2)).collect();
        format!("{l}{}{r}\n", parts.join(&m.to_string()))
    };
    let mut out = format!("{}\n", t.title);
    out.push_str(&rule('┌', '┬', '┐'));
    for (li, line) in lines.iter().enumerate() {
        out.push('│');
        for (i, cell) in line.iter().enumerate() {
            let pad = " ".repeat(w[i] - width(cell));
            // Text columns left-aligned, numbers right-aligned so magnitudes line up.
            if i < 2 || li == 0 {
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

/// The whole terminal report as text.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let n = report
        .results
        .summary
        .iter()
        .map(|s| s.n)
        .max()
        .unwrap_or(0);
    out.push_str(&format!(
        "Median of {n} round(s), (min–max) across rounds. ★ best beyond noise, ≈ tied within noise, ↑ higher is better, ↓ lower is better.\n\n"
    ));
    for t in &report.tables {
        if t.kind == super::model::TableKind::Details {
            continue;
        }
        out.push_str(&table(t, &report.setups));
        out.push('\n');
    }
    if !report.recommendations.is_empty() {
        out.push_str("Recommendations\n");
        for r in &report.recommendations {
            out.push_str(&format!("  • {} — {}\n", r.class, r.text));
        }
        out.push('\n');
    }
    // The terminal lists only the claims this run measured; the rest are counted (md/html list
    // them with what each needs).
    if report
        .claims
        .iter()
        .any(|c| c.outcome != crate::claims::Outcome::NotMeasured)
    {
        out.push_str(&crate::claims::render::text(&report.claims, true));
        out.push('\n');
    }
    if !report.warnings.is_empty() {
        out.push_str("Warnings\n");
        for w in &report.warnings {
            out.push_str(&format!("  ! {w}\n"));
        }
    }
    out
}
