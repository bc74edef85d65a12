//! Simulations that could fail: whole runs of 3 and 4 setups with the noise this VM shows
//! (12–36 % per round for a paired ratio, heavy tails, now and then a bad slot), judged by the
//! real code (`stats::summarize`, then the report model's marks, [`super::model::tables`]),
//! every decision checked against the truth the simulation put in.
//!
//! A question is the row's leader against another setup; its decision is wrong when it says
//! ahead, behind or equivalent and the truth is otherwise (equivalent: the true ratio at or
//! past the margin; ahead: the leader truly not better). The worst cases are built in: setups
//! truly equal (any "ahead" is wrong) and a setup exactly at the margin (any "=" is wrong).
//!
//! `bench/simulate-judgements.sh` prints the table (release build:
//! `cargo test --release --lib report::simulation -- --nocapture`).

use super::model::{self, Mark};
use crate::metrics::MetricKey;
use crate::results::{Results, Sample, SetupInfo, WorkloadInfo};
use crate::stats::paired::Outcome;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

/// Rows (independent I/O workloads) per simulated run.
const ROWS: usize = 8;
/// Rounds per run (the default's).
const ROUNDS: u32 = 5;
/// The margin of IOPS (the metric registry's).
const MARGIN: f64 = crate::metrics::registry::DEFAULT_MARGIN;
/// Chance that one setup's slot in a round is a bad one (its value × 0.6).
const BAD_SLOT: f64 = 0.04;

fn uniform(rng: &mut Xoshiro256PlusPlus) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let (u, v) = (uniform(rng), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Student t with 3 degrees of freedom scaled to unit variance: heavy tails.
fn t3(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let z = normal(rng);
    let chi2: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
    z / (chi2 / 3.0).sqrt() / 3f64.sqrt()
}

/// One scenario: each setup's true level (IOPS, higher is better) and the paired noise.
struct Scenario {
    name: &'static str,
    levels: &'static [f64],
    /// The standard deviation of a paired log ratio per round (each setup carries 1/√2 of it).
    paired_noise: f64,
}

/// One simulated run: `ROWS` workloads, each with the scenario's levels, shared round noise
/// (which pairing cancels), each slot's own heavy-tailed noise and an occasional bad slot.
fn run(s: &Scenario, rng: &mut Xoshiro256PlusPlus) -> Results {
    let mut r = Results::new();
    let names: Vec<String> = (0..s.levels.len()).map(|i| format!("fs{i}")).collect();
    for n in &names {
        r.setups.push(SetupInfo {
            name: n.clone(),
            fs: n.clone(),
            ..Default::default()
        });
    }
    let own = s.paired_noise / std::f64::consts::SQRT_2;
    for w in 0..ROWS {
        let id = format!("randread-{w}");
        r.workloads.push(WorkloadInfo {
            id: id.clone(),
            kind: "io".into(),
            params: serde_json::json!({"rw": "randread", "io": {"bs": 4096}}),
            fio_command: None,
        });
        for round in 1..=ROUNDS {
            let shared = 0.3 * normal(rng);
            for (i, level) in s.levels.iter().enumerate() {
                let bad = if uniform(rng) < BAD_SLOT {
                    0.6f64.ln()
                } else {
                    0.0
                };
                let v = level * (shared + own * t3(rng) + bad).exp();
                r.samples.push(Sample {
                    setup: names[i].clone(),
                    workload: id.clone(),
                    metric: MetricKey::parse("iops"),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                });
            }
        }
    }
    crate::stats::summarize(&mut r);
    r
}

/// Whether a decision contradicts the true ratio `truth` (leader over the other, > 1: the
/// leader is better). Open questions are never wrong.
fn wrong(outcome: Outcome, truth: f64) -> bool {
    let within = truth > 1.0 / (1.0 + MARGIN) + 1e-12 && truth < 1.0 + MARGIN - 1e-12;
    match outcome {
        Outcome::Ahead => truth <= 1.0,
        Outcome::Behind => truth >= 1.0,
        Outcome::Equivalent => !within,
        Outcome::NotSeparated => false,
    }
}

/// What one scenario's simulation found.
struct Tally {
    questions: usize,
    decided: usize,
    wrong: usize,
    runs: usize,
    runs_with_a_wrong: usize,
}

fn simulate(s: &Scenario, runs: usize, seed: u64) -> Tally {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut t = Tally {
        questions: 0,
        decided: 0,
        wrong: 0,
        runs,
        runs_with_a_wrong: 0,
    };
    for _ in 0..runs {
        let results = run(s, &mut rng);
        let mut wrong_here = 0;
        for row in model::tables(&results).iter().flat_map(|t| t.rows.iter()) {
            if row.metric != crate::metrics::registry::IOPS {
                continue;
            }
            let Some(lead) = model::leader(row) else {
                continue;
            };
            for (i, c) in row.cells.iter().enumerate() {
                let Some(j) = c.as_ref().and_then(|c| c.versus_leader) else {
                    continue;
                };
                let truth = s.levels[lead] / s.levels[i];
                t.questions += 1;
                t.decided += usize::from(j.outcome.decided());
                if wrong(j.outcome, truth) {
                    t.wrong += 1;
                    wrong_here += 1;
                }
                // The mark is read from the same judgement.
                let mark = c.as_ref().map(|c| c.mark).unwrap_or(Mark::None);
                debug_assert!(j.outcome != Outcome::Ahead || mark == Mark::Behind);
            }
        }
        t.runs_with_a_wrong += usize::from(wrong_here > 0);
    }
    t
}

/// The scenarios: 3 and 4 setups, truly equal setups and one exactly at the margin (the
/// worst cases), at 12 % and 36 % paired noise per round.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "3 setups, all equal",
        levels: &[1000.0, 1000.0, 1000.0],
        paired_noise: 0.12,
    },
    Scenario {
        name: "3 setups, all equal",
        levels: &[1000.0, 1000.0, 1000.0],
        paired_noise: 0.36,
    },
    Scenario {
        name: "3 setups, one at the margin (−9.1 %), one 40 % behind",
        levels: &[1000.0, 1000.0 / 1.1, 600.0],
        paired_noise: 0.12,
    },
    Scenario {
        name: "4 setups, all equal",
        levels: &[1000.0, 1000.0, 1000.0, 1000.0],
        paired_noise: 0.12,
    },
    Scenario {
        name: "4 setups, two equal, one at the margin, one 30 % behind",
        levels: &[1000.0, 1000.0, 1000.0 / 1.1, 700.0],
        paired_noise: 0.24,
    },
    Scenario {
        name: "4 setups, all equal",
        levels: &[1000.0, 1000.0, 1000.0, 1000.0],
        paired_noise: 0.36,
    },
];

/// The table in docs/reports.md ("Simulations"): per scenario, the questions, how many were
/// decided, the per-question error against α plus two simulation standard errors, and per run
/// the wrong decisions and the share of runs with at least one.
#[test]
fn judging_keeps_its_error_per_question_with_3_and_4_setups_and_heavy_tails() {
    let alpha = crate::stats::sequential::DEFAULT_ALPHA;
    let runs = if cfg!(debug_assertions) { 60 } else { 400 };
    println!(
        "| scenario | paired noise per round | questions | decided | wrong per question | limit (α + 2 s.e.) | wrong per run | runs with a wrong decision |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (k, s) in SCENARIOS.iter().enumerate() {
        let t = simulate(s, runs, 0x51_2026 + k as u64);
        let rate = t.wrong as f64 / t.questions as f64;
        let limit = alpha + 2.0 * (alpha * (1.0 - alpha) / t.questions as f64).sqrt();
        println!(
            "| {} | {:.0} % | {} | {:.0} % | {:.1} % | {:.1} % | {:.2} | {:.0} % |",
            s.name,
            s.paired_noise * 100.0,
            t.questions,
            100.0 * t.decided as f64 / t.questions as f64,
            100.0 * rate,
            100.0 * limit,
            t.wrong as f64 / t.runs as f64,
            100.0 * t.runs_with_a_wrong as f64 / t.runs as f64
        );
        assert!(
            rate <= limit,
            "{} at {:.0} %: {:.1} % wrong per question, limit {:.1} %",
            s.name,
            s.paired_noise * 100.0,
            100.0 * rate,
            100.0 * limit
        );
    }
}
