//! The durability verdict: per setup, whether the data its crash workloads were told is durable
//! survived every crash state (`docs/crash.md`).
//!
//! Crash counts are costs with no deciding rank, so the speed classes' rule (most wins beyond
//! noise) does not apply. This question has its own: any lost, torn or unmountable
//! acknowledged write disqualifies a setup; among the rest, a smaller share of crash states
//! that lost data ranks first; setups level on that share tie, and the verdict says so. A
//! control that skips its durability calls (`sync = false`) is shown, never counted: nothing
//! it wrote was promised.

use crate::metrics::MetricId;
use crate::metrics::registry::{
    CORRUPT_FILES, CRASH_STATES, FSCK_ERRORS, LOST_ACKED_OPS, LOST_STATES, UNMOUNTABLE_STATES,
};
use crate::results::Results;
use crate::workload::registry::Question;
use serde::Serialize;

/// What the crash states showed of one setup.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SetupDurability {
    /// Setup name.
    pub setup: String,
    /// Crash states checked, over its crash workloads and rounds.
    pub states: u64,
    /// States that lost, tore or could not mount an acknowledged write.
    pub lost_states: u64,
    /// Acknowledged operations that did not read back intact.
    pub lost_ops: u64,
    /// Files torn where an intact record was promised.
    pub corrupt_files: u64,
    /// States that would not mount.
    pub unmountable: u64,
    /// States the read-only checker found errors in (shown, not disqualifying by itself).
    pub fsck_errors: u64,
    /// Whether every acknowledged write survived every state.
    pub kept: bool,
}

impl SetupDurability {
    /// The share of its states that lost data (the rank among setups).
    fn lost_share(&self) -> f64 {
        if self.states == 0 {
            0.0
        } else {
            self.lost_states as f64 / self.states as f64
        }
    }

    /// "kept every acknowledged write in 12 crash states", "lost acknowledged writes in 3 of
    /// 6 crash states (7 operations, 1 unmountable): disqualified".
    pub fn words(&self) -> String {
        let fsck = (self.fsck_errors > 0).then(|| {
            format!(
                "fsck found errors in {} state{}",
                self.fsck_errors,
                if self.fsck_errors == 1 { "" } else { "s" }
            )
        });
        if self.kept {
            return format!(
                "{}: kept every acknowledged write in {} crash states{}",
                self.setup,
                self.states,
                fsck.map(|f| format!(" ({f})")).unwrap_or_default()
            );
        }
        let mut what = vec![format!("{} operations", self.lost_ops)];
        if self.corrupt_files > 0 {
            what.push(format!("{} torn files", self.corrupt_files));
        }
        if self.unmountable > 0 {
            what.push(format!("{} states unmountable", self.unmountable));
        }
        what.extend(fsck);
        format!(
            "{}: lost acknowledged writes in {} of {} crash states ({}): disqualified",
            self.setup,
            self.lost_states,
            self.states,
            what.join("; ")
        )
    }
}

/// The durability question's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Durability {
    /// Every setup whose crash workloads ran, in report order.
    pub setups: Vec<SetupDurability>,
    /// The setups ranked first (several: a tie); empty when none kept every write.
    pub best: Vec<String>,
    /// Whether several setups share the first rank.
    pub tie: bool,
    /// Controls shown but not counted (`sync = false`).
    pub controls: Vec<String>,
    /// The verdict in one sentence.
    pub text: String,
}

/// Whether a crash workload skipped its durability calls (the negative control).
fn is_control(results: &Results, workload: &str) -> bool {
    results
        .workloads
        .iter()
        .find(|w| w.id == workload)
        .and_then(|w| {
            w.params
                .get("crash")
                .and_then(|c| c.get("sync"))
                .or_else(|| w.params.get("sync"))
        })
        .and_then(|v| v.as_bool())
        == Some(false)
}

/// The verdict from the crash workloads' samples; `None` when none ran.
pub fn judge(results: &Results, setups: &[String]) -> Option<Durability> {
    let crash: Vec<&str> = results
        .workloads
        .iter()
        .map(|w| w.id.as_str())
        .filter(|w| super::model::question(results, w) == Some(Question::Durability))
        .collect();
    let counted: Vec<&str> = crash
        .iter()
        .copied()
        .filter(|w| !is_control(results, w))
        .collect();
    let controls: Vec<String> = crash
        .iter()
        .filter(|w| !counted.contains(w))
        .map(|w| w.to_string())
        .collect();
    let mut per: Vec<SetupDurability> = Vec::new();
    for name in setups {
        let mut d = SetupDurability {
            setup: name.clone(),
            ..Default::default()
        };
        let mut any = false;
        for s in results.samples.iter().filter(|s| {
            s.setup == *name && counted.contains(&s.workload.as_str()) && s.value.is_finite()
        }) {
            let v = s.value.max(0.0) as u64;
            let slots: [(MetricId, &mut u64); 6] = [
                (CRASH_STATES, &mut d.states),
                (LOST_STATES, &mut d.lost_states),
                (LOST_ACKED_OPS, &mut d.lost_ops),
                (CORRUPT_FILES, &mut d.corrupt_files),
                (UNMOUNTABLE_STATES, &mut d.unmountable),
                (FSCK_ERRORS, &mut d.fsck_errors),
            ];
            let Some((_, slot)) = slots.into_iter().find(|(id, _)| s.metric == *id) else {
                continue;
            };
            *slot += v;
            any = true;
        }
        if !any || d.states == 0 {
            continue;
        }
        d.kept = d.lost_ops == 0 && d.corrupt_files == 0 && d.unmountable == 0;
        if !d.kept && d.lost_states == 0 {
            // A file from before `lost_states`: at least one state lost data.
            d.lost_states = d.unmountable.max(1);
        }
        per.push(d);
    }
    if per.is_empty() {
        return None;
    }
    let key = |d: &SetupDurability| (!d.kept, d.lost_share());
    let first = per
        .iter()
        .map(key)
        .reduce(|a, b| if b < a { b } else { a })
        .expect("non-empty");
    let best: Vec<String> = per
        .iter()
        .filter(|d| d.kept && key(d) == first)
        .map(|d| d.setup.clone())
        .collect();
    let tie = best.len() > 1;
    let lead = match best.as_slice() {
        [] => {
            let fewest: Vec<&str> = per
                .iter()
                .filter(|d| key(d) == first)
                .map(|d| d.setup.as_str())
                .collect();
            format!(
                "no setup kept every acknowledged write (fewest crash states lost: {})",
                fewest.join(", ")
            )
        }
        [one] => format!("{one} kept every acknowledged write"),
        many => format!("tie: {} kept every acknowledged write", many.join(", ")),
    };
    let mut text = format!(
        "{lead}. Any lost acknowledged write disqualifies; fewer crash states lost ranks first. {}",
        per.iter().map(|d| d.words()).collect::<Vec<_>>().join("; ")
    );
    if !controls.is_empty() {
        text.push_str(&format!(
            "; not counted: {} (skips its durability calls, a control)",
            controls.join(", ")
        ));
    }
    text.push('.');
    Some(Durability {
        setups: per,
        best,
        tie,
        controls,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Sample, SetupInfo, WorkloadInfo};

    /// One round of crash-fsync per setup: (setup, states, lost states, lost ops).
    fn results(rows: &[(&str, f64, f64, f64)]) -> (Results, Vec<String>) {
        let mut r = Results::new();
        r.workloads.push(WorkloadInfo {
            id: "crash-fsync".into(),
            kind: "crash".into(),
            params: serde_json::json!({"crash": {"mode": "fsync", "sync": true}}),
            fio_command: None,
        });
        for (setup, states, lost_states, lost) in rows {
            r.setups.push(SetupInfo {
                name: setup.to_string(),
                fs: "ext4".into(),
                ..Default::default()
            });
            for (metric, value) in [
                (CRASH_STATES, *states),
                (LOST_STATES, *lost_states),
                (LOST_ACKED_OPS, *lost),
                (CORRUPT_FILES, 0.0),
                (UNMOUNTABLE_STATES, 0.0),
                (FSCK_ERRORS, 0.0),
            ] {
                r.samples.push(Sample {
                    setup: setup.to_string(),
                    workload: "crash-fsync".into(),
                    metric: metric.into(),
                    unit: "count".into(),
                    round: 1,
                    value,
                });
            }
        }
        let names = rows.iter().map(|r| r.0.to_string()).collect();
        (r, names)
    }

    #[test]
    fn a_lost_write_disqualifies_and_a_clean_pair_ties() {
        let (r, s) = results(&[
            ("ext4", 12.0, 0.0, 0.0),
            ("nobarrier", 12.0, 5.0, 9.0),
            ("xfs", 12.0, 0.0, 0.0),
        ]);
        let d = judge(&r, &s).unwrap();
        assert_eq!(d.best, ["ext4", "xfs"]);
        assert!(d.tie);
        assert!(
            d.text
                .starts_with("tie: ext4, xfs kept every acknowledged write."),
            "{}",
            d.text
        );
        assert!(
            d.text.contains(
                "nobarrier: lost acknowledged writes in 5 of 12 crash states (9 operations): \
                 disqualified"
            ),
            "{}",
            d.text
        );
    }

    #[test]
    fn one_clean_setup_wins_and_when_all_lose_none_does() {
        let (r, s) = results(&[("ext4", 12.0, 0.0, 0.0), ("nobarrier", 12.0, 5.0, 9.0)]);
        let d = judge(&r, &s).unwrap();
        assert_eq!(
            (d.best.as_slice(), d.tie),
            (&["ext4".to_string()][..], false)
        );
        // Everyone lost: nobody is best; the fewest lost states are named, not crowned.
        let (r, s) = results(&[("a", 10.0, 2.0, 3.0), ("b", 10.0, 6.0, 8.0)]);
        let d = judge(&r, &s).unwrap();
        assert!(d.best.is_empty());
        assert!(
            d.text.starts_with(
                "no setup kept every acknowledged write (fewest crash states lost: a)"
            ),
            "{}",
            d.text
        );
    }

    #[test]
    fn a_control_without_syncs_is_shown_not_counted() {
        let (mut r, s) = results(&[("ext4", 6.0, 0.0, 0.0)]);
        r.workloads.push(WorkloadInfo {
            id: "crash-nosync".into(),
            kind: "crash".into(),
            params: serde_json::json!({"crash": {"mode": "append", "sync": false}}),
            fio_command: None,
        });
        for (metric, value) in [(CRASH_STATES, 6.0), (LOST_ACKED_OPS, 30.0)] {
            r.samples.push(Sample {
                setup: "ext4".into(),
                workload: "crash-nosync".into(),
                metric: metric.into(),
                unit: "count".into(),
                round: 1,
                value,
            });
        }
        let d = judge(&r, &s).unwrap();
        assert_eq!(d.best, ["ext4"]);
        assert_eq!(d.setups[0].states, 6);
        assert_eq!(d.controls, ["crash-nosync"]);
        // No crash workload, no verdict.
        let (mut r, s) = results(&[("ext4", 6.0, 0.0, 0.0)]);
        r.samples.clear();
        assert!(judge(&r, &s).is_none());
    }
}
