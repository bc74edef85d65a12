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

#[cfg(test)]
mod tests {
    use super::super::ReplayParams;
    use crate::plan::Overrides;
    use crate::workload::spec::WorkloadSpec;

    /// `--replay-speed` given as the kind's flag paces every replay workload and leaves the
    /// others; `as-fast-as-possible` takes a plan file's speed away.
    #[test]
    fn the_flag_paces_every_replay_workload() {
        let replay = |speed| {
            WorkloadSpec::replay(
                "replay-a",
                ReplayParams {
                    trace: "/t".into(),
                    name: None,
                    speed,
                    compress: None,
                },
            )
        };
        let speed_after = |value: &str, before: Option<f64>| {
            let mut ws = vec![
                replay(before),
                WorkloadSpec::simple("mkfs", crate::workload::api::Kind::Mkfs),
            ];
            let o = Overrides {
                kind_flags: vec![("--replay-speed".into(), value.into())],
                ..Default::default()
            };
            crate::plan::resolve::apply_kind_flags(&o, &mut ws).unwrap();
            assert!(ws[1].params_of::<ReplayParams>().is_none());
            ws[0].params_of::<ReplayParams>().unwrap().speed
        };
        assert_eq!(speed_after("2", None), Some(2.0));
        assert_eq!(speed_after("as-recorded", Some(4.0)), Some(1.0));
        assert_eq!(speed_after("as-fast-as-possible", Some(4.0)), None);
    }
}
