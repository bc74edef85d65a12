//! `fsbench history trend`: one (setup, workload, metric) over the runs of a device, as a
//! terminal sparkline and a self-contained HTML page (an SVG chart of each run's median with
//! its range over rounds; where the kernel or the fsbench version changed, a marked line).

use crate::stats::descriptive::median;

/// One run on the chart.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendPoint {
    /// Run id.
    pub run_id: i64,
    /// When the run started.
    pub started_at: String,
    /// Kernel release.
    pub kernel: String,
    /// fsbench version.
    pub fsbench_version: String,
    /// Median over rounds.
    pub median: f64,
    /// Smallest round.
    pub min: f64,
    /// Largest round.
    pub max: f64,
    /// Rounds.
    pub n: usize,
}

impl TrendPoint {
    /// From one run's rounds (`None` when it has none).
    pub fn of(
        run_id: i64,
        started_at: &str,
        kernel: &str,
        version: &str,
        rounds: &[f64],
    ) -> Option<Self> {
        if rounds.is_empty() {
            return None;
        }
        Some(TrendPoint {
            run_id,
            started_at: started_at.to_string(),
            kernel: kernel.to_string(),
            fsbench_version: version.to_string(),
            median: median(rounds),
            min: rounds.iter().copied().fold(f64::INFINITY, f64::min),
            max: rounds.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n: rounds.len(),
        })
    }
}

/// `▁▂▃▅▇` of the medians, scaled between their smallest and largest.
pub fn sparkline(points: &[TrendPoint]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let lo = points
        .iter()
        .map(|p| p.median)
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.median)
        .fold(f64::NEG_INFINITY, f64::max);
    points
        .iter()
        .map(|p| {
            if hi > lo {
                let i = ((p.median - lo) / (hi - lo) * 7.0).round() as usize;
                BARS[i.min(7)]
            } else {
                BARS[3]
            }
        })
        .collect()
}

/// What changed between run `i - 1` and run `i` (kernel, fsbench version), for the markers.
pub fn changes(points: &[TrendPoint], i: usize) -> Vec<String> {
    if i == 0 {
        return Vec::new();
    }
    let (a, b) = (&points[i - 1], &points[i]);
    let mut out = Vec::new();
    if a.kernel != b.kernel {
        out.push(format!("kernel {} → {}", a.kernel, b.kernel));
    }
    if a.fsbench_version != b.fsbench_version {
        out.push(format!(
            "fsbench {} → {}",
            a.fsbench_version, b.fsbench_version
        ));
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML page: `title`, the unit, the points oldest first.
pub fn html(title: &str, unit: &str, device: &str, points: &[TrendPoint]) -> String {
    let (w, h) = (900.0f64, 380.0f64);
    let (left, right, top, bottom) = (70.0, 60.0, 30.0, 70.0);
    let lo = points.iter().map(|p| p.min).fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.max)
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.01).max(1e-9);
    let (lo, hi) = ((lo - pad).max(0.0), hi + pad);
    let n = points.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            left + (w - left - right) / 2.0
        } else {
            left + (w - left - right) * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: f64| top + (h - top - bottom) * (1.0 - (v - lo) / (hi - lo));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    // Axes and five horizontal grid lines with their values.
    for k in 0..=4 {
        let v = lo + (hi - lo) * k as f64 / 4.0;
        let yy = y(v);
        svg += &format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            w - right,
            left - 6.0,
            yy + 4.0,
            fmt(v)
        );
    }
    svg += &format!(
        "<text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>\n",
        (top + h - bottom) / 2.0,
        (top + h - bottom) / 2.0,
        esc(unit)
    );
    // Version and kernel changes: a dashed line between the two runs, labelled.
    for i in 1..points.len() {
        let what = changes(points, i);
        if what.is_empty() {
            continue;
        }
        let xx = (x(i - 1) + x(i)) / 2.0;
        svg += &format!(
            "<line class=\"change\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top}\" y2=\"{:.1}\" \
             stroke=\"#c60\" stroke-dasharray=\"5,4\"/><text x=\"{:.1}\" y=\"{:.1}\" \
             fill=\"#c60\" font-size=\"11\">{}</text>\n",
            h - bottom,
            xx + 4.0,
            top - 8.0 + 0.0,
            esc(&what.join(", "))
        );
    }
    // The median line, each run's range (min to max over rounds) and its median dot.
    let path: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.median)))
        .collect();
    svg += &format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\"/>\n",
        path.join(" ")
    );
    for (i, p) in points.iter().enumerate() {
        let xx = x(i);
        svg += &format!(
            "<line class=\"range\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
             stroke=\"#36c\" stroke-width=\"6\" stroke-opacity=\"0.3\" stroke-linecap=\"round\"/>\
             <circle class=\"median\" cx=\"{xx:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#36c\">\
             <title>run {}: median {} {} (range {} – {}, {} rounds), {}</title></circle>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">#{}</text>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666\" font-size=\"10\">{}</text>\n",
            y(p.min),
            y(p.max),
            y(p.median),
            p.run_id,
            fmt(p.median),
            esc(unit),
            fmt(p.min),
            fmt(p.max),
            p.n,
            esc(&p.started_at),
            h - bottom + 18.0,
            p.run_id,
            h - bottom + 33.0,
            esc(&p
                .started_at
                .get(5..16)
                .unwrap_or(&p.started_at)
                .replace('T', " ")),
        );
    }
    svg += "</svg>\n";
    let mut rows = String::new();
    for (i, p) in points.iter().enumerate() {
        rows += &format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} – {}</td><td>{}</td><td>{}</td></tr>\n",
            p.run_id,
            esc(&p.started_at),
            esc(&p.kernel),
            esc(&p.fsbench_version),
            fmt(p.min),
            fmt(p.max),
            fmt(p.median),
            esc(&changes(points, i).join(", "))
        );
    }
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif;margin:20px;color:#222}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px}}</style></head><body>\n\
         <h1 style=\"font-size:18px\">{t}</h1>\n<p>{d}: each run's median (dot) and its range \
         over rounds (bar); dashed lines mark a kernel or fsbench version change.</p>\n{svg}\
         <table><tr><th>run</th><th>started</th><th>kernel</th><th>fsbench</th><th>range</th>\
         <th>median</th><th>changed</th></tr>\n{rows}</table>\n</body></html>\n",
        t = esc(title),
        d = esc(device),
    )
}

/// A number with three significant digits.
fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: i64, k: &str, v: &str, m: f64) -> TrendPoint {
        TrendPoint::of(id, "2026-12-01T10:00:00Z", k, v, &[m * 0.9, m, m * 1.1]).unwrap()
    }

    #[test]
    fn the_sparkline_rises_with_the_medians() {
        let pts = [
            p(1, "k", "v", 1.0),
            p(2, "k", "v", 2.0),
            p(3, "k", "v", 3.0),
        ];
        assert_eq!(sparkline(&pts), "▁▅█");
    }

    #[test]
    fn kernel_and_version_changes_are_marked() {
        let pts = [
            p(1, "6.1", "0.1", 1.0),
            p(2, "6.2", "0.1", 1.0),
            p(3, "6.2", "0.2", 1.0),
        ];
        assert_eq!(changes(&pts, 1), vec!["kernel 6.1 → 6.2"]);
        assert_eq!(changes(&pts, 2), vec!["fsbench 0.1 → 0.2"]);
        let page = html("t", "s", "dev", &pts);
        assert_eq!(page.matches("class=\"change\"").count(), 2);
        assert_eq!(page.matches("class=\"median\"").count(), 3);
    }
}
