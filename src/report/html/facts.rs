//! Facts over time in the HTML report: a series whose metric the registry classes as a fact
//! (a step's state sampled about once a second, such as aging's fullness, bytes written and
//! a sample's layout score and extents per file) drawn against the seconds of its step, one
//! chart per workload and metric, one colour per setup, later rounds dashed. Throughput and
//! latency series are drawn by the charts beside this one.

use super::super::Report;
use super::linear_axis;
use crate::metrics::{Class, Format};
use crate::report::svg::{self, Series};

/// The charts, in workload order and, within a workload, in the order the series come.
pub(super) fn charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut out = Vec::new();
    for w in super::super::model::workload_order(r) {
        let mut metrics: Vec<&str> = Vec::new();
        for s in r.series.iter().filter(|s| s.workload == w) {
            if !metrics.contains(&s.metric.as_str()) {
                metrics.push(&s.metric);
            }
        }
        for metric in metrics {
            let Some(def) = crate::metrics::lookup(metric) else {
                continue;
            };
            if def.class != Class::Fact {
                continue;
            }
            // Sizes in MiB: a byte axis would read in billions.
            let (scale, unit) = if def.format == Format::Bytes {
                (1.0 / (1u64 << 20) as f64, "MiB")
            } else {
                (1.0, def.unit)
            };
            let mut series = Vec::new();
            let (mut hi, mut len) = (0.0_f64, 0usize);
            for s in r
                .series
                .iter()
                .filter(|s| s.workload == w && s.metric == metric && !s.values.is_empty())
            {
                let color = report
                    .setups
                    .iter()
                    .position(|x| *x == s.setup)
                    .unwrap_or(0);
                let points: Vec<(f64, f64)> = s
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, v * scale))
                    .collect();
                hi = points.iter().map(|p| p.1).fold(hi, f64::max);
                len = len.max(points.len());
                series.push(Series {
                    name: format!("{} r{}", s.setup, s.round),
                    color,
                    dashed: s.round > 1,
                    points,
                });
            }
            if series.is_empty() {
                continue;
            }
            out.push(svg::lines(
                &format!(
                    "{} — {} ({unit}) over time",
                    super::super::model::names(r, &w).0,
                    def.label
                ),
                &linear_axis("seconds", 0.0, len as f64),
                &linear_axis(unit, 0.0, hi),
                &series,
            ));
        }
    }
    out
}
