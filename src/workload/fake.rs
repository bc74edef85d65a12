//! A FAKE workload, compiled only into the library's unit tests (`cfg(test)`): it touches
//! nothing, records that it ran, and fails or reports an interrupt where a test scripted it,
//! so the runner's interleaving, resume, skips and failure isolation can be tested without
//! root, on a directory target (`runner/tests.rs`). It is a registry entry like any kind
//! (plan-file kind `test-fake`), so the registry's own tests check it follows the recipe.

use super::api::{Cost, Describe, Family, Kind, Needs, Workload};
use super::api::{Metric, WorkloadOutput};
use super::spec::{JobDefaults, WorkloadSpec};
use super::step::StepContext;
use crate::metrics::MetricId;
use crate::metrics::registry::SECONDS;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// A FAKE step for the runner's unit tests (not in a release).
    pub const TestFake: Kind = Kind::named("test-fake");
}

/// What a scripted step does instead of succeeding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Fail with a workload error (every time).
    Fail,
    /// Report an interrupt, once (as Ctrl-C during the step would).
    InterruptOnce,
}

/// `id@setup#round` of every step that ran, in order (all tests of the process).
static CALLS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Scripted steps by `id@setup#round`.
static SCRIPT: Mutex<BTreeMap<String, Action>> = Mutex::new(BTreeMap::new());

fn key(id: &str, setup: &str, round: u32) -> String {
    format!("{id}@{setup}#{round}")
}

/// Make step `id` on `setup` in `round` do `action`.
pub fn script(id: &str, setup: &str, round: u32, action: Action) {
    let mut s = SCRIPT.lock().unwrap_or_else(|e| e.into_inner());
    s.insert(key(id, setup, round), action);
}

/// The steps of workload ids starting with `prefix` that ran, as `id@setup#round`, in order.
pub fn calls(prefix: &str) -> Vec<String> {
    let c = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    c.iter()
        .filter(|k| k.starts_with(prefix))
        .cloned()
        .collect()
}

/// The fake kind.
pub struct Fake;

impl Workload for Fake {
    fn kind(&self) -> Kind {
        Kind::TestFake
    }
    fn family(&self) -> Family {
        Family::Metadata
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs::NOTHING
    }
    fn emits(&self) -> &'static [MetricId] {
        &[SECONDS]
    }
    fn example(&self) -> &'static str {
        "id = \"fake\"\nkind = \"test-fake\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Nothing
    }
    fn describe(&self, _: &WorkloadSpec, _: &Describe<'_>) -> String {
        "a fake step for the runner's tests (does nothing)".into()
    }
    /// An id ending in `-unavailable` is a workload this machine cannot run.
    fn available(&self, w: &WorkloadSpec) -> Result<(), String> {
        if w.id.ends_with("-unavailable") {
            Err(format!("{} is scripted to be unavailable", w.id))
        } else {
            Ok(())
        }
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let k = key(&w.id, &cx.setup.name, cx.work.round);
        CALLS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(k.clone());
        let action = {
            let mut s = SCRIPT.lock().unwrap_or_else(|e| e.into_inner());
            match s.get(&k).copied() {
                Some(Action::InterruptOnce) => s.remove(&k),
                other => other,
            }
        };
        match action {
            Some(Action::Fail) => Err(crate::Error::workload(&w.id, "scripted failure")),
            Some(Action::InterruptOnce) => Err(crate::Error::Interrupted),
            // A value that differs by round, so samples can be told apart.
            None => Ok(WorkloadOutput {
                metrics: vec![Metric::new(SECONDS, "s", f64::from(cx.work.round))],
                ..Default::default()
            }),
        }
    }
}
