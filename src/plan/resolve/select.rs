//! Which setups and workloads run: `--fs` or the plan's, `--only`/`--skip` with prerequisites.

use crate::Error;
use crate::plan::SetupSpec;
use crate::plan::file::PlanDraft;
use crate::plan::overrides::Overrides;
use crate::plan::params;
use crate::plan::setup_syntax;
use crate::plan::workload::Kind;
use crate::plan::workload::WorkloadSpec;
use crate::scratch::TargetKind;

/// Filesystems tried when neither `--fs` nor the plan names any, ZFS only where it is in the
/// kernel ([`default_fs`]).
pub const DEFAULT_FS: &[&str] = &["ext4", "xfs", "btrfs", "zfs"];

/// The default set on this host: [`DEFAULT_FS`], less ZFS unless the OpenZFS module is
/// loaded. Without it ZFS here is zfs-fuse, a user-space daemon whose figures (70–95 % behind
/// on most rows) say nothing about OpenZFS and whose slot took about 45 % of a default round on
/// the development VM; the rounds it cost buy more decisive answers among the others
/// (docs/design-notes.md, "The default's design").
pub fn default_fs(kernel_zfs: bool) -> Vec<&'static str> {
    DEFAULT_FS
        .iter()
        .copied()
        .filter(|f| kernel_zfs || *f != "zfs")
        .collect()
}

/// What the plan summary says when the default set left ZFS out, or `None`.
pub fn default_left_out(kernel_zfs: bool) -> Option<String> {
    (!kernel_zfs).then(|| {
        "zfs is not in the default set here: without the OpenZFS kernel module ZFS is zfs-fuse \
         (user space), whose figures say nothing about OpenZFS; to measure it anyway: \
         --fs ext4,xfs,btrfs,zfs"
            .to_string()
    })
}

/// The setups to run, and when they are the default set (no `--fs`, none in the plan, a
/// target to format) what it left out ([`default_left_out`]).
pub(super) fn choose_setups(
    args: &Overrides,
    draft: &PlanDraft,
    target: &TargetKind,
    kernel_zfs: bool,
) -> crate::Result<(Vec<SetupSpec>, Option<String>)> {
    if let TargetKind::Dir { .. } = target {
        if !args.fs.is_empty() {
            return Err(Error::invalid(
                "--fs",
                "cannot be used with --dir: the directory's own filesystem is measured as it is; \
                 drop --fs, or use an image/--device to compare filesystems",
            ));
        }
        return Ok((vec![SetupSpec::plain("dir")], None));
    }
    if !args.fs.is_empty() {
        let setups = setup_syntax::parse_fs_list(&args.fs)?;
        params::SETUPS
            .check_u64(setups.len() as u64)
            .map_err(|e| Error::invalid("--fs", format!("{e}: {} setups", setups.len())))?;
        return Ok((setups, None));
    }
    if !draft.setups.is_empty() {
        return Ok((draft.setups.clone(), None));
    }
    let setups = default_fs(kernel_zfs)
        .into_iter()
        .map(SetupSpec::plain)
        .collect();
    Ok((setups, default_left_out(kernel_zfs)))
}

/// Apply `--only` / `--skip` to every workload the plan knows, add prerequisites as
/// unrecorded steps, and keep the plan's order.
pub fn select_workloads(
    all: &[WorkloadSpec],
    only: &[String],
    skip: &[String],
    formats: bool,
) -> crate::Result<Vec<WorkloadSpec>> {
    let all: Vec<&WorkloadSpec> = all
        .iter()
        .filter(|w| formats || w.kind != Kind::Mkfs)
        .collect();
    let known = |flag: &str, ids: &[String]| -> crate::Result<()> {
        for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if !all.iter().any(|w| w.id == id) {
                let why = if id == "mkfs" && !formats {
                    " (--dir mode creates no filesystem)".to_string()
                } else {
                    String::new()
                };
                return Err(Error::invalid(
                    flag,
                    format!(
                        "unknown workload id '{id}'{why}; this plan has: {}",
                        all.iter()
                            .map(|w| w.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(())
    };
    known("--only", only)?;
    known("--skip", skip)?;
    let picked = |w: &WorkloadSpec| {
        let chosen = if only.iter().any(|s| !s.trim().is_empty()) {
            only.iter().any(|o| o.trim() == w.id)
        } else {
            !w.optional
        };
        chosen && !skip.iter().any(|s| s.trim() == w.id)
    };
    if !formats
        && let Some((w, why)) = all.iter().filter(|w| picked(w)).find_map(|w| {
            crate::workload::registry::of(w.kind)
                .refused_on_dir(w)
                .map(|why| (w, why))
        })
    {
        return Err(Error::invalid(
            "--dir",
            format!("workload {} cannot run on a --dir target: {why}", w.id),
        ));
    }
    let mut needed: Vec<&str> = Vec::new();
    for w in all.iter().filter(|w| picked(w)) {
        needed.extend(w.requires());
    }
    let out: Vec<WorkloadSpec> = all
        .iter()
        .filter(|w| picked(w) || needed.contains(&w.id.as_str()) || w.kind == Kind::Mkfs)
        .map(|w| {
            let mut w = (*w).clone();
            w.record = picked(&w);
            w
        })
        .collect();
    if !out.iter().any(|w| w.record) {
        return Err(Error::invalid(
            if only.is_empty() { "--skip" } else { "--only" },
            "no workload is left to run",
        ));
    }
    Ok(out)
}
