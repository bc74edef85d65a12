//! `probe-snapshot`: take a snapshot of a populated subvolume (btrfs) or dataset (ZFS) and
//! check it holds the data. ext4 and XFS have no snapshots of their own (supported 0).
//!
//! `seconds` is the wall time of the snapshot command, process start included, which is what
//! an administrator running it sees.

use super::{ProbeFs, ProbeOptions, supported};
use crate::host::command;
use crate::metrics::registry::{SECONDS, SUPPORTED};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::Path;

const DATA_FILES: u64 = 64;
const FILE_BYTES: u64 = 256 << 10;

/// Run the snapshot probe on a mounted filesystem.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    match pfs.fs() {
        "btrfs" => btrfs(pfs.mountpoint(), opts),
        "zfs" => {
            let ds = pfs.dataset().ok_or_else(|| {
                Error::workload("probe-snapshot", "cannot find the ZFS dataset of the mount")
            })?;
            zfs(pfs.mountpoint(), &ds, opts)
        }
        other => Ok(super::unsupported(format!(
            "{other} has no native snapshots (an LVM or device-mapper snapshot would be outside the filesystem)"
        ))),
    }
}

fn populate(dir: &Path, seed: u64) -> Result<()> {
    for i in 0..DATA_FILES {
        super::reflink::write_pattern_file(&dir.join(format!("f{i:03}")), FILE_BYTES, seed + i)?;
    }
    Ok(())
}

fn btrfs(mnt: &Path, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let data = mnt.join("fsbench-data");
    let snap = mnt.join("fsbench-snap");
    let t = opts.timeout;
    command::run(
        &command::argv(&["btrfs", "subvolume", "create", &data.to_string_lossy()]),
        t,
    )?;
    let result = (|| {
        populate(&data, opts.seed)?;
        let out = command::run(
            &command::argv(&[
                "btrfs",
                "subvolume",
                "snapshot",
                &data.to_string_lossy(),
                &snap.to_string_lossy(),
            ]),
            t,
        )?;
        check_copy(&data, &snap)?;
        Ok(out.seconds)
    })();
    for sv in [&snap, &data] {
        if sv.exists() {
            let _ = command::run(
                &command::argv(&["btrfs", "subvolume", "delete", &sv.to_string_lossy()]),
                t,
            );
        }
    }
    Ok(done(result?))
}

fn zfs(mnt: &Path, dataset: &str, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let t = opts.timeout;
    let dir = mnt.join("fsbench-data");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    populate(&dir, opts.seed)?;
    let snap = format!("{dataset}@fsbench-probe");
    let out = command::run(&command::argv(&["zfs", "snapshot", &snap]), t)?;
    let listed = command::run(
        &command::argv(&["zfs", "list", "-H", "-t", "snapshot", "-o", "name"]),
        t,
    );
    let _ = command::run(&command::argv(&["zfs", "destroy", &snap]), t);
    let _ = std::fs::remove_dir_all(&dir);
    if !listed?.stdout.lines().any(|l| l.trim() == snap) {
        return Err(Error::workload(
            "probe-snapshot",
            format!("`zfs snapshot {snap}` succeeded but `zfs list -t snapshot` does not show it"),
        ));
    }
    Ok(done(out.seconds))
}

fn done(seconds: f64) -> WorkloadOutput {
    WorkloadOutput {
        metrics: vec![
            supported(SUPPORTED, true),
            Metric::new(SECONDS, "s", seconds),
        ],
        notes: vec![format!(
            "snapshot of {DATA_FILES} files × {} KiB",
            FILE_BYTES >> 10
        )],
        ..Default::default()
    }
}

/// The snapshot must hold every file with the same contents as the source.
fn check_copy(src: &Path, snap: &Path) -> Result<()> {
    for i in 0..DATA_FILES {
        let name = format!("f{i:03}");
        let a = std::fs::read(src.join(&name))
            .map_err(|e| Error::io("cannot read", src.join(&name), e))?;
        let b = std::fs::read(snap.join(&name))
            .map_err(|e| Error::io("snapshot lacks a file; cannot read", snap.join(&name), e))?;
        if a != b {
            return Err(Error::workload(
                "probe-snapshot",
                format!("{} differs from its source", snap.join(&name).display()),
            ));
        }
    }
    Ok(())
}
