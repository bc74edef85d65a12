//! `probe-snapshot`: take a snapshot of a populated subvolume (btrfs) or dataset (ZFS) and
//! check it holds the data. ext4 and XFS have no snapshots of their own (supported 0). How
//! a filesystem snapshots is its driver's ([`crate::fs::Filesystem::snapshot`]).
//!
//! `seconds` is the wall time of the snapshot command, process start included, which is what
//! an administrator running it sees.

use super::{AsLive, ProbeFs, ProbeOptions, supported};
use crate::fs::ops::{Outcome, SnapshotJob};
use crate::metrics::registry::{SECONDS, SUPPORTED};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::Path;

const DATA_FILES: u64 = 64;
const FILE_BYTES: u64 = 256 << 10;

/// Run the snapshot probe on a mounted filesystem: its driver snapshots a directory of
/// patterned files ([`crate::fs::Filesystem::snapshot`]), which must hold them all.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let d = match super::driver_of(pfs) {
        Ok(d) => d,
        Err(why) => return Ok(super::unsupported(why)),
    };
    let seed = opts.seed;
    let job = SnapshotJob {
        fill: &mut |dir: &Path| populate(dir, seed),
        verify: &mut check_copy,
    };
    match d.snapshot(&AsLive(&mut *pfs), job, opts.timeout)? {
        Outcome::Done(seconds) => Ok(done(seconds)),
        Outcome::Unsupported(why) => Ok(super::unsupported(why)),
    }
}

fn populate(dir: &Path, seed: u64) -> Result<()> {
    for i in 0..DATA_FILES {
        super::reflink::write_pattern_file(&dir.join(format!("f{i:03}")), FILE_BYTES, seed + i)?;
    }
    Ok(())
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
