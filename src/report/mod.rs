//! Exporters behind one trait (terminal, Markdown, CSV, JSON, HTML) and recommendations.
//!
//! A [`Report`] is built once from a results file: the summary is recomputed from the raw
//! samples (so an edited or older file cannot carry stale statistics), rows are grouped into
//! the seed-article tables ([`model`]), winners and ties are judged ([`crate::stats::verdict`]),
//! warnings collected ([`warnings`]) and recommendations derived ([`recommend`]). Each format is
//! one small [`Exporter`] in its own file and only formats that model:
//!
//! | format | file | notes |
//! |---|---|---|
//! | `table` | [`terminal`] | verdicts, headline table fitted to `COLUMNS`, claims, warnings; `--wide` adds every table |
//! | `md` | [`markdown`] | the same short form first, then every table as GitHub tables |
//! | `csv` | [`csv`] | tidy: one row per sample, or one per summary (`CsvSection`) |
//! | `json` | [`json`] | the `Results` with its summary recomputed |
//! | `html` | [`html`] | one self-contained page, inline SVG charts ([`svg`]), no network |
//!
//! The other commands' output is rendered here too, so `commands/` only dispatches: `fsbench
//! io` ([`io`]), `fsbench meta` ([`meta`]) and `fsbench plan` with the summary `fsbench run`
//! starts with ([`plan`]).

pub mod boxed;
pub mod compare;
pub mod count;
pub mod csv;
pub mod durability;
pub mod gaps;
pub mod headline;
pub mod history;
pub mod history_noise;
pub mod html;
pub mod io;
pub mod json;
pub mod markdown;
pub mod meta;
pub mod model;
pub mod noise;
pub mod open_questions;
pub mod plan;
pub mod recommend;
pub mod record;
pub mod settled_lines;
#[cfg(test)]
mod simulation;
pub mod svg;
pub mod terminal;
pub mod warnings;

use crate::results::Results;
use std::path::Path;

/// Everything an exporter needs: recomputed results plus the judged tables.
#[derive(Debug, Clone)]
pub struct Report {
    /// The results with `summary` recomputed.
    pub results: Results,
    /// Setup names in column order.
    pub setups: Vec<String>,
    /// Tables in display order (I/O, metadata, capacity, probes, details).
    pub tables: Vec<model::Table>,
    /// The headline rows in seed 000's layout ([`headline`]).
    pub headline: Vec<model::Row>,
    /// One verdict per workload class that was measured.
    pub recommendations: Vec<recommend::Recommendation>,
    /// Warnings to show before the numbers are trusted.
    pub warnings: Vec<String>,
    /// Workload notes (`setup, round N: workload: note`), shown by Markdown and HTML only.
    pub notes: Vec<String>,
    /// The seeds' claims judged on these results ([`crate::claims`]).
    pub claims: Vec<crate::claims::ClaimResult>,
}

impl Report {
    /// Build the report (recomputes the summary).
    pub fn new(results: &Results) -> Self {
        let mut results = results.clone();
        crate::stats::summarize(&mut results);
        let setups = model::setup_order(&results);
        let tables = model::tables(&results);
        let headline = headline::rows(&tables);
        let recommendations = recommend::recommend(&results, &tables, &setups);
        let warnings = warnings::collect(&results);
        let notes = warnings::notes(&results);
        let claims = crate::claims::evaluate(&results);
        Report {
            results,
            setups,
            tables,
            headline,
            recommendations,
            warnings,
            notes,
            claims,
        }
    }
}

/// One output format.
pub trait Exporter {
    /// Render the whole report as bytes (UTF-8 text for every format here).
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>>;
}

/// Output formats of `fsbench report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Terminal table.
    Table,
    /// Markdown.
    Md,
    /// Tidy CSV.
    Csv,
    /// results.json with the summary recomputed.
    Json,
    /// Self-contained HTML page with SVG charts.
    Html,
}

/// The exporter of a format (CSV: the per-sample section; table: the short form).
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(terminal::Terminal { wide: false }),
        Format::Md => Box::new(markdown::Markdown),
        Format::Csv => Box::new(csv::Csv(csv::CsvSection::Samples)),
        Format::Json => Box::new(json::Json),
        Format::Html => Box::new(html::Html),
    }
}

/// The short terminal report (verdicts, headline table, claims, warnings) at the terminal's width.
pub fn render_terminal(results: &Results) -> String {
    terminal::render(&Report::new(results))
}

/// Write `report.md` and `report.html` into `out_dir` (beside `results.json`).
pub fn write_run_reports(results: &Results, out_dir: &Path) -> crate::Result<()> {
    let report = Report::new(results);
    for (name, exp) in [
        ("report.md", &markdown::Markdown as &dyn Exporter),
        ("report.html", &html::Html as &dyn Exporter),
    ] {
        let bytes = exp.render(&report)?;
        write_shareable(&out_dir.join(name), &bytes)?;
    }
    Ok(())
}

/// Write a report atomically and make it world-readable: reports are meant to be shared, and
/// the temporary file behind [`crate::results::write_atomic`] is created 0600.
pub fn write_shareable(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    crate::results::write_atomic(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
        .map_err(|e| crate::Error::io("cannot set permissions of", path, e))
}
