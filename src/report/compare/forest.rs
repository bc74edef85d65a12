//! The forest plot of a comparison: one row per setup × metric, the relative change B vs A with
//! its interval (the one statistic's, 1 − α) as a horizontal bar around zero, coloured and
//! labelled better / worse / equivalent / not separated (grey when the metric is not judged).
//! Drawn as inline SVG for the HTML page and as text for Markdown; every number comes from the
//! model in [`super`].

use super::{CompareRow, Comparison, Role, Verdict};
use crate::report::svg::esc;
use std::fmt::Write;

/// How a row is drawn: colour, word, and whether it has an interval.
struct Look {
    color: &'static str,
    word: &'static str,
}

fn look(r: &CompareRow) -> Look {
    let (color, word) = match &r.verdict {
        Verdict::Better => ("#1a7f37", "better"),
        Verdict::Worse => ("#cf222e", "worse"),
        Verdict::Changed => ("#9a6700", "changed"),
        Verdict::Drifted => ("#9a6700", "drifted (control)"),
        Verdict::Equivalent => ("#0969da", "equivalent"),
        Verdict::NotSeparated => ("#57606a", "not separated"),
        Verdict::Steady => ("#0969da", "steady (control)"),
        Verdict::Same => ("#8c959f", "same"),
        Verdict::Differs => ("#9a6700", "differs"),
        Verdict::TooFewRounds => ("#8c959f", "too few rounds"),
        Verdict::NotPositive | Verdict::NotJudged { .. } => ("#8c959f", "not judged"),
    };
    Look { color, word }
}

/// The point and interval (percent) of a row: the judged change when judged, else the
/// change of medians with no interval.
fn point(r: &CompareRow) -> Option<(f64, Option<(f64, f64)>)> {
    match r.change_pct {
        Some((p, Some((lo, hi)))) if p.is_finite() && lo.is_finite() && hi.is_finite() => {
            Some((p, Some((lo, hi))))
        }
        _ => r.delta_pct.is_finite().then_some((r.delta_pct, None)),
    }
}

/// Half-width of the axis in percent: the largest extent, rounded up, capped at 100 %
/// (intervals beyond it are drawn clipped with an arrow).
fn extent(c: &Comparison) -> f64 {
    let m = c
        .rows
        .iter()
        .filter_map(point)
        .flat_map(|(p, ci)| {
            let (lo, hi) = ci.unwrap_or((p, p));
            [p.abs(), lo.abs(), hi.abs()]
        })
        .fold(1.0_f64, f64::max)
        .min(100.0);
    [2.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0]
        .into_iter()
        .find(|s| *s >= m)
        .unwrap_or(100.0)
}

fn label(r: &CompareRow) -> String {
    let ctl = if r.role == Role::Control {
        " (control)"
    } else {
        ""
    };
    format!("{}{ctl} · {} {}", r.setup, r.workload, r.metric)
}

/// The forest plot as one inline SVG (scales with its container through the viewBox).
pub fn svg(c: &Comparison) -> String {
    let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| point(r).is_some()).collect();
    let (w, left, plot, row_h, top) = (980.0, 300.0, 400.0, 18.0, 50.0);
    let h = top + rows.len() as f64 * row_h + 30.0;
    let m = extent(c);
    let x = |v: f64| left + (v.clamp(-m, m) + m) / (2.0 * m) * plot;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart forest" viewBox="0 0 {w} {h}" role="img" aria-label="Change B vs A with {level:.0} % intervals"><text x="0" y="16" class="ct">Change of B against A, with its {level:.0} % interval</text>"##,
        level = (1.0 - c.alpha) * 100.0
    );
    // Axis: ticks at −m, −m/2, 0, m/2, m.
    for k in [-1.0, -0.5, 0.0, 0.5, 1.0] {
        let v = k * m;
        let px = x(v);
        let _ = write!(
            s,
            r##"<path d="M{px:.1} {y0}V{y1}" stroke="{col}" stroke-width="{sw}"/><text x="{px:.1}" y="{ty}" class="cl" text-anchor="middle">{v:+.0} %</text><text x="{px:.1}" y="{tt}" class="cl" text-anchor="middle">{v:+.0} %</text>"##,
            tt = top - 10.0,
            y0 = top - 4.0,
            y1 = h - 24.0,
            col = if k == 0.0 { "#555" } else { "#e4e4e4" },
            sw = if k == 0.0 { 1.2 } else { 1.0 },
            ty = h - 10.0,
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let (p, ci) = point(r).expect("filtered");
        let lk = look(r);
        let y = top + i as f64 * row_h;
        let mid = y + row_h / 2.0;
        if i % 2 == 1 {
            let _ = write!(
                s,
                r##"<rect x="0" y="{y}" width="{w}" height="{row_h}" fill="#f6f8fa"/>"##
            );
        }
        let _ = write!(
            s,
            r#"<text x="{lx}" y="{ty:.1}" class="cl" text-anchor="end">{l}</text>"#,
            lx = left - 8.0,
            ty = mid + 4.0,
            l = esc(&label(r))
        );
        if let Some((lo, hi)) = ci {
            let _ = write!(
                s,
                r#"<rect x="{a:.1}" y="{by:.1}" width="{bw:.1}" height="6" fill="{c}" fill-opacity="0.55"/>"#,
                a = x(lo),
                by = mid - 3.0,
                bw = (x(hi) - x(lo)).max(1.0),
                c = lk.color
            );
            for (v, end, dir) in [(lo, -m, -1.0), (hi, m, 1.0)] {
                if (dir > 0.0 && v > end) || (dir < 0.0 && v < end) {
                    let tip = x(end) + dir * 6.0;
                    let _ = write!(
                        s,
                        r#"<path d="M{b:.1} {y0:.1}L{tip:.1} {mid:.1}L{b:.1} {y1:.1}Z" fill="{c}"/>"#,
                        b = x(end),
                        y0 = mid - 4.0,
                        y1 = mid + 4.0,
                        c = lk.color
                    );
                }
            }
        }
        let _ = write!(
            s,
            r#"<circle cx="{px:.1}" cy="{mid:.1}" r="{rad}" fill="{c}"/><text x="{tx}" y="{ty:.1}" class="cv">{v} {word}</text>"#,
            px = x(p),
            rad = if ci.is_some() { 3.5 } else { 2.5 },
            c = lk.color,
            tx = left + plot + 14.0,
            ty = mid + 4.0,
            v = esc(&pct_range(p, ci)),
            word = lk.word
        );
    }
    s.push_str("</svg>");
    s
}

fn pct_range(p: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!("{p:+.1} % ({lo:+.0}…{hi:+.0})"),
        None => format!("{p:+.1} %"),
    }
}

/// The forest plot as text (for Markdown, in a code block): `[` and `]` the interval, `*` the
/// change, `|` zero; clipped ends shown as `<` or `>`.
pub fn text(c: &Comparison) -> String {
    let cols = 41usize;
    let m = extent(c);
    let pos = |v: f64| (((v.clamp(-m, m) + m) / (2.0 * m)) * (cols - 1) as f64).round() as usize;
    let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| point(r).is_some()).collect();
    let lw = rows
        .iter()
        .map(|r| label(r).chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "{:lw$}  {:<cols$}\n",
        "",
        format!(
            "−{m:.0} %{:^w$}+{m:.0} %",
            "0",
            w = cols - 2 * format!("{m:.0} %").len() - 2
        )
    );
    for r in rows {
        let (p, ci) = point(r).expect("filtered");
        let mut line: Vec<char> = vec![' '; cols];
        if let Some((lo, hi)) = ci {
            let (a, b) = (pos(lo), pos(hi));
            for ch in line.iter_mut().take(b + 1).skip(a) {
                *ch = '-';
            }
            line[a] = if lo < -m { '<' } else { '[' };
            line[b] = if hi > m { '>' } else { ']' };
        }
        if matches!(line[cols / 2], ' ' | '-') {
            line[cols / 2] = '|';
        }
        line[pos(p)] = '*';
        let _ = writeln!(
            out,
            "{:lw$}  {}  {} {}",
            label(r),
            line.into_iter().collect::<String>(),
            pct_range(p, ci),
            look(r).word
        );
    }
    out
}
