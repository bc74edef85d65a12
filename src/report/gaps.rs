//! What a setup could not do: a question's workloads that measured some setups and not
//! others because a filesystem lacks the mechanism (ext4 has no snapshots), read from the
//! workload's own notes ("backup: snapshots not available: …"), and what stands in for a
//! mechanism where one does ("backup: snapshot stand-in: …"). A verdict says both, so a
//! reader learns first that ext4 was not beaten at snapshots but has none.

use super::model::{self, Table};
use crate::results::Results;
use crate::workload::registry::Question;

/// The words a workload's note carries when its filesystem lacks a mechanism.
pub const NOT_AVAILABLE: &str = " not available: ";
/// The words a workload's note carries when another mechanism stands in for one.
pub const STAND_IN: &str = " stand-in: ";

/// One setup's gaps (or stand-ins) in one question, in the workload's own words.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    /// The setup.
    pub setup: String,
    /// What it lacks: [`Lack::All`] or [`Lack::Part`] of the question's rows other setups
    /// measured, or [`Lack::StandIn`] (measured through another mechanism).
    pub lack: Lack,
    /// The notes, deduplicated over rounds, without the workload's prefix.
    pub why: Vec<String>,
}

/// How much of a question a setup could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lack {
    /// None of the rows other setups measured.
    All,
    /// Some of them.
    Part,
    /// Nothing missing; a stand-in measured it.
    StandIn,
}

/// For question `q`: each setup missing rows another setup measured, when its notes say why,
/// and each setup measured through a stand-in.
pub fn of_question(
    results: &Results,
    tables: &[Table],
    q: Question,
    setups: &[String],
) -> Vec<Gap> {
    let rows: Vec<_> = tables
        .iter()
        .flat_map(|t| t.rows.iter())
        .filter(|r| model::question(results, &r.workload) == Some(q))
        .collect();
    let has = |r: &model::Row, i: usize| r.cells.get(i).is_some_and(Option::is_some);
    let mut workloads: Vec<&str> = Vec::new();
    for r in &rows {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut out = Vec::new();
    for (i, setup) in setups.iter().enumerate() {
        let lacking = rows
            .iter()
            .any(|r| !has(r, i) && (0..setups.len()).any(|j| has(r, j)));
        let any = rows.iter().any(|r| has(r, i));
        let mut kinds = vec![(Lack::StandIn, STAND_IN)];
        if lacking {
            let lack = if any { Lack::Part } else { Lack::All };
            kinds.insert(0, (lack, NOT_AVAILABLE));
        }
        for (lack, words) in kinds {
            let why = notes(results, setup, &workloads, words);
            if !why.is_empty() {
                out.push(Gap {
                    setup: setup.clone(),
                    lack,
                    why,
                });
            }
        }
    }
    out
}

/// `setup`'s notes on `workloads` that contain `words`, each once, without the prefix.
fn notes(results: &Results, setup: &str, workloads: &[&str], words: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for n in results.notes.iter().filter(|n| n.setup == setup) {
        let Some(rest) = workloads
            .iter()
            .find_map(|w| n.message.strip_prefix(w).and_then(|m| m.strip_prefix(": ")))
        else {
            continue;
        };
        if format!(" {rest}").contains(words) && !v.iter().any(|x| x == rest) {
            v.push(rest.to_string());
        }
    }
    v
}

/// The gaps in words: "ext4 could not run it (snapshots not available: …); xfs measured
/// through a stand-in (snapshot stand-in: …)"; empty when there are none.
pub fn words(gaps: &[Gap]) -> String {
    gaps.iter()
        .map(|g| {
            let what = match g.lack {
                Lack::All => "could not run it",
                Lack::Part => "could not run all of it",
                Lack::StandIn => "measured through a stand-in",
            };
            format!("{} {what} ({})", g.setup, g.why.join("; "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Warning;

    #[test]
    fn notes_match_the_workload_and_the_words_once() {
        let mut r = Results::new();
        let note = |setup: &str, round, m: &str| Warning {
            setup: setup.into(),
            round,
            message: m.into(),
        };
        r.notes = vec![
            note("ext4", 1, "backup: snapshots not available: ext4 has none"),
            note("ext4", 2, "backup: snapshots not available: ext4 has none"),
            note("ext4", 1, "backup: fstrim took 1 s"),
            note("ext4", 1, "other: x not available: y"),
            note("xfs", 1, "backup: snapshot stand-in: reflink copies"),
        ];
        assert_eq!(
            notes(&r, "ext4", &["backup"], NOT_AVAILABLE),
            vec!["snapshots not available: ext4 has none".to_string()]
        );
        assert_eq!(
            notes(&r, "xfs", &["backup"], STAND_IN),
            vec!["snapshot stand-in: reflink copies".to_string()]
        );
        let g = [
            Gap {
                setup: "ext4".into(),
                lack: Lack::Part,
                why: vec!["snapshots not available: none".into()],
            },
            Gap {
                setup: "xfs".into(),
                lack: Lack::StandIn,
                why: vec!["snapshot stand-in: reflink".into()],
            },
        ];
        assert_eq!(
            words(&g),
            "ext4 could not run all of it (snapshots not available: none); xfs measured \
             through a stand-in (snapshot stand-in: reflink)"
        );
    }
}
