//! The doctor's output: a table fitted to the terminal (or `COLUMNS`, or 100 columns in a
//! pipe), and JSON with the facts behind each finding.

use super::{Diagnosis, Severity};
use comfy_table::{ContentArrangement, Table, presets};

/// Width used when stdout is not a terminal and `COLUMNS` is unset.
const PIPE_WIDTH: u16 = 100;

/// The findings as a table, then one line naming the checks that passed.
pub fn table(d: &Diagnosis, width: Option<u16>) -> String {
    let mut out = String::new();
    if d.findings.is_empty() {
        out.push_str("No findings: nothing on this host or target is known to skew a benchmark.\n");
    } else {
        let mut t = Table::new();
        t.load_style(presets::UTF8_FULL)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(["Finding", "Why it matters", "Fix"]);
        if let Some(w) = width {
            t.set_width(w);
        }
        for f in &d.findings {
            let mark = match f.severity {
                Severity::Warn => "⚠ ",
                Severity::Info => "ℹ ",
            };
            // The check's code heads the finding: three wide columns read better than four.
            t.add_row([
                format!("{mark}{}\n{}", f.code, f.finding),
                f.why.clone(),
                f.fix.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    let warns = d
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warn)
        .count();
    let footer = format!(
        "{warns} warning(s), {} note(s). Passed: {}.",
        d.findings.len() - warns,
        if d.passed.is_empty() {
            "none".to_string()
        } else {
            d.passed.join(", ")
        }
    );
    let w = width.or_else(|| Table::new().width()).unwrap_or(PIPE_WIDTH);
    out.push_str(&wrap(&footer, usize::from(w)));
    out
}

/// Break `text` at spaces so no line is longer than `width` characters.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
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

/// Width to render at: the terminal's when stdout is one, else `COLUMNS`, else 100.
pub fn terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        // comfy-table asks the terminal itself.
        return None;
    }
    Some(
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .filter(|w| *w >= 40)
            .unwrap_or(PIPE_WIDTH),
    )
}

/// The diagnosis as pretty JSON.
pub fn json(d: &Diagnosis) -> crate::Result<String> {
    serde_json::to_string_pretty(d)
        .map_err(|e| crate::Error::Other(format!("cannot serialize the diagnosis: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::{Finding, facts::Facts};
    use super::*;

    #[test]
    fn table_fits_the_width_and_lists_passed_checks() {
        let long = "word ".repeat(40);
        let d = Diagnosis {
            facts: Facts::default(),
            findings: vec![Finding {
                code: "load".into(),
                severity: Severity::Warn,
                subject: "host".into(),
                finding: long.clone(),
                why: long.clone(),
                fix: long,
            }],
            passed: vec!["scheduler".into(), "swap".into()],
        };
        let text = table(&d, Some(80));
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
        assert!(text.contains("⚠ load\n") || text.contains("⚠ load "));
        assert!(text.ends_with("1 warning(s), 0 note(s). Passed: scheduler, swap.\n"));
        let v: serde_json::Value = serde_json::from_str(&json(&d).unwrap()).unwrap();
        assert_eq!(v["findings"][0]["severity"], "warn");
    }
}
