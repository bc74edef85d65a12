//! `--replay-speed` (`--replay-timing`): the replay kind's flag, declared here as a
//! [`KindFlag`] (its clap argument, its docs/parameters.md row and its place in the plan come
//! from this declaration), pacing every replay workload of the run.

use super::{ReplayParams, Timing};
use crate::error::Error;
use crate::workload::api::{Kind, KindFlag, KindValue};
use crate::workload::spec::WorkloadSpec;

/// The flag as the replay kind declares it (`Workload::flags`).
pub const FLAG: KindFlag = KindFlag {
    flags: &["--replay-speed", "--replay-timing"],
    value_name: "N|as-recorded|as-fast-as-possible",
    value: KindValue::Word(|s| s.parse::<Timing>().map(drop)),
    doc: "How every replayed trace is paced: a number N keeps the recorded think times divided by N (as-recorded timing; 1 = as recorded, 2 = twice as fast), as-recorded is N = 1, as-fast-as-possible issues each call as soon as its order allows (the default). Both spellings take the same values.",
    merge: "the flag, else each replay workload's timing and speed keys",
    lands: "plan.json plan.workloads[].params.kind_params.replay.speed",
    alone: None,
    apply,
};

/// Every replay workload's pacing, the plan file's and `--replay`'s alike (the flag over
/// their `timing` and `speed` keys); workloads of other kinds are left as they are.
fn apply(workloads: &mut [WorkloadSpec], value: &std::ffi::OsStr) -> crate::Result<()> {
    let timing: Timing = value
        .to_str()
        .ok_or_else(|| format!("{value:?} is not UTF-8"))
        .and_then(str::parse)
        .map_err(|why| Error::invalid(FLAG.flag(), why))?;
    for w in workloads.iter_mut().filter(|w| w.kind == Kind::Replay) {
        let mut p: ReplayParams = w
            .params_of()
            .ok_or_else(|| Error::workload(&w.id, "no replay parameters"))?;
        p.speed = timing.speed();
        w.set_params(&p);
    }
    Ok(())
}
