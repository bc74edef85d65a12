//! ext4: `mkfs.ext4 -F -q`, properties from `tune2fs -l`.

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

fn describe(device: Option<&Path>, _mnt: &Path) -> BTreeMap<String, String> {
    match device {
        Some(d) => props::parse_tune2fs(&tool_text(&["tune2fs", "-l", &d.display().to_string()])),
        None => BTreeMap::new(),
    }
}

/// The ext4 driver.
pub const EXT4: KernelFs = KernelFs {
    fstype: "ext4",
    mkfs: "mkfs.ext4",
    default_args: &["-F", "-q"],
    // Below ~8 MiB mke2fs drops the journal; keep ext4 what it is in production.
    min_size: 16 << 20,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.ext4", "mount"],
};
