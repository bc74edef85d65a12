//! `probe-fsck`: how long a read-only consistency check of a filled filesystem takes, and
//! whether it calls the filesystem clean.
//!
//! The checker is the driver's ([`crate::fs::Filesystem::check`]): ext4 `e2fsck -fn`, XFS
//! `xfs_repair -n`, btrfs `btrfs check --readonly` run on the unmounted device; ZFS has no
//! offline checker, so its driver scrubs the live pool instead. The data it checks, its
//! time per GiB and the online scrub's are [`super::fsck_rate`]'s.

use super::{AsLive, ProbeFs, ProbeOptions, supported};
use crate::fs::ops::Outcome;
use crate::host::command;
use crate::metrics::registry::{CLEAN, SECONDS, SUPPORTED};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

const DIRS: u32 = 50;

/// Fill, unmount, check, mount again.
pub fn probe(pfs: &mut dyn ProbeFs, opts: &ProbeOptions) -> Result<WorkloadOutput> {
    let root = pfs.mountpoint().join("fsbench-fsck");
    let small = fill(&root, opts.fsck_files, opts.seed)?;
    let data = small + super::fsck_rate::write_data(&root, opts.fsck_data_bytes, opts.seed)?;
    crate::host::sync_all();
    let checked = match super::driver_of(pfs) {
        Ok(d) => d.check(&mut AsLive(&mut *pfs), opts.timeout)?,
        Err(why) => Outcome::Unsupported(why),
    };
    let (cmd, seconds, clean, text) = match checked {
        Outcome::Done(c) => (c.argv, c.seconds, c.clean, c.output),
        Outcome::Unsupported(why) => {
            let _ = std::fs::remove_dir_all(&root);
            return Ok(super::unsupported(why));
        }
    };
    let mut rates = WorkloadOutput::default();
    super::fsck_rate::extend(pfs, opts, &mut rates, seconds, data)?;
    let _ = std::fs::remove_dir_all(pfs.mountpoint().join("fsbench-fsck"));
    let mut notes = vec![format!(
        "`{}` over {} files and {} MiB of data",
        command::display(&cmd),
        opts.fsck_files,
        data >> 20
    )];
    if !clean {
        notes.push(format!(
            "the check reported problems: {}",
            last_lines(&text, 5)
        ));
    }
    let mut metrics = vec![
        supported(SUPPORTED, true),
        Metric::new(SECONDS, "s", seconds),
        supported(CLEAN, clean),
    ];
    metrics.extend(rates.metrics);
    notes.extend(rates.notes);
    Ok(WorkloadOutput {
        metrics,
        notes,
        ..Default::default()
    })
}

/// `files` small files (1–8 KiB) spread over 50 directories; returns the bytes written.
fn fill(root: &Path, files: u32, seed: u64) -> Result<u64> {
    let mut buf = vec![0u8; 8192];
    super::sys::fill_pattern(&mut buf, seed);
    for d in 0..DIRS {
        let dir = root.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    }
    let mut written = 0;
    for i in 0..files {
        let p = root.join(format!("d{:02}/f{i:05}", i % DIRS));
        let len = 1024 * (1 + (i as usize * 7) % 8);
        let mut f = std::fs::File::create(&p).map_err(|e| Error::io("cannot create", &p, e))?;
        f.write_all(&buf[..len])
            .map_err(|e| Error::io("cannot write", &p, e))?;
        written += len as u64;
    }
    Ok(written)
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}
