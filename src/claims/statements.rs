//! The seeds' checkable statements and what fsbench does with each.
//!
//! The four seeds make 168 checkable statements (composite sentences split), listed in
//! `tests/fixtures/seed-statements.tsv`: row id, seed, a short quote, the workload class. A
//! claim names the rows it checks (`statements = [...]` in `claims.toml`); every other row has
//! its reason in `statements.toml` (not comparable here, a use-case family that will measure
//! it, pending a claim, or unmeasurable). Nothing is left silent: a test fails when a row has
//! neither a claim nor a reason.

use serde::{Deserialize, Serialize};

/// The statement table, as shipped with the seeds (tab-separated, one header line).
const TSV: &str = include_str!("../../tests/fixtures/seed-statements.tsv");
/// Why the rows without a claim have none.
const REASONS_TOML: &str = include_str!("statements.toml");

/// One checkable statement of a seed.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    /// Row id, `SEED-NN` (`000-02`).
    pub row: String,
    /// Seed number (`000`).
    pub seed: String,
    /// The statement, quoted short.
    pub quote: String,
    /// The workload class it speaks about ("general I/O", "metadata"...).
    pub class: String,
}

/// What fsbench does with a statement that no claim checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unclaimed {
    /// It speaks about something this host cannot be, or it is advice with no outcome.
    NotComparable,
    /// A use-case workload family measures it when it lands.
    UseCase,
    /// A workload fsbench has could measure it; the claim is still to write.
    Pending,
    /// Nothing measures it and nothing is planned.
    Unmeasurable,
}

impl Unclaimed {
    /// The state in words, as `fsbench claims` prints it.
    pub fn words(self) -> &'static str {
        match self {
            Unclaimed::NotComparable => "not comparable here",
            Unclaimed::UseCase => "use-case workload",
            Unclaimed::Pending => "pending claim",
            Unclaimed::Unmeasurable => "unmeasurable",
        }
    }
}

/// A group of rows without a claim, and why.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// What kind of reason.
    pub state: Unclaimed,
    /// For [`Unclaimed::UseCase`]: the workload family that will measure it.
    #[serde(default)]
    pub family: Option<String>,
    /// The reason in words.
    pub reason: String,
    /// The rows it covers.
    pub rows: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonsFile {
    group: Vec<Reason>,
}

/// A statement and its state here.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The statement.
    #[serde(flatten)]
    pub statement: Statement,
    /// The claims that check it (empty when none does).
    pub claims: Vec<String>,
    /// Why no claim checks it (none when a claim does).
    pub unclaimed: Option<Reason>,
}

/// Every statement of the table, in table order.
pub fn table() -> Vec<Statement> {
    TSV.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some(Statement {
                row: f.next()?.to_string(),
                seed: f.next()?.to_string(),
                quote: f.next()?.to_string(),
                class: f.next()?.to_string(),
            })
        })
        .collect()
}

/// The reasons of the rows no claim checks.
pub fn reasons() -> Vec<Reason> {
    let f: ReasonsFile =
        toml::from_str(REASONS_TOML).expect("statements.toml is checked by its tests");
    f.group
}

/// Every statement with the claims that check it or the reason none does.
pub fn entries() -> Vec<Entry> {
    let claims = super::all();
    let reasons = reasons();
    table()
        .into_iter()
        .map(|statement| {
            let ids = claims
                .iter()
                .filter(|c| c.statements.contains(&statement.row))
                .map(|c| c.id.clone())
                .collect::<Vec<_>>();
            let unclaimed = if ids.is_empty() {
                reasons
                    .iter()
                    .find(|r| r.rows.contains(&statement.row))
                    .cloned()
            } else {
                None
            };
            Entry {
                statement,
                claims: ids,
                unclaimed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The measurable rows (M or C in the table's status column) that fsbench must answer.
    fn measurable_rows() -> Vec<String> {
        TSV.lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                matches!(f.get(4), Some(&"M" | &"C")).then(|| f[0].to_string())
            })
            .collect()
    }

    #[test]
    fn the_table_is_the_seeds_168_statements() {
        let t = table();
        assert_eq!(t.len(), 168);
        assert!(t.iter().all(|s| s.row.starts_with(&s.seed)));
        assert_eq!(measurable_rows().len(), 128);
    }

    #[test]
    fn every_statement_has_a_claim_or_one_reason() {
        let table: Vec<String> = table().into_iter().map(|s| s.row).collect();
        let mut reasoned: BTreeMap<&str, usize> = BTreeMap::new();
        let reasons = reasons();
        for r in &reasons {
            assert!(!r.reason.is_empty() && !r.rows.is_empty());
            assert_eq!(
                r.family.is_some(),
                r.state == Unclaimed::UseCase,
                "a family names a use-case, and only it: {}",
                r.reason
            );
            for row in &r.rows {
                assert!(table.contains(row), "statements.toml: unknown row {row}");
                *reasoned.entry(row).or_default() += 1;
            }
        }
        let claimed: Vec<String> = super::super::all()
            .into_iter()
            .flat_map(|c| {
                for row in &c.statements {
                    assert!(table.contains(row), "{}: unknown row {row}", c.id);
                }
                c.statements
            })
            .collect();
        let mut missing = vec![];
        for row in &table {
            let has_claim = claimed.contains(row);
            let n = reasoned.get(row.as_str()).copied().unwrap_or(0);
            assert!(n <= 1, "{row} has {n} reasons");
            assert!(!(has_claim && n == 1), "{row} has a claim and a reason");
            if !has_claim && n == 0 {
                missing.push(row.clone());
            }
        }
        // The brief's rule is about the measurable rows, but a row the table marks N needs its
        // reason too, so every row is held to it.
        let measurable = measurable_rows();
        let unanswered: Vec<&String> = missing.iter().filter(|r| measurable.contains(r)).collect();
        assert!(
            unanswered.is_empty(),
            "measurable rows with no claim and no reason: {unanswered:?}"
        );
        assert!(
            missing.is_empty(),
            "rows with no claim and no reason: {missing:?}"
        );
    }

    #[test]
    fn the_test_fails_on_a_row_left_silent() {
        // Drop one row's reason: the row is then neither claimed nor explained.
        let reasons = reasons();
        let row = &reasons[0].rows[0];
        let claimed = super::super::all()
            .iter()
            .any(|c| c.statements.contains(row));
        let elsewhere = reasons.iter().skip(1).any(|r| r.rows.contains(row));
        assert!(!claimed && !elsewhere, "{row} would still be answered");
    }
}
