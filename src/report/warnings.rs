//! Warnings a reader must see before trusting the numbers: recorded ones (durability weakened,
//! device never quiet…), failed steps, zfs-fuse labelling, too few rounds, and noisy hosts.

use crate::metrics;
use crate::results::{Results, Warning};
use crate::stats::verdict;

/// A recorded warning or note as one line: `setup, round N: message`.
fn line(x: &Warning) -> String {
    let mut prefix = String::new();
    if !x.setup.is_empty() {
        prefix.push_str(&x.setup);
        if x.round > 0 {
            prefix.push_str(&format!(", round {}", x.round));
        }
        prefix.push_str(": ");
    }
    format!("{prefix}{}", x.message)
}

/// The workloads' notes, one line each.
pub fn notes(results: &Results) -> Vec<String> {
    results.notes.iter().map(line).collect()
}

/// Every warning for a results file, most important first, one sentence each.
pub fn collect(results: &Results) -> Vec<String> {
    let mut w = Vec::new();
    if results.partial {
        w.push("This run is partial (interrupted or still running): some setups or rounds are missing.".to_string());
    }
    w.extend(results.warnings.iter().map(line));
    for s in &results.setups {
        for m in &s.warnings {
            let line = format!("{}: {m}", s.name);
            if !w.contains(&line) {
                w.push(line);
            }
        }
        if let Some(si) = s.substitute() {
            w.push(format!(
                "{}: numbers come from {} ({}), not {}; do not compare them with published \
                 {} figures.",
                s.name, si.implementation, si.what, si.instead_of, si.published
            ));
        }
    }
    if !results.failures.is_empty() {
        let list: Vec<String> = results
            .failures
            .iter()
            .take(5)
            .map(|f| format!("{} {} round {}: {}", f.setup, f.workload, f.round, f.error))
            .collect();
        let more = results.failures.len().saturating_sub(5);
        w.push(format!(
            "{} step(s) failed and are not in the tables: {}{}",
            results.failures.len(),
            list.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let max_n = crate::stats::rounds(&results.summary);
    let per_round = results
        .summary
        .iter()
        .filter(|s| !crate::stats::is_merged(&s.metric));
    if max_n > 0 && max_n < verdict::MIN_ROUNDS {
        w.push(format!(
            "Only {max_n} round(s) per setup: too few to tell real differences from noise; \
             read the tables for large gaps only and use --rounds 3 or more."
        ));
    }
    // Host noise: per setup, the metrics whose rounds disagree by more than 20 %.
    let mut by_setup: Vec<(String, Vec<String>)> = Vec::new();
    for s in per_round {
        // Tail latencies legitimately swing between rounds; contention shows in throughput
        // and times, which is where the 20 % rule of thumb comes from.
        // Only judged metrics: a derived one (a layout's seconds beside its MiB/s) would count
        // the same disagreement twice.
        let def = metrics::def(&s.metric);
        if def.direction == metrics::Direction::Neutral
            || def.class == metrics::Class::Latency
            || crate::stats::judged::role_in(results, &s.workload, &s.metric)
                != metrics::Role::Measured
            || !verdict::host_noisy(s)
        {
            continue;
        }
        let what = format!(
            "{} {} {}–{}",
            s.workload,
            s.metric,
            metrics::format_value(&s.metric, s.min, &s.unit),
            metrics::format_value(&s.metric, s.max, &s.unit)
        );
        match by_setup.iter_mut().find(|(n, _)| *n == s.setup) {
            Some((_, v)) => v.push(what),
            None => by_setup.push((s.setup.clone(), vec![what])),
        }
    }
    for (setup, items) in by_setup {
        let shown: Vec<&str> = items.iter().take(3).map(String::as_str).collect();
        w.push(format!(
            "{setup}: rounds disagree by more than {:.0} % on {} metric(s) (e.g. {}); the host or \
             device may be contended, so treat close results as ties.",
            (verdict::HOST_NOISE_RATIO - 1.0) * 100.0,
            items.len(),
            shown.join(", ")
        ));
    }
    w
}
