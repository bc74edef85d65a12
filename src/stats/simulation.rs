//! The error statement, tested: simulated runs judged by the product's own code
//! ([`super::paired::judge`], the statistic behind every mark, verdict line and headline
//! question). `cargo test --lib simulation -- --nocapture` prints the table quoted in
//! docs/reports.md ("How often a judgement is wrong"); the test fails when a per-question
//! error rate exceeds the stated α (with Monte-Carlo slack). Fixed seed, bounded trials.
//!
//! Model: a setup's log value in a round is its true level + noise the round shares with every
//! setup + its own noise; the shared part cancels in the paired ratio, so only the per-setup
//! noise (8 %, this VM's measured size after pairing) is drawn. "Wrong" means: ahead or behind
//! against the true order, or equivalent when the truth lies at or beyond the margin.

use super::paired::{Outcome, judge};
use super::sequential::{DEFAULT_ALPHA, Rule};
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

type Noise = fn(&mut Xoshiro256PlusPlus) -> f64;

fn uniform(rng: &mut Xoshiro256PlusPlus) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let (u, v) = (uniform(rng), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Student t with 3 degrees of freedom, scaled to unit variance (heavy tails).
fn t3(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let z = normal(rng);
    let chi2: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
    z / (chi2 / 3.0).sqrt() / 3f64.sqrt()
}

const MARGIN: f64 = 0.10;
const CV: f64 = 0.08;

/// Whether `o` (of the leader against the other) is wrong when the true ratio is `truth`.
fn wrong(o: Outcome, truth: f64) -> bool {
    match o {
        Outcome::Ahead => truth <= 1.0,
        Outcome::Behind => truth >= 1.0,
        Outcome::Equivalent => truth >= 1.0 + MARGIN || truth <= 1.0 / (1.0 + MARGIN),
        Outcome::NotSeparated => false,
    }
}

/// The designs simulated: fixed rounds (one look) and `--until-settled` rules.
fn designs() -> [(&'static str, Rule); 4] {
    let fixed = |n| Rule {
        alpha: DEFAULT_ALPHA,
        min_rounds: n,
        max_rounds: n,
    };
    [
        ("3 rounds", fixed(3)),
        ("5 rounds", fixed(5)),
        ("until settled 3–6", Rule::new(3, 6)),
        ("until settled 3–15", Rule::new(3, 15)),
    ]
}

/// Per-setup log values over `rounds` rounds for setups with true levels `levels`.
fn draw(
    levels: &[f64],
    rounds: usize,
    noise: Noise,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<Vec<f64>> {
    levels
        .iter()
        .map(|l| (0..rounds).map(|_| l.ln() + CV * noise(rng)).collect())
        .collect()
}

/// Outcome of one run's questions: per question (leader vs other) its outcome and truth; the
/// rounds the run took. The leader is re-picked at every look by the geometric mean of its
/// rounds, and compared at [`super::paired::leader_alpha`], as the report does.
fn one_run(
    levels: &[f64],
    rule: &Rule,
    noise: Noise,
    rng: &mut Xoshiro256PlusPlus,
) -> (Vec<(Outcome, f64)>, usize) {
    let logs = draw(levels, rule.max_rounds, noise, rng);
    let rule = &Rule {
        alpha: super::paired::leader_alpha(rule.alpha, levels.len()),
        ..*rule
    };
    let mut last = (Vec::new(), rule.max_rounds);
    for n in rule.min_rounds..=rule.max_rounds {
        let med = |s: usize| super::descriptive::mean(&logs[s][..n]);
        let leader = (0..levels.len())
            .max_by(|a, b| med(*a).total_cmp(&med(*b)))
            .expect("setups");
        let answers: Vec<(Outcome, f64)> = (0..levels.len())
            .filter(|&s| s != leader)
            .map(|s| {
                let ratios: Vec<f64> = (0..n)
                    .map(|r| (logs[leader][r] - logs[s][r]).exp())
                    .collect();
                // The product's judgement of the rounds so far: its first deciding look
                // among them, α spent over the rule's looks.
                (
                    judge(&ratios, rule, MARGIN).outcome,
                    levels[leader] / levels[s],
                )
            })
            .collect();
        let done = answers.iter().all(|(o, _)| o.decided());
        last = (answers, n);
        if done {
            break;
        }
    }
    last
}

struct Row {
    decided: f64,
    wrong_decided: f64,
    wrong_all: f64,
    runs_with_a_wrong: f64,
    rounds: f64,
}

fn simulate(levels: &[f64], rule: &Rule, noise: Noise, trials: usize) -> Row {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x40_2026);
    let (mut q, mut decided, mut wrong_n, mut runs_wrong, mut rounds) = (0, 0, 0, 0, 0);
    for _ in 0..trials {
        let (answers, n) = one_run(levels, rule, noise, &mut rng);
        rounds += n;
        let mut any = false;
        for (o, truth) in answers {
            q += 1;
            decided += usize::from(o.decided());
            if wrong(o, truth) {
                wrong_n += 1;
                any = true;
            }
        }
        runs_wrong += usize::from(any);
    }
    let f = |x: usize, of: usize| x as f64 / of.max(1) as f64;
    Row {
        decided: f(decided, q),
        wrong_decided: f(wrong_n, decided),
        wrong_all: f(wrong_n, q),
        runs_with_a_wrong: f(runs_wrong, trials),
        rounds: f(rounds, trials),
    }
}

#[test]
fn the_stated_error_rate_holds_per_question() {
    let trials = 1000;
    let cases: [(&str, &[f64], &str, Noise); 8] = [
        ("true tie, 2 setups", &[1.0, 1.0], "log-normal", normal),
        (
            "5 % apart (inside ±10 %)",
            &[1.05, 1.0],
            "log-normal",
            normal,
        ),
        (
            "10 % apart (on the margin)",
            &[1.10, 1.0],
            "log-normal",
            normal,
        ),
        ("25 % apart", &[1.25, 1.0], "log-normal", normal),
        ("true tie, 2 setups", &[1.0, 1.0], "t(3)", t3),
        ("25 % apart", &[1.25, 1.0], "t(3)", t3),
        (
            "4 setups tied, leader re-picked",
            &[1.0, 1.0, 1.0, 1.0],
            "log-normal",
            normal,
        ),
        (
            "4 setups: 1.25, 1.0, 1.0, 0.6",
            &[1.25, 1.0, 1.0, 0.6],
            "log-normal",
            normal,
        ),
    ];
    println!(
        "| design | truth | noise (8 % per setup) | decided | wrong among decided | wrong among all | runs with a wrong answer | mean rounds |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (design, rule) in designs() {
        for (what, levels, noise_name, noise) in cases {
            let r = simulate(levels, &rule, noise, trials);
            println!(
                "| {design} | {what} | {noise_name} | {:.0} % | {:.1} % | {:.1} % | {:.1} % | {:.1} |",
                r.decided * 100.0,
                r.wrong_decided * 100.0,
                r.wrong_all * 100.0,
                r.runs_with_a_wrong * 100.0,
                r.rounds
            );
            // The guarantee is per question with the leader fixed: two setups. Slack: 1000
            // trials give a standard error of 1 % at 10 %.
            if levels.len() == 2 {
                assert!(
                    r.wrong_all <= DEFAULT_ALPHA + 0.03,
                    "{design}, {what}, {noise_name}: {:.3} wrong",
                    r.wrong_all
                );
            }
        }
    }
    // Several questions in one run: 25 independent true ties at 3 rounds, as a default run
    // asks about 25. Each is wrong at most α, so about 25·α answers per run can be wrong; the
    // guarantee is per question, not per run.
    let rule = designs()[0].1;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(25);
    let (mut wrong_n, mut runs_wrong) = (0usize, 0usize);
    for _ in 0..trials / 4 {
        let mut any = false;
        for _ in 0..25 {
            let (answers, _) = one_run(&[1.0, 1.0], &rule, normal, &mut rng);
            let w = answers.iter().filter(|(o, t)| wrong(*o, *t)).count();
            wrong_n += w;
            any |= w > 0;
        }
        runs_wrong += usize::from(any);
    }
    let per_q = wrong_n as f64 / (trials / 4 * 25) as f64;
    let per_run = runs_wrong as f64 / (trials / 4) as f64;
    println!(
        "\n25 true ties per run, 3 rounds: {:.1} % of questions wrong, {:.0} % of runs with at least one wrong answer",
        per_q * 100.0,
        per_run * 100.0
    );
    assert!(per_q <= DEFAULT_ALPHA + 0.03, "{per_q}");
}

/// One run of three setups whose jobs follow the disk's slow patches: per slot a patch
/// `u` (σ 15 %) that the job feels at `track` times and the reference in full, the job's own
/// 8 % and the reference's own 5 %; `ref_shift` makes setup 2's reference slower by that
/// (a setup that moves the disk beside it). Judged as the product does: the grid fitted
/// ([`super::adjusted::fit_grid`]), the pair adjusted where the checks allow
/// ([`super::adjusted::adjust`]), else plain; one look at `rounds`.
fn one_adjusted_run(
    levels: [f64; 3],
    track: f64,
    ref_shift: f64,
    rounds: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> (Outcome, Outcome, bool) {
    let mut y = vec![vec![0.0; rounds]; 3];
    let mut x = vec![vec![0.0; rounds]; 3];
    for s in 0..3 {
        for r in 0..rounds {
            let u = 0.15 * normal(rng);
            x[s][r] = u + 0.05 * normal(rng) + if s == 1 { ref_shift } else { 0.0 };
            y[s][r] = levels[s].ln() + track * u + CV * normal(rng);
        }
    }
    let d: Vec<f64> = (0..rounds).map(|r| y[0][r] - y[1][r]).collect();
    let p: Vec<f64> = (0..rounds).map(|r| x[0][r] - x[1][r]).collect();
    let rule = Rule {
        alpha: DEFAULT_ALPHA,
        min_rounds: rounds,
        max_rounds: rounds,
    };
    let exp = |v: &[f64]| v.iter().map(|l| l.exp()).collect::<Vec<f64>>();
    let plain = judge(&exp(&d), &rule, MARGIN).outcome;
    let adjusted = super::adjusted::fit_grid(&y, &x)
        .ok()
        .and_then(|fit| super::adjusted::adjust(&d, &p, &fit, DEFAULT_ALPHA));
    match adjusted {
        Some(e) => (plain, judge(&exp(&e), &rule, MARGIN).outcome, true),
        None => (plain, plain, false),
    }
}

#[test]
fn the_disk_adjusted_ratio_keeps_the_error_rate_and_decides_more() {
    let trials = 4000;
    let cases: [(&str, [f64; 3], f64, f64); 6] = [
        ("true tie, tracks the disk", [1.0, 1.0, 0.8], 0.8, 0.0),
        ("10 % apart, tracks", [1.10, 1.0, 0.8], 0.8, 0.0),
        ("25 % apart, tracks", [1.25, 1.0, 0.8], 0.8, 0.0),
        ("true tie, does not track", [1.0, 1.0, 0.8], 0.0, 0.0),
        (
            "true tie, reference moved 5 % by a setup",
            [1.0, 1.0, 0.8],
            0.8,
            -0.05,
        ),
        (
            "true tie, reference moved 20 % by a setup",
            [1.0, 1.0, 0.8],
            0.8,
            -0.2,
        ),
    ];
    println!(
        "| truth (3 setups, 5 rounds) | adjusted | plain: decided | plain: wrong | one statistic: decided | one statistic: wrong |"
    );
    println!("|---|---|---|---|---|---|");
    for (what, levels, track, shift) in cases {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x40_ad);
        let (mut pd, mut pw, mut ad, mut aw, mut used) = (0, 0, 0, 0, 0);
        let truth = levels[0] / levels[1];
        for _ in 0..trials {
            let (plain, one, adj) = one_adjusted_run(levels, track, shift, 5, &mut rng);
            pd += usize::from(plain.decided());
            pw += usize::from(wrong(plain, truth));
            ad += usize::from(one.decided());
            aw += usize::from(wrong(one, truth));
            used += usize::from(adj);
        }
        let pct = |n: usize| n as f64 * 100.0 / trials as f64;
        println!(
            "| {what} | {:.0} % | {:.0} % | {:.1} % | {:.0} % | {:.1} % |",
            pct(used),
            pct(pd),
            pct(pw),
            pct(ad),
            pct(aw)
        );
        // The guarantee per question holds with the adjustment chosen from the data, where the
        // setup does not move the reference (the premise: docs/reports.md).
        assert!(
            shift != 0.0 || aw as f64 / trials as f64 <= DEFAULT_ALPHA + 0.03,
            "{what}: {aw} wrong of {trials}"
        );
        if track > 0.0 && shift == 0.0 && truth > 1.2 {
            assert!(ad > pd, "{what}: the adjustment decided {ad}, plain {pd}");
        }
    }
}

/// One `--until-settled` run of three setups by setup, with the disk read before each job
/// (as [`one_adjusted_run`], the job's own noise drawn by `noise`), looked at after every round
/// from 3 to `last` under `rule`: the first look that decides, judged as the product judges
/// each look (`adjusted::Ratios::at`: the slope fitted on the rounds up to it, the pair
/// adjusted where the checks allow, else plain), and as a report would judge it that read a
/// prefix of ratios adjusted with the whole run's slope (what each look did not see).
fn one_settled_adjusted_run(
    levels: [f64; 3],
    noise: Noise,
    rule: &Rule,
    rng: &mut Xoshiro256PlusPlus,
) -> (Outcome, Outcome) {
    let n = rule.max_rounds;
    let mut y = vec![vec![0.0; n]; 3];
    let mut x = vec![vec![0.0; n]; 3];
    for s in 0..3 {
        for r in 0..n {
            let u = 0.15 * normal(rng);
            x[s][r] = u + 0.05 * normal(rng);
            y[s][r] = levels[s].ln() + 0.8 * u + CV * noise(rng);
        }
    }
    let exp = |v: &[f64]| v.iter().map(|l| l.exp()).collect::<Vec<f64>>();
    // The pair's ratios as judged on rounds 1..=k, the slope fitted on rounds 1..=fit_k.
    let ratios = |k: usize, fit_k: usize| {
        let cut = |g: &[Vec<f64>]| g.iter().map(|v| v[..fit_k].to_vec()).collect::<Vec<_>>();
        let d: Vec<f64> = (0..k).map(|r| y[0][r] - y[1][r]).collect();
        let p: Vec<f64> = (0..k).map(|r| x[0][r] - x[1][r]).collect();
        let adjusted = super::adjusted::fit_grid(&cut(&y), &cut(&x))
            .ok()
            .and_then(|fit| super::adjusted::adjust(&d, &p, &fit, DEFAULT_ALPHA));
        exp(&adjusted.unwrap_or(d))
    };
    let first = |at: &dyn Fn(usize) -> Vec<f64>| {
        (rule.min_rounds..=n)
            .map(|k| super::paired::look(&at(k), rule, MARGIN).0)
            .find(|o| o.decided())
            .unwrap_or(Outcome::NotSeparated)
    };
    // The whole run's adjusted ratios (a prefix of them at each look).
    let whole = ratios(n, n);
    (first(&|k| ratios(k, k)), first(&|k| whole[..k].to_vec()))
}

#[test]
fn the_disk_adjusted_ratio_keeps_its_error_rate_over_sequential_looks() {
    let trials = 2000;
    let rule = Rule::new(3, 8);
    let cases: [(&str, [f64; 3], &str, Noise, bool); 4] = [
        ("true tie", [1.0, 1.0, 0.8], "log-normal", normal, true),
        ("true tie", [1.0, 1.0, 0.8], "t(3), heavy tails", t3, true),
        (
            "at the margin (1.1)",
            [1.1, 1.0, 0.8],
            "log-normal",
            normal,
            true,
        ),
        ("25 % apart", [1.25, 1.0, 0.8], "log-normal", normal, false),
    ];
    // One standard error of the simulation at α.
    let se = (DEFAULT_ALPHA * (1.0 - DEFAULT_ALPHA) / trials as f64).sqrt();
    println!(
        "| truth (3 setups, by setup, looks 3–8) | job's own noise | each look on its rounds: decided | wrong | limit (α + 2 s.e.) | a prefix of the whole run's adjustment: decided | wrong |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (what, levels, noise_name, noise, check) in cases {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5e_771e);
        let truth = levels[0] / levels[1];
        let (mut ld, mut lw, mut pd, mut pw) = (0, 0, 0, 0);
        for _ in 0..trials {
            let (looks, prefix) = one_settled_adjusted_run(levels, noise, &rule, &mut rng);
            ld += usize::from(looks.decided());
            lw += usize::from(wrong(looks, truth));
            pd += usize::from(prefix.decided());
            pw += usize::from(wrong(prefix, truth));
        }
        let pct = |n: usize| n as f64 * 100.0 / trials as f64;
        let limit = DEFAULT_ALPHA + 2.0 * se;
        println!(
            "| {what} | {noise_name} | {:.0} % | {:.1} % | {:.1} % | {:.0} % | {:.1} % |",
            pct(ld),
            pct(lw),
            limit * 100.0,
            pct(pd),
            pct(pw)
        );
        if check {
            assert!(
                lw as f64 / trials as f64 <= limit,
                "{what}, {noise_name}: {lw} wrong of {trials}"
            );
        } else {
            assert!(
                ld as f64 / trials as f64 > 0.5,
                "{what}: decided {ld} of {trials}"
            );
        }
    }
}
