//! The disk's own pace, read right before each I/O job on an image target.
//!
//! A virtual disk has slow patches that last a minute or two: every job of the setup-round
//! that falls on one is slow, whatever the filesystem. A short read of a file of fsbench's own
//! beside the image, outside the filesystem under test, sees the same patch. Its IOPS are
//! recorded beside the job's metrics ([`DISK_REF_IOPS`], a fact, never ranked), and the one
//! statistic takes the part of the job's ratio that follows them out
//! ([`crate::stats::adjusted`]). Only an image target has a place beside it on the same disk:
//! a `--device`, a `--dir` or zram has none, and there nothing is read.

use crate::engine::{Backend, JobSpec, RwMode};
use crate::host::ledger::Held;
use crate::metrics::registry::DISK_REF_IOPS;
use crate::workload::Metric;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Size of the reference file: larger than any cache the host keeps for one file's direct
/// reads, small enough to write in about a second.
pub const SIZE: u64 = 256 << 20;
/// How long each reading lasts (measured by hand: 0.5 s of 4K random reads at queue depth 8
/// tracks the slots' pace; docs/design-notes.md "A probe of the disk beside each job").
pub const RUNTIME: Duration = Duration::from_millis(500);
/// Outstanding reads.
const IODEPTH: u32 = 8;

/// The reference file beside the image; removed when dropped.
pub struct DiskRef {
    path: PathBuf,
    _held: Held,
}

impl DiskRef {
    /// Create and fill the reference file in `dir` (the image's directory), fsync'd, so its
    /// reads reach the disk (a sparse file's would not).
    pub fn create(dir: &Path, run_id: &str) -> crate::Result<DiskRef> {
        let path = dir.join(format!("fsbench-{run_id}-disk-ref.dat"));
        let (file, held) = crate::host::ledger::create_file(&path, "the disk's reference file")?;
        drop(file);
        let me = DiskRef { path, _held: held };
        crate::engine::lay_out(&me.spec(), None)?;
        Ok(me)
    }

    fn spec(&self) -> JobSpec {
        JobSpec {
            filename: self.path.clone(),
            rw: RwMode::Randread,
            bs: 4096,
            iodepth: IODEPTH,
            numjobs: 1,
            backend: Backend::IoUring,
            direct: true,
            size: Some(SIZE),
            runtime: Some(RUNTIME),
            seed: Some(0x5eed),
            ..JobSpec::default()
        }
    }

    /// One reading: the disk's 4K random-read IOPS now.
    pub fn measure(&self) -> crate::Result<Metric> {
        let report = crate::engine::run(&self.spec())?;
        Ok(Metric::new(DISK_REF_IOPS, "IOPS", report.read.iops))
    }
}

impl Drop for DiskRef {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!(
                "fsbench: warning: cannot remove {}: {e}",
                self.path.display()
            );
        }
    }
}
