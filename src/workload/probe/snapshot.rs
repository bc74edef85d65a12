//! `probe-snapshot`: take a snapshot of a populated subvolume (btrfs) or dataset (ZFS) and
//! check it holds the data. ext4 and XFS have no snapshots of their own (supported 0).
//!
//! `seconds` is the wall time of the snapshot command, process start included, which is what
//! an administrator running it sees.

use super::{ProbeFs, ProbeOptions, supported};
use crate::fs::caps::Snapshot;
use crate::host::command;
use crate::metrics::registry::{SECONDS, SUPPORTED};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::Path;

const DATA_FILES: u64 = 64;
const FILE_BYTES: u64 = 256 << 10;

/// Run the snapshot probe on a mounted filesystem.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    match crate::fs::caps::of(pfs.fs()).snapshot {
        Snapshot::Subvolume(words) => subvolume(words, pfs.mountpoint(), opts),
        Snapshot::Dataset => {
            let ds = pfs.dataset().ok_or_else(|| {
                Error::workload("probe-snapshot", "cannot find the ZFS dataset of the mount")
            })?;
            dataset(pfs.mountpoint(), &ds, opts)
        }
        Snapshot::None => Ok(super::unsupported(format!(
            "{} has no native snapshots (an LVM or device-mapper snapshot would be outside the filesystem)",
            pfs.fs()
        ))),
    }
}

fn populate(dir: &Path, seed: u64) -> Result<()> {
    for i in 0..DATA_FILES {
        super::reflink::write_pattern_file(&dir.join(format!("f{i:03}")), FILE_BYTES, seed + i)?;
    }
    Ok(())
}

/// Subvolumes (Btrfs): `WORDS create`, `WORDS snapshot`, `WORDS delete`.
fn subvolume(words: &[&str], mnt: &Path, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let data = mnt.join("fsbench-data");
    let snap = mnt.join("fsbench-snap");
    let t = opts.timeout;
    let cmd = |verb: &str, rest: &[&Path]| {
        let mut v = command::argv(words);
        v.push(verb.to_string());
        v.extend(rest.iter().map(|p| p.to_string_lossy().into_owned()));
        v
    };
    command::run(&cmd("create", &[&data]), t)?;
    let result = (|| {
        populate(&data, opts.seed)?;
        let out = command::run(&cmd("snapshot", &[&data, &snap]), t)?;
        check_copy(&data, &snap)?;
        Ok(out.seconds)
    })();
    for sv in [&snap, &data] {
        if sv.exists() {
            let _ = command::run(&cmd("delete", &[sv]), t);
        }
    }
    Ok(done(result?))
}

/// A dataset snapshot (ZFS).
fn dataset(mnt: &Path, dataset: &str, opts: &ProbeOptions) -> Result<WorkloadOutput> {
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
