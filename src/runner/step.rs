//! One workload step, the same for `fsbench run` (every setup-round) and `fsbench meta`, in
//! two parts so that several processes can start the measured part together:
//!
//! - [`prepare`]: untimed — the registry entry's preparation (a tree to walk, a file to lay
//!   out), then the cache drop unless it says not to;
//! - [`measure`]: the workload itself and, when it writes, the device counted around it and
//!   after it until the filesystem has written back what it caused.
//!
//! A coordinator (MPI ranks, [`super::coordinator`]) puts its start barrier between the two.

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

/// A prepared step: what [`measure`] needs to know of the preparation.
#[derive(Debug, Default)]
pub struct Prepared {
    /// `caches were not dropped …` when the drop failed.
    pub cache_warning: Option<String>,
}

/// The untimed part of `w`: its preparation, then the cache drop it asks for.
pub fn prepare(cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Prepared> {
    let mut prepared = Prepared::default();
    if of(w.kind).prepare(cx, w)? == Caches::Drop
        && let Err(e) = crate::host::drop_caches()
    {
        prepared.cache_warning = Some(format!("caches were not dropped before workloads: {e}"));
    }
    test_hook::delay_prepare();
    Ok(prepared)
}

/// The measured part of `w`, after [`prepare`].
pub fn measure(
    cx: &mut StepContext<'_>,
    w: &WorkloadSpec,
    prepared: Prepared,
) -> crate::Result<Done> {
    let entry = of(w.kind);
    // The engine counts and settles its own jobs; the runner does for everything else.
    let by_runner = match entry.needs(w).writes {
        Writes::Runner => true,
        // A job given exactly (`fsbench io`) keeps its report as its engine made it: fio's
        // as fio gave it, with nothing of the runner's waited for or added.
        Writes::Engine => cx.fio_engine && w.params_of::<crate::workload::io::GroupJob>().is_none(),
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
        cache_warning: prepared.cache_warning,
    })
}

/// Both parts of `w`, one after the other (a single process).
pub fn run(cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Done> {
    let prepared = prepare(cx, w)?;
    measure(cx, w, prepared)
}

/// A test hook (not a user setting): `FSBENCH_TEST_PREPARE_DELAY=RANK:MS` makes the process
/// whose MPI rank (`OMPI_COMM_WORLD_RANK`) is RANK sleep MS milliseconds at the end of every
/// preparation, so `tests/mpi.rs` can show that a slow preparation on one rank stays out of
/// the ranks' common measured window.
mod test_hook {
    pub(super) fn delay_prepare() {
        let Ok(spec) = std::env::var("FSBENCH_TEST_PREPARE_DELAY") else {
            return;
        };
        let rank = std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_default();
        if let Some((r, ms)) = spec.split_once(':')
            && r == rank
            && let Ok(ms) = ms.parse::<u64>()
        {
            std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
        }
    }
}
