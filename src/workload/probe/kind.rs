//! Registry entry of the capability probes (`probe-reflink`, …): each builds a small
//! filesystem of its own, so they run once per setup, in its capability phase.

use super::ProbeKind;
use crate::metrics::MetricId;
use crate::workload::api::{
    Cost, Describe, Family, Kind, Names, Needs, Phase, Workload, WorkloadOutput,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// A capability probe (`probe-reflink`…).
    pub const Probe: Kind = Kind::named("probe");
}

/// A capability probe.
pub struct Probe;

impl Workload for Probe {
    fn kind(&self) -> Kind {
        Kind::Probe
    }
    fn complete(&self, spec: &mut WorkloadSpec) -> Result<(), String> {
        if spec.id.starts_with("probe-") {
            Ok(())
        } else {
            Err("probe ids start with probe-".into())
        }
    }
    fn family(&self) -> Family {
        Family::Capability
    }
    fn names(&self, id: &str) -> Option<Names> {
        // The capacity probes read better by what they do; the older ones keep their ids.
        if !id.starts_with("probe-") {
            return None;
        }
        Some(match ProbeKind::from_id(id)? {
            ProbeKind::Inodes => Names {
                label: "inode exhaustion (empty files until ENOSPC)",
                short: "inodes",
            },
            ProbeKind::Metadata => Names {
                label: "metadata exhaustion (ENOSPC while df shows space)",
                short: "metadata ENOSPC",
            },
            _ => return None,
        })
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            own_image: true,
            root: true,
            phase: Phase::Capability,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            SUPPORTED,
            SECONDS,
            BYTES,
            CLEAN,
            DETECTED,
            INTACT,
            GROW_SUPPORTED,
            GROW_SECONDS,
            GROW_ONLINE,
            SHRINK_SUPPORTED,
            SHRINK_SECONDS,
            SHRINK_ONLINE,
            INODE_LIMIT_REACHED,
            ENOSPC_WITH_FREE_SPACE,
            FILES_CREATED,
            FREE_BYTES_AT_STOP,
            SIZE_BYTES,
            CHECKED_BYTES,
            SECONDS_PER_GIB,
            SCRUB_SECONDS_PER_GIB,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        ProbeKind::ALL
            .into_iter()
            .map(|k| WorkloadSpec::simple(k.id(), Kind::Probe).opt())
            .collect()
    }
    fn example(&self) -> &'static str {
        "id = \"probe-reflink\"\nkind = \"probe\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Probe
    }
    fn describe(&self, _: &WorkloadSpec, _: &Describe<'_>) -> String {
        "capability probe on a small image of its own".into()
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let kind = ProbeKind::from_id(&w.id)
            .ok_or_else(|| crate::Error::workload(&w.id, "unknown probe"))?;
        let driver = cx.driver(&w.id)?;
        super::run(kind, driver, cx.setup, cx.scratch, cx.tool_timeout)
    }
}
