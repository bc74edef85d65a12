//! What a driver does to a live filesystem beyond create and mount: check it, snapshot it,
//! take it off its device and bring it back (grow and shrink are [`super::resize`]).
//!
//! The capability probes (`workload/probe`) call these through [`super::Filesystem`]'s
//! methods and hold no filesystem knowledge; the kernel filesystems' mechanisms are chosen by
//! their [`Caps`] (the words of their tools), a pool's are its driver's own (in its folder,
//! `fs/drivers/zfs/pool.rs`). What a driver cannot do is an [`Outcome::Unsupported`] with the
//! reason, which the probes report as "not supported".

use super::caps::{Caps, Check, Snapshot};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::Path;
use std::time::Duration;

/// A mounted filesystem a driver may work on, take off its device and put back: the probes'
/// own image, whose owner knows how to mount it again.
pub trait Live {
    /// The block device it lives on.
    fn device(&self) -> &Path;
    /// Where it is mounted while mounted.
    fn mountpoint(&self) -> &Path;
    /// The mount's source in mountinfo (a device, or for a pool its dataset `pool/ds`).
    fn source(&self) -> Option<String>;
    /// Unmount it (a pool: export) so the device is quiet.
    fn unmount(&mut self) -> Result<()>;
    /// Mount it again after [`Live::unmount`].
    fn mount(&mut self) -> Result<()>;
}

/// What a driver did, or why it cannot.
#[derive(Debug)]
pub enum Outcome<T> {
    /// Done.
    Done(T),
    /// Not something this filesystem (or fsbench for it) can do; the reason, one sentence.
    Unsupported(String),
}

/// A read-only consistency check that ran.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The command that checked (as shown in the probe's note).
    pub argv: Vec<String>,
    /// Its wall time.
    pub seconds: f64,
    /// It called the filesystem clean.
    pub clean: bool,
    /// What it printed (the last lines go into a note when not clean).
    pub output: String,
}

/// Run the read-only check the driver's [`Caps::check`] names (the default of
/// [`super::Filesystem::check`]): an offline checker on the unmounted device, mounted again
/// afterwards.
pub fn check(
    caps: &Caps,
    name: &str,
    live: &mut dyn Live,
    timeout: Duration,
) -> Result<Outcome<Checked>> {
    match caps.check {
        Check::Offline(words) => {
            let mut cmd = argv(words);
            cmd.push(live.device().to_string_lossy().to_string());
            live.unmount()?;
            let res = command::run_unchecked(&cmd, timeout);
            live.mount()?;
            let out = res?;
            Ok(Outcome::Done(Checked {
                seconds: out.seconds,
                clean: out.status == Some(0),
                output: out.combined(),
                argv: cmd,
            }))
        }
        Check::Own => Ok(Outcome::Unsupported(format!(
            "{name} declares a check of its own but its driver runs none"
        ))),
        Check::None => Ok(Outcome::Unsupported(format!(
            "no read-only checker known for {name}"
        ))),
    }
}

/// Where a snapshot probe works: the directory it fills and what it checks after.
pub struct SnapshotJob<'a> {
    /// Fill the data directory (created by the driver, a subvolume where it has them).
    pub fill: &'a mut dyn FnMut(&Path) -> Result<()>,
    /// Compare the data directory with its snapshot (where the snapshot is a directory).
    pub verify: &'a mut dyn FnMut(&Path, &Path) -> Result<()>,
}

/// Snapshot a filled directory with the driver's [`Caps::snapshot`] mechanism (the default
/// of [`super::Filesystem::snapshot`]): Btrfs-style subvolumes, `WORDS create`, `WORDS
/// snapshot`, `WORDS delete`. Returns the snapshot command's seconds.
pub fn snapshot(
    caps: &Caps,
    name: &str,
    live: &dyn Live,
    job: SnapshotJob<'_>,
    timeout: Duration,
) -> Result<Outcome<f64>> {
    let words = match caps.snapshot {
        Snapshot::Subvolume(words) => words,
        Snapshot::Own => {
            return Ok(Outcome::Unsupported(format!(
                "{name} declares snapshots of its own but its driver takes none"
            )));
        }
        Snapshot::None => {
            return Ok(Outcome::Unsupported(format!(
                "{name} has no native snapshots (an LVM or device-mapper snapshot would be outside the filesystem)"
            )));
        }
    };
    let mnt = live.mountpoint();
    let data = mnt.join("fsbench-data");
    let snap = mnt.join("fsbench-snap");
    let cmd = |verb: &str, rest: &[&Path]| {
        let mut v = argv(words);
        v.push(verb.to_string());
        v.extend(rest.iter().map(|p| p.to_string_lossy().into_owned()));
        v
    };
    command::run(&cmd("create", &[&data]), timeout)?;
    let result = (|| {
        (job.fill)(&data)?;
        let out = command::run(&cmd("snapshot", &[&data, &snap]), timeout)?;
        (job.verify)(&data, &snap)?;
        Ok(out.seconds)
    })();
    for sv in [&snap, &data] {
        if sv.exists() {
            let _ = command::run(&cmd("delete", &[sv]), timeout);
        }
    }
    Ok(Outcome::Done(result?))
}

/// The size statvfs reports for the filesystem at `path`, bytes.
pub fn fs_size(path: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(path)
        .map_err(|e| Error::io("cannot statvfs", path, std::io::Error::from(e)))?;
    Ok(st.f_blocks * st.f_frsize)
}

/// The size at `mnt` once it differs from `before`, waiting up to 5 s (a pool reports new
/// space a moment after it grew; the others at once).
pub fn settled_size(mnt: &Path, before: u64) -> Result<u64> {
    let mut after = fs_size(mnt)?;
    for _ in 0..50 {
        if after != before {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        after = fs_size(mnt)?;
    }
    Ok(after)
}

/// A driver's command words followed by `rest`.
pub(crate) fn with(words: &[&str], rest: &[&str]) -> Vec<String> {
    let mut v = argv(words);
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}
