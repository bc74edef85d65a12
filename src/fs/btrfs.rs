//! Btrfs: `mkfs.btrfs -f -q`, properties from `dump-super` and `btrfs filesystem df`.

use super::props;
use super::simple::{KernelFs, tool_text};
use super::variant::Accepts;
use std::collections::BTreeMap;
use std::path::Path;

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    // nocow: `chattr +C` on the data directory (applied by the workload runner).
    dir_attrs: &["nocow"],
};

fn describe(device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String> {
    let mut m = match device {
        Some(d) => props::parse_btrfs_super(&tool_text(&[
            "btrfs",
            "inspect-internal",
            "dump-super",
            &d.display().to_string(),
        ])),
        None => BTreeMap::new(),
    };
    m.extend(props::parse_btrfs_df(&tool_text(&[
        "btrfs",
        "filesystem",
        "df",
        &mnt.display().to_string(),
    ])));
    m
}

/// The btrfs driver.
pub const BTRFS: KernelFs = KernelFs {
    fstype: "btrfs",
    mkfs: "mkfs.btrfs",
    default_args: &["-f", "-q"],
    // mkfs.btrfs: "minimum size for each btrfs device is 114294784" (btrfs-progs 6.x).
    min_size: 114_294_784,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.btrfs", "mount"],
};
