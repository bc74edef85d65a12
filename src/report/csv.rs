//! Tidy CSV: one row per sample (`samples` section) or one row per summary (`summary` section).
//! `fsbench report --format csv -o X.csv` writes both: samples to X.csv, summary to
//! X.summary.csv; on stdout `--csv-section` picks one.

use super::{Exporter, Report};
use crate::metrics;
use std::fmt::Write;

/// Which rows to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CsvSection {
    /// One row per measured sample.
    Samples,
    /// One row per (setup, workload, metric) summary.
    Summary,
}

/// CSV exporter for one section.
pub struct Csv(pub CsvSection);

/// Quote a field when it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Shortest round-trip float text; empty for NaN.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let r = &report.results;
        let mut out = String::new();
        match self.0 {
            CsvSection::Samples => {
                out.push_str("setup,workload,metric,unit,round,value\n");
                for s in &r.samples {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{}",
                        field(&s.setup),
                        field(&s.workload),
                        field(s.metric.as_str()),
                        field(&s.unit),
                        s.round,
                        num(s.value)
                    );
                }
            }
            CsvSection::Summary => {
                out.push_str(
                    "setup,workload,metric,unit,direction,n,median,min,max,mean,stddev,ci_low,ci_high,ci_coverage\n",
                );
                for s in &r.summary {
                    let dir = match metrics::direction(&s.metric) {
                        metrics::Direction::HigherIsBetter => "higher",
                        metrics::Direction::LowerIsBetter => "lower",
                        metrics::Direction::Neutral => "",
                    };
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{dir},{},{},{},{},{},{},{},{},{}",
                        field(&s.setup),
                        field(&s.workload),
                        field(s.metric.as_str()),
                        field(&s.unit),
                        s.n,
                        num(s.median),
                        num(s.min),
                        num(s.max),
                        num(s.mean),
                        num(s.stddev),
                        num(s.ci_low),
                        num(s.ci_high),
                        num(s.ci_coverage)
                    );
                }
            }
        }
        Ok(out.into_bytes())
    }
}
