//! `probe-resize`: grow the filesystem after its loop image grew, then try to shrink it.
//!
//! Grow: enlarge the image file, LOOP_SET_CAPACITY, then the driver's grow
//! ([`crate::fs::Filesystem::grow`], `fs/resize.rs`: the filesystem's own command, online). Shrink: give back what the grow added — ext4 offline (`e2fsck -f` + `resize2fs`),
//! btrfs online, ZFS has no way to shrink a vdev. XFS (kernel ≥ 5.12, `xfs_growfs -D`, marked
//! experimental) can only give back free space at the end of its last allocation group and can
//! never remove a group, so for XFS the general shrink is sized to cross the last group's start
//! and a second, small shrink inside that group's free tail is reported apart
//! (`shrink_tail_supported`). The commands are the drivers' ([`crate::fs::Filesystem::shrink`]);
//! a direction counts as supported only when the size statvfs reports really changed.

use super::{AsLive, ProbeFs, ProbeOptions, supported, sys};
use crate::fs::ops::Outcome;
use crate::fs::resize::{Shrunk, Step};
use crate::host::command;
use crate::metrics::{MetricId, registry};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::Path;

/// Run the resize probe on a mounted filesystem that lives on a loop device.
///
/// Metrics: `grow_supported`, `shrink_supported` (1/0: the filesystem gave back what the grow
/// added); when supported, `<dir>_seconds` and `<dir>_online` (1 when the filesystem stayed
/// mounted, 0 when it had to be unmounted). XFS also gets `shrink_tail_supported` (1/0: free
/// space at the end of its last allocation group could go).
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let mut out = WorkloadOutput::default();
    let grown = grow(pfs, opts);
    record(&mut out, "grow", grown);
    let shrunk = shrink(pfs, opts);
    if shrunk.is_err() && !is_mounted(pfs.mountpoint()) {
        // The caller needs the filesystem mounted again; failing that is fatal.
        pfs.mount()?;
    }
    match shrunk {
        Ok(Shrunk { general, tail }) => {
            record(&mut out, "shrink", Ok(general));
            if let Some(tail) = tail {
                record_tail(&mut out, tail);
            }
        }
        Err(e) => record(&mut out, "shrink", Err(e)),
    }
    Ok(out)
}

fn record(out: &mut WorkloadOutput, dir: &str, step: Result<Step>) {
    match step {
        Ok(s) => {
            out.metrics.push(supported(
                MetricId::registered(&format!("{dir}_supported")),
                s.changed,
            ));
            if s.changed {
                out.metrics.push(Metric::new(
                    MetricId::registered(&format!("{dir}_seconds")),
                    "s",
                    s.seconds,
                ));
                out.metrics.push(supported(
                    MetricId::registered(&format!("{dir}_online")),
                    s.online,
                ));
            }
            out.notes.push(s.note);
        }
        Err(e) => {
            out.metrics.push(supported(
                MetricId::registered(&format!("{dir}_supported")),
                false,
            ));
            out.notes.push(format!("{dir} failed: {e}"));
        }
    }
}

/// The XFS-only tail shrink: its own 1/0 metric and its note (its time is not a headline).
fn record_tail(out: &mut WorkloadOutput, tail: Step) {
    out.metrics
        .push(supported(registry::SHRINK_TAIL_SUPPORTED, tail.changed));
    out.notes.push(tail.note);
}

fn grow(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<Step> {
    let dev = pfs.device().to_path_buf();
    let mnt = pfs.mountpoint().to_path_buf();
    let image = sys::loop_backing_file(&dev)?;
    let before = sys::fs_size(&mnt)?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&image)
        .map_err(|e| Error::io("cannot open the probe image", &image, e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", &image, e))?
        .len();
    file.set_len(len + opts.resize_step)
        .map_err(|e| Error::io("cannot enlarge", &image, e))?;
    sys::loop_set_capacity(&dev)?;
    let driver = match super::driver_of(pfs) {
        Ok(d) => d,
        Err(why) => return Ok(Step::unsupported(why)),
    };
    let grown = match driver.grow(&mut AsLive(&mut *pfs), opts.timeout)? {
        Outcome::Done(g) => g,
        Outcome::Unsupported(why) => return Ok(Step::unsupported(why)),
    };
    let after = crate::fs::ops::settled_size(pfs.mountpoint(), before)?;
    Ok(Step {
        changed: after > before,
        seconds: grown.seconds,
        online: grown.online,
        note: format!(
            "grow: `{}` took the filesystem from {} to {} bytes{}",
            command::display(&grown.argv),
            before,
            after,
            grown.note
        ),
    })
}

fn shrink(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<Shrunk> {
    let unsupported = |why: String| Shrunk {
        general: Step::unsupported(why),
        tail: None,
    };
    let driver = match super::driver_of(pfs) {
        Ok(d) => d,
        Err(why) => return Ok(unsupported(why)),
    };
    let live = &mut AsLive(&mut *pfs);
    Ok(
        match driver.shrink(live, opts.resize_step, opts.resize_shrink, opts.timeout)? {
            Outcome::Done(s) => s,
            Outcome::Unsupported(why) => unsupported(why),
        },
    )
}

fn is_mounted(mnt: &Path) -> bool {
    super::mount_source(mnt).is_some()
}
