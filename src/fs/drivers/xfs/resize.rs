//! XFS's shrink: only free space at the end of the last allocation group can go (kernel ≥
//! 5.12, `xfs_growfs -D`, marked experimental), so a general shrink is tried first and, when
//! the kernel refuses it, a smaller one inside that group's tail (its driver's `shrink`).

use crate::fs::ops::{Live, Outcome, fs_size};
use crate::fs::resize::{Shrunk, Step, last_line, measured};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::time::Duration;

/// Give back `by` bytes, and when XFS refuses (it cannot remove an allocation group), try
/// `tail_by` inside the last group.
pub fn shrink(live: &mut dyn Live, by: u64, tail_by: u64, t: Duration) -> Result<Outcome<Shrunk>> {
    ag_tail_shrink(&*live, by, tail_by, t).map(Outcome::Done)
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
