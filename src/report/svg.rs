//! Tiny inline-SVG chart builders for the HTML report: no library, no script, text only, so the
//! page stays one self-contained file that renders identically offline.

use std::fmt::Write;

/// Colour per setup index (colour-blind-friendly Okabe–Ito palette).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];

/// Colour of the setup at index `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escape text for SVG/XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One horizontal bar: label, median, whisker range, display text, highlighted or not.
pub struct Bar {
    /// Setup name.
    pub label: String,
    /// Bar length value (the median).
    pub value: f64,
    /// Whisker low (min of rounds).
    pub low: f64,
    /// Whisker high (max of rounds).
    pub high: f64,
    /// Text printed after the bar.
    pub text: String,
    /// Colour index.
    pub color: usize,
    /// Whether this bar is the winner beyond noise (outlined, hatched and labelled `★ best`).
    pub best: bool,
}

/// Horizontal bars with min–max whiskers, scaled from zero.
pub fn bars(title: &str, bars: &[Bar]) -> String {
    let (w, left, right, bar_h, gap, top) = (560.0, 110.0, 170.0, 18.0, 8.0, 26.0);
    let h = top + bars.len() as f64 * (bar_h + gap) + 6.0;
    let max = bars
        .iter()
        .map(|b| b.high.max(b.value))
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = |v: f64| left + (v.max(0.0) / max) * (w - left - right);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{t}"><defs><pattern id="fsb-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><path d="M0 0V6" stroke="#fff" stroke-width="2" stroke-opacity="0.7"/></pattern></defs><text x="0" y="16" class="ct">{t}</text>"##,
        t = esc(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar_h + gap);
        let x1 = scale(b.value);
        let _ = write!(
            s,
            r#"<text x="{lx}" y="{ty}" class="cl" text-anchor="end">{l}</text><rect x="{left}" y="{y}" width="{bw:.1}" height="{bar_h}" fill="{c}" fill-opacity="0.8"{stroke}/>"#,
            lx = left - 6.0,
            ty = y + 13.0,
            l = esc(&b.label),
            bw = (x1 - left).max(0.5),
            c = color(b.color),
            stroke = if b.best {
                r##" stroke="#222" stroke-width="2""##
            } else {
                ""
            }
        );
        // The winner is told by a hatch and a label, never by colour alone.
        if b.best {
            let _ = write!(
                s,
                r#"<rect x="{left}" y="{y}" width="{bw:.1}" height="{bar_h}" fill="url(#fsb-hatch)"/>"#,
                bw = (x1 - left).max(0.5),
            );
        }
        if b.high > b.low {
            let (a, z, m) = (scale(b.low), scale(b.high), y + bar_h / 2.0);
            let _ = write!(
                s,
                r##"<path d="M{a:.1} {m}H{z:.1}M{a:.1} {y0}V{y1}M{z:.1} {y0}V{y1}" stroke="#333" stroke-width="1.2" fill="none"/>"##,
                y0 = m - 5.0,
                y1 = m + 5.0
            );
        }
        let _ = write!(
            s,
            r#"<text x="{tx:.1}" y="{ty}" class="cv">{t}</text>"#,
            tx = scale(b.high.max(b.value)) + 6.0,
            ty = y + 13.0,
            t = esc(&if b.best {
                format!("{} ★ best", b.text)
            } else {
                b.text.clone()
            })
        );
    }
    s.push_str("</svg>");
    s
}

/// A line series (already in chart coordinates: transform log axes before calling).
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Colour index.
    pub color: usize,
    /// Dashed line (e.g. later rounds).
    pub dashed: bool,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Axis description: label and tick positions (in chart coordinates) with their text.
pub struct Axis {
    /// Axis label.
    pub label: String,
    /// Ticks.
    pub ticks: Vec<(f64, String)>,
}

/// A line chart with axes, ticks and a legend.
pub fn lines(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> String {
    let (w, h, l, r, t, b) = (560.0, 300.0, 64.0, 30.0, 28.0, 64.0);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(px, py) in series.iter().flat_map(|s| s.points.iter()) {
        if px.is_finite() && py.is_finite() {
            x0 = x0.min(px);
            x1 = x1.max(px);
            y0 = y0.min(py);
            y1 = y1.max(py);
        }
    }
    for (v, _) in &x.ticks {
        x0 = x0.min(*v);
        x1 = x1.max(*v);
    }
    for (v, _) in &y.ticks {
        y0 = y0.min(*v);
        y1 = y1.max(*v);
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    if y0 >= y1 {
        y1 = y0 + 1.0;
    }
    let sx = |v: f64| l + (v - x0) / (x1 - x0) * (w - l - r);
    let sy = |v: f64| h - b - (v - y0) / (y1 - y0) * (h - t - b);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{tt}"><text x="0" y="16" class="ct">{tt}</text>"#,
        tt = esc(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##,
        pw = w - l - r,
        ph = h - t - b
    );
    for (v, txt) in &x.ticks {
        let px = sx(*v);
        let _ = write!(
            s,
            r##"<path d="M{px:.1} {t}V{yb}" stroke="#e4e4e4"/><text x="{px:.1}" y="{ty}" class="cl" text-anchor="middle">{txt}</text>"##,
            yb = h - b,
            ty = h - b + 14.0,
            txt = esc(txt)
        );
    }
    for (v, txt) in &y.ticks {
        let py = sy(*v);
        let _ = write!(
            s,
            r##"<path d="M{l} {py:.1}H{xr}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" class="cl" text-anchor="end">{txt}</text>"##,
            xr = w - r,
            tx = l - 4.0,
            ty = py + 4.0,
            txt = esc(txt)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{cx}" y="{ly}" class="cl" text-anchor="middle">{xl}</text><text x="12" y="{cy}" class="cl" text-anchor="middle" transform="rotate(-90 12 {cy})">{yl}</text>"#,
        cx = l + (w - l - r) / 2.0,
        ly = h - b + 30.0,
        xl = esc(&x.label),
        cy = t + (h - t - b) / 2.0,
        yl = esc(&y.label)
    );
    for sr in series {
        let d: Vec<String> = sr
            .points
            .iter()
            .filter(|(a, c)| a.is_finite() && c.is_finite())
            .enumerate()
            .map(|(i, &(a, c))| {
                format!(
                    "{}{:.1} {:.1}",
                    if i == 0 { "M" } else { "L" },
                    sx(a),
                    sy(c)
                )
            })
            .collect();
        if d.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            r#"<path d="{}" fill="none" stroke="{}" stroke-width="1.8"{}/>"#,
            d.join(""),
            color(sr.color),
            if sr.dashed {
                r#" stroke-dasharray="4 3""#
            } else {
                ""
            }
        );
        if sr.points.len() <= 12 {
            for &(a, c) in &sr.points {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"/>"#,
                    sx(a),
                    sy(c),
                    color(sr.color)
                );
            }
        }
    }
    // Legend: one entry per distinct name, below the axis label.
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for sr in series {
        if !seen.iter().any(|(n, _)| *n == sr.name) {
            seen.push((&sr.name, sr.color));
        }
    }
    let mut lx = l;
    for (name, c) in seen {
        let _ = write!(
            s,
            r#"<rect x="{lx}" y="{ly}" width="12" height="4" fill="{col}"/><text x="{tx}" y="{ty}" class="cl">{n}</text>"#,
            ly = h - 14.0,
            col = color(c),
            tx = lx + 16.0,
            ty = h - 9.0,
            n = esc(name)
        );
        lx += 24.0 + 7.0 * name.chars().count() as f64;
    }
    s.push_str("</svg>");
    s
}

/// About five round-numbered ticks covering [lo, hi].
pub fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).floor() * step;
    let mut out = Vec::new();
    while v <= hi + step * 0.5 {
        out.push(v);
        v += step;
    }
    out
}

/// Decade ticks for a log10 axis spanning [lo, hi] (in log10 units), labelled by `fmt`.
pub fn log_ticks(lo: f64, hi: f64, fmt: impl Fn(f64) -> String) -> Vec<(f64, String)> {
    let (a, z) = (lo.floor() as i32, hi.ceil() as i32);
    (a..=z.max(a + 1))
        .map(|e| (f64::from(e), fmt(10f64.powi(e))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_escaping() {
        assert_eq!(
            nice_ticks(0.0, 100.0),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(esc("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
        let t = log_ticks(-1.3, 0.4, |v| format!("{v}"));
        assert_eq!(t.first().unwrap().0, -2.0);
        assert_eq!(t.last().unwrap().0, 1.0);
    }
}
