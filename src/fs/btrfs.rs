//! Btrfs: `mkfs.btrfs -f -q`, properties from `dump-super` and `btrfs filesystem df`.

use super::simple::{KernelFs, tool_text};
use super::variant::{self, Accepts};
use super::{Filesystem, MkfsRecord, Mounted, props};
use crate::Result;
use crate::plan::SetupSpec;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The Btrfs driver.
pub struct Btrfs;

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

const KFS: KernelFs = KernelFs {
    fstype: "btrfs",
    mkfs: "mkfs.btrfs",
    default_args: &["-f", "-q"],
    // mkfs.btrfs: "minimum size for each btrfs device is 114294784" (btrfs-progs 6.x).
    min_size: 114_294_784,
    describe,
};

impl Filesystem for Btrfs {
    fn name(&self) -> &'static str {
        "btrfs"
    }

    fn required_tools(&self) -> &'static [&'static str] {
        &["mkfs.btrfs", "mount"]
    }

    fn min_device_size(&self) -> u64 {
        KFS.min_size
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant::check("btrfs", setup, &ACCEPTS)
    }

    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<Box<dyn Mounted>> {
        KFS.mount(device, setup, mountpoint, timeout)
    }

    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        KFS.create_and_mount(device, setup, mountpoint, timeout)
    }
}
