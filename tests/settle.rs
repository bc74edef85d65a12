//! `fsbench run --until-settled --error per-run` on a real loop image: after the minimum
//! rounds, extra interleaved rounds of the open questions only (their setups and workloads),
//! by steps as the minimum rounds ran, every one journaled and kept, and the results say how
//! many rounds ran, which setups each extra round ran, why the run stopped and the per-run
//! error control it judged under; and `--error per-run` in a run of fixed rounds, whose every
//! judgement is read at α/m.

use serde_json::Value;
use std::process::Command;

mod common;

/// A tiny real run of ext4 and XFS on loop images under a scratch directory of its own, with
/// `extra` flags; `None` where the test's prerequisites are missing (it is skipped).
fn tiny_run(test: &str, extra: &[&str]) -> Option<(tempfile::TempDir, std::process::Output)> {
    if !common::privileged(test)
        .loop_devices()
        .tools(&["mkfs.ext4", "mkfs.xfs"])
        .ok()
    {
        return None;
    }
    let scratch = tempfile::tempdir().unwrap();
    let o = common::bin()
        .args(["run", "--yes", "--fs", "ext4,xfs", "--image-size", "512M"])
        .args(["--file-size", "16M", "--runtime", "1s", "--ramp", "0s"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "10s"])
        .args(extra)
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(scratch.path().join("out"))
        .output()
        .unwrap();
    Some((scratch, o))
}

/// Nothing of the run under `scratch` is left attached.
fn assert_released(scratch: &tempfile::TempDir) {
    let losetup = Command::new("losetup").arg("-a").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&losetup.stdout).contains(scratch.path().to_str().unwrap()),
        "a loop device of this test is still attached"
    );
}

#[test]
fn until_settled_adds_rounds_of_the_open_questions_and_says_why_it_stopped() {
    let Some((scratch, o)) = tiny_run(
        "settle::until_settled_adds_rounds_of_the_open_questions",
        &[
            "--only",
            "untar,randread",
            "--rounds",
            "2",
            "--until-settled",
            "--error",
            "per-run",
            "--max-rounds",
            "3",
            "--budget",
            "20m",
            "--corpus-copies",
            "1",
            "--corpus-scale",
            "0.02",
        ],
    ) else {
        return;
    };
    let out = scratch.path().join("out");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // By steps, extra rounds included, under a per-run control over the run's questions.
    let plan: Value =
        serde_json::from_slice(&std::fs::read(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["plan"]["by_step"], true, "{}", plan["plan"]);
    assert_eq!(plan["plan"]["error"], "per-run", "{}", plan["plan"]);
    let e = &r["error"];
    assert_eq!(e["control"], "per-run", "{e}");
    assert!(e["questions"].as_u64().unwrap() >= 1, "{e}");
    let s = &r["settle"];
    assert_eq!(s["min_rounds"], 2, "{s}");
    assert_eq!(s["max_rounds"], 3, "{s}");
    let stop = s["stop"].as_str().unwrap();
    let rounds_run = s["rounds_run"].as_u64().unwrap();
    let extra = s["extra_rounds"].as_array().unwrap();
    let max_round = |w: &str| {
        r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["workload"] == w)
            .map(|x| x["round"].as_u64().unwrap())
            .max()
            .unwrap()
    };
    match stop {
        // Two rounds of a 2-setup comparison on a shared VM rarely settle; if they did, no
        // extra round ran.
        "settled" if rounds_run == 2 => assert!(extra.is_empty(), "{s}"),
        "settled" | "max-rounds" => {
            assert_eq!(rounds_run, 3, "{s}");
            assert_eq!(extra.len(), 1, "{s}");
            let ran: Vec<&str> = extra[0]["workloads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect();
            // What was open ran again, with what it needs (randread: layout).
            for w in &ran {
                if *w == "untar" || *w == "randread" {
                    assert_eq!(max_round(w), 3, "{w} in {s}");
                }
            }
            if ran.contains(&"randread") {
                assert!(ran.contains(&"layout"), "{ran:?}");
            }
            assert!(err.contains("round 3 (until settled)"), "{err}");
            if stop == "max-rounds" {
                assert!(!s["still_open"].as_array().unwrap().is_empty(), "{s}");
            }
        }
        other => panic!("unexpected stop {other}: {s}"),
    }
    assert!(err.contains("until settled: stopped after round"), "{err}");
    // An extra round ran only the setups its open questions compare, and the records say so:
    // a setup it names has samples in that round, one it leaves out has none (absent, not 0).
    let mut setup_rounds = 2 * 2;
    for x in extra {
        let round = x["round"].as_u64().unwrap();
        let ran: Vec<&str> = x["setups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(!ran.is_empty(), "{x}");
        setup_rounds += ran.len() as u64;
        for setup in ["ext4", "xfs"] {
            let has = r["samples"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["setup"] == setup && x["round"].as_u64() == Some(round));
            assert_eq!(has, ran.contains(&setup), "{setup} in round {round}: {x}");
        }
    }
    // Every extra round was journaled like the minimum ones, and ran by steps: each of its
    // setup-rounds started before any of them was done.
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).unwrap();
    for x in extra {
        let round = x["round"].as_u64().unwrap();
        let events: Vec<&str> = journal
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| {
                let (kind, body) = v.as_object()?.iter().next()?;
                (body["round"].as_u64() == Some(round)
                    && (kind == "round_start" || kind == "round_done"))
                    .then(|| {
                        if kind == "round_start" {
                            "start"
                        } else {
                            "done"
                        }
                    })
            })
            .collect();
        let setups = x["setups"].as_array().unwrap().len();
        assert_eq!(
            events,
            [vec!["start"; setups], vec!["done"; setups]].concat(),
            "round {round}: {journal}"
        );
    }
    assert_eq!(
        journal.matches("round_done").count() as u64,
        setup_rounds,
        "{journal}"
    );
    // The report says it.
    let rep = common::bin()
        .arg("report")
        .arg(out.join("results.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&rep.stdout);
    assert!(text.contains("Until settled: 2 to 3 rounds"), "{text}");
    assert!(text.contains("Error: per run (Bonferroni"), "{text}");
    assert!(
        text.contains(&format!("Stopped after round {rounds_run}")),
        "{text}"
    );
    assert_released(&scratch);
}

/// Whitespace folded to single spaces, so a sentence the terminal wrapped still matches.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The report's JSON judgements of `results` (a results.json path).
fn judgements(results: &std::path::Path) -> Value {
    let o = common::bin()
        .args(["report", "--format", "json"])
        .arg(results)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["judgements"].clone()
}

/// One headline judgement of a row's leader against another setup.
#[derive(Debug)]
struct Judged {
    row: String,
    other: String,
    outcome: String,
    alpha: f64,
    interval: Option<(f64, f64)>,
}

/// Every headline judgement, in the report's order.
fn versus_leader(j: &Value) -> Vec<Judged> {
    let mut out = Vec::new();
    for row in j["headline"].as_array().unwrap() {
        for (other, v) in row["versus_leader"].as_object().unwrap() {
            out.push(Judged {
                row: row["label"].as_str().unwrap().to_string(),
                other: other.clone(),
                outcome: v["outcome"].as_str().unwrap().to_string(),
                alpha: v["alpha"].as_f64().unwrap(),
                interval: v["interval"]
                    .as_array()
                    .map(|a| (a[0].as_f64().unwrap(), a[1].as_f64().unwrap())),
            });
        }
    }
    out
}

#[test]
fn per_run_error_in_a_run_of_fixed_rounds_judges_every_question_at_alpha_over_m() {
    let Some((scratch, o)) = tiny_run(
        "settle::per_run_error_in_a_run_of_fixed_rounds",
        &["--only", "randread", "--rounds", "2", "--error", "per-run"],
    ) else {
        return;
    };
    let out = scratch.path().join("out");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let path = out.join("results.json");
    let r: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // Fixed rounds, per run: the record names the control, its method and the m it shares α over.
    assert!(r["settle"].is_null(), "{}", r["settle"]);
    let e = &r["error"];
    assert_eq!(e["control"], "per-run", "{e}");
    assert_eq!(e["method"], "Bonferroni (familywise)", "{e}");
    let m = e["questions"].as_u64().unwrap();
    assert!(m >= 2, "randread's IOPS and p99 rows at least: {e}");
    let per_q = 0.10 / m as f64;
    let j = judgements(&path);
    let c = &j["counts"];
    assert_eq!(c["questions"].as_u64(), Some(m), "{c}");
    assert_eq!(c["error_control"], "per-run", "{c}");
    assert!((c["alpha"].as_f64().unwrap() - per_q).abs() < 1e-12, "{c}");
    assert!(
        (c["alpha_run"].as_f64().unwrap() - 0.10).abs() < 1e-12,
        "{c}"
    );
    // Every judged row at α/m (two setups: the leader's level is α itself, so α/m), every
    // measured claim's interval at 1 − α/m.
    let run = versus_leader(&j);
    assert!(!run.is_empty(), "{j}");
    for x in &run {
        assert!((x.alpha - per_q).abs() < 1e-12, "{x:?}: α not {per_q}");
    }
    for claim in j["claims"].as_array().unwrap() {
        if !claim["interval"].is_null() {
            let cov = claim["coverage"].as_f64().unwrap();
            assert!((cov - (1.0 - per_q)).abs() < 1e-12, "{claim}");
        }
    }
    // The terminal and the Markdown say the per-run line.
    let line = format!(
        "Error: per run (Bonferroni (familywise)), the chance that any of this run's {m} \
         decisions is wrong is at most 10 %, each question judged at {:.2} % (α/{m}).",
        per_q * 100.0
    );
    let terminal = format!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert!(folded(&terminal).contains(&line), "{line}\n{terminal}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(folded(&md).contains(&line), "{line}\n{md}");
    // The same rounds judged per question: the level is α, each interval narrower, and every
    // question decided per run is decided per question too (per run only ever asks more).
    let mut plain = r.clone();
    plain.as_object_mut().unwrap().remove("error");
    let per_question = scratch.path().join("per-question.json");
    std::fs::write(&per_question, serde_json::to_vec(&plain).unwrap()).unwrap();
    let q = versus_leader(&judgements(&per_question));
    assert_eq!(q.len(), run.len());
    for (a, b) in run.iter().zip(&q) {
        assert_eq!((&a.row, &a.other), (&b.row, &b.other));
        assert!((b.alpha - 0.10).abs() < 1e-12, "{b:?}");
        if let (Some((lo, hi)), Some((qlo, qhi))) = (a.interval, b.interval) {
            assert!(lo <= qlo && qhi <= hi, "per run {a:?} per question {b:?}");
        }
        if a.outcome != "not_separated" {
            assert_ne!(
                b.outcome, "not_separated",
                "decided per run only: {a:?} {b:?}"
            );
        }
    }
    assert_released(&scratch);
}
