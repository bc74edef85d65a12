//! Flags to an invocation for every command that resolves a plan (`run`, `run --mpi`, `plan`,
//! `tune`): the plan and job files read, the host facts gathered once, the pure resolution,
//! then the checks that ask this kernel and the installed tools about the resolved plan.

use crate::Error;
use crate::host::facts::{HostFacts, Query};
use crate::plan::resolve::{Source, resolve};
use crate::plan::{Invocation, Overrides, WorkloadSpec};
use std::path::Path;

/// Resolve `run`/`plan` overrides into an invocation: read the plan and job files, gather the
/// host facts once, resolve (pure), then the checks that ask this kernel and the installed
/// tools about the resolved plan. Every refusal is exit 2 with nothing created.
pub fn prepare(o: &Overrides, argv: Vec<String>) -> crate::Result<Invocation> {
    // Traces alone ask for the setups and the traces: `usable-space` (statvfs, with `mkfs`
    // where the run formats) is the one catalog workload kept, so nothing else (a corpus, a
    // data file) is planned or checked against the target.
    let with_only;
    let replay_only =
        !o.replay.is_empty() && o.plan.is_none() && o.profile.is_none() && o.only.is_empty();
    let o = if replay_only {
        with_only = Overrides {
            only: vec!["usable-space".into()],
            ..o.clone()
        };
        &with_only
    } else {
        o
    };
    let mut source = Source::read(o)?;
    let narrowed;
    let o = if o.claims_for.is_empty() {
        o
    } else {
        let claims = crate::claims::subset::pick(&o.claims_for)?;
        let only = crate::claims::subset::narrow(&claims, &mut source.draft)?;
        narrowed = Overrides { only, ..o.clone() };
        &narrowed
    };
    let mut paths: Vec<&Path> = Vec::new();
    paths.extend(o.corpus_from.as_deref());
    paths.extend(o.corpus_file.as_deref());
    let facts = HostFacts::gather(&Query {
        device: o.device.as_deref(),
        dir: o.dir.as_deref(),
        scratch_dir: Some(&o.scratch_dir),
        tools: &["fio"],
        paths,
    });
    // A device in use (mounted, swap, a pool member, carrying data without --force-wipe) is
    // the refusal that matters most, so it comes before any complaint about sizes.
    if let (Some(dev), Some(Ok(()))) = (o.device.as_deref(), &facts.device) {
        crate::scratch::safety::check_device(dev, o.force_wipe)?;
        for more in &o.more_devices {
            crate::scratch::safety::check_device(more, o.force_wipe)?;
        }
    }
    let mut inv = resolve(&source, o, &facts, argv.clone())?;
    // Host tunings against this kernel and target: a key or value it refuses stops here. A
    // setup the user named that asks for what this kernel lacks is refused too; one a shipped
    // profile brought is left out with a note, and the plan resolved again without it, so a
    // profile runs on any kernel that can run fsbench.
    let missing = crate::host::tuning::validate(host_settings(&inv), queue_of(&inv))?;
    if !missing.is_empty() {
        let from_profile = o.fs.is_empty() && !source.from_file;
        source
            .draft
            .setups
            .retain(|s| !missing.iter().any(|m| m.setup == s.name));
        if !from_profile || source.draft.setups.is_empty() {
            return Err(missing[0].refusal());
        }
        inv = resolve(&source, o, &facts, argv)?;
        inv.options.left_out = missing
            .iter()
            .map(|m| format!("{} left out: {}", m.setup, m.why))
            .collect();
    }
    // `--replay`'s workloads first, so that a kind's flag (`--replay-speed`) reaches them too.
    crate::workload::replay::kind::apply_flag(&mut inv.plan.workloads, &o.replay)?;
    crate::plan::resolve::apply_kind_flags(o, &mut inv.plan.workloads)?;
    check_workloads_on_host(&inv.plan.workloads)?;
    Ok(inv)
}

/// Every setup's host tunings, by name.
fn host_settings(
    inv: &Invocation,
) -> impl Iterator<Item = (&str, &[crate::host::tuning::HostSetting])> {
    inv.plan
        .setups
        .iter()
        .map(|s| (s.name.as_str(), &s.host[..]))
}

/// Whose queue a setup's queue keys would change.
fn queue_of(inv: &Invocation) -> crate::host::tuning::QueueOf<'_> {
    use crate::host::tuning::QueueOf;
    use crate::scratch::TargetKind;
    match &inv.options.target {
        // `fsbench io`'s own file has no setups with queue keys: as a directory's.
        TargetKind::Dir { .. } | TargetKind::File { .. } => QueueOf::Dir,
        TargetKind::Device { path, .. } => QueueOf::Device(path),
        TargetKind::Image { .. } => QueueOf::Image,
    }
}

/// Each selected workload's own checks against what is installed ([`Workload::check_host`]:
/// pgbench's PostgreSQL setting names).
///
/// [`Workload::check_host`]: crate::workload::registry::Workload::check_host
fn check_workloads_on_host(workloads: &[WorkloadSpec]) -> crate::Result<()> {
    for w in workloads.iter().filter(|w| w.record) {
        crate::workload::registry::of(w.kind)
            .check_host(w)
            .map_err(|e| Error::invalid(format!("workload '{}'", w.id), e))?;
    }
    Ok(())
}
