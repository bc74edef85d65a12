//! `probe-fsck`'s rates: the check's seconds per GiB of data, and the online scrub's.
//!
//! Seed 004 gives maintenance times for large volumes (fsck of 10 TB ext4 in 20–40 minutes
//! after an unclean shutdown, a 12 TB Btrfs scrub in 14 hours); per GiB of data they compare
//! with a volume of any size. Before the check, `probe-fsck` writes `fsck_data_bytes` of
//! patterned data in 8 MiB files beside its small files ([`write_data`]), so a scrub has data
//! blocks to read; after the check, [`extend`] adds the rates and runs the driver's online
//! scrub ([`crate::fs::maintenance::Scrub`]). At the probe's small sizes a check's fixed
//! start-up cost is a large part of its time, so its rate here is an upper bound of what a
//! large volume would see.

use super::{ProbeFs, ProbeOptions};
use crate::fs::maintenance::Scrub;
use crate::host::command;
use crate::metrics::registry::{CHECKED_BYTES, SCRUB_SECONDS_PER_GIB, SECONDS_PER_GIB};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Size of each data file.
const CHUNK: u64 = 8 << 20;
const GIB: f64 = (1u64 << 30) as f64;

/// Write `bytes` (rounded up to 8 MiB) of patterned data under `root`; returns the bytes written.
pub fn write_data(root: &Path, bytes: u64, seed: u64) -> Result<u64> {
    let dir = root.join("data");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    let mut buf = vec![0u8; CHUNK as usize];
    let mut written = 0;
    for i in 0..bytes.div_ceil(CHUNK) {
        if crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        // A different pattern per file, so no filesystem can deduplicate or compress it away.
        super::sys::fill_pattern(&mut buf, seed ^ i);
        let p = dir.join(format!("data{i:04}"));
        let mut f = std::fs::File::create(&p).map_err(|e| Error::io("cannot create", &p, e))?;
        f.write_all(&buf)
            .map_err(|e| Error::io("cannot write", &p, e))?;
        written += CHUNK;
    }
    Ok(written)
}

/// Seconds per GiB of `bytes`; `None` without data.
pub fn per_gib(seconds: f64, bytes: u64) -> Option<f64> {
    (bytes > 0).then(|| seconds * GIB / bytes as f64)
}

/// Add `checked_bytes`, the check's `seconds_per_gib` and, where the driver can scrub the mounted
/// filesystem, `scrub_seconds_per_gib` (ZFS: `probe-fsck`'s check is its scrub already).
pub fn extend(
    pfs: &mut dyn ProbeFs,
    opts: &ProbeOptions,
    out: &mut WorkloadOutput,
    check_seconds: f64,
    data_bytes: u64,
) -> Result<()> {
    out.metrics
        .push(Metric::new(CHECKED_BYTES, "bytes", data_bytes as f64));
    let Some(check_rate) = per_gib(check_seconds, data_bytes) else {
        return Ok(());
    };
    out.metrics
        .push(Metric::new(SECONDS_PER_GIB, "s/GiB", check_rate));
    match pfs.maintenance().scrub {
        Some(Scrub::Foreground(words)) => {
            let mut cmd = command::argv(words);
            cmd.push(pfs.mountpoint().to_string_lossy().into_owned());
            let res = command::run_unchecked(&cmd, opts.timeout)?;
            if res.status == Some(0) {
                if let Some(rate) = per_gib(res.seconds, data_bytes) {
                    out.metrics
                        .push(Metric::new(SCRUB_SECONDS_PER_GIB, "s/GiB", rate));
                }
                out.notes.push(format!(
                    "`{}`: {:.2} s over {} MiB of data",
                    command::display(&cmd),
                    res.seconds,
                    data_bytes >> 20
                ));
            } else {
                out.notes.push(format!(
                    "`{}` failed (exit {:?}): {}",
                    command::display(&cmd),
                    res.status,
                    res.combined().trim()
                ));
            }
        }
        Some(Scrub::Pool) => {
            out.metrics
                .push(Metric::new(SCRUB_SECONDS_PER_GIB, "s/GiB", check_rate));
        }
        None => out.notes.push(format!(
            "{} has no online scrub of its data (no data checksums)",
            pfs.fs()
        )),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_per_gib_of_data() {
        assert_eq!(per_gib(2.0, 512 << 20), Some(4.0));
        assert_eq!(per_gib(0.5, 1 << 30), Some(0.5));
        assert_eq!(per_gib(1.0, 0), None);
    }

    #[test]
    fn data_is_written_in_whole_chunks_with_different_patterns() {
        let dir = tempfile::tempdir().unwrap();
        let n = write_data(dir.path(), 9 << 20, 7).unwrap();
        assert_eq!(n, 16 << 20);
        let a = std::fs::read(dir.path().join("data/data0000")).unwrap();
        let b = std::fs::read(dir.path().join("data/data0001")).unwrap();
        assert_eq!(a.len() as u64, CHUNK);
        assert_ne!(a[..4096], b[..4096]);
    }
}
