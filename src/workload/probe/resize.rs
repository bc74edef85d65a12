//! `probe-resize`: grow the filesystem after its loop image grew, then try to shrink it.
//!
//! Grow: enlarge the image file, LOOP_SET_CAPACITY, then the filesystem's own grow command
//! (online). Shrink: ext4 offline (`e2fsck -f` + `resize2fs`), btrfs online, XFS through
//! `xfs_growfs -D` (kernel ≥ 5.12 can give back unused space at the end of the last
//! allocation group, marked experimental), ZFS has no way to shrink a vdev. A direction counts
//! as supported only when the size statvfs reports really changed.

use super::{ProbeFs, ProbeOptions, supported, sys};
use crate::host::command::{self, argv};
use crate::metrics::MetricId;
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::Path;

/// Run the resize probe on a mounted filesystem that lives on a loop device.
///
/// Metrics: `grow_supported`, `shrink_supported` (1/0); when supported, `<dir>_seconds` and
/// `<dir>_online` (1 when the filesystem stayed mounted, 0 when it had to be unmounted).
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let mut out = WorkloadOutput::default();
    let grown = grow(pfs, opts);
    record(&mut out, "grow", grown);
    let shrunk = shrink(pfs, opts);
    if shrunk.is_err() && !is_mounted(pfs.mountpoint()) {
        // The caller needs the filesystem mounted again; failing that is fatal.
        pfs.mount()?;
    }
    record(&mut out, "shrink", shrunk);
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
    let cmd = match pfs.fs() {
        "ext4" => argv(&["resize2fs", &d]),
        "xfs" => argv(&["xfs_growfs", &m]),
        "btrfs" => argv(&["btrfs", "filesystem", "resize", "max", &m]),
        "zfs" => {
            let pool = super::zfs_pool(&mnt)?;
            argv(&["zpool", "online", "-e", &pool, &d])
        }
        other => {
            return Ok(Step::unsupported(format!(
                "no grow command known for {other}"
            )));
        }
    };
    let mut online = true;
    let (seconds, mut note) = match command::run(&cmd, opts.timeout) {
        Ok(out) => (out.seconds, String::new()),
        // ext4's online resize ioctl needs CAP_SYS_RESOURCE; without it (containers) the
        // filesystem can still grow offline, which is what an administrator would do.
        Err(e) if pfs.fs() == "ext4" => {
            let secs = ext4_offline_resize(pfs, None, opts)?;
            online = false;
            (
                secs,
                format!(
                    " (online grow refused: {}; grown offline)",
                    first_line(&e.to_string())
                ),
            )
        }
        Err(e) => return Err(e),
    };
    let mut seconds = seconds;
    let mut after = settled_size(pfs.mountpoint(), before)?;
    if after == before && pfs.fs() == "zfs" {
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

/// Unmount, `e2fsck -f -p`, `resize2fs` to `shrink_by` bytes less than now (or to the device
/// size when `None`), mount again. Returns resize2fs's seconds.
fn ext4_offline_resize(
    pfs: &mut dyn ProbeFs,
    shrink_by: Option<u64>,
    opts: &ProbeOptions,
) -> Result<f64> {
    let d = pfs.device().to_string_lossy().to_string();
    let t = opts.timeout;
    pfs.unmount()?;
    let result = (|| {
        let fsck = command::run_unchecked(&argv(&["e2fsck", "-f", "-p", &d]), t)?;
        if !matches!(fsck.status, Some(0 | 1)) {
            return Err(Error::tool(format!("e2fsck -f -p {d}"), fsck.combined()));
        }
        let mut cmd = argv(&["resize2fs", &d]);
        if let Some(by) = shrink_by {
            let head = command::run(&argv(&["dumpe2fs", "-h", &d]), t)?;
            let (count, bsize) = ext4_blocks(&head.stdout).ok_or_else(|| {
                Error::tool(format!("dumpe2fs -h {d}"), "no Block count / Block size")
            })?;
            cmd.push(format!("{}K", (count * bsize - by) / 1024));
        }
        Ok(command::run(&cmd, t)?.seconds)
    })();
    pfs.mount()?;
    result
}

/// `Block count` and `Block size` from `dumpe2fs -h`.
fn ext4_blocks(head: &str) -> Option<(u64, u64)> {
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

fn shrink(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<Step> {
    let dev = pfs.device().to_path_buf();
    let mnt = pfs.mountpoint().to_path_buf();
    let before = sys::fs_size(&mnt)?;
    let by = opts.resize_shrink;
    let d = dev.to_string_lossy().to_string();
    let m = mnt.to_string_lossy().to_string();
    let t = opts.timeout;
    let (seconds, cmd) = match pfs.fs() {
        "ext4" => {
            // resize2fs shrinks only offline, after a forced check.
            let secs = ext4_offline_resize(pfs, Some(by), opts)?;
            (secs, argv(&["resize2fs", &d, "<size>"]))
        }
        "xfs" => {
            let info = command::run(&argv(&["xfs_info", &m]), t)?;
            let (bsize, blocks) = xfs_data_blocks(&info.stdout).ok_or_else(|| {
                Error::tool(
                    "xfs_info",
                    "cannot find the data section's bsize and blocks",
                )
            })?;
            let target = blocks - by / bsize;
            let cmd = argv(&["xfs_growfs", "-D", &target.to_string(), &m]);
            match command::run(&cmd, t) {
                Ok(o) => (o.seconds, cmd),
                Err(e) => return Ok(Step::unsupported(format!("shrink: XFS refused: {e}"))),
            }
        }
        "btrfs" => {
            let cmd = argv(&[
                "btrfs",
                "filesystem",
                "resize",
                &format!("-{}K", by / 1024),
                &m,
            ]);
            (command::run(&cmd, t)?.seconds, cmd)
        }
        "zfs" => {
            return Ok(Step::unsupported(
                "shrink: a ZFS pool cannot shrink its only top-level vdev",
            ));
        }
        other => {
            return Ok(Step::unsupported(format!(
                "no shrink command known for {other}"
            )));
        }
    };
    let mnt = pfs.mountpoint().to_path_buf();
    let after = sys::fs_size(&mnt)?;
    let mut note = format!(
        "shrink by {} KiB: `{}` took the filesystem from {} to {} bytes",
        by / 1024,
        command::display(&cmd),
        before,
        after
    );
    if pfs.fs() == "xfs" {
        note.push_str(" (xfs_growfs calls this experimental: only unused space at the end of the last allocation group can go)");
    }
    Ok(Step {
        changed: after < before,
        seconds,
        online: pfs.fs() != "ext4",
        note,
    })
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

/// `bsize` and `blocks` of the `data` line of xfs_info output.
fn xfs_data_blocks(info: &str) -> Option<(u64, u64)> {
    let line = info.lines().find(|l| l.trim_start().starts_with("data"))?;
    let field = |key: &str| -> Option<u64> {
        let rest = &line[line.find(key)? + key.len()..];
        let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        num.parse().ok()
    };
    Some((field("bsize=")?, field("blocks=")?))
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
        assert_eq!(ext4_blocks(head), Some((196608, 4096)));
    }

    #[test]
    fn parses_xfs_info() {
        let info = "meta-data=/dev/loop0 isize=512 agcount=4, agsize=65536 blks\n\
                    data     =                       bsize=4096   blocks=262144, imaxpct=25\n\
                    log      =internal log           bsize=4096   blocks=16384, version=2\n";
        assert_eq!(xfs_data_blocks(info), Some((4096, 262144)));
        assert_eq!(xfs_data_blocks("nothing"), None);
    }
}
