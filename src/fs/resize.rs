//! Growing a filesystem into a device that grew, and shrinking it, by the mechanisms a
//! driver's [`Caps`] names (the defaults of [`super::Filesystem::grow`] and
//! [`super::Filesystem::shrink`]): ext4 online `resize2fs` (offline when the kernel refuses)
//! and offline shrink (`e2fsck -f` + `resize2fs`), Btrfs online both ways, XFS online grow
//! and the free tail of its last allocation group (kernel ≥ 5.12, `xfs_growfs -D`, marked
//! experimental). A pool's expand is the ZFS driver's own ([`super::zfs_pool`]).
//!
//! A shrink counts as done only when the size statvfs reports really went down.

use super::caps::{Caps, Grow, OfflineResize, Shrink};
use super::ops::{Live, Outcome, fs_size, with};
use crate::host::command::{self, argv};
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

/// The shrink attempts: the general one (give back `by` bytes) and, for XFS, the small one
/// inside the last allocation group's free tail.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// Giving back what the grow added.
    pub general: Step,
    /// XFS only: the last allocation group's free tail (when the general one failed).
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
        Grow::PoolExpand => {
            return Ok(Outcome::Unsupported(format!(
                "{name} declares a pool expand but its driver runs none"
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

/// Shrink by `by` bytes with the mechanism [`Caps::shrink`] names; XFS tries `tail_by`
/// bytes inside its last allocation group when the general shrink is refused.
pub fn shrink(
    caps: &Caps,
    live: &mut dyn Live,
    by: u64,
    tail_by: u64,
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
        Shrink::AgTail => return ag_tail_shrink(&*live, by, tail_by, timeout).map(Outcome::Done),
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

fn last_line(s: &str) -> String {
    s.trim().lines().last().unwrap_or_default().to_string()
}

/// The attempt after a shrink command ran: did the size statvfs reports go down?
fn measured(
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

/// XFS: first a shrink that must remove an allocation group (`by`, and at least one block
/// more than the last group holds), which the kernel refuses; then `tail_by` inside the last
/// group, which works while that group's tail is free.
fn ag_tail_shrink(live: &dyn Live, by: u64, tail_by: u64, t: Duration) -> Result<Shrunk> {
    let geo = xfs_geometry(live, t)?;
    let last = geo.last_ag_blocks() * geo.bsize;
    let general_by = by.max(last + geo.bsize);
    let mut general = xfs_shrink_by(live, general_by, t)?;
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
        let tail_by = tail_by.min(last / 2) / geo.bsize * geo.bsize;
        let mut tail = xfs_shrink_by(live, tail_by, t)?;
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
fn xfs_shrink_by(live: &dyn Live, by: u64, t: Duration) -> Result<Step> {
    let m = live.mountpoint().to_string_lossy().to_string();
    let geo = xfs_geometry(live, t)?;
    let before = fs_size(live.mountpoint())?;
    let target = geo.blocks.saturating_sub(by / geo.bsize);
    let cmd = argv(&["xfs_growfs", "-D", &target.to_string(), &m]);
    match command::run(&cmd, t) {
        Ok(o) => measured(live, before, by, &cmd, o.seconds, true),
        Err(e) => Ok(Step::unsupported(format!(
            "shrink by {} KiB: `{}` refused: {}",
            by / 1024,
            command::display(&cmd),
            last_line(&e.to_string())
        ))),
    }
}

fn xfs_geometry(live: &dyn Live, t: Duration) -> Result<XfsGeometry> {
    let m = live.mountpoint().to_string_lossy().to_string();
    let info = command::run(&argv(&["xfs_info", &m]), t)?;
    XfsGeometry::parse(&info.stdout).ok_or_else(|| {
        Error::tool(
            "xfs_info",
            "cannot find the data section's bsize/blocks or agcount/agsize",
        )
    })
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
