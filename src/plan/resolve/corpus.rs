//! The metadata workloads' corpus: whether it fits the target, whether its flags can work.

use crate::Error;
use crate::host::facts::HostFacts;
use crate::plan::Plan;
use crate::plan::overrides::Overrides;
use crate::scratch::TargetKind;
use crate::units::format_size;
use std::path::PathBuf;

/// Bytes one synthetic corpus copy at scale 1 takes on a filesystem: its file data plus a
/// 4 KiB block per entry (a test measures the generator against it).
pub const CORPUS_UNIT_FOOTPRINT: u64 = 330 << 20;

/// Share of the target the corpus may take; the data file, the filesystem's metadata and its
/// reserve need the rest.
pub(super) const CORPUS_MAX_SHARE: f64 = 0.5;

/// Refuse a corpus that cannot fit on the target: the synthetic one's copies x scale x a
/// copy's footprint, a `--corpus-from` tree's walked footprint x copies, or a
/// `--corpus-file` tar's length (extracted once).
pub(super) fn check_corpus_fits(
    plan: &Plan,
    capacity: u64,
    target: &TargetKind,
    host: &HostFacts,
) -> crate::Result<()> {
    let uses_corpus = plan.workloads.iter().any(|w| {
        matches!(
            crate::workload::registry::of(w.kind).cost(w, &plan.job_defaults(0, None)),
            crate::workload::registry::Cost::Corpus(_)
        )
    });
    if !uses_corpus {
        return Ok(());
    }
    let c = &plan.corpus;
    let walked = |p: &PathBuf| host.footprints.get(p).copied();
    let (flag, what, need, fix) = if let Some(d) = &c.from_dir {
        let Some(b) = walked(d) else { return Ok(()) };
        (
            "--corpus-from",
            format!("{} copies of {}", c.copies, d.display()),
            u64::from(c.copies) as f64 * b as f64,
            "use fewer --corpus-copies, a smaller directory or a larger target",
        )
    } else if let Some(f) = &c.file {
        let Some(b) = walked(f) else { return Ok(()) };
        (
            "--corpus-file",
            f.display().to_string(),
            b as f64,
            "use a smaller tar or a larger target",
        )
    } else {
        (
            "--corpus-copies",
            format!("{} copies at scale {}", c.copies, c.scale),
            f64::from(c.copies) * c.scale * CORPUS_UNIT_FOOTPRINT as f64,
            "use fewer --corpus-copies, a smaller --corpus-scale or a larger target",
        )
    };
    let room = capacity as f64 * CORPUS_MAX_SHARE;
    if need > room {
        return Err(Error::invalid(
            flag,
            format!(
                "{what} take about {} on disk, more than half of the {} ({}); {fix}",
                format_size(need as u64),
                target.describe(),
                format_size(capacity)
            ),
        ));
    }
    Ok(())
}

/// Refuse corpus flags that cannot work before anything is formatted (exit 2).
pub(super) fn check_corpus_flags(args: &Overrides, host: &HostFacts) -> crate::Result<()> {
    if let Some(d) = &args.corpus_from
        && !host.dirs.contains(d)
    {
        return Err(Error::invalid(
            "--corpus-from",
            format!(
                "{} is not a directory; give a directory to pack, such as /usr/share",
                d.display()
            ),
        ));
    }
    if let Some(f) = &args.corpus_file
        && !host.files.contains(f)
    {
        return Err(Error::invalid(
            "--corpus-file",
            format!(
                "{} is not a file; write one with `fsbench corpus --out FILE.tar`",
                f.display()
            ),
        ));
    }
    Ok(())
}
