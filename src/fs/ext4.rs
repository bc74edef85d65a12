//! ext4: `mkfs.ext4 -F -q`, properties from `tune2fs -l`.

use super::simple::{KernelFs, tool_text};
use super::variant::{self, Accepts};
use super::{Filesystem, MkfsRecord, Mounted, props};
use crate::Result;
use crate::plan::SetupSpec;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The ext4 driver.
pub struct Ext4;

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

const KFS: KernelFs = KernelFs {
    fstype: "ext4",
    mkfs: "mkfs.ext4",
    default_args: &["-F", "-q"],
    // Below ~8 MiB mke2fs drops the journal; keep ext4 what it is in production.
    min_size: 16 << 20,
    describe,
};

impl Filesystem for Ext4 {
    fn name(&self) -> &'static str {
        "ext4"
    }

    fn required_tools(&self) -> &'static [&'static str] {
        &["mkfs.ext4", "mount"]
    }

    fn min_device_size(&self) -> u64 {
        KFS.min_size
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant::check("ext4", setup, &ACCEPTS)
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
