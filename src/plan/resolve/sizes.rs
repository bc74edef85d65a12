//! The data file's size and a plan file's own workload sizes against the target.

use crate::Error;
use crate::plan::FileSize;
use crate::plan::file::PlanDraft;
use crate::plan::overrides::Overrides;
use crate::plan::params;
use crate::plan::workload::WorkloadSpec;
use crate::scratch::TargetKind;
use crate::units::format_size;

/// Share of the target an explicit `--file-size` may take.
pub(super) const EXPLICIT_MAX_SHARE: f64 = 0.9;

pub(super) fn size_data_file(
    args: &Overrides,
    draft: &PlanDraft,
    capacity: Option<u64>,
    target: &TargetKind,
    ram_bytes: u64,
) -> crate::Result<u64> {
    const MIB: u64 = 1 << 20;
    let cap_share = draft.file_size_cap.unwrap_or(0.5);
    let where_ = target.describe();
    if let Some(text) = &args.file_size {
        let fs = FileSize::parse(text).map_err(|e| Error::invalid("--file-size", e))?;
        let bytes = match fs {
            FileSize::Fixed(b) => {
                params::FILE_SIZE
                    .check_u64(b)
                    .map_err(|e| Error::invalid("--file-size", e))?;
                b
            }
            FileSize::RamMultiple(f) => {
                params::FILE_SIZE_RAM
                    .check(f)
                    .map_err(|e| Error::invalid("--file-size", e))?;
                (ram_bytes as f64 * f) as u64
            }
        };
        if bytes < MIB {
            return Err(Error::invalid("--file-size", "must be at least 1M"));
        }
        if let Some(cap) = capacity
            && bytes as f64 > cap as f64 * EXPLICIT_MAX_SHARE
        {
            return Err(Error::invalid(
                "--file-size",
                format!(
                    "{} does not fit on the {where_} ({} usable, and the filesystem needs room too); \
                     use a smaller --file-size or a larger target",
                    format_size(bytes),
                    format_size(cap)
                ),
            ));
        }
        return Ok(bytes / MIB * MIB);
    }
    let wanted = match draft.file_size.unwrap_or(FileSize::Fixed(256 * MIB)) {
        FileSize::Fixed(b) => b,
        FileSize::RamMultiple(f) => (ram_bytes as f64 * f) as u64,
    };
    let bytes = match capacity {
        Some(cap) => wanted.min((cap as f64 * cap_share) as u64),
        None => wanted,
    };
    Ok((bytes / MIB * MIB).max(MIB))
}

/// Refuse a plan file's workload whose own `size` does not fit on the target.
pub(super) fn check_workload_sizes(
    workloads: &[WorkloadSpec],
    capacity: u64,
    target: &TargetKind,
    args: &Overrides,
) -> crate::Result<()> {
    let room = (capacity as f64 * EXPLICIT_MAX_SHARE) as u64;
    for w in workloads {
        let size = w.own_size();
        if let Some(b) = size.filter(|b| *b > room) {
            let plan = args.plan.as_ref().map_or_else(
                || "--plan".to_string(),
                |p| format!("--plan {}", p.display()),
            );
            return Err(Error::invalid(
                plan,
                format!(
                    "workload '{}': size = {} does not fit on the {} ({} usable, and the \
                     filesystem needs room too); give a smaller size or a larger target",
                    w.id,
                    format_size(b),
                    target.describe(),
                    format_size(capacity)
                ),
            ));
        }
    }
    Ok(())
}
