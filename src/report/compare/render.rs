//! Formatting of a [`Comparison`]: terminal table, Markdown, JSON. No judgement is made here;
//! every number and verdict comes from the model in [`super`].

use super::provenance::{Timing, human_duration};
use super::{CompareRow, Comparison, ControlChoice, Family, Pairing, Role, Verdict};
use crate::metrics as metric;
use crate::stats::judged::Role as MetricRole;
use std::fmt::Write;

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.1} %")
    } else {
        "–".into()
    }
}

/// "−12 … +25 %": an interval of the change in percent.
fn interval(iv: (f64, f64)) -> String {
    let p = |x: f64| {
        if x.abs() < 0.05 {
            "0".to_string()
        } else {
            format!("{}{:.1}", if x > 0.0 { "+" } else { "−" }, x.abs())
        }
    };
    format!("{} … {} %", p(iv.0), p(iv.1))
}

/// "9", or "> 100": the rounds that would tell ±10 % apart.
pub(super) fn rounds_text(n: Option<usize>) -> String {
    n.map_or("> 100".into(), |n| n.to_string())
}

/// The verdict in words, with the one statistic's mark (★ better, ▽ worse, = equivalent within
/// the margin, ≈ not separated).
pub(super) fn verdict_text(r: &CompareRow) -> String {
    let margin = r
        .judgement
        .map_or(String::new(), |j| format!(" (±{:.0} %)", j.margin * 100.0));
    match &r.verdict {
        Verdict::Better => "★ better".into(),
        Verdict::Worse => "▽ worse".into(),
        Verdict::Changed => "changed".into(),
        Verdict::Equivalent => format!("= equivalent{margin}"),
        Verdict::NotSeparated => "≈ not separated".into(),
        Verdict::Drifted => "drifted (control)".into(),
        Verdict::Steady => format!("= steady{margin} (control)"),
        Verdict::NotJudged { .. } => match r.metric_role {
            Some(MetricRole::Derived(_)) => "not judged (derived)".into(),
            Some(MetricRole::Fact) => "not judged (fixed fact)".into(),
            _ => "not judged (unknown metric)".into(),
        },
        Verdict::TooFewRounds => "too few rounds to judge".into(),
        Verdict::NotPositive => "not judged (zero or negative)".into(),
        Verdict::Same => "no change".into(),
        Verdict::Differs => "changed".into(),
    }
}

fn has_control_columns(c: &Comparison) -> bool {
    c.rows.iter().any(|r| r.control_delta_pct.is_some())
}

/// Column headings and cells, shared by text and Markdown.
pub(super) fn table(c: &Comparison) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let ctl = has_control_columns(c);
    let mut head = vec!["Setup", "Test", "A", "B", "Δ"];
    if ctl {
        head.extend(["Control Δ", "Beyond control"]);
    }
    head.extend(["Interval", "±10 % needs", "Verdict"]);
    let rows = c
        .rows
        .iter()
        .map(|r| {
            let j = r.judgement.as_ref();
            let mut cells = vec![
                if r.role == Role::Control {
                    format!("{} (control)", r.setup)
                } else {
                    r.setup.clone()
                },
                format!("{} {}", r.workload, r.metric),
                metric::format_value(&r.metric, r.median_a, &r.unit),
                metric::format_value(&r.metric, r.median_b, &r.unit),
                pct(r.delta_pct),
            ];
            if ctl {
                cells.push(r.control_delta_pct.map_or(String::new(), pct));
                cells.push(r.beyond_control_pct.map_or(String::new(), pct));
            }
            cells.push(
                r.change_pct
                    .and_then(|(_, iv)| iv)
                    .map_or(String::new(), interval),
            );
            cells.push(j.map_or(String::new(), |j| {
                format!("{} rounds", rounds_text(j.rounds_for_10pct))
            }));
            cells.push(verdict_text(r));
            cells
        })
        .collect();
    (head, rows)
}

pub(super) fn ran(r: &(String, String)) -> String {
    match (r.0.as_str(), r.1.as_str()) {
        ("", _) => "start time not recorded".into(),
        (s, "") => format!("started {s}, no end recorded"),
        (s, e) => format!("ran {s} – {e}"),
    }
}

fn names(c: &Comparison, role: Role) -> Vec<String> {
    c.setups
        .iter()
        .filter(|s| s.role == role)
        .map(|s| s.name.clone())
        .collect()
}

/// Paragraphs before the table: when the two ran, what differs, what serves as control.
pub(super) fn preamble(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    out.push(match &c.timing {
        Timing::SameRun { started_at } => format!(
            "A and B come from the same run (started {started_at}): its rounds were interleaved, \
             so host drift hit both alike."
        ),
        Timing::Separate {
            gap_s,
            start_to_start_s,
            b_after_a,
        } => format!(
            "Warning: A and B are separate runs, not interleaved: {} ({} start to start). \
             Whatever changed on the host in between (other load, page cache, device state, \
             temperature) is in every Δ below and cannot be told apart from the change under \
             test. To compare two configurations, make both setups of one run \
             (`fsbench run --fs A,B …`): its rounds are interleaved, so drift hits both alike.",
            if *b_after_a {
                format!("B started {} after A finished", human_duration(*gap_s))
            } else {
                format!(
                    "B ran first; A started {} after it finished",
                    human_duration(*gap_s)
                )
            },
            human_duration(*start_to_start_s)
        ),
        Timing::Unknown => "Warning: cannot tell when A and B ran (a start time is missing). If \
                            they are separate runs, host drift is in every Δ below; one run with \
                            both setups (`fsbench run --fs A,B …`) interleaves their rounds."
            .into(),
    });
    if !c.host_differences.is_empty() {
        out.push(format!(
            "Host or target differ, which concerns every setup: {}.",
            c.host_differences.join("; ")
        ));
    }
    let (tested, controls) = (names(c, Role::Tested), names(c, Role::Control));
    let changed: Vec<String> = c
        .setups
        .iter()
        .filter(|s| s.role == Role::Tested && !s.differences.is_empty())
        .map(|s| format!("{} ({})", s.name, s.differences.join("; ")))
        .collect();
    out.push(match c.control_choice {
        ControlChoice::Automatic => format!(
            "Control: {} did not change between A and B (same filesystem, options, mkfs and \
             mount options, tools, target, kernel); changed: {}. The changed setups are judged \
             against the control's drift on the same test (columns Control Δ and Beyond control).",
            controls.join(", "),
            changed.join(", ")
        ),
        ControlChoice::Explicit => format!(
            "Control (--control): {}. {} judged against the control's drift on the same test \
             (columns Control Δ and Beyond control); the control itself against zero.",
            controls.join(", "),
            if tested.is_empty() {
                "Nothing else is".to_string()
            } else {
                format!(
                    "{} {}",
                    tested.join(", "),
                    if tested.len() == 1 { "is" } else { "are" }
                )
            }
        ),
        ControlChoice::None if changed.is_empty() && c.host_differences.is_empty() => {
            if matches!(c.timing, Timing::SameRun { .. }) {
                "Nothing differs between A and B: an A/A comparison. Every change called is \
                 chance: each judgement is wrong at most α of the time."
                    .into()
            } else {
                "Nothing fsbench records differs between A and B (setups, kernel, tools, \
                 target), so there is no control: every setup is judged against zero. If you \
                 changed something fsbench does not record (firmware, a sysctl), its effect and \
                 host drift are mixed here; name setups it did not touch with --control to judge \
                 the others against their drift."
                    .into()
            }
        }
        ControlChoice::None => format!(
            "No setup is unchanged between A and B{}, so there is no control: each is judged \
             against zero, and host drift cannot be separated from the change.",
            if changed.is_empty() {
                String::new()
            } else {
                format!(" ({})", changed.join(", "))
            }
        ),
    });
    out
}

fn family_line(f: &Family, what: &str, alpha: f64) -> String {
    format!(
        "{} of {} {what} changed beyond noise, {} shown equivalent within their margins, {} not \
         separated. Each judgement is wrong at most α = {alpha} of the time, with no correction \
         across metrics: were nothing changed, chance alone would call about {:.1} of {} changed.",
        f.flagged, f.judged, f.equivalent, f.not_separated, f.expected_by_chance, f.judged
    )
}

/// The statistic in words: how the rounds were paired, and what a row fell back to.
fn statistic(c: &Comparison) -> String {
    let fell_back = c
        .rows
        .iter()
        .filter(|r| r.pairing == Some(Pairing::Independent) && c.pairing != Pairing::Independent)
        .count();
    let mut s = format!(
        "Statistic: {}, the {:.0} % interval (column Interval: B against A).",
        c.pairing.words(),
        (1.0 - c.alpha) * 100.0
    );
    if fell_back > 0 {
        let _ = write!(
            s,
            " {fell_back} metric(s) share no round between A and B and are judged unpaired."
        );
    }
    s
}

/// Paragraphs after the table: how many changed, what chance alone would do, what it would
/// take to separate the rest.
pub(super) fn conclusion(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let (t, k) = (&c.tested, &c.control);
    if t.judged == 0 && k.judged == 0 {
        out.push(format!(
            "Too few rounds to judge any change (paired: 2 or more rounds in common; unpaired: \
             {} or more per side).",
            crate::stats::unpaired::MIN_ROUNDS_A_SIDE
        ));
    }
    let against = if has_control_columns(c) {
        "against the control's drift"
    } else {
        "against zero"
    };
    if t.judged > 0 {
        out.push(format!(
            "{} Judged {against}.",
            family_line(t, "judged metric(s)", c.alpha)
        ));
    }
    if !c.rows.is_empty() {
        out.push(statistic(c));
    }
    for d in &c.drift {
        out.push(format!(
            "Control {} moved by a median |Δ| of {:.1} % (most: {} {}).",
            d.setup,
            d.median_abs_pct,
            d.largest.0,
            pct(d.largest.1)
        ));
    }
    if k.judged > 0 {
        out.push(format!(
            "Drift: {}",
            family_line(k, "control metric(s)", c.alpha)
        ));
    }
    let fam = if t.judged > 0 { t } else { k };
    if fam.not_separated > 0 {
        out.push(format!(
            "Not separated: the interval holds no change and reaches past the margin, so neither \
             a change nor an equivalence is shown. Column ±10 % needs: the rounds (pairs, or per \
             side unpaired) that would tell a 10 % difference apart at that metric's noise \
             (median {} here; this comparison has {}).",
            rounds_text(fam.median_rounds_for_10pct),
            fam.min_rounds
        ));
    }
    // Metrics not judged, grouped by reason: "bw_mib_s, read_bw_mib_s (follows from …)".
    let mut not_judged: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in &c.rows {
        if let Verdict::NotJudged { reason } = &r.verdict {
            match not_judged.iter_mut().find(|(why, _)| why == reason) {
                Some((_, ids)) if !ids.contains(&r.metric.as_str()) => ids.push(r.metric.as_str()),
                Some(_) => {}
                None => not_judged.push((reason, vec![r.metric.as_str()])),
            }
        }
    }
    if !not_judged.is_empty() {
        let groups: Vec<String> = not_judged
            .iter()
            .map(|(why, ids)| format!("{}: {why}", ids.join(", ")))
            .collect();
        out.push(format!(
            "Shown, never called better or worse — {}.",
            groups.join("; ")
        ));
    }
    if !c.only_in_a.is_empty() {
        out.push(format!("Only in A: {}", c.only_in_a.join(", ")));
    }
    if !c.only_in_b.is_empty() {
        out.push(format!("Only in B: {}", c.only_in_b.join(", ")));
    }
    out
}

/// Wrap a paragraph at `width` columns for the terminal.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Plain-text table of a comparison.
pub fn render_text(c: &Comparison) -> String {
    let (head, rows) = table(c);
    let numeric = |h: &str| {
        matches!(
            h,
            "A" | "B" | "Δ" | "Control Δ" | "Beyond control" | "Interval" | "±10 % needs"
        )
    };
    let w: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(
        "A = {} ({})\nB = {} ({})\n\n",
        c.a,
        ran(&c.a_ran),
        c.b,
        ran(&c.b_ran)
    );
    for p in preamble(c) {
        out.push_str(&wrap(&p.replace('`', ""), 100));
        out.push('\n');
    }
    let fmt = |cells: &[&str]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(w[i] - cell.chars().count());
            if numeric(head[i]) {
                let _ = write!(s, "{pad}{cell}  ");
            } else {
                let _ = write!(s, "{cell}{pad}  ");
            }
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&fmt(&head));
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push_str(&fmt(&cells));
    }
    out.push('\n');
    for p in conclusion(c) {
        out.push_str(&wrap(&p.replace('`', ""), 100));
    }
    out
}

/// Markdown of a comparison.
pub fn render_markdown(c: &Comparison) -> String {
    let (head, rows) = table(c);
    let mut out = format!(
        "# fsbench compare\n\nA = `{}` ({}), B = `{}` ({})\n\n",
        c.a,
        ran(&c.a_ran),
        c.b,
        ran(&c.b_ran)
    );
    for p in preamble(c) {
        if let Some(rest) = p.strip_prefix("Warning: ") {
            out.push_str(&format!("> **Warning:** {rest}\n\n"));
        } else {
            out.push_str(&format!("{p}\n\n"));
        }
    }
    out.push_str(&format!(
        "## Changes with their {:.0} % intervals\n\n`*` change of B against A, `[---]` its \
         interval, `|` zero, `<`/`>` interval beyond the axis; the verdict in words at the \
         end.\n\n```text\n",
        (1.0 - c.alpha) * 100.0
    ));
    out.push_str(&super::forest::text(c));
    out.push_str("```\n\n");
    let align: Vec<&str> = head
        .iter()
        .map(|h| match *h {
            "A" | "B" | "Δ" | "Control Δ" | "Beyond control" | "Interval" | "±10 % needs" => {
                "---:"
            }
            _ => "---",
        })
        .collect();
    out.push_str(&format!(
        "| {} |\n|{}|\n",
        head.join(" | "),
        align.join("|")
    ));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|x| x.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    for p in conclusion(c) {
        out.push_str(&format!("{p}\n\n"));
    }
    out
}

/// JSON of a comparison (the model as it is, numbers unformatted).
pub fn render_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).unwrap_or_default() + "\n"
}
