//! `fsbench claims`: every statement of the seeds with its state (the claims that check it,
//! with their verdicts when a results file is given, or why none does), the coverage counts,
//! and the groups of claims that contradict each other side by side.

use super::statements::{Entry, Unclaimed, entries};
use super::{ClaimResult, all};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How many statements are in each state.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    /// Statements in the table.
    pub statements: usize,
    /// Statements at least one claim checks.
    pub with_claim: usize,
    /// Claims shipped.
    pub claims: usize,
    /// Statements without a claim, by state and reason: (state, reason, count).
    pub unclaimed: Vec<(Unclaimed, String, usize)>,
}

/// The counts of `entries`.
pub fn coverage(entries: &[Entry]) -> Coverage {
    let mut by: BTreeMap<(Unclaimed, String), usize> = BTreeMap::new();
    for e in entries {
        if let Some(r) = &e.unclaimed {
            *by.entry((r.state, r.reason.clone())).or_default() += 1;
        }
    }
    Coverage {
        statements: entries.len(),
        with_claim: entries.iter().filter(|e| !e.claims.is_empty()).count(),
        claims: all().len(),
        unclaimed: by.into_iter().map(|((s, r), n)| (s, r, n)).collect(),
    }
}

/// `claims` in order, each contradiction group's later members moved up behind its first: a
/// group's claims come from different seeds and sections of claims.toml, and a report marks
/// a contradiction only between neighbours.
pub fn side_by_side(claims: Vec<super::Claim>) -> Vec<super::Claim> {
    let mut rest: Vec<Option<super::Claim>> = claims.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rest.len());
    for i in 0..rest.len() {
        let Some(c) = rest[i].take() else { continue };
        let group = c.group.clone();
        out.push(c);
        if let Some(g) = group {
            for later in rest.iter_mut().skip(i + 1) {
                if later.as_ref().is_some_and(|l| l.group.as_ref() == Some(&g)) {
                    out.extend(later.take());
                }
            }
        }
    }
    out
}

/// One claim of a contradiction group, with what this run says.
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// Claim id.
    pub id: String,
    /// Its seed and section.
    pub source: String,
    /// The claim in one line.
    pub claim: String,
    /// What it asserts ("> 5").
    pub expects: String,
    /// The verdict here, when a results file was given.
    pub verdict: Option<String>,
    /// The measured median ratio (or value).
    pub measured: Option<f64>,
}

/// Claims that contradict each other, side by side.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// Group name (`group` in claims.toml).
    pub group: String,
    /// Its claims, in file order.
    pub members: Vec<Member>,
}

/// The contradiction groups, with `results`' verdicts when given.
pub fn groups(results: Option<&[ClaimResult]>) -> Vec<Group> {
    let mut out: Vec<Group> = vec![];
    for c in all() {
        let Some(g) = c.group.clone() else { continue };
        let r = results.and_then(|rs| rs.iter().find(|r| r.id == c.id));
        let member = Member {
            id: c.id.clone(),
            source: c.source.clone(),
            claim: c.claim.clone(),
            expects: c.expectation(),
            verdict: r.map(|r| super::render::word(r).to_string()),
            measured: r.and_then(|r| r.measured),
        };
        match out.iter_mut().find(|x| x.group == g) {
            Some(x) => x.members.push(member),
            None => out.push(Group {
                group: g,
                members: vec![member],
            }),
        }
    }
    out
}

/// The whole answer, as `fsbench claims --json` prints it.
#[derive(Debug, Serialize)]
pub struct Document {
    /// The counts.
    pub coverage: Coverage,
    /// Every statement, in table order.
    pub statements: Vec<EntryOut>,
    /// Contradiction groups.
    pub contradictions: Vec<Group>,
}

/// A statement with its claims' verdicts.
#[derive(Debug, Serialize)]
pub struct EntryOut {
    /// The statement and its state.
    #[serde(flatten)]
    pub entry: Entry,
    /// Each claim's verdict, when a results file was given.
    pub verdicts: Vec<ClaimVerdict>,
}

/// One claim's verdict on the given run.
#[derive(Debug, Serialize)]
pub struct ClaimVerdict {
    /// Claim id.
    pub claim: String,
    /// Its verdict ("confirmed", "size refuted", "not measured"…).
    pub verdict: String,
}

/// Build the document; `results` are the verdicts of a run, when one was given.
pub fn document(results: Option<&[ClaimResult]>) -> Document {
    let entries = entries();
    let coverage = coverage(&entries);
    let statements = entries
        .into_iter()
        .map(|entry| {
            let verdicts = results
                .map(|rs| {
                    entry
                        .claims
                        .iter()
                        .filter_map(|id| rs.iter().find(|r| &r.id == id))
                        .map(|r| ClaimVerdict {
                            claim: r.id.clone(),
                            verdict: super::render::word(r).to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            EntryOut { entry, verdicts }
        })
        .collect();
    Document {
        coverage,
        statements,
        contradictions: groups(results),
    }
}

/// The coverage counts as a small table (also pasted into docs/profiles.md, which a test keeps
/// equal to it).
pub fn coverage_text(c: &Coverage) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| statements of the seeds | {} |", c.statements);
    let _ = writeln!(s, "|---|---|");
    let _ = writeln!(
        s,
        "| checked by a claim ({} claims) | {} |",
        c.claims, c.with_claim
    );
    for (state, reason, n) in &c.unclaimed {
        let _ = writeln!(s, "| {}: {} | {n} |", state.words(), reason);
    }
    s
}

/// The document as text.
pub fn text(d: &Document) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Coverage");
    s.push_str(&coverage_text(&d.coverage));
    let _ = writeln!(s, "\nStatements");
    for e in &d.statements {
        let st = &e.entry.statement;
        let state = if !e.entry.claims.is_empty() {
            let ids: Vec<String> = e
                .entry
                .claims
                .iter()
                .map(|id| match e.verdicts.iter().find(|v| &v.claim == id) {
                    Some(v) => format!("{id} ({})", v.verdict),
                    None => id.clone(),
                })
                .collect();
            format!("claim: {}", ids.join(", "))
        } else if let Some(r) = &e.entry.unclaimed {
            format!("{}: {}", r.state.words(), r.reason)
        } else {
            "no claim, no reason".to_string()
        };
        s.push_str(&wrap(&format!("{}  {}", st.row, st.quote), "  "));
        s.push_str(&wrap(&state, "          "));
    }
    let _ = writeln!(s, "\nContradictions (claims of one group cannot all hold)");
    for g in &d.contradictions {
        let _ = writeln!(s, "  {}", g.group);
        for m in &g.members {
            let here = match (&m.verdict, m.measured) {
                (Some(v), Some(x)) => format!("this disk: {v}, {x:.3}"),
                (Some(v), None) => format!("this disk: {v}"),
                _ => "this disk: give a results file".to_string(),
            };
            let line = format!(
                "↔ {} ({}): {} [{}]; {here}",
                m.id, m.source, m.claim, m.expects
            );
            s.push_str(&wrap(&line, "    "));
        }
    }
    s
}

/// `text` in lines of at most 100 columns, each starting with `indent` (words are never split).
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        let fits = line.chars().count() + 1 + word.chars().count() <= 100;
        if line.trim().is_empty() || fits {
            if !line.trim().is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        } else {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}  {word}");
        }
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counts_add_up_and_every_group_contradicts() {
        let d = document(None);
        let c = &d.coverage;
        let unclaimed: usize = c.unclaimed.iter().map(|(_, _, n)| n).sum();
        assert_eq!(c.with_claim + unclaimed, c.statements);
        assert!(c.with_claim >= 75, "{}", c.with_claim);
        // The two write-amplification figures are one group, as the issue asks.
        let wa = d
            .contradictions
            .iter()
            .find(|g| g.group == "btrfs-write-amplification")
            .expect("write amplification group");
        assert!(wa.members.len() >= 2);
        assert!(d.contradictions.iter().all(|g| g.members.len() >= 2));
        // Members of a group are neighbours in the claims list.
        let ids: Vec<Option<String>> = all().into_iter().map(|c| c.group).collect();
        for g in &d.contradictions {
            let at: Vec<usize> = (0..ids.len())
                .filter(|&i| ids[i].as_deref() == Some(g.group.as_str()))
                .collect();
            assert_eq!(at.last().unwrap() - at[0] + 1, at.len(), "{}", g.group);
        }
        let t = text(&d);
        // Past the Markdown coverage table, lines fit 100 columns.
        let listed = t.lines().skip_while(|l| *l != "Statements");
        assert!(listed.clone().count() > 168);
        for l in listed {
            assert!(l.chars().count() <= 100, "too wide: {l}");
        }
        assert!(t.contains("000-30") && t.contains("not comparable here"));
    }

    /// docs/profiles.md shows the coverage table and the claim count; both follow the data.
    #[test]
    fn the_docs_show_the_current_coverage() {
        let doc = include_str!("../../docs/profiles.md");
        let c = coverage(&entries());
        let table = coverage_text(&c);
        assert!(
            doc.contains(&table),
            "docs/profiles.md: paste this coverage table:\n{table}"
        );
        let count = format!("ships {} of them as data", c.claims);
        assert!(doc.contains(&count), "docs/profiles.md: say `{count}`");
    }
}
