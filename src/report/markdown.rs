//! Markdown exporter: the 30-second report first (verdict per workload class, the headline
//! table in seed 000's layout, the claims, the warnings), then every table as GitHub tables
//! (rows = tests, columns = setups, (min–max) across rounds), notes and the setups' provenance.

use super::model::{Mark, Table, TableKind, cell_text, unit_text};
use super::{Exporter, Report};
use std::fmt::Write;

/// Markdown exporter.
pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        Ok(render(report).into_bytes())
    }
}

/// Escape the characters that would break a table cell.
fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

fn table(out: &mut String, t: &Table, setups: &[String]) {
    let _ = writeln!(out, "## {}\n", t.title);
    let _ = write!(out, "| Test | Unit |");
    for s in setups {
        let _ = write!(out, " {} |", esc(s));
    }
    let _ = write!(out, "\n|---|---|");
    for _ in setups {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    for r in &t.rows {
        let _ = write!(out, "| {} | {} |", esc(&r.label), unit_text(r));
        for c in &r.cells {
            let text = match c {
                None => "–".to_string(),
                Some(c) => match c.mark {
                    Mark::Best => format!("**{}** ★", cell_text(&c.summary)),
                    Mark::None => cell_text(&c.summary),
                    m => format!("{} {}", cell_text(&c.summary), m.symbol()),
                },
            };
            let _ = write!(out, " {} |", esc(&text));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// The headline table: one row per test with seed 000's metric, medians only.
fn headline(out: &mut String, report: &Report) {
    let _ = writeln!(out, "## Headline tests\n");
    let _ = write!(out, "| Test |");
    for s in &report.setups {
        let _ = write!(out, " {} |", esc(s));
    }
    let _ = write!(out, " paired noise (rounds for ±10 %) |\n|---|");
    for _ in &report.setups {
        let _ = write!(out, "---:|");
    }
    out.push_str("---:|\n");
    for r in &report.headline {
        let _ = write!(out, "| {} {} |", esc(&r.label), r.direction.arrow());
        for c in &r.cells {
            let text = match c {
                None => "–".to_string(),
                Some(c) => {
                    let v = format!(
                        "{}{}",
                        crate::metrics::format_value(
                            &c.summary.metric,
                            c.summary.median,
                            &c.summary.unit,
                        ),
                        c.steady_flag()
                    );
                    match c.mark {
                        Mark::Best => format!("**{v}** ★"),
                        Mark::None => v,
                        m => format!("{v} {}", m.symbol()),
                    }
                }
            };
            let _ = write!(out, " {} |", esc(&text));
        }
        let _ = writeln!(out, " {} |", super::model::noise_floor_text(r));
    }
    let _ = writeln!(
        out,
        "\nPaired noise: the standard deviation of the per-round log ratios of the leader and its \
         noisiest rival (about the ratio's spread per round); in brackets the rounds that would \
         find a true 10 % difference beyond noise 4 times in 5 at that noise (80 % power)."
    );
    if let Some(l) = super::model::steady_legend(&report.headline) {
        let _ = writeln!(out, "\n{l}.");
    }
    out.push('\n');
}

/// The whole Markdown report.
pub fn render(report: &Report) -> String {
    let r = &report.results;
    let mut out = String::new();
    let _ = writeln!(out, "# fsbench report\n");
    let n = crate::stats::rounds(&r.summary);
    let _ = writeln!(
        out,
        "Host `{}` ({}, kernel {}), target {} `{}` ({}). Medians of {n} round(s) with (min–max) \
         across rounds; **★** ahead of every other setup beyond noise, = equivalent to the leader \
         within the metric's margin, ≈ not separated from it yet, ▽ behind it beyond noise \
         (paired per-round ratios, t interval); ↑ higher is better, ↓ lower is better. \"median of rounds\" latencies are the median of each round's \
         percentile; \"all I/Os of all rounds\" come from the merged histograms.{}\n",
        if r.host.hostname.is_empty() {
            "?"
        } else {
            &r.host.hostname
        },
        r.host.cpu,
        r.host.kernel,
        r.target.kind,
        r.target.path,
        crate::units::format_size(r.target.size_bytes),
        if n < 2 {
            " One round has no noise estimate, so every lead counts as a tie."
        } else {
            ""
        },
    );
    if !report.recommendations.is_empty() {
        let _ = writeln!(out, "## Verdict per workload class\n");
        for rec in &report.recommendations {
            let _ = writeln!(out, "- **{}** — {}", rec.class, rec.text);
        }
        out.push('\n');
    }
    if !report.headline.is_empty() {
        headline(&mut out, report);
    }
    let counts = super::count::counts(report);
    for line in [counts.decided_text(), counts.error_text()]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "{line}\n");
    }
    if !report.claims.is_empty() {
        out.push_str(&crate::claims::render::markdown(&report.claims));
        out.push('\n');
    }
    out.push_str(&crate::claims::aging::markdown(&report.results));
    let settled = super::settled_lines::lines(&report.results);
    if let Some((first, rest)) = settled.split_first() {
        let _ = writeln!(out, "## Until settled\n\n{first}\n");
        for l in rest {
            let _ = writeln!(out, "- {l}");
        }
        out.push('\n');
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "## Warnings\n");
        for w in &report.warnings {
            let _ = writeln!(out, "- ⚠ {w}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "# All metrics\n\nEvery metric of every workload: median (min–max) across rounds.\n"
    );
    for t in &report.tables {
        if t.kind != TableKind::Details {
            table(&mut out, t, &report.setups);
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "## Notes from the workloads\n");
        for n in &report.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    for t in report
        .tables
        .iter()
        .filter(|t| t.kind == TableKind::Details)
    {
        table(&mut out, t, &report.setups);
    }
    let _ = writeln!(out, "## Setups\n");
    let _ = writeln!(
        out,
        "| Setup | Filesystem | mkfs | Mount options |\n|---|---|---|---|"
    );
    for s in &r.setups {
        let fs = if s.implementation.is_empty() {
            s.fs.clone()
        } else {
            format!("{} ({})", s.fs, s.implementation)
        };
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | `{}` |",
            esc(&s.name),
            esc(&fs),
            esc(&s.mkfs_args.join(" ")),
            esc(&s.mount_opts)
        );
    }
    out
}
