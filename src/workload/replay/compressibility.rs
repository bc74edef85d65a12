//! `--replay-compressibility PERCENT`: the replay kind's flag, declared here as a
//! [`KindFlag`] like `--replay-speed` (`super::speed`), setting how compressible the data of
//! every replay is.

use super::ReplayParams;
use crate::error::Error;
use crate::workload::api::{Kind, KindFlag, KindValue};
use crate::workload::spec::WorkloadSpec;

/// The flag as the replay kind declares it (`Workload::flags`).
pub const FLAG: KindFlag = KindFlag {
    flags: &["--replay-compressibility"],
    value_name: "PERCENT",
    value: KindValue::Word(|s| super::data::parse_percent(s).map(drop)),
    doc: "How compressible the data of every replay is (the recreated starting tree and the replayed writes): the percentage of each 4 KiB block that compresses, 0–100 % (0, incompressible, is the default)",
    merge: "sets compress on every replay workload, the plan file's and --replay's, over their own",
    lands: "plan.json plan.workloads[].params.kind_params.compress; results.json workloads",
    alone: None,
    apply,
};

/// Every replay workload's `compress` (the flag over the plan file's key). A value that is no
/// percentage, or a run without a replay workload, is exit 2.
fn apply(workloads: &mut [WorkloadSpec], value: &std::ffi::OsStr) -> crate::Result<()> {
    let pct = super::data::parse_percent(&value.to_string_lossy())
        .map_err(|e| Error::invalid(FLAG.flag(), e))?;
    let mut any = false;
    for w in workloads.iter_mut().filter(|w| w.kind == Kind::Replay) {
        let mut p: ReplayParams = w
            .params_of()
            .ok_or_else(|| Error::workload(&w.id, "no replay parameters"))?;
        p.compress = Some(pct);
        w.set_params(&p);
        any = true;
    }
    if !any {
        return Err(Error::invalid(
            FLAG.flag(),
            "no replay workload to apply it to: give --replay TRACE, or a plan file with a replay workload",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::kind::tests::spec;
    use std::ffi::OsStr;

    #[test]
    fn the_compressibility_flag_sets_every_replay_and_needs_one() {
        let mut ws = vec![spec("replay-a"), spec("replay-b")];
        apply(&mut ws, OsStr::new("30")).unwrap();
        for w in &ws {
            let p: ReplayParams = w.params_of().unwrap();
            assert_eq!(p.compress, Some(30));
            assert_eq!(p.fill(1).compress, 30);
        }
        assert!(apply(&mut ws, OsStr::new("101")).is_err());
        assert!(apply(&mut [], OsStr::new("30")).is_err());
    }
}
