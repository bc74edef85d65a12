//! One workload step, the same for `fsbench run` (every setup-round) and `fsbench meta`:
//! the registry entry prepares (untimed; caches dropped unless it says not to), runs, and —
//! when it writes — the device is counted around it and after it until the filesystem has
//! written back what it caused.

use super::writeback;
use crate::workload::WorkloadOutput;
use crate::workload::registry::{Caches, Writes, of};
use crate::workload::spec::WorkloadSpec;
use crate::workload::step::StepContext;

/// What a step produced, and a warning for the run when the caches could not be dropped.
pub struct Done {
    /// The workload's output (plus device totals when it writes).
    pub output: WorkloadOutput,
    /// `caches were not dropped …`, once per step that asked for it.
    pub cache_warning: Option<String>,
}

/// Run `w` in `cx`.
pub fn run(cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Done> {
    let entry = of(w.kind);
    let mut cache_warning = None;
    if entry.prepare(cx, w)? == Caches::Drop
        && let Err(e) = crate::host::drop_caches()
    {
        cache_warning = Some(format!("caches were not dropped before workloads: {e}"));
    }
    // The engine counts and settles its own jobs; the runner does for everything else.
    let by_runner = match entry.needs(w).writes {
        Writes::Runner => true,
        Writes::Engine => cx.fio_engine,
        Writes::No => false,
    };
    let tracked = if by_runner {
        let device = match cx.work.device {
            Some(d) => crate::measure::device::resolve(d),
            None => crate::measure::device::resolve(cx.work.dir),
        };
        writeback::start(device)
    } else {
        None
    };
    let mut output = entry.run(cx, w)?;
    if let (Some(t), Some(rule)) = (tracked, cx.work.settle) {
        t.finish(cx.work.dir, rule, &mut output)?;
    }
    Ok(Done {
        output,
        cache_warning,
    })
}
