//! HTML exporter: one self-contained page (inline CSS and SVG, no script, no network) rendered
//! from `report.html.j2` with minijinja. Charts: bars with min–max whiskers per headline
//! metric, latency percentile curves per workload from the merged histograms (log axes), IOPS
//! over time per job from the per-second series, and scaling curves for workload families such
//! (a plan file's `sweep`: `randread-qd1…qd128`, `seqwrite-j1…j8`).

use super::model::{Mark, TableKind, cell_text, unit_text};
use super::svg::{self, Axis, Bar, Series};
use super::{Exporter, Report};
use crate::metrics::registry::{BW_MIB_S, IOPS, LAT_P50_MS, LAT_P99_MS};
use crate::stats::merged::Merged;
use serde::Serialize;
use std::collections::BTreeMap;

mod facts;
mod steady_plot;

const TEMPLATE: &str = include_str!("report.html.j2");

/// HTML exporter.
pub struct Html;

#[derive(Serialize)]
struct HtmlCell {
    text: String,
    class: &'static str,
}

#[derive(Serialize)]
struct HtmlRow {
    label: String,
    unit: String,
    cells: Vec<HtmlCell>,
}

#[derive(Serialize)]
struct HtmlTable {
    title: String,
    rows: Vec<HtmlRow>,
}

#[derive(Serialize)]
struct ChartGroup {
    title: String,
    note: String,
    svgs: Vec<String>,
}

impl Exporter for Html {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let mut env = minijinja::Environment::new();
        env.add_template("report.html", TEMPLATE)
            .map_err(|e| crate::Error::Other(format!("HTML template: {e}")))?;
        let mut tables = vec![html_table("Headline tests", &report.headline)];
        tables.extend(report.tables.iter().map(|t| html_table(&t.title, &t.rows)));
        let r = &report.results;
        let headline = ChartGroup {
            title: "Headline tests".into(),
            note: "One chart per test of seed 000's table. Bar = median of the rounds; whisker = \
                   slowest to fastest round; a hatched, outlined bar labelled ★ best leads beyond \
                   run-to-run noise (no bar is marked when the lead is within noise)."
                .into(),
            svgs: bar_charts(report, &report.headline),
        };
        let all_rows: Vec<super::model::Row> = report
            .tables
            .iter()
            .filter(|t| t.kind != TableKind::Details)
            .flat_map(|t| t.rows.iter().cloned())
            .collect();
        let more_bars = bar_charts(report, &all_rows);
        let charts = vec![
            ChartGroup {
                title: "Latency percentiles (all I/Os of all rounds)".into(),
                note: "From the merged histograms; both axes logarithmic.".into(),
                svgs: latency_charts(report),
            },
            ChartGroup {
                title: "Throughput over time".into(),
                note: "Per-second series of each job; solid = round 1, dashed = later rounds. Latency over time: per-second p99 (solid) and p50 (dashed) of the first round.".into(),
                svgs: series_charts(report)
                    .into_iter()
                    .chain(latency_series_charts(report))
                    .collect(),
            },
            ChartGroup {
                title: "Facts over time".into(),
                note: "A step's state sampled about once a second while it ran (aging: \
                       fullness, bytes written, and a sample of the live files' layout score \
                       and extents per file); solid = round 1, dashed = later rounds."
                    .into(),
                svgs: facts::charts(report),
            },
            ChartGroup {
                title: "Steady state (--steady-state)".into(),
                note: "IOPS of each steady-state round of a job run until steady (its first \
                       round of the plan); dashed over the window the criteria judged (the title \
                       names it, with its range and slope in % of its mean): its mean and the \
                       band the range criterion allows around it (±10 % for SNIA's 20 %); fit: \
                       the least-squares line through it. On a device, steady state counts only \
                       after --precondition; on an image or --dir it is a stability check."
                    .into(),
                svgs: steady_plot::charts(report),
            },
            ChartGroup {
                title: "Scaling".into(),
                note: "Median across rounds per queue depth or job count.".into(),
                svgs: scaling_charts(report),
            },
        ];
        let charts: Vec<ChartGroup> = charts.into_iter().filter(|g| !g.svgs.is_empty()).collect();
        use minijinja::Value;
        let ctx = minijinja::context! {
            host => Value::from(minijinja::value::Serde(&r.host)),
            target => Value::from(minijinja::value::Serde(&r.target)),
            target_size => crate::units::format_size(r.target.size_bytes),
            started_at => &r.started_at,
            version => &r.fsbench_version,
            setups => &report.setups,
            setup_info => Value::from(minijinja::value::Serde(&r.setups)),
            tables => Value::from(minijinja::value::Serde(&tables)),
            recommendations => Value::from(minijinja::value::Serde(&report.recommendations)),
            warnings => &report.warnings,
            notes => &report.notes,
            claims => Value::from(minijinja::value::Serde(&crate::claims::render::rows(&report.claims))),
            claims_title => crate::claims::render::TITLE,
            claims_left_out => crate::claims::render::left_out(&report.claims).trim(),
            charts => Value::from(minijinja::value::Serde(&charts)),
            headline => Value::from(minijinja::value::Serde(&headline)),
            noise => Value::from(minijinja::value::Serde(&super::noise::cells(&report.headline))),
            noise_legend => super::noise::LEGEND,
            decided_text => super::count::counts(report).decided_text(),
            error_text => super::count::counts(report).error_text(),
            more_bars => &more_bars,
            rounds => crate::stats::rounds(&r.summary),
        };
        let html = env
            .get_template("report.html")
            .and_then(|t| t.render(ctx))
            .map_err(|e| crate::Error::Other(format!("HTML template: {e}")))?;
        Ok(html.into_bytes())
    }
}

/// A judged table as HTML cells (median (min–max) with its mark and class).
fn html_table(title: &str, rows: &[super::model::Row]) -> HtmlTable {
    HtmlTable {
        title: title.to_string(),
        rows: rows
            .iter()
            .map(|r| HtmlRow {
                label: r.label.clone(),
                unit: unit_text(r),
                cells: r
                    .cells
                    .iter()
                    .map(|c| match c {
                        None => HtmlCell {
                            text: "–".into(),
                            class: "na",
                        },
                        Some(c) => HtmlCell {
                            text: {
                                let v = format!("{}{}", cell_text(&c.summary), c.steady_flag());
                                match c.mark {
                                    Mark::None => v,
                                    m => format!("{v} {}", m.symbol()),
                                }
                            },
                            class: match c.mark {
                                Mark::Best => "best",
                                Mark::Tied => "tie",
                                Mark::Equivalent => "equivalent",
                                Mark::Behind => "behind",
                                Mark::None => "",
                            },
                        },
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// One grouped bar chart per row: setups side by side, median bar, min–max whisker.
fn bar_charts(report: &Report, rows: &[super::model::Row]) -> Vec<String> {
    let mut out = Vec::new();
    {
        for row in rows {
            if crate::stats::is_merged(&row.metric) {
                continue;
            }
            let bars: Vec<Bar> = row
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    c.as_ref().map(|c| Bar {
                        label: report.setups[i].clone(),
                        value: c.summary.median,
                        low: c.summary.min,
                        high: c.summary.max,
                        text: crate::metrics::format_value(
                            &c.summary.metric,
                            c.summary.median,
                            &c.summary.unit,
                        ),
                        color: i,
                        best: c.mark == Mark::Best,
                    })
                })
                .collect();
            if !bars.is_empty() {
                out.push(svg::bars(
                    &format!("{} {}", row.label, row.direction.arrow()),
                    &bars,
                ));
            }
        }
    }
    out
}

fn fmt_ms(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v} ms")
    }
}

fn latency_charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut groups: BTreeMap<(usize, String, String), Vec<(usize, Merged)>> = BTreeMap::new();
    let wl = super::model::workload_order(r);
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for h in &r.histograms {
        let k = (h.setup.clone(), h.workload.clone(), h.direction.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (setup, workload, dir) in keys {
        let m = Merged::from_records(
            r.histograms
                .iter()
                .filter(|h| h.setup == setup && h.workload == workload && h.direction == dir),
        );
        if m.count == 0 {
            continue;
        }
        let si = report.setups.iter().position(|s| *s == setup).unwrap_or(0);
        let wi = wl.iter().position(|w| *w == workload).unwrap_or(usize::MAX);
        groups.entry((wi, workload, dir)).or_default().push((si, m));
    }
    let qs: Vec<f64> = (0..=40)
        .map(|i| 1.0 - 10f64.powf(-0.3 - f64::from(i) * 0.0925))
        .collect();
    let mut out = Vec::new();
    for ((_, workload, dir), ms) in groups {
        let mut series = Vec::new();
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for (si, m) in &ms {
            let pts: Vec<(f64, f64)> = qs
                .iter()
                .filter(|q| (1.0 - **q) * m.count as f64 >= 1.0)
                .map(|&q| {
                    let ms = (m.quantile(q) as f64 / 1e6).max(1e-6);
                    (-(1.0 - q).log10(), ms.log10())
                })
                .collect();
            for p in &pts {
                lo = lo.min(p.1);
                hi = hi.max(p.1);
            }
            series.push(Series {
                name: report.setups[*si].clone(),
                color: *si,
                dashed: false,
                points: pts,
            });
        }
        let x = Axis {
            label: "percentile".into(),
            ticks: vec![
                (std::f64::consts::LOG10_2, "p50".into()),
                (1.0, "p90".into()),
                (2.0, "p99".into()),
                (3.0, "p99.9".into()),
                (4.0, "p99.99".into()),
            ],
        };
        let y = Axis {
            label: "latency".into(),
            ticks: svg::log_ticks(lo, hi, fmt_ms),
        };
        out.push(svg::lines(
            &format!("{} — {dir} latency", super::model::names(r, &workload).0),
            &x,
            &y,
            &series,
        ));
    }
    out
}

fn linear_axis(label: &str, lo: f64, hi: f64) -> Axis {
    Axis {
        label: label.into(),
        ticks: svg::nice_ticks(lo, hi)
            .into_iter()
            .map(|v| {
                let text = if v.fract() == 0.0 {
                    crate::metrics::format_number(v)
                        .trim_end_matches(".00")
                        .to_string()
                } else {
                    crate::metrics::format_number(v)
                };
                (v, text)
            })
            .collect(),
    }
}

fn series_charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut out = Vec::new();
    for w in super::model::workload_order(r) {
        // IOPS when the job recorded it, else bandwidth (sequential jobs may only have that).
        // A series is named by the metric it samples per second.
        let Some(metric) = [IOPS, BW_MIB_S].into_iter().find(|m| {
            r.series
                .iter()
                .any(|s| s.workload == w && s.metric == m.as_str())
        }) else {
            continue;
        };
        let unit = metric.def().unit;
        let recs: Vec<_> = r
            .series
            .iter()
            .filter(|s| s.workload == w && s.metric == metric.as_str() && !s.values.is_empty())
            .collect();
        if recs.is_empty() {
            continue;
        }
        let mut series = Vec::new();
        let (mut hi, mut len) = (0.0_f64, 0usize);
        for s in recs {
            let si = report
                .setups
                .iter()
                .position(|x| *x == s.setup)
                .unwrap_or(0);
            hi = s.values.iter().copied().fold(hi, f64::max);
            len = len.max(s.values.len());
            series.push(Series {
                name: s.setup.clone(),
                color: si,
                dashed: s.round > 1,
                points: s
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, *v))
                    .collect(),
            });
        }
        out.push(svg::lines(
            &format!("{} — {unit} per second", super::model::names(r, &w).0),
            &linear_axis("seconds", 0.0, len as f64),
            &linear_axis(unit, 0.0, hi),
            &series,
        ));
    }
    out
}

/// Per-second p50/p99 latency of each I/O job, one chart per workload, one colour per setup
/// (the first round recorded, so stalls are not smoothed away by mixing rounds).
fn latency_series_charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut out = Vec::new();
    for w in super::model::workload_order(r) {
        let mut series = Vec::new();
        let (mut hi, mut len) = (0.0_f64, 0usize);
        for (si, setup) in report.setups.iter().enumerate() {
            for (metric, quantile, dashed) in
                [(LAT_P99_MS, "p99", false), (LAT_P50_MS, "p50", true)]
            {
                let Some(rec) = r
                    .series
                    .iter()
                    .filter(|s| {
                        s.workload == w
                            && s.setup == *setup
                            && s.metric == metric.as_str()
                            && !s.values.is_empty()
                    })
                    .min_by_key(|s| s.round)
                else {
                    continue;
                };
                hi = rec.values.iter().copied().fold(hi, f64::max);
                len = len.max(rec.values.len());
                series.push(Series {
                    name: format!("{setup} {quantile}"),
                    color: si,
                    dashed,
                    points: rec
                        .values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| ((i + 1) as f64, *v))
                        .collect(),
                });
            }
        }
        if series.is_empty() {
            continue;
        }
        out.push(svg::lines(
            &format!(
                "{} — p50/p99 latency per second (ms)",
                super::model::names(r, &w).0
            ),
            &linear_axis("seconds", 0.0, len as f64),
            &linear_axis("ms", 0.0, hi),
            &series,
        ));
    }
    out
}

/// The sweep a workload is a point of, as its plan recorded it: (family, parameter, value).
fn family(r: &crate::results::Results, id: &str) -> Option<(String, String, u32)> {
    let w = r.workloads.iter().find(|w| w.id == id)?;
    let p: crate::workload::spec::SweepPoint =
        serde_json::from_value(w.params.get("sweep")?.clone()).ok()?;
    Some((p.family, p.param, u32::try_from(p.value).ok()?))
}

/// How a chart's axis names a swept job parameter.
fn axis_label(param: &str) -> String {
    match param {
        "iodepth" => "queue depth".into(),
        "numjobs" => "jobs".into(),
        other => other.replace('_', " "),
    }
}

fn scaling_charts(report: &Report) -> Vec<String> {
    let r = &report.results;
    let mut fams: BTreeMap<(String, String), Vec<(u32, String)>> = BTreeMap::new();
    for w in super::model::workload_order(r) {
        if let Some((b, p, n)) = family(r, &w) {
            fams.entry((b, p)).or_default().push((n, w));
        }
    }
    let mut out = Vec::new();
    for ((base, p), mut members) in fams {
        if members.len() < 2 {
            continue;
        }
        members.sort();
        let metric = if r
            .summary
            .iter()
            .any(|s| s.workload == members[0].1 && s.metric == IOPS)
        {
            IOPS
        } else {
            BW_MIB_S
        };
        let mut series = Vec::new();
        let mut hi = 0.0_f64;
        for (si, setup) in report.setups.iter().enumerate() {
            let pts: Vec<(f64, f64)> = members
                .iter()
                .filter_map(|(n, w)| {
                    r.summary
                        .iter()
                        .find(|s| &s.setup == setup && &s.workload == w && s.metric == metric)
                        .map(|s| (f64::from(*n).log2(), s.median))
                })
                .collect();
            hi = pts.iter().map(|p| p.1).fold(hi, f64::max);
            if !pts.is_empty() {
                series.push(Series {
                    name: setup.clone(),
                    color: si,
                    dashed: false,
                    points: pts,
                });
            }
        }
        let x = Axis {
            label: axis_label(&p),
            ticks: members
                .iter()
                .map(|(n, _)| (f64::from(*n).log2(), n.to_string()))
                .collect(),
        };
        let unit = metric.def().unit;
        out.push(svg::lines(
            &format!(
                "{} — {unit} by {}",
                // The family is named by its members' kind (`randread` of `randread-qd32`).
                super::model::names_like(r, &members[0].1, &base).0,
                x.label
            ),
            &x,
            &linear_axis(unit, 0.0, hi),
            &series,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{axis_label, family};
    use crate::metrics::registry::IOPS;
    use crate::report::{Exporter, Report};
    use crate::results::{Results, Sample};

    /// A recorded `io` workload that is point `value` of a sweep of `param` over `family`.
    fn swept(family: &str, param: &str, value: u64, id: &str) -> crate::results::WorkloadInfo {
        crate::results::WorkloadInfo {
            id: id.into(),
            kind: "io".into(),
            params: serde_json::json!({
                "sweep": { "family": family, "param": param, "value": value }
            }),
            fio_command: None,
        }
    }

    #[test]
    fn scaling_curves_appear_for_queue_depth_families() {
        let mut r = Results::new();
        for qd in [1, 8, 32] {
            r.workloads.push(swept(
                "randread",
                "iodepth",
                qd,
                &format!("randread-qd{qd}"),
            ));
        }
        for (qd, iops) in [(1, 9_000.0), (8, 52_000.0), (32, 80_000.0)] {
            for setup in ["ext4", "xfs"] {
                for round in 1..=3 {
                    r.samples.push(Sample {
                        setup: setup.into(),
                        workload: format!("randread-qd{qd}"),
                        metric: IOPS.into(),
                        unit: "IOPS".into(),
                        round,
                        value: iops + f64::from(round),
                    });
                }
            }
        }
        let html = String::from_utf8(super::Html.render(&Report::new(&r)).unwrap()).unwrap();
        assert!(
            html.contains("Random read — IOPS by queue depth"),
            "no scaling chart"
        );
        assert!(html.contains(">32</text>"));
    }

    #[test]
    fn latency_over_time_is_drawn_per_workload() {
        use crate::results::SeriesRecord;
        let mut r = Results::new();
        for setup in ["ext4", "btrfs"] {
            r.samples.push(Sample {
                setup: setup.into(),
                workload: "randwrite".into(),
                metric: IOPS.into(),
                unit: "IOPS".into(),
                round: 1,
                value: 1000.0,
            });
            for (metric, v) in [("lat_p50_ms", 0.5), ("lat_p99_ms", 4.0)] {
                r.series.push(SeriesRecord {
                    setup: setup.into(),
                    workload: "randwrite".into(),
                    round: 1,
                    metric: metric.into(),
                    values: vec![v, v * 3.0, v],
                });
            }
        }
        let html = String::from_utf8(super::Html.render(&Report::new(&r)).unwrap()).unwrap();
        assert!(
            html.contains("Random write — p50/p99 latency per second (ms)"),
            "no latency-over-time chart"
        );
        assert!(html.contains("btrfs p99") && html.contains("ext4 p50"));
    }

    #[test]
    fn families_come_from_the_recorded_sweep_not_the_id() {
        let mut r = Results::new();
        r.workloads
            .push(swept("seqwrite", "numjobs", 4, "seqwrite-j4"));
        // An id that looks like a sweep point but was not recorded as one is not a member.
        r.workloads.push(crate::results::WorkloadInfo {
            id: "randread-qd32".into(),
            kind: "io".into(),
            ..Default::default()
        });
        assert_eq!(
            family(&r, "seqwrite-j4"),
            Some(("seqwrite".into(), "numjobs".into(), 4))
        );
        assert_eq!(family(&r, "randread-qd32"), None);
        assert_eq!(family(&r, "rm-tree"), None);
        assert_eq!(axis_label("iodepth"), "queue depth");
    }
}
