//! A forest plot of option effects (OUT/tune.html): for each filesystem, each value screened
//! against its baseline (alone, or a fractional design's main effect) as a point (the score's ratio) on its 90 % interval, beside the
//! no-change line and the equivalence band (± margin), so "matters" and "does not matter" are
//! seen at once. Inline SVG on a log scale (a ×2 and a ×½ are the same distance from 1), one
//! self-contained page like the run's report (`report/svg.rs`'s escaping and ticks).

use super::answer::{Answer, FsAnswer};
use crate::report::svg::{esc, nice_ticks};
use std::fmt::Write;

/// Row height and the plot's geometry, in SVG pixels.
const ROW: f64 = 22.0;
const LABEL_W: f64 = 190.0;
const PLOT_W: f64 = 420.0;
const TOP: f64 = 28.0;

/// The whole page: one forest plot per filesystem screened.
pub fn html(a: &Answer) -> String {
    let mut o = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>fsbench tune: option \
         effects</title><style>body{font-family:sans-serif;margin:2em}</style></head><body>\n\
         <h1>fsbench tune: option effects</h1>\n<p>Each value screened against its baseline \
         (alone, or a fractional design's main effect): the score's ratio (● weakens durability: ▲) on its interval; the band is \
         the equivalence margin; the gain recommended comes from the confirmation rounds, \
         not from this plot.</p>\n",
    );
    for f in &a.filesystems {
        let _ = writeln!(
            o,
            "<h2>{} (against {})</h2>\n{}",
            esc(&f.fs),
            esc(&f.baseline.name),
            svg(f, a.margin)
        );
    }
    o.push_str("</body></html>\n");
    o
}

/// One filesystem's forest plot; empty text when nothing was screened.
pub fn svg(f: &FsAnswer, margin: f64) -> String {
    let rows: Vec<_> = f
        .screened
        .iter()
        .filter(|r| r.judgement.ratio > 0.0)
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    // The log range: every interval, the margin band and 1 itself.
    let mut lo = (1.0 - margin).min(1.0 / (1.0 + margin));
    let mut hi = 1.0 + margin;
    for r in &rows {
        let (a, b) = r
            .judgement
            .interval
            .unwrap_or((r.judgement.ratio, r.judgement.ratio));
        lo = lo.min(a).min(r.judgement.ratio);
        hi = hi.max(b).max(r.judgement.ratio);
    }
    let (llo, lhi) = (lo.max(1e-3).ln() - 0.02, hi.ln() + 0.02);
    let x = |v: f64| LABEL_W + (v.max(1e-3).ln() - llo) / (lhi - llo) * PLOT_W;
    let height = TOP + ROW * rows.len() as f64 + 30.0;
    let width = LABEL_W + PLOT_W + 20.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-size=\"12\">\n"
    );
    let bottom = TOP + ROW * rows.len() as f64;
    let _ = writeln!(
        s,
        "<rect x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#e8f0e8\"/>",
        x(1.0 - margin),
        x(1.0 + margin) - x(1.0 - margin),
        bottom - TOP
    );
    let _ = writeln!(
        s,
        "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{TOP}\" y2=\"{bottom:.1}\" stroke=\"#555\"/>",
        x(1.0)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * (i as f64 + 0.5);
        let j = &r.judgement;
        let _ = writeln!(
            s,
            "<text x=\"4\" y=\"{:.1}\">{}</text>",
            y + 4.0,
            esc(&r.value)
        );
        if let Some((a, b)) = j.interval {
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#333\"/>",
                x(a),
                x(b)
            );
        }
        let (cx, shape) = (x(j.ratio), r.weakens);
        let mark = if shape {
            format!(
                "<path d=\"M{:.1},{:.1} l5,9 h-10 z\" fill=\"#c0392b\"><title>{}</title></path>",
                cx,
                y - 5.0,
                esc(&crate::stats::paired::percent_text(j))
            )
        } else {
            format!(
                "<circle cx=\"{cx:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#1f5fa0\"><title>{}</title></circle>",
                esc(&crate::stats::paired::percent_text(j))
            )
        };
        let _ = writeln!(s, "{mark}");
    }
    for t in nice_ticks((lo - 1.0) * 100.0, (hi - 1.0) * 100.0) {
        let v = 1.0 + t / 100.0;
        if v <= 0.0 || v < lo || v > hi {
            continue;
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t:+.0} %</text>",
            x(v),
            bottom + 16.0
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::answer::ValueRow;
    use crate::tune::decide::Effect;

    fn row(value: &str, ratio: f64, ci: (f64, f64), weakens: bool) -> ValueRow {
        let j = crate::stats::paired::Judgement {
            outcome: crate::stats::paired::Outcome::NotSeparated,
            ratio,
            interval: Some(ci),
            rounds: 3,
            margin: 0.05,
            alpha: 0.1,
            noise: None,
            rounds_for_10pct: None,
            adjusted: None,
        };
        ValueRow {
            factor: "f".into(),
            value: value.into(),
            setup: format!("ext4-{value}"),
            weakens,
            effect: Effect::Helps,
            judgement: j,
        }
    }

    #[test]
    fn each_value_is_a_point_on_its_interval_left_or_right_of_no_change() {
        let base = crate::tune::candidate::baseline_of(
            &crate::plan::setup_syntax::parse_setup("ext4").unwrap(),
        )
        .unwrap();
        let f = FsAnswer {
            fs: "ext4".into(),
            baseline: base.written(),
            screened: vec![
                row("noatime", 1.2, (1.1, 1.3), false),
                row("data=writeback", 0.8, (0.7, 0.9), true),
            ],
            factors: Vec::new(),
            not_screened: Vec::new(),
            raced: Vec::new(),
            safe: None,
            unsafe_best: None,
            verdict: None,
        };
        let s = svg(&f, 0.05);
        assert!(
            s.contains(">noatime</text>") && s.contains(">data=writeback</text>"),
            "{s}"
        );
        // The helper's point is right of the no-change line, the weakening one's left of it.
        let num = |after: &str| -> f64 {
            let i = s.find(after).unwrap() + after.len();
            s[i..].split(['"', ',']).next().unwrap().parse().unwrap()
        };
        let one = num("<line x1=\"");
        let circle = num("<circle cx=\"");
        let tri = num("<path d=\"M");
        assert!(circle > one && tri < one, "{one} {circle} {tri}\n{s}");
        let empty = FsAnswer {
            screened: Vec::new(),
            ..f
        };
        assert_eq!(svg(&empty, 0.05), "");
    }
}
