//! The error a run's decisions carry together (`--error`, plan key `error`).
//!
//! - **per question** (the default): each decision is wrong with probability at most α; over
//!   a run's m questions up to α·m wrong decisions are expected.
//! - **per run**: familywise, by Bonferroni: each of the run's m questions is judged at α/m,
//!   so the chance that *any* decision of the run is wrong is at most α, whatever the
//!   dependence between the questions (and the expected number of wrong decisions at most α).
//!   Bonferroni rather than Holm, even at fixed rounds (docs/reports.md, "Why not Holm"):
//!   a question has three answers read from one interval, not one null, and Holm's control
//!   of wrong directions is proven only for independent statistics; made proper (the
//!   one-sided hypotheses each answer rejects, four per question) its first step is α/(4m)
//!   per side against Bonferroni's α/(2m); and it gives no interval with familywise coverage
//!   to print. Its cost is rounds: [`rounds_for_10pct`] shows it, and `fsbench plan` prints
//!   it.
//!
//! m is the run's questions as `report::count` counts them (each other setup against a
//! headline row's leader, each measured claim), fixed once after the minimum rounds
//! (`runner`), so a `--until-settled` run's looks all use one level.

use crate::results::{ErrorControl, ErrorRecord};

/// The level each question is judged at: α itself per question, α/m per run (m at least 1).
pub fn alpha_per_question(alpha: f64, record: Option<&ErrorRecord>) -> f64 {
    match record {
        Some(r) if r.control == ErrorControl::PerRun => alpha / r.questions.max(1) as f64,
        _ => alpha,
    }
}

/// Rounds that find a true 10 % difference 4 times in 5 at paired noise `sd` (log scale),
/// one look: per question (at α) and per run over `questions` questions (at α/m).
pub fn rounds_for_10pct(sd: f64, alpha: f64, questions: usize) -> (Option<usize>, Option<usize>) {
    let per_run = alpha_per_question(alpha, Some(&ErrorRecord::per_run(questions)));
    (
        super::paired::rounds_to_resolve(sd, alpha, 0.10),
        super::paired::rounds_to_resolve(sd, per_run, 0.10),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_run_shares_alpha_over_the_questions_and_costs_rounds() {
        assert_eq!(alpha_per_question(0.1, None), 0.1);
        let r = ErrorRecord::per_run(20);
        assert!((alpha_per_question(0.1, Some(&r)) - 0.005).abs() < 1e-12);
        // No question: the level is α itself, not a division by zero.
        assert_eq!(alpha_per_question(0.1, Some(&ErrorRecord::per_run(0))), 0.1);
        let per_q = ErrorRecord {
            control: ErrorControl::PerQuestion,
            ..ErrorRecord::per_run(20)
        };
        assert_eq!(alpha_per_question(0.1, Some(&per_q)), 0.1);
        // At 8 % paired noise a 10 % difference takes more rounds when 30 questions share α.
        let (q, run) = rounds_for_10pct(0.08, 0.1, 30);
        let (q, run) = (q.unwrap(), run.unwrap());
        assert!(run > q, "{q} {run}");
        assert_eq!(rounds_for_10pct(0.08, 0.1, 1), (Some(q), Some(q)));
        for w in ErrorControl::NAMES {
            assert_eq!(ErrorControl::parse(w).unwrap().word(), *w);
        }
        assert_eq!(ErrorControl::parse("fdr"), None);
    }
}
