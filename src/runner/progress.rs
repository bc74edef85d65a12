//! Progress display: an indicatif bar (setup, workload, round, ETA) when stderr is a terminal,
//! plain timestamped lines otherwise (logs, CI, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Steps setup-round `round` prints: the mkfs step when the target is formatted, then every
/// workload that is a step of that round (not `mkfs` itself, which is that step; probes in
/// the first round only), then a redundant layout's round-1 phase (scrub, fail a device,
/// each degraded rerun, rebuild).
pub fn steps_per_round(
    plan: &crate::plan::Plan,
    formats: bool,
    skipped: &std::collections::BTreeSet<String>,
    setup: &str,
    round: u32,
) -> usize {
    usize::from(formats)
        + array_steps(plan, formats, skipped, setup, round)
        + plan
            .workloads
            .iter()
            .filter(|w| {
                crate::workload::registry::step_in_round(w, setup, round)
                    && !skipped.contains(&w.id)
            })
            .count()
}

/// The steps of setup `setup`'s redundancy phase in `round` (0 when it has none).
pub fn array_steps(
    plan: &crate::plan::Plan,
    formats: bool,
    skipped: &std::collections::BTreeSet<String>,
    setup: &str,
    round: u32,
) -> usize {
    use crate::plan::eta;
    let Some(st) = plan.setups.iter().find(|s| s.name == setup) else {
        return 0;
    };
    if eta::array_phase(plan, st, round, formats).is_none() {
        return 0;
    }
    eta::ArrayPhase::STEPS
        + eta::degraded_reruns(plan, st, round, formats)
            .filter(|w| !skipped.contains(&w.id))
            .count()
}

/// Where progress goes.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    total_steps: usize,
    done_steps: usize,
    estimate: f64,
    done_weight: f64,
    /// The step and time plain output last printed a [`Progress::percent`] line for.
    last_percent_line: std::sync::Mutex<Option<(String, Instant)>>,
}

impl Progress {
    /// `estimate` is the plan's ETA in seconds (the bar counts estimated seconds, so its ETA
    /// follows the plan's own weights rather than the number of steps).
    pub fn new(total_steps: usize, estimate: Duration) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(estimate.as_secs().max(1));
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {prefix} · {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Progress {
            bar,
            start: Instant::now(),
            total_steps,
            done_steps: 0,
            estimate: estimate.as_secs_f64(),
            done_weight: 0.0,
            last_percent_line: std::sync::Mutex::new(None),
        }
    }

    /// Remaining time: the plan's estimate at first, then scaled by how fast the run has
    /// actually gone so far (indicatif's own ETA reads 0 s until the first step ends).
    fn eta(&self) -> String {
        let elapsed = self.start.elapsed().as_secs_f64();
        let left = if self.done_weight > 0.0 {
            elapsed * (self.estimate - self.done_weight).max(0.0) / self.done_weight
        } else {
            (self.estimate - elapsed).max(0.0)
        };
        let s = left.round() as u64;
        format!("ETA {}m {:02}s", s / 60, s % 60)
    }

    /// A step begins.
    pub fn start(&mut self, round: u32, rounds: u32, setup: &str, workload: &str) {
        let msg = if round == 0 {
            format!("warm-up (discarded) · {setup} · {workload}")
        } else if round > rounds {
            // An extra round of --until-settled: past the minimum, not "5/3".
            format!("round {round} (until settled) · {setup} · {workload}")
        } else {
            format!("round {round}/{rounds} · {setup} · {workload}")
        };
        match &self.bar {
            Some(b) => {
                b.set_prefix(self.eta());
                b.set_message(msg)
            }
            None => eprintln!(
                "[{:>5.0}s] [{}/{}] {msg}",
                self.start.elapsed().as_secs_f64(),
                self.done_steps + 1,
                self.total_steps
            ),
        }
    }

    /// A step ended; `weight` is its estimated seconds.
    pub fn finish(&mut self, weight: f64) {
        self.done_steps += 1;
        self.done_weight += weight;
        if let Some(b) = &self.bar {
            b.inc(weight.round() as u64);
            b.set_prefix(self.eta());
        }
    }

    /// Steps that will not be printed (a setup-round the journal already has, or the rest of
    /// a setup-round whose mkfs failed) count as done, so the count still ends at N/N.
    pub fn skip(&mut self, steps: usize, weight: f64) {
        self.done_steps += steps;
        self.done_weight += weight;
        if let Some(b) = &self.bar {
            b.inc(weight.round() as u64);
            b.set_prefix(self.eta());
        }
    }

    /// More steps than planned (an extra round of `--until-settled`), `weight` estimated
    /// seconds in all.
    pub fn extend(&mut self, steps: usize, weight: f64) {
        self.total_steps += steps;
        self.estimate += weight;
        if let Some(b) = &self.bar {
            b.inc_length(weight.round() as u64);
        }
    }

    /// Change what the current step says it is doing.
    pub fn doing(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// A long step's own progress, `pct` percent as its tool reports it (a scrub, a
    /// rebuild): on the bar's message; on plain output its first figure, then a line at most
    /// every 10 s.
    pub fn percent(&self, what: &str, pct: f64) {
        let msg = format!("{what} {pct:.1} %");
        match &self.bar {
            Some(b) => b.set_message(msg),
            None => {
                let mut last = self
                    .last_percent_line
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // The first figure of each step, then one every 10 s.
                let due = last
                    .as_ref()
                    .is_none_or(|(w, t)| w != what || t.elapsed() >= Duration::from_secs(10));
                if due {
                    *last = Some((what.to_string(), Instant::now()));
                    eprintln!("[{:>5.0}s] {msg}", self.start.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// A line for the user that must not be overwritten by the bar.
    pub fn note(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    /// Remove the bar.
    pub fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}
