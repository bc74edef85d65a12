//! XFS: `mkfs.xfs -f -q`, properties from `xfs_info` of the mounted filesystem.

use super::props;
use super::simple::{KernelFs, tool_text};
use super::variant::Accepts;
use std::collections::BTreeMap;
use std::path::Path;

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    dir_attrs: &[],
};

fn describe(_device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String> {
    props::parse_xfs_info(&tool_text(&["xfs_info", &mnt.display().to_string()]))
}

/// The xfs driver.
pub const XFS: KernelFs = KernelFs {
    fstype: "xfs",
    mkfs: "mkfs.xfs",
    default_args: &["-f", "-q"],
    // xfsprogs 5.19+ refuses filesystems under 300 MiB.
    min_size: 300 << 20,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.xfs", "mount"],
};
