//! Formatting of a [`Comparison`]: terminal table, Markdown, JSON. No judgement is made here;
//! every number and verdict comes from the model in [`super`].

use super::provenance::{Timing, human_duration};
use super::{CompareRow, Comparison, ControlChoice, Family, Role, Verdict};
use crate::metrics as metric;
use crate::stats::change::POWER;
use crate::stats::judged::Role as MetricRole;
use std::fmt::Write;

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.1} %")
    } else {
        "–".into()
    }
}

fn plus_minus(x: f64) -> String {
    if x.is_finite() {
        format!("±{}", metric::format_number(x))
    } else {
        "–".into()
    }
}

/// A detectable change on the log scale reads differently up and down (+100 % is −50 %):
/// one number while they are close, both once they are not.
fn detectable(up_pct: f64) -> String {
    if !up_pct.is_finite() {
        return "–".into();
    }
    let down = (1.0 - 1.0 / (1.0 + up_pct / 100.0)) * 100.0;
    if up_pct < 20.0 {
        format!("{} %", plus_minus(up_pct))
    } else {
        format!(
            "+{}/−{} %",
            metric::format_number(up_pct),
            metric::format_number(down)
        )
    }
}

fn verdict_text(r: &CompareRow) -> String {
    match &r.verdict {
        Verdict::Better => "better".into(),
        Verdict::Worse => "worse".into(),
        Verdict::Changed => "changed".into(),
        Verdict::NoChange => "no significant change".into(),
        Verdict::Drifted => "drifted (control)".into(),
        Verdict::Steady => "steady (control)".into(),
        Verdict::NotJudged { .. } => match r.metric_role {
            Some(MetricRole::Derived(_)) => "not judged (derived)".into(),
            Some(MetricRole::Fact) => "not judged (fixed fact)".into(),
            _ => "not judged (unknown metric)".into(),
        },
        Verdict::TooFewRounds => "too few rounds to judge".into(),
        Verdict::NoSpread => "no spread to judge by".into(),
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
    head.extend(["Detectable", "q", "Verdict"]);
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
            let decisive = j.map(|j| *j.decisive());
            cells.push(
                decisive
                    .filter(|m| m.p.is_finite())
                    .map_or(String::new(), |m| detectable(m.detectable_pct)),
            );
            cells.push(r.q_value.map_or(String::new(), |q| format!("{q:.3}")));
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
                "Nothing differs between A and B: an A/A comparison. Every flagged change is \
                 chance, and the false-discovery correction bounds how often that happens."
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

fn family_line(f: &Family, what: &str, alpha: f64, correction: &str) -> String {
    format!(
        "{} of {} {what} changed beyond noise after the {correction} correction of the \
         false-discovery rate at α = {alpha}. Chance alone would flag about {:.1} of {} at \
         α = {alpha} without that correction (uncorrected here: {}).",
        f.flagged, f.judged, f.expected_by_chance, f.judged, f.flagged_uncorrected
    )
}

/// Paragraphs after the table: how many changed, what chance alone would do, what n can see.
pub(super) fn conclusion(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let (t, k) = (&c.tested, &c.control);
    if t.judged == 0 && k.judged == 0 {
        out.push(format!(
            "Too few rounds to judge any change (need {} or more per side).",
            crate::stats::change::MIN_ROUNDS
        ));
    }
    let against = if has_control_columns(c) {
        "against the control's drift"
    } else {
        "against zero"
    };
    if t.judged > 0 {
        out.push(format!(
            "{} Test: Welch's t on log values, {against}.",
            family_line(t, "judged metric(s)", c.alpha, c.correction)
        ));
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
            family_line(k, "control metric(s)", c.alpha, c.correction)
        ));
    }
    let fam = if t.judged > 0 { t } else { k };
    if fam.judged > 0 {
        out.push(format!(
            "Detectable: the smallest change these rounds find {:.0} % of the time at α = {} \
             (median {} here). \"No significant change\" means no change larger than that; \
             smaller ones can hide in the noise.",
            POWER * 100.0,
            c.alpha,
            detectable(fam.median_detectable_pct)
        ));
        if fam.min_rounds <= 3 {
            out.push(format!(
                "With {} rounds a side only large effects can be seen. Use --rounds 5 or more \
                 for close calls, 10 for changes of a few percent.",
                fam.min_rounds
            ));
        }
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
    let numeric = |h: &str| matches!(h, "A" | "B" | "Δ" | "Control Δ" | "Beyond control" | "q");
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
    out.push_str(
        "## Changes with their 95 % intervals\n\n`*` change of B against A, `[---]` its interval, \
         `|` zero, `<`/`>` interval beyond the axis; the verdict in words at the end.\n\n```text\n",
    );
    out.push_str(&super::forest::text(c));
    out.push_str("```\n\n");
    let align: Vec<&str> = head
        .iter()
        .map(|h| match *h {
            "A" | "B" | "Δ" | "Control Δ" | "Beyond control" | "Detectable" | "q" => "---:",
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
