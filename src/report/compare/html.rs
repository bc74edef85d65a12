//! `fsbench compare --format html`: one self-contained page (inline CSS and SVG, no script) with
//! the forest plot above the table the terminal prints.

use super::Comparison;
use super::render::{conclusion, preamble, ran, table};
use crate::report::svg::esc;
use std::fmt::Write;

const STYLE: &str = r#"
:root{--fg:#1d1d1f;--muted:#555;--bg:#fafafa;--card:#fff;--line:#d8d8d8;--th:#f0f2f5}
@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--muted:#aaa;--bg:#111;--card:#1b1b1d;--line:#3a3a3a;--th:#26282c}}
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1180px;margin:0 auto;padding:20px 28px 40px;background:var(--card)}
h1{font-size:24px;margin:4px 0 6px}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid var(--line)}
p{overflow-wrap:anywhere}.legend{font-size:12px;color:var(--muted)}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 7px}th{background:var(--th);text-align:left}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #e4e4e4}
svg .ct{font:600 13px system-ui,sans-serif;fill:#222}svg .cl{font:11px system-ui,sans-serif;fill:#444}svg .cv{font:11px system-ui,sans-serif;fill:#222}
@media print{:root{--fg:#000;--bg:#fff;--card:#fff}main{max-width:none;padding:0}svg.chart,tr{break-inside:avoid}}
"#;

/// The comparison as an HTML page.
pub fn render_html(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>fsbench compare</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main id=\"fsbench-compare\">\n<h1>fsbench compare</h1>\n<p>A = <code>{}</code> ({})<br>B = <code>{}</code> ({})</p>\n",
        esc(&c.a),
        esc(&ran(&c.a_ran)),
        esc(&c.b),
        esc(&ran(&c.b_ran))
    );
    for p in preamble(c) {
        let _ = writeln!(out, "<p>{}</p>", esc(&p.replace('`', "")));
    }
    let _ = writeln!(
        out,
        "<h2>Changes with their intervals</h2>\n<p class=\"legend\">One row per setup × metric: dot = change of B against A \
         (beyond the control's drift when there is a control), bar = its {:.0} % interval. Green = better, red = worse, \
         blue = equivalent within the metric's margin, dark grey = not separated, amber = changed or drifted, light grey = \
         not judged (derived or fixed quantities; the dot is the change of medians). Each row also says its verdict in words.</p>",
        (1.0 - c.alpha) * 100.0
    );
    out.push_str(&super::forest::svg(c));
    let (head, rows) = table(c);
    out.push_str("\n<h2>Table</h2>\n<div class=\"scroll\"><table>\n<tr>");
    for h in &head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            let num = matches!(
                head[i],
                "A" | "B" | "Δ" | "Control Δ" | "Beyond control" | "Interval" | "±10 % needs"
            );
            let _ = write!(
                out,
                "<td{}>{}</td>",
                if num { " class=\"num\"" } else { "" },
                esc(cell)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    for p in conclusion(c) {
        let _ = writeln!(out, "<p>{}</p>", esc(&p.replace('`', "")));
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}
