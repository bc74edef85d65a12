//! Recommendations computed from the results: for each workload class, who wins, by how much,
//! and whether the lead is beyond run-to-run noise, quoting the numbers. Classes with no
//! measured workload are omitted; nothing here is canned text about filesystems.

use super::model::{self, Mark, Row, Table};
use crate::metrics::{self, Class, Direction, MetricId, registry};
use crate::results::Results;
use crate::stats::paired;
use crate::workload::registry::Question;
use serde::Serialize;

/// One workload class verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// Class name (`Small files and metadata`).
    pub class: String,
    /// Winning setup (most wins in the class), if any row could be ranked.
    pub winner: String,
    /// Rows the winner leads (alone or shared within noise).
    pub wins: usize,
    /// Of those, the rows it leads beyond run-to-run noise (the rest are ties it shares).
    #[serde(default)]
    pub clear_wins: usize,
    /// Rows ranked in this class.
    pub tests: usize,
    /// True when none of the winner's leads is beyond noise.
    pub within_noise: bool,
    /// The question (the workload registry's class) it answers.
    pub question: Question,
    /// What decided it, when that needs saying ("decided by pgbench-rw, sqlite-wal (…)",
    /// "inferred from synthetic I/O …"); empty otherwise.
    pub basis: String,
    /// One quoted comparison per ranked row.
    pub evidence: Vec<String>,
    /// Quotes of rows shown beside the deciding ones, not counted (synthetic I/O beside the
    /// databases).
    pub supporting: Vec<String>,
    /// The sentence a reader sees.
    pub text: String,
    /// The durability question's own verdict, per setup ([`super::durability`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durability: Option<super::durability::Durability>,
    /// Every other setup against the winner over the deciding rows: who is equivalent, not
    /// separated, behind (and by how much), by the one paired statistic.
    #[serde(default)]
    pub standings: Vec<Standing>,
    /// [`Recommendation::standings`] in words ("xfs not separated (−2 %, −9 % … +6 %);
    /// btrfs 36 % behind, beyond noise"); empty when the winner ran alone.
    #[serde(default)]
    pub standing: String,
    /// The winner's lead in words: "ahead in 2 of 3 test(s) beyond noise" ([`leads`]), or
    /// "the only setup that could run it" when the others lack the mechanism.
    #[serde(default)]
    pub lead: String,
    /// The setups that could not run the question's workloads, or ran them through a
    /// stand-in, in the workloads' own words ([`super::gaps::words`]); empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unable: String,
}

/// One setup against a verdict's winner, over the question's deciding rows.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    /// The setup.
    pub setup: String,
    /// Against the winner: `behind` in most rows beyond noise (the rows where it is not are
    /// counted below), `ahead` likewise, `equivalent` in every row, else `not_separated`
    /// (open, or mixed across rows).
    pub outcome: paired::Outcome,
    /// Its geometric-mean ratio to the winner over the rows (> 1: better than the winner).
    pub ratio: f64,
    /// The interval of that ratio, when one row decides the question.
    pub interval: Option<(f64, f64)>,
    /// Rows judged.
    pub rows: usize,
    /// Of those, the rows where it is behind the winner beyond noise.
    pub rows_behind: usize,
    /// The rows where it is shown equivalent to the winner.
    pub rows_equivalent: usize,
    /// The rows where it is ahead of the winner beyond noise.
    pub rows_ahead: usize,
    /// Rounds that would tell 10 % apart at the noisiest row's paired noise.
    pub rounds_for_10pct: Option<usize>,
    /// Rounds judged (fewest over the rows).
    pub rounds: usize,
}

/// Every other setup against `w` over `rows`.
fn standings(results: &Results, rows: &[&Row], w: usize, setups: &[String]) -> Vec<Standing> {
    let mut out = Vec::new();
    for (s, name) in setups.iter().enumerate().filter(|(s, _)| *s != w) {
        // A fact (usable space, fixed by mkfs) is stated, never judged.
        let judged: Vec<paired::Judgement> = rows
            .iter()
            .filter(|r| r.role == metrics::Role::Measured)
            .filter(|r| {
                let has = |i: usize| r.cells.get(i).is_some_and(|c| c.is_some());
                has(w) && has(s)
            })
            .map(|r| {
                let k = r.cells.iter().flatten().count();
                paired::compare_with_leader(results, &r.workload, &r.metric, &setups[w], name, k)
            })
            .filter(|j| j.ratio.is_finite() && j.ratio > 0.0)
            .collect();
        if judged.is_empty() {
            continue;
        }
        let all = |o: paired::Outcome| judged.iter().all(|j| j.outcome == o);
        let count = |o: paired::Outcome| judged.iter().filter(|j| j.outcome == o).count();
        // The judgements are the winner's against this setup: its being ahead is this one's
        // being behind.
        // Behind beyond noise in most of the rows reads "behind" (with the rows where it is
        // not), never "not separated".
        let most = |o: paired::Outcome| 2 * count(o) > judged.len();
        let outcome = if most(paired::Outcome::Ahead) {
            paired::Outcome::Behind
        } else if most(paired::Outcome::Behind) {
            paired::Outcome::Ahead
        } else if all(paired::Outcome::Equivalent) {
            paired::Outcome::Equivalent
        } else {
            paired::Outcome::NotSeparated
        };
        let logs: f64 = judged.iter().map(|j| j.ratio.ln()).sum::<f64>() / judged.len() as f64;
        out.push(Standing {
            setup: name.clone(),
            outcome,
            ratio: (-logs).exp(),
            interval: match judged.as_slice() {
                [one] => one.interval.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
                _ => None,
            },
            rows: judged.len(),
            rows_behind: count(paired::Outcome::Ahead),
            rows_equivalent: count(paired::Outcome::Equivalent),
            rows_ahead: count(paired::Outcome::Behind),
            rounds_for_10pct: judged.iter().filter_map(|j| j.rounds_for_10pct).max(),
            rounds: judged.iter().map(|j| j.rounds).min().unwrap_or(0),
        });
    }
    out
}

/// "+5 %", "−36 %".
fn pct(r: f64) -> String {
    let p = (r - 1.0) * 100.0;
    if p.abs() < 0.5 {
        "±0 %".into()
    } else {
        format!("{}{:.0} %", if p > 0.0 { "+" } else { "−" }, p.abs())
    }
}

/// The standings in words, by outcome: not separated (with interval and what it would take),
/// equivalent, ahead, behind (by how much).
pub fn standing_words(st: &[Standing], margin: Option<f64>) -> String {
    let mut parts = Vec::new();
    let of = |o: paired::Outcome| st.iter().filter(move |s| s.outcome == o);
    let open: Vec<String> = of(paired::Outcome::NotSeparated)
        .map(|s| {
            let decided = [
                (s.rows_behind, "behind"),
                (s.rows_equivalent, "equivalent"),
                (s.rows_ahead, "ahead"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, w)| format!("{w} in {n}"))
            .collect::<Vec<_>>();
            let iv = match s.interval {
                Some((lo, hi)) => format!(", {} … {}", pct(lo), pct(hi)),
                None if decided.is_empty() => format!(" over {} tests", s.rows),
                None => format!(" over {} tests: {}", s.rows, decided.join(", ")),
            };
            let take = match s.rounds_for_10pct {
                Some(n) if n > s.rounds => {
                    format!("; about {n} rounds would tell 10 % apart at this noise (80 % power)")
                }
                Some(_) => String::new(),
                None => {
                    "; more than 100 rounds would tell 10 % apart at this noise (80 % power)".into()
                }
            };
            format!("{} not separated ({}{iv}{take})", s.setup, pct(s.ratio))
        })
        .collect();
    if !open.is_empty() {
        parts.push(open.join("; "));
    }
    let eq: Vec<String> = of(paired::Outcome::Equivalent)
        .map(|s| format!("{} ({})", s.setup, pct(s.ratio)))
        .collect();
    if !eq.is_empty() {
        let within = margin
            .map(|m| format!(" within ±{:.0} %", m * 100.0))
            .unwrap_or_default();
        parts.push(format!("{} equivalent{within}", eq.join(" and ")));
    }
    let ahead: Vec<String> = of(paired::Outcome::Ahead)
        .map(|s| {
            if s.rows_ahead == s.rows {
                format!("{} ahead in every test ({})", s.setup, pct(s.ratio))
            } else {
                format!(
                    "{} ahead in {} of {} tests ({}{})",
                    s.setup,
                    s.rows_ahead,
                    s.rows,
                    pct(s.ratio),
                    rest(s, paired::Outcome::Behind)
                )
            }
        })
        .collect();
    if !ahead.is_empty() {
        parts.push(ahead.join("; "));
    }
    let (every, most): (Vec<&Standing>, Vec<&Standing>) =
        of(paired::Outcome::Behind).partition(|s| s.rows_behind == s.rows);
    let behind: Vec<String> = every
        .iter()
        .map(|s| format!("{} {:.0} % behind", s.setup, (1.0 - s.ratio) * 100.0))
        .collect();
    if !behind.is_empty() {
        parts.push(format!("{}, beyond noise", behind.join(" and ")));
    }
    for s in most {
        parts.push(format!(
            "{} {:.0} % behind, beyond noise in {} of {} tests{}",
            s.setup,
            (1.0 - s.ratio) * 100.0,
            s.rows_behind,
            s.rows,
            rest(s, paired::Outcome::Ahead)
        ));
    }
    parts.join("; ")
}

/// " (not separated in 1, equivalent in 1)": a majority standing's other rows, the `opposite`
/// outcome (the setup's own: ahead for one mostly behind) named last.
fn rest(s: &Standing, opposite: paired::Outcome) -> String {
    let not_separated = s.rows - s.rows_behind - s.rows_equivalent - s.rows_ahead;
    let other = if opposite == paired::Outcome::Ahead {
        ("ahead", s.rows_ahead)
    } else {
        ("behind", s.rows_behind)
    };
    let words: Vec<String> = [
        ("not separated", not_separated),
        ("equivalent", s.rows_equivalent),
        other,
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(w, n)| format!("{w} in {n}"))
    .collect();
    if words.is_empty() {
        String::new()
    } else {
        format!(" ({})", words.join(", "))
    }
}

/// What a database workload is decided on: its transactions per second, its p99 latency and
/// its fsyncs per transaction (the rows it records of these).
const DATABASE_METRICS: &[MetricId] = &[
    registry::TPS,
    registry::TX_PER_S,
    registry::LAT_P99_MS,
    registry::FSYNCS_PER_TX,
];

/// The questions synthetic I/O answers for a database when no database ran.
const DATABASE_PROXIES: &[Question] = &[Question::RandomIo, Question::FsyncHeavy];

/// The metric that decides a workload: its judged throughput, else its judged time, else its
/// usable space (the registry's class and the row's role in that workload; see
/// [`metrics::deciding_rank`]).
fn primary(r: &Row) -> Option<(u8, usize)> {
    metrics::deciding_rank(&r.metric, r.role)
}

/// One deciding row per workload answering one of `questions`.
fn deciding_rows<'a>(
    results: &Results,
    tables: &'a [Table],
    questions: &[Question],
) -> Vec<&'a Row> {
    let mut rows: Vec<&Row> = Vec::new();
    for r in tables.iter().flat_map(|t| t.rows.iter()) {
        let asks = model::question(results, &r.workload).is_some_and(|q| questions.contains(&q));
        if !asks || r.direction == Direction::Neutral {
            continue;
        }
        let Some(rank) = primary(r) else {
            continue;
        };
        match rows.iter().position(|x| x.workload == r.workload) {
            Some(i) if primary(rows[i]).is_none_or(|x| x > rank) => rows[i] = r,
            Some(_) => {}
            None => rows.push(r),
        }
    }
    rows.retain(|r| ranked(r));
    rows
}

/// Every judged database row: TPS, p99 latency, fsyncs per transaction of each database
/// workload.
fn database_rows<'a>(results: &Results, tables: &'a [Table]) -> Vec<&'a Row> {
    tables
        .iter()
        .flat_map(|t| t.rows.iter())
        .filter(|r| model::question(results, &r.workload) == Some(Question::Databases))
        .filter(|r| DATABASE_METRICS.iter().any(|m| r.metric == *m))
        .filter(|r| r.direction != Direction::Neutral && r.role == metrics::Role::Measured)
        .filter(|r| ranked(r))
        .collect()
}

/// Whether at least two setups have a value.
fn ranked(r: &Row) -> bool {
    r.cells.iter().filter(|c| c.is_some()).count() >= 2
}

/// Compute the recommendations from the report tables: one per question the workload registry
/// assigns (in [`Question::ALL`] order), omitted when nothing answers it.
pub fn recommend(results: &Results, tables: &[Table], setups: &[String]) -> Vec<Recommendation> {
    let mut out = Vec::new();
    // Setting a filesystem up (mkfs) is shown, not a question a reader picks a filesystem by.
    for q in Question::ALL.into_iter().filter(|q| *q != Question::Setup) {
        if q == Question::Durability {
            out.extend(durability(results, setups));
            continue;
        }
        let (rows, supporting, basis) = if q == Question::Databases {
            let db = database_rows(results, tables);
            if db.is_empty() {
                let proxy = deciding_rows(results, tables, DATABASE_PROXIES);
                let basis = "inferred from synthetic I/O (random and fsync'd writes): no \
                             pgbench or SQLite ran; `--profile db` runs them"
                    .to_string();
                (proxy, Vec::new(), basis)
            } else {
                let mut names: Vec<&str> = Vec::new();
                for r in &db {
                    if !names.contains(&r.workload.as_str()) {
                        names.push(&r.workload);
                    }
                }
                let basis = format!(
                    "decided by {} (TPS, p99 latency, fsyncs per transaction)",
                    names.join(", ")
                );
                (db, deciding_rows(results, tables, DATABASE_PROXIES), basis)
            }
        } else {
            (
                deciding_rows(results, tables, &[q]),
                Vec::new(),
                String::new(),
            )
        };
        // What a setup could not run is said before the evidence, so the reader learns it
        // first (ext4 was not beaten at snapshots: it has none).
        let gaps = super::gaps::of_question(results, tables, q, setups);
        let unable = super::gaps::words(&gaps);
        let mut rec = judge(results, q, &rows, &supporting, basis, setups, &unable)
            .or_else(|| alone(results, tables, q, setups, &gaps, &unable));
        if let Some(r) = rec.as_mut().filter(|_| q == Question::Yours) {
            r.class = yours(&rows);
        }
        out.extend(rec);
    }
    out
}

/// "Your workload (pgbench, app)": the replayed traces by name (their rows' short labels),
/// each once.
fn yours(rows: &[&Row]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.short.as_str()) {
            names.push(&r.short);
        }
    }
    if names.is_empty() {
        return Question::Yours.title().to_string();
    }
    format!("Your workload ({})", names.join(", "))
}

/// The verdict of a question only one setup could run, the others lacking the mechanism
/// (every one of them with a note saying so): that setup, alone, its values quoted.
fn alone(
    results: &Results,
    tables: &[Table],
    q: Question,
    setups: &[String],
    gaps: &[super::gaps::Gap],
    unable: &str,
) -> Option<Recommendation> {
    // The question's rows only one setup measured; all of them that one setup's.
    let has = |r: &Row, i: usize| r.cells.get(i).is_some_and(Option::is_some);
    let rows: Vec<&Row> = tables
        .iter()
        .flat_map(|t| t.rows.iter())
        .filter(|r| model::question(results, &r.workload) == Some(q))
        .filter(|r| r.direction != Direction::Neutral && primary(r).is_some())
        .filter(|r| (0..setups.len()).filter(|&i| has(r, i)).count() == 1)
        .collect();
    let mut owners: Vec<usize> = rows
        .iter()
        .filter_map(|r| (0..setups.len()).find(|&i| has(r, i)))
        .collect();
    owners.sort_unstable();
    owners.dedup();
    let [w] = owners[..] else { return None };
    let others_lack = (0..setups.len()).filter(|&i| i != w).all(|i| {
        gaps.iter()
            .any(|g| g.lack != super::gaps::Lack::StandIn && g.setup == setups[i])
    });
    if !others_lack || setups.len() < 2 {
        return None;
    }
    let evidence: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let c = r.cells.get(w)?.as_ref()?;
            Some(format!(
                "{} {}",
                r.label,
                metrics::format_with_unit(r.metric.as_str(), c.summary.median, &r.unit)
            ))
        })
        .collect();
    let lead = "the only setup that could run it".to_string();
    Some(Recommendation {
        class: q.title().to_string(),
        question: q,
        winner: setups[w].clone(),
        wins: rows.len(),
        clear_wins: 0,
        tests: rows.len(),
        within_noise: true,
        basis: String::new(),
        text: format!("{}: {lead}; {unable}. {}.", setups[w], evidence.join("; ")),
        evidence,
        supporting: Vec::new(),
        durability: None,
        standings: Vec::new(),
        standing: String::new(),
        lead,
        unable: unable.to_string(),
    })
}

/// The durability question, by its own rule ([`super::durability`]): the setups ranked first
/// are its winner (several: a tie).
fn durability(results: &Results, setups: &[String]) -> Option<Recommendation> {
    let d = super::durability::judge(results, setups)?;
    let winner = if d.best.is_empty() {
        "none".to_string()
    } else {
        d.best.join(", ")
    };
    Some(Recommendation {
        class: Question::Durability.title().to_string(),
        question: Question::Durability,
        winner,
        wins: d.setups.iter().filter(|s| s.kept).count(),
        clear_wins: d.setups.iter().filter(|s| s.kept).count(),
        tests: d.setups.len(),
        within_noise: d.tie,
        basis: "any lost acknowledged write disqualifies; fewer crash states lost ranks first"
            .to_string(),
        evidence: d.setups.iter().map(|s| s.words()).collect(),
        supporting: Vec::new(),
        text: d.text.clone(),
        lead: d.text.clone(),
        durability: Some(d),
        standings: Vec::new(),
        standing: String::new(),
        unable: String::new(),
    })
}

/// The verdict of one question from its deciding rows; `supporting` rows are quoted, not
/// counted.
fn judge(
    results: &Results,
    q: Question,
    rows: &[&Row],
    supporting: &[&Row],
    basis: String,
    setups: &[String],
    unable: &str,
) -> Option<Recommendation> {
    if rows.is_empty() {
        return None;
    }
    {
        let mut wins = vec![0usize; setups.len()];
        let mut clear = vec![0usize; setups.len()];
        // Leads on the estimate alone (the row's leader by the geometric mean of the paired
        // ratios, the size every output prints; the median for a row nobody judged): when
        // every lead is within noise this breaks the tie.
        let mut ahead = vec![0usize; setups.len()];
        for r in rows {
            let best = model::leader(r).or_else(|| {
                (0..setups.len())
                    .filter_map(|i| Some((i, r.cells.get(i)?.as_ref()?.summary.median)))
                    .reduce(|a, b| if r.direction.better(b.1, a.1) { b } else { a })
                    .map(|(i, _)| i)
            });
            if let Some(i) = best {
                ahead[i] += 1;
            }
        }
        for r in rows {
            for (i, c) in r.cells.iter().enumerate() {
                match c.as_ref().map(|c| c.mark) {
                    Some(Mark::Best) => {
                        wins[i] += 1;
                        clear[i] += 1;
                    }
                    Some(Mark::Tied | Mark::Equivalent) => wins[i] += 1,
                    _ => {}
                }
            }
        }
        let w = (0..setups.len())
            .max_by_key(|&i| (wins[i], clear[i], ahead[i], std::cmp::Reverse(i)))
            .expect("setups");
        let evidence: Vec<String> = rows.iter().filter_map(|r| quote(r, w, setups)).collect();
        let supporting: Vec<String> = supporting
            .iter()
            .filter_map(|r| quote(r, w, setups))
            .collect();
        let within_noise = clear[w] == 0;
        let standings = standings(results, rows, w, setups);
        // One margin when every deciding row shares it (the usual case), else none named.
        let margins: Vec<f64> = rows
            .iter()
            .map(|r| paired::margin_of(results, &r.metric))
            .collect();
        let margin = margins
            .first()
            .copied()
            .filter(|m| margins.iter().all(|x| x == m));
        let standing = standing_words(&standings, margin);
        let lead = leads(clear[w], wins[w], rows.len());
        let mut text = format!("{}: {lead}", setups[w]);
        if !standing.is_empty() {
            text.push_str("; ");
            text.push_str(&standing);
        }
        // Facts alone (usable space): stated, never judged or counted as decided.
        let basis = if rows.iter().all(|r| r.role == metrics::Role::Fact) && basis.is_empty() {
            "a fact fixed by mkfs, the same every round".to_string()
        } else {
            basis
        };
        if !basis.is_empty() {
            text.push_str(&format!("; {basis}"));
        }
        if !unable.is_empty() {
            text.push_str(&format!("; {unable}"));
        }
        if !evidence.is_empty() {
            text.push_str(". ");
            text.push_str(&evidence.join("; "));
        }
        if !supporting.is_empty() {
            text.push_str(". Supporting, synthetic I/O: ");
            text.push_str(&supporting.join("; "));
        }
        text.push('.');
        Some(Recommendation {
            class: q.title().to_string(),
            question: q,
            winner: setups[w].clone(),
            wins: wins[w],
            clear_wins: clear[w],
            tests: rows.len(),
            within_noise,
            basis,
            evidence,
            supporting,
            text,
            durability: None,
            standings,
            standing,
            lead,
            unable: unable.to_string(),
        })
    }
}

/// "ahead in 6 of 10 test(s) beyond noise, tied in 4": a row tied within noise is a shared
/// lead, never counted as the winner's own. No lead at all: rows nobody judged (facts, such as
/// usable space), where the winner is first on the values alone.
pub fn leads(clear: usize, wins: usize, tests: usize) -> String {
    let tied = wins.saturating_sub(clear);
    match (clear, tied) {
        (0, 0) => format!("first on the values of {tests} row(s), not judged"),
        (0, t) => format!("tied-best in {t} of {tests} test(s)"),
        (c, 0) => format!("ahead in {c} of {tests} test(s) beyond noise"),
        (c, t) => format!("ahead in {c} of {tests} test(s) beyond noise, tied in {t}"),
    }
}

/// "rm -rf 1.91 s vs 4.35 s on xfs (2.3× faster)" for setup `w` against the best other setup
/// (or, when `w` is not the best, against the best).
fn quote(r: &Row, w: usize, setups: &[String]) -> Option<String> {
    let mine = r.cells.get(w)?.as_ref()?;
    let dir = r.direction;
    // Against the row's leader; the leader itself against its closest rival by the paired
    // statistic; a row nobody judged by the medians.
    let cell = |i: usize| r.cells.get(i)?.as_ref().map(|c| (i, c));
    let judged_rival = match model::leader(r) {
        Some(l) if l != w => cell(l),
        Some(_) => (0..r.cells.len())
            .filter(|&i| i != w)
            .filter_map(|i| cell(i).filter(|(_, c)| c.versus_leader.is_some()))
            .min_by(|a, b| {
                let ratio = |c: &super::model::Cell| c.versus_leader.map_or(f64::NAN, |j| j.ratio);
                ratio(a.1).total_cmp(&ratio(b.1))
            }),
        None => None,
    };
    let other = match judged_rival {
        Some(o) => o,
        None => (0..r.cells.len())
            .filter(|&i| i != w)
            .filter_map(cell)
            .reduce(|a, b| {
                if dir.better(b.1.summary.median, a.1.summary.median) {
                    b
                } else {
                    a
                }
            })?,
    };
    let (a, b) = (mine.summary.median, other.1.summary.median);
    // The size quoted is the paired statistic's (the geometric mean of the per-round ratios,
    // what the marks were read from) where the row was judged; the medians' only otherwise.
    let judged = match model::leader(r) {
        Some(l) if l == w => other.1.versus_leader.map(|j| j.ratio),
        Some(l) if l == other.0 => mine.versus_leader.map(|j| 1.0 / j.ratio),
        _ => None,
    };
    let ratio = judged.unwrap_or(match dir {
        Direction::HigherIsBetter => a / b,
        _ => b / a,
    });
    let unit = |v: f64| metrics::format_with_unit(&r.metric, v, &r.unit);
    let word = if matches!(r.class, Class::Throughput | Class::Time) {
        ("faster", "slower")
    } else if dir == Direction::LowerIsBetter {
        ("lower", "higher")
    } else {
        ("more", "less")
    };
    let verdict = if !ratio.is_finite() {
        String::new()
    } else if ratio >= 1.0 {
        format!(" ({} {})", times(ratio), word.0)
    } else {
        format!(" ({} {})", times(1.0 / ratio), word.1)
    };
    let noise = match mine.mark {
        Mark::Tied => ", not separated",
        Mark::Equivalent => ", equivalent",
        _ => "",
    };
    let verdict = if noise.is_empty() {
        verdict
    } else {
        verdict.replace(')', &format!("{noise})"))
    };
    Some(format!(
        "{} {} vs {} on {}{}",
        r.short,
        unit(a),
        unit(b),
        setups[other.0],
        verdict
    ))
}

/// A ratio as people say it: "2.3×", or "12 %" for small gaps.
fn times(r: f64) -> String {
    if r < 1.1 {
        format!("{:.0} %", (r - 1.0) * 100.0)
    } else {
        format!("{r:.1}×")
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::MetricKey;
    use crate::report::Report;
    use crate::results::{Results, Sample, SetupInfo};
    use crate::workload::registry::Question;

    fn results(rows: &[(&str, &str, &str, &str, [f64; 3])]) -> Results {
        let mut r = Results::new();
        for (setup, workload, metric, unit, vals) in rows {
            if !r.setups.iter().any(|s| s.name == *setup) {
                r.setups.push(SetupInfo {
                    name: setup.to_string(),
                    fs: setup.to_string(),
                    ..Default::default()
                });
            }
            if !r.workloads.iter().any(|w| w.id == *workload) {
                // The registry's question follows the recorded kind and job, not the id.
                let (kind, params) = match *workload {
                    "rm-tree" => ("rm-tree", serde_json::json!({})),
                    "untar" => ("untar", serde_json::json!({})),
                    w => ("io", serde_json::json!({"rw": w})),
                };
                r.workloads.push(crate::results::WorkloadInfo {
                    id: workload.to_string(),
                    kind: kind.into(),
                    params,
                    fio_command: None,
                });
            }
            for (i, v) in vals.iter().enumerate() {
                r.samples.push(Sample {
                    setup: setup.to_string(),
                    workload: workload.to_string(),
                    metric: MetricKey::parse(metric),
                    unit: unit.to_string(),
                    round: i as u32 + 1,
                    value: *v,
                });
            }
        }
        r
    }

    #[test]
    fn quotes_numbers_and_flags_noise() {
        let r = results(&[
            ("ext4", "rm-tree", "seconds", "s", [1.90, 1.91, 1.93]),
            ("xfs", "rm-tree", "seconds", "s", [4.30, 4.35, 4.41]),
            (
                "ext4",
                "randread",
                "iops",
                "IOPS",
                [80_000.0, 81_000.0, 90_000.0],
            ),
            (
                "xfs",
                "randread",
                "iops",
                "IOPS",
                [79_000.0, 82_000.0, 88_000.0],
            ),
        ]);
        let rep = Report::new(&r);
        let small = rep
            .recommendations
            .iter()
            .find(|x| x.question == Question::SmallFiles)
            .unwrap();
        assert_eq!(small.winner, "ext4");
        assert!(!small.within_noise);
        assert!(
            small
                .text
                .contains("rm -rf 1.91 s vs 4.35 s on xfs (2.3× faster)"),
            "{}",
            small.text
        );
        let rand = rep
            .recommendations
            .iter()
            .find(|x| x.question == Question::RandomIo)
            .unwrap();
        // 80–90 k IOPS both, within 2 % of each other every round: shown equivalent.
        assert!(rand.within_noise, "{}", rand.text);
        assert!(rand.text.contains("equivalent"), "{}", rand.text);
        // The verdict names who is behind and by how much, and who is equivalent.
        assert_eq!(small.standing, "xfs 56 % behind, beyond noise");
        assert_eq!(
            small.standings[0].outcome,
            crate::stats::paired::Outcome::Behind
        );
        // The leader by the geometric mean of the paired ratios (ext4, +1 % over the rounds)
        // though xfs has the higher median.
        assert_eq!(rand.winner, "ext4", "{}", rand.text);
        assert_eq!(rand.standing, "xfs (−1 %) equivalent within ±10 %");
        // Classes that were not measured are omitted.
        assert!(
            !rep.recommendations
                .iter()
                .any(|x| x.question == Question::Space)
        );
    }

    #[test]
    fn behind_in_most_tests_reads_behind_with_the_others_named() {
        use super::{Standing, standing_words};
        use crate::stats::paired::Outcome;
        let st = |setup: &str, outcome, behind, equivalent| Standing {
            setup: setup.into(),
            outcome,
            ratio: 0.33,
            interval: None,
            rows: 4,
            rows_behind: behind,
            rows_equivalent: equivalent,
            rows_ahead: 0,
            rounds_for_10pct: Some(9),
            rounds: 5,
        };
        assert_eq!(
            standing_words(&[st("btrfs", Outcome::Behind, 3, 0)], None),
            "btrfs 67 % behind, beyond noise in 3 of 4 tests (not separated in 1)"
        );
        assert_eq!(
            standing_words(&[st("btrfs", Outcome::Behind, 4, 0)], None),
            "btrfs 67 % behind, beyond noise"
        );
        // Two of four is no majority: still open, with the count each way.
        let open = standing_words(&[st("btrfs", Outcome::NotSeparated, 2, 1)], None);
        assert!(
            open.starts_with(
                "btrfs not separated (−67 % over 4 tests: behind in 2, equivalent in 1"
            ),
            "{open}"
        );
    }

    #[test]
    fn a_tie_names_the_setup_ahead_on_the_medians_not_the_first_listed() {
        // Overlapping rounds (a tie within noise), but xfs has the higher median.
        let r = results(&[
            (
                "ext4",
                "randread",
                "iops",
                "IOPS",
                [17_000.0, 17_788.0, 19_500.0],
            ),
            (
                "xfs",
                "randread",
                "iops",
                "IOPS",
                [16_900.0, 18_702.0, 19_400.0],
            ),
        ]);
        let rep = Report::new(&r);
        let rand = rep
            .recommendations
            .iter()
            .find(|x| x.question == Question::RandomIo)
            .unwrap();
        assert!(rand.within_noise, "{}", rand.text);
        assert_eq!(rand.winner, "xfs", "{}", rand.text);
    }

    #[test]
    fn warnings_cover_fuse_failures_and_few_rounds() {
        let mut r = results(&[("zfs", "untar", "seconds", "s", [5.0, 5.1, 5.0])]);
        r.samples.retain(|s| s.round == 1);
        r.setups[0].implementation = "zfs-fuse".into();
        r.failures.push(crate::results::Failure {
            setup: "zfs".into(),
            workload: "rm-tree".into(),
            round: 1,
            error: "boom".into(),
        });
        let w = Report::new(&r).warnings.join("\n");
        assert!(w.contains("zfs-fuse"), "{w}");
        assert!(w.contains("zfs rm-tree round 1: boom"), "{w}");
        assert!(w.contains("Only 1 round(s)"), "{w}");
    }
}
