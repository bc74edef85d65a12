//! XFS: `mkfs.xfs -f -q`, properties from `xfs_info` of the mounted filesystem.

use super::simple::{KernelFs, tool_text};
use super::variant::{self, Accepts};
use super::{Filesystem, MkfsRecord, Mounted, props};
use crate::Result;
use crate::plan::SetupSpec;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The XFS driver.
pub struct Xfs;

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    dir_attrs: &[],
};

fn describe(_device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String> {
    props::parse_xfs_info(&tool_text(&["xfs_info", &mnt.display().to_string()]))
}

const KFS: KernelFs = KernelFs {
    fstype: "xfs",
    mkfs: "mkfs.xfs",
    default_args: &["-f", "-q"],
    // xfsprogs 5.19+ refuses filesystems under 300 MiB.
    min_size: 300 << 20,
    describe,
};

impl Filesystem for Xfs {
    fn name(&self) -> &'static str {
        "xfs"
    }

    fn required_tools(&self) -> &'static [&'static str] {
        &["mkfs.xfs", "mount"]
    }

    fn min_device_size(&self) -> u64 {
        KFS.min_size
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant::check("xfs", setup, &ACCEPTS)
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
