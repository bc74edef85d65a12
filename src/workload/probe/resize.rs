//! `probe-resize`: grow the filesystem after its loop image grew, then try to shrink it.
//!
//! Grow: enlarge the image file, LOOP_SET_CAPACITY, then the filesystem's own grow command
//! (online). Shrink: give back what the grow added — ext4 offline (`e2fsck -f` + `resize2fs`),
//! btrfs online, ZFS has no way to shrink a vdev. XFS (kernel ≥ 5.12, `xfs_growfs -D`, marked
//! experimental) can only give back free space at the end of its last allocation group and can
//! never remove a group, so for XFS the general shrink is sized to cross the last group's start
//! and a second, small shrink inside that group's free tail is reported apart
//! (`shrink_tail_supported`). A direction counts as supported only when the size statvfs
//! reports really changed.

use super::{ProbeFs, ProbeOptions, supported, sys};
use crate::fs::caps::{Grow, OfflineResize, Shrink};
use crate::host::command::{self, argv};
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

/// What one resize direction did.
struct Step {
    /// The size statvfs reports changed in the asked direction.
    changed: bool,
    seconds: f64,
    /// Done while mounted.
    online: bool,
    note: String,
}

impl Step {
    fn unsupported(note: impl Into<String>) -> Step {
        Step {
            changed: false,
            seconds: 0.0,
            online: false,
            note: note.into(),
        }
    }
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
    let d = dev.to_string_lossy().to_string();
    let m = mnt.to_string_lossy().to_string();
    let caps = crate::fs::caps::of(pfs.fs());
    let (cmd, offline) = match caps.grow {
        Grow::Device {
            argv: words,
            offline,
        } => (with(words, &[&d]), offline),
        Grow::Mountpoint(words) => (with(words, &[&m]), None),
        Grow::PoolExpand => {
            let pool = super::zfs_pool(&mnt)?;
            (argv(&["zpool", "online", "-e", &pool, &d]), None)
        }
        Grow::None => {
            return Ok(Step::unsupported(format!(
                "no grow command known for {}",
                pfs.fs()
            )));
        }
    };
    let mut online = true;
    let (seconds, mut note) = match (command::run(&cmd, opts.timeout), offline) {
        (Ok(out), _) => (out.seconds, String::new()),
        // An online grow the kernel refuses (ext4's needs CAP_SYS_RESOURCE, which containers
        // lack) can still be done offline, which is what an administrator would do.
        (Err(e), Some(how)) => {
            let secs = offline_resize(pfs, &how, None, opts)?;
            online = false;
            (
                secs,
                format!(
                    " (online grow refused: {}; grown offline)",
                    first_line(&e.to_string())
                ),
            )
        }
        (Err(e), None) => return Err(e),
    };
    let mut seconds = seconds;
    let mut after = settled_size(pfs.mountpoint(), before)?;
    if after == before && caps.grow == Grow::PoolExpand {
        // zfs-fuse (pool v23) ignores `online -e` but sizes the vdev anew when it opens it.
        let start = std::time::Instant::now();
        pfs.unmount()?;
        pfs.mount()?;
        seconds += start.elapsed().as_secs_f64();
        after = settled_size(pfs.mountpoint(), before)?;
        online = false;
        note.push_str(" (`zpool online -e` had no effect; the pool grew on export + import)");
    }
    note.insert_str(
        0,
        &format!(
            "grow: `{}` took the filesystem from {} to {} bytes",
            command::display(&cmd),
            before,
            after
        ),
    );
    Ok(Step {
        changed: after > before,
        seconds,
        online,
        note,
    })
}

/// A driver's command words followed by `rest`.
fn with(words: &[&str], rest: &[&str]) -> Vec<String> {
    let mut v = argv(words);
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

/// Unmount, the forced check, the resize to `shrink_by` bytes less than now (or to the device
/// size when `None`), mount again ([`OfflineResize`]: ext4's `e2fsck -f -p`, `dumpe2fs -h`,
/// `resize2fs`). Returns the resize's seconds.
fn offline_resize(
    pfs: &mut dyn ProbeFs,
    how: &OfflineResize,
    shrink_by: Option<u64>,
    opts: &ProbeOptions,
) -> Result<f64> {
    let d = pfs.device().to_string_lossy().to_string();
    let t = opts.timeout;
    pfs.unmount()?;
    let result = (|| {
        let fsck_cmd = with(how.fsck, &[&d]);
        let fsck = command::run_unchecked(&fsck_cmd, t)?;
        if !matches!(fsck.status, Some(0 | 1)) {
            return Err(Error::tool(command::display(&fsck_cmd), fsck.combined()));
        }
        let mut cmd = with(how.resize, &[&d]);
        if let Some(by) = shrink_by {
            let geo_cmd = with(how.geometry, &[&d]);
            let head = command::run(&geo_cmd, t)?;
            let (count, bsize) = block_geometry(&head.stdout).ok_or_else(|| {
                Error::tool(command::display(&geo_cmd), "no Block count / Block size")
            })?;
            cmd.push(format!("{}K", (count * bsize - by) / 1024));
        }
        Ok(command::run(&cmd, t)?.seconds)
    })();
    pfs.mount()?;
    result
}

/// `Block count` and `Block size` from `dumpe2fs -h`.
fn block_geometry(head: &str) -> Option<(u64, u64)> {
    let field = |key: &str| -> Option<u64> {
        head.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((field("Block count:")?, field("Block size:")?))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}

/// The shrink attempts: the general one (give back what the grow added) and, for XFS, the
/// small one inside the last allocation group's free tail.
struct Shrunk {
    general: Step,
    tail: Option<Step>,
}

fn shrink(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<Shrunk> {
    let d = pfs.device().to_string_lossy().to_string();
    let m = pfs.mountpoint().to_string_lossy().to_string();
    let by = opts.resize_step;
    let t = opts.timeout;
    let general = match crate::fs::caps::of(pfs.fs()).shrink {
        Shrink::Offline(how) => {
            let before = sys::fs_size(pfs.mountpoint())?;
            let secs = offline_resize(pfs, &how, Some(by), opts)?;
            let cmd = with(how.resize, &[&d, "<size>"]);
            measured(pfs, before, by, &cmd, secs, false)?
        }
        Shrink::AgTail => return xfs_shrink(&*pfs, opts),
        Shrink::OnlineBy(words) => {
            let before = sys::fs_size(pfs.mountpoint())?;
            let cmd = with(words, &[&format!("-{}K", by / 1024), &m]);
            let secs = command::run(&cmd, t)?.seconds;
            measured(pfs, before, by, &cmd, secs, true)?
        }
        Shrink::None(why) => Step::unsupported(format!("shrink: {why}")),
    };
    Ok(Shrunk {
        general,
        tail: None,
    })
}

/// The step after a shrink command ran: did the size statvfs reports go down?
fn measured(
    pfs: &dyn ProbeFs,
    before: u64,
    by: u64,
    cmd: &[String],
    seconds: f64,
    online: bool,
) -> Result<Step> {
    let after = sys::fs_size(pfs.mountpoint())?;
    Ok(Step {
        changed: after < before,
        seconds,
        online,
        note: format!(
            "shrink by {} KiB: `{}` took the filesystem from {before} to {after} bytes",
            by / 1024,
            command::display(cmd),
        ),
    })
}

/// XFS: first a shrink that must remove an allocation group (what the grow added, and at least
/// one block more than the last group holds), which the kernel refuses; then `resize_shrink`
/// inside the last group, which works while that group's tail is free.
fn xfs_shrink(pfs: &dyn ProbeFs, opts: &ProbeOptions) -> Result<Shrunk> {
    let geo = xfs_geometry(pfs, opts)?;
    let last = geo.last_ag_blocks() * geo.bsize;
    let general_by = opts.resize_step.max(last + geo.bsize);
    let mut general = xfs_shrink_by(pfs, opts, general_by)?;
    general.note.push_str(&format!(
        " (more than the last of {} allocation groups holds, {} KiB: XFS cannot remove a \
         group)",
        geo.agcount,
        last / 1024
    ));
    let tail = if general.changed {
        None
    } else {
        // Stay well inside the last group: only its free tail can go.
        let tail_by = opts.resize_shrink.min(last / 2) / geo.bsize * geo.bsize;
        let mut tail = xfs_shrink_by(pfs, opts, tail_by)?;
        tail.note = format!(
            "{} (free space at the end of the last allocation group only: that group holds {} \
             KiB, so less than that can ever go, and only while its tail is free; the kernel \
             calls this shrink experimental)",
            tail.note.replacen("shrink by", "tail shrink by", 1),
            last / 1024
        );
        Some(tail)
    };
    Ok(Shrunk { general, tail })
}

/// `xfs_growfs -D` to `by` bytes fewer data blocks; a refusal is a `Step` that did not change.
fn xfs_shrink_by(pfs: &dyn ProbeFs, opts: &ProbeOptions, by: u64) -> Result<Step> {
    let m = pfs.mountpoint().to_string_lossy().to_string();
    let geo = xfs_geometry(pfs, opts)?;
    let before = sys::fs_size(pfs.mountpoint())?;
    let target = geo.blocks.saturating_sub(by / geo.bsize);
    let cmd = argv(&["xfs_growfs", "-D", &target.to_string(), &m]);
    match command::run(&cmd, opts.timeout) {
        Ok(o) => measured(pfs, before, by, &cmd, o.seconds, true),
        Err(e) => Ok(Step::unsupported(format!(
            "shrink by {} KiB: `{}` refused: {}",
            by / 1024,
            command::display(&cmd),
            last_line(&e.to_string())
        ))),
    }
}

fn xfs_geometry(pfs: &dyn ProbeFs, opts: &ProbeOptions) -> Result<XfsGeometry> {
    let m = pfs.mountpoint().to_string_lossy().to_string();
    let info = command::run(&argv(&["xfs_info", &m]), opts.timeout)?;
    XfsGeometry::parse(&info.stdout).ok_or_else(|| {
        Error::tool(
            "xfs_info",
            "cannot find the data section's bsize/blocks or agcount/agsize",
        )
    })
}

fn last_line(s: &str) -> String {
    s.trim().lines().last().unwrap_or_default().to_string()
}

/// ZFS reports the new space a moment after `zpool online -e`; other filesystems at once.
fn settled_size(mnt: &Path, before: u64) -> Result<u64> {
    let mut after = sys::fs_size(mnt)?;
    for _ in 0..50 {
        if after != before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        after = sys::fs_size(mnt)?;
    }
    Ok(after)
}

/// The data section's geometry as `xfs_info` prints it.
#[derive(Debug, PartialEq)]
struct XfsGeometry {
    /// Block size, bytes.
    bsize: u64,
    /// Data blocks.
    blocks: u64,
    /// Blocks per allocation group (the last one may be shorter).
    agsize: u64,
    /// Allocation groups.
    agcount: u64,
}

impl XfsGeometry {
    /// From the `meta-data` (agcount, agsize) and `data` (bsize, blocks) lines.
    fn parse(info: &str) -> Option<XfsGeometry> {
        let field = |section: &str, key: &str| -> Option<u64> {
            let line = info.lines().find(|l| l.trim_start().starts_with(section))?;
            let rest = &line[line.find(key)? + key.len()..];
            let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            num.parse().ok()
        };
        let geo = XfsGeometry {
            bsize: field("data", "bsize=")?,
            blocks: field("data", "blocks=")?,
            agsize: field("meta-data", "agsize=")?,
            agcount: field("meta-data", "agcount=")?,
        };
        (geo.bsize > 0 && geo.agcount > 0).then_some(geo)
    }

    /// Blocks of the last allocation group: the only one XFS can shrink, and only its tail.
    fn last_ag_blocks(&self) -> u64 {
        self.blocks.saturating_sub((self.agcount - 1) * self.agsize)
    }
}

fn is_mounted(mnt: &Path) -> bool {
    super::mount_source(mnt).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dumpe2fs() {
        let head = "Inode count:              49152\nBlock count:              196608\nReserved block count:     9830\nBlock size:               4096\n";
        assert_eq!(block_geometry(head), Some((196608, 4096)));
    }

    #[test]
    fn parses_xfs_info() {
        let info = "meta-data=/dev/loop0 isize=512 agcount=4, agsize=65536 blks\n\
                    data     =                       bsize=4096   blocks=262144, imaxpct=25\n\
                    log      =internal log           bsize=4096   blocks=16384, version=2\n";
        let geo = XfsGeometry::parse(info).unwrap();
        assert_eq!(
            geo,
            XfsGeometry {
                bsize: 4096,
                blocks: 262144,
                agsize: 65536,
                agcount: 4
            }
        );
        assert_eq!(geo.last_ag_blocks(), 65536);
        assert_eq!(XfsGeometry::parse("nothing"), None);
        // A 768 MiB filesystem grown to 1 GiB: four full groups, one more, and a 64 MiB one.
        let grown = "meta-data=/dev/loop0             isize=512    agcount=6, agsize=49152 blks\n\
                     data     =                       bsize=4096   blocks=262144, imaxpct=25\n";
        assert_eq!(XfsGeometry::parse(grown).unwrap().last_ag_blocks(), 16384);
    }
}
