//! Progress display: an indicatif bar (setup, workload, round, ETA) when stderr is a terminal,
//! plain timestamped lines otherwise (logs, CI, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Where progress goes.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    total_steps: usize,
    done_steps: usize,
}

impl Progress {
    /// `estimate` is the plan's ETA in seconds (the bar counts estimated seconds, so its ETA
    /// follows the plan's own weights rather than the number of steps).
    pub fn new(total_steps: usize, estimate: Duration) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(estimate.as_secs().max(1));
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} · {msg}",
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
        }
    }

    /// A step begins.
    pub fn start(&mut self, round: u32, rounds: u32, setup: &str, workload: &str) {
        let msg = format!("round {round}/{rounds} · {setup} · {workload}");
        match &self.bar {
            Some(b) => b.set_message(msg),
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
        if let Some(b) = &self.bar {
            b.inc(weight.round() as u64);
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
