//! JSON exporter: the results file itself, with its summary recomputed from the samples, every
//! judgement fsbench made from them under `judgements` ([`Judgements`]: the headline marks, the
//! verdict lines, the claims, the questions of the stopping rule) and, when crash workloads
//! ran, the durability verdict under `durability` (derived, like the summary: a reader of the
//! results file may ignore them).

use super::model::Mark;
use super::{Exporter, Report};
use crate::stats::paired::{self, Judgement};
use serde::Serialize;
use std::collections::BTreeMap;

/// JSON exporter.
pub struct Json;

/// Every judgement of one report, as `results.json` and `report --format json` carry it.
#[derive(Debug, Clone, Serialize)]
pub struct Judgements {
    /// The statistic behind every judgement below.
    pub method: String,
    /// Two-sided error rate of one look's interval (α; a settled run spends it over its looks).
    pub alpha: f64,
    /// One entry per headline row.
    pub headline: Vec<HeadlineJudgement>,
    /// The verdict lines ([`super::recommend::Recommendation`]).
    pub recommendations: Vec<super::recommend::Recommendation>,
    /// Every claim's direction and size verdicts, ratio, interval and rounds.
    pub claims: Vec<crate::claims::ClaimResult>,
    /// The questions the stopping rule watches (measured claims and each workload's leader),
    /// with their verdict and when it settled.
    pub questions: Vec<QuestionJudgement>,
    /// Questions (judged comparisons: each other setup against a headline row's leader, and
    /// the measured claims; facts and probes are not questions), decided questions, close
    /// calls (open after the minimum rounds) and those settled later, and the error the run
    /// carries ([`super::count`]).
    pub counts: super::count::Counts,
}

/// One headline row's judgement.
#[derive(Debug, Clone, Serialize)]
pub struct HeadlineJudgement {
    /// The row's label.
    pub label: String,
    /// Workload id.
    pub workload: String,
    /// Metric id.
    pub metric: String,
    /// The setup the marks are relative to (best median), when the row is ranked.
    pub leader: Option<String>,
    /// Each setup's mark (`best`, `equivalent`, `tied` = not separated, `behind`, `none`).
    pub marks: BTreeMap<String, Mark>,
    /// The leader against each other setup (ratio > 1 favours the leader).
    pub versus_leader: BTreeMap<String, Judgement>,
    /// The row's noise floor: the largest paired noise among those comparisons (sd of the
    /// per-round log ratios).
    pub noise: Option<f64>,
    /// The rounds that noise needs to tell 10 % apart (`None`: more than 100, or unranked).
    pub rounds_for_10pct: Option<usize>,
}

/// One question of the stopping rule.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionJudgement {
    /// A claim's id, or `headline <metric>: <leader> vs <other>` (one per other setup).
    pub what: String,
    /// The workload that answers it.
    pub workload: String,
    /// The verdict (`leader`, `equivalent`, `confirmed`…), `None` while open.
    pub verdict: Option<String>,
    /// The round it settled at (`None`: open after every round).
    pub settled_at: Option<usize>,
    /// Paired rounds.
    pub rounds: usize,
}

/// The judgements of `report`.
pub fn judgements(report: &Report) -> Judgements {
    let results = &report.results;
    let rounds = crate::stats::rounds(&results.summary);
    let rule = paired::rule_for(results, rounds);
    let headline = report
        .headline
        .iter()
        .map(|row| {
            let mut marks = BTreeMap::new();
            let mut versus = BTreeMap::new();
            let mut leader = None;
            for (i, c) in row.cells.iter().enumerate() {
                let Some(c) = c else { continue };
                let setup = report.setups[i].clone();
                if c.mark != Mark::None && c.versus_leader.is_none() {
                    leader = Some(setup.clone());
                }
                if let Some(j) = c.versus_leader {
                    versus.insert(setup.clone(), j);
                }
                marks.insert(setup, c.mark);
            }
            let floor = super::model::noise_floor(row);
            HeadlineJudgement {
                noise: floor.map(|f| f.0),
                rounds_for_10pct: floor.and_then(|f| f.1),
                label: row.label.clone(),
                workload: row.workload.clone(),
                metric: row.metric.to_string(),
                leader,
                marks,
                versus_leader: versus,
            }
        })
        .collect();
    let questions = crate::report::open_questions::questions(results)
        .into_iter()
        .map(|q| {
            let at = q.settled_at(&rule);
            QuestionJudgement {
                verdict: at.and_then(|n| q.verdict(&rule, n)).map(str::to_string),
                settled_at: at,
                rounds: q.ratios.len(),
                what: q.what,
                workload: q.workload,
            }
        })
        .collect();
    Judgements {
        method: match &results.settle {
            Some(s) => s.method.clone(),
            None => "Student-t interval on paired per-round log ratios, one look".into(),
        },
        alpha: rule.alpha,
        headline,
        recommendations: report.recommendations.clone(),
        claims: report.claims.clone(),
        questions,
        counts: super::count::counts(report),
    }
}

/// `results` with its `judgements` filled from its own samples (what `fsbench run` saves).
pub fn with_judgements(
    results: &crate::results::Results,
) -> crate::Result<crate::results::Results> {
    let report = Report::new(results);
    let mut out = results.clone();
    out.judgements = Some(
        serde_json::to_value(judgements(&report))
            .map_err(|e| crate::Error::Other(format!("cannot serialize judgements: {e}")))?,
    );
    Ok(out)
}

impl Exporter for Json {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let err =
            |e: serde_json::Error| crate::Error::Other(format!("cannot serialize results: {e}"));
        let durability = report
            .recommendations
            .iter()
            .find_map(|r| r.durability.as_ref());
        let mut results = report.results.clone();
        results.judgements = Some(serde_json::to_value(judgements(report)).map_err(err)?);
        let mut value = serde_json::to_value(&results).map_err(err)?;
        if let (Some(d), Some(o)) = (durability, value.as_object_mut()) {
            o.insert("durability".into(), serde_json::to_value(d).map_err(err)?);
        }
        let mut v = serde_json::to_vec_pretty(&value).map_err(err)?;
        v.push(b'\n');
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricKey;
    use crate::results::{Results, Sample, SetupInfo, WorkloadInfo};

    #[test]
    fn the_json_report_carries_every_judgement() {
        let mut r = Results::new();
        for s in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: s.into(),
                fs: s.into(),
                ..Default::default()
            });
        }
        r.workloads.push(WorkloadInfo {
            id: "untar".into(),
            kind: "untar".into(),
            ..Default::default()
        });
        // Both slow in round 2 (shared noise), ext4 about 1.45× faster every round.
        for (round, e, x) in [(1, 4.6, 6.7), (2, 6.0, 8.8), (3, 4.5, 6.5)] {
            for (setup, v) in [("ext4", e), ("xfs", x)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "untar".into(),
                    metric: MetricKey::parse("seconds"),
                    unit: "s".into(),
                    round,
                    value: v,
                });
            }
        }
        let bytes = Json.render(&Report::new(&r)).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let j = &v["judgements"];
        let row = j["headline"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["workload"] == "untar")
            .expect("the untar row");
        assert_eq!(row["leader"], "ext4");
        assert_eq!(row["marks"]["ext4"], "best");
        assert_eq!(row["marks"]["xfs"], "behind");
        let vs = &row["versus_leader"]["xfs"];
        assert_eq!(
            (vs["outcome"].as_str(), vs["rounds"].as_u64()),
            (Some("ahead"), Some(3))
        );
        assert!(vs["interval"][0].as_f64().unwrap() > 1.0, "{vs}");
        assert!(row["noise"].as_f64().unwrap() > 0.0 && row["rounds_for_10pct"].is_u64());
        let claim = j["claims"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "ext4-untar-faster-than-xfs")
            .expect("the untar claim");
        assert_eq!(claim["outcome"], "confirmed");
        assert!(
            claim["interval"].is_array() && claim["rounds"] == 3,
            "{claim}"
        );
        assert!(
            j["recommendations"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["winner"] == "ext4")
        );
        assert!(
            j["questions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|q| q["what"] == "headline seconds: ext4 vs xfs" && q["verdict"] == "leader")
        );
        // The run's questions counted: the untar comparison is one of them, decided.
        let c = &j["counts"];
        assert!(c["questions"].as_u64().unwrap() >= 1, "{c}");
        assert!(c["decided"].as_u64().unwrap() >= 1, "{c}");
        assert!(
            (c["expected_wrong_at_most"].as_f64().unwrap()
                - 0.1 * c["questions"].as_f64().unwrap())
            .abs()
                < 1e-9,
            "{c}"
        );
        // What `fsbench run` saves: the same judgements inside results.json.
        let saved = with_judgements(&r).unwrap();
        assert_eq!(
            saved.judgements.as_ref().unwrap()["headline"],
            j["headline"]
        );
    }
}
