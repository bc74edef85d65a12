//! Growing a filesystem into a device that grew, and shrinking it, by the mechanisms a
//! driver's [`Caps`] names (the defaults of [`super::Filesystem::grow`] and
//! [`super::Filesystem::shrink`]): ext4 online `resize2fs` (offline when the kernel refuses)
//! and offline shrink (`e2fsck -f` + `resize2fs`), Btrfs online both ways, XFS online grow
//! and, in its own folder, the free tail of its last allocation group (kernel ≥ 5.12,
//! `xfs_growfs -D`, marked experimental: `fs/drivers/xfs/resize.rs`). A pool's expand is its driver's own.
//!
//! A shrink counts as done only when the size statvfs reports really went down.

use super::caps::{Caps, Grow, OfflineResize, Shrink};
use super::ops::{Live, Outcome, fs_size, with};
use crate::host::command;
use crate::{Error, Result};
use std::time::Duration;

/// What a grow command did (the probe measures the size before and after).
#[derive(Debug, Clone)]
pub struct Grown {
    /// The grow command, as the note shows it.
    pub argv: Vec<String>,
    /// Its seconds (with an offline fallback or a pool's export + import, those too).
    pub seconds: f64,
    /// The filesystem stayed mounted.
    pub online: bool,
    /// What the note adds after the sizes (a fallback taken), starting with a space, or empty.
    pub note: String,
}

/// What one shrink attempt did.
#[derive(Debug, Clone)]
pub struct Step {
    /// The size statvfs reports went down.
    pub changed: bool,
    /// The shrink's seconds.
    pub seconds: f64,
    /// Done while mounted.
    pub online: bool,
    /// One sentence for the probe's notes.
    pub note: String,
}

impl Step {
    /// An attempt that could not be made, and why.
    pub fn unsupported(note: impl Into<String>) -> Step {
        Step {
            changed: false,
            seconds: 0.0,
            online: false,
            note: note.into(),
        }
    }
}

/// The shrink attempts: the general one (give back `by` bytes) and, where the driver has one
/// (XFS), a smaller one after it failed (the last allocation group's free tail).
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// Giving back what the grow added.
    pub general: Step,
    /// The driver's smaller attempt after the general one failed (XFS: the last allocation
    /// group's free tail).
    pub tail: Option<Step>,
}

/// Grow by the command [`Caps::grow`] names; an online grow the kernel refuses (ext4's needs
/// CAP_SYS_RESOURCE, which containers lack) is done offline where the driver says how.
pub fn grow(
    caps: &Caps,
    name: &str,
    live: &mut dyn Live,
    timeout: Duration,
) -> Result<Outcome<Grown>> {
    let d = live.device().to_string_lossy().to_string();
    let m = live.mountpoint().to_string_lossy().to_string();
    let (cmd, offline) = match caps.grow {
        Grow::Device {
            argv: words,
            offline,
        } => (with(words, &[&d]), offline),
        Grow::Mountpoint(words) => (with(words, &[&m]), None),
        Grow::Own => {
            return Ok(Outcome::Unsupported(format!(
                "{name} declares a grow of its own but its driver runs none"
            )));
        }
        Grow::None => {
            return Ok(Outcome::Unsupported(format!(
                "no grow command known for {name}"
            )));
        }
    };
    match (command::run(&cmd, timeout), offline) {
        (Ok(out), _) => Ok(Outcome::Done(Grown {
            argv: cmd,
            seconds: out.seconds,
            online: true,
            note: String::new(),
        })),
        (Err(e), Some(how)) => {
            let seconds = offline_resize(live, &how, None, timeout)?;
            Ok(Outcome::Done(Grown {
                argv: cmd,
                seconds,
                online: false,
                note: format!(
                    " (online grow refused: {}; grown offline)",
                    first_line(&e.to_string())
                ),
            }))
        }
        (Err(e), None) => Err(e),
    }
}

/// Shrink by `by` bytes with the mechanism [`Caps::shrink`] names (a driver with a shrink of
/// its own, XFS's tail shrink, overrides `Filesystem::shrink` instead).
pub fn shrink(
    caps: &Caps,
    live: &mut dyn Live,
    by: u64,
    timeout: Duration,
) -> Result<Outcome<Shrunk>> {
    let d = live.device().to_string_lossy().to_string();
    let m = live.mountpoint().to_string_lossy().to_string();
    let general = match caps.shrink {
        Shrink::Offline(how) => {
            let before = fs_size(live.mountpoint())?;
            let secs = offline_resize(live, &how, Some(by), timeout)?;
            let cmd = with(how.resize, &[&d, "<size>"]);
            measured(&*live, before, by, &cmd, secs, false)?
        }
        Shrink::Own => {
            return Ok(Outcome::Unsupported(
                "shrink: its driver declares a shrink of its own but runs none".into(),
            ));
        }
        Shrink::OnlineBy(words) => {
            let before = fs_size(live.mountpoint())?;
            let cmd = with(words, &[&format!("-{}K", by / 1024), &m]);
            let secs = command::run(&cmd, timeout)?.seconds;
            measured(&*live, before, by, &cmd, secs, true)?
        }
        Shrink::None(why) => return Ok(Outcome::Unsupported(format!("shrink: {why}"))),
    };
    Ok(Outcome::Done(Shrunk {
        general,
        tail: None,
    }))
}

/// Unmount, the forced check, the resize to `shrink_by` bytes less than now (or to the device
/// size when `None`), mount again ([`OfflineResize`]: ext4's `e2fsck -f -p`, `dumpe2fs -h`,
/// `resize2fs`). Returns the resize's seconds.
fn offline_resize(
    live: &mut dyn Live,
    how: &OfflineResize,
    shrink_by: Option<u64>,
    t: Duration,
) -> Result<f64> {
    let d = live.device().to_string_lossy().to_string();
    live.unmount()?;
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
    live.mount()?;
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

pub(crate) fn last_line(s: &str) -> String {
    s.trim().lines().last().unwrap_or_default().to_string()
}

/// The attempt after a shrink command ran: did the size statvfs reports go down?
pub(crate) fn measured(
    live: &dyn Live,
    before: u64,
    by: u64,
    cmd: &[String],
    seconds: f64,
    online: bool,
) -> Result<Step> {
    let after = fs_size(live.mountpoint())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dumpe2fs() {
        let head = "Inode count:              49152\nBlock count:              196608\nReserved block count:     9830\nBlock size:               4096\n";
        assert_eq!(block_geometry(head), Some((196608, 4096)));
    }
}
