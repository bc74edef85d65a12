//! What `fsbench record` prints: the trace's summary (calls by class, bytes, fsyncs, files,
//! the share that cannot be replayed, the capture used and what it cost).

use crate::workload::replay::record::Recorded;
use crate::workload::replay::trace::{Call, Class};
use std::fmt::Write;

/// The summary of a recording.
pub fn summary(r: &Recorded) -> String {
    let mut s = String::new();
    let c = &r.counts;
    let total: u64 = c.calls.values().sum();
    let not: u64 = c.not_replayable.values().sum();
    let _ = writeln!(
        s,
        "Recorded {} ({}): {} calls on {} files in {:.2} s, captured by {} ({} of its output), command ran as {}",
        r.name,
        r.out.display(),
        total,
        c.files,
        r.elapsed.as_secs_f64(),
        r.capture,
        crate::units::format_size(r.capture_bytes),
        r.ran_as
    );
    if !r.capture_note.is_empty() {
        let _ = writeln!(s, "  capture: {}", r.capture_note);
    }
    if r.lost > 0 {
        let _ = writeln!(
            s,
            "  INCOMPLETE: the capture lost {} events (bpftrace's ring buffers overflowed); \
             the trace says so; record a shorter slice, or --capture strace",
            r.lost
        );
    }
    let mut by_class = std::collections::BTreeMap::new();
    for (call, n) in &c.calls {
        *by_class.entry(call.class()).or_insert(0u64) += n;
    }
    let classes: Vec<String> = Class::ALL
        .iter()
        .map(|k| format!("{} {}", k.name(), by_class.get(k).copied().unwrap_or(0)))
        .collect();
    let _ = writeln!(s, "  calls by class: {}", classes.join(", "));
    let fsyncs: u64 = [Call::Fsync, Call::Fdatasync, Call::SyncRange, Call::Syncfs]
        .iter()
        .filter_map(|k| c.calls.get(k))
        .sum();
    let _ = writeln!(
        s,
        "  bytes read {}, written {}; fsyncs {}",
        crate::units::format_size(c.read_bytes),
        crate::units::format_size(c.write_bytes),
        fsyncs
    );
    let _ = writeln!(
        s,
        "  starting state {} entries, end state {} entries",
        r.start_entries, r.end_entries
    );
    let share = if total + not > 0 {
        100.0 * not as f64 / (total + not) as f64
    } else {
        0.0
    };
    let kinds: Vec<String> = c
        .not_replayable
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        s,
        "  not replayable: {not} ({share:.1} %){}{}",
        if kinds.is_empty() { "" } else { ": " },
        kinds.join(", ")
    );
    if c.unparsed > 0 {
        let _ = writeln!(
            s,
            "  capture lines not understood (skipped): {}",
            c.unparsed
        );
    }
    if r.interrupted {
        let _ = writeln!(s, "  interrupted: the trace holds what ran until the stop");
    }
    match r.exit {
        Some(0) => {}
        Some(code) => {
            let _ = writeln!(s, "  the command exited with status {code}");
        }
        None => {
            let _ = writeln!(s, "  the command was killed by a signal");
        }
    }
    let _ = write!(
        s,
        "Replay it on every setup: fsbench run --replay {}",
        r.out.display()
    );
    s
}
