//! The driver shared by the kernel filesystems (ext4, XFS, Btrfs): each is a [`KernelFs`]
//! constant naming its mkfs, defaults, minimum size, accepted variant keys and describer.

use super::mount::{self, Describe, KernelMount};
use super::variant::{self, Accepts};
use super::{Filesystem, MkfsRecord, Mounted};
use crate::Result;
use crate::fs::SetupSpec;
use crate::host::command;
use std::path::Path;
use std::time::Duration;

/// How one kernel filesystem is made and described.
pub struct KernelFs {
    /// `-t` type for mount.
    pub fstype: &'static str,
    /// The mkfs program.
    pub mkfs: &'static str,
    /// Arguments before the user's (force, quiet).
    pub default_args: &'static [&'static str],
    /// Smallest device mkfs accepts, bytes.
    pub min_size: u64,
    /// Property collector.
    pub describe: Describe,
    /// Variant keys this filesystem understands.
    pub accepts: Accepts,
    /// Programs that must be on PATH.
    pub tools: &'static [&'static str],
    /// What it offers beyond create and mount.
    pub caps: super::Caps,
}

impl Filesystem for KernelFs {
    fn name(&self) -> &'static str {
        self.fstype
    }

    fn required_tools(&self) -> &'static [&'static str] {
        self.tools
    }

    fn min_device_size(&self) -> u64 {
        self.min_size
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant::check(self.fstype, setup, &self.accepts)
    }

    fn accepts(&self) -> &Accepts {
        &self.accepts
    }

    fn caps(&self) -> &super::Caps {
        &self.caps
    }

    /// mkfs (timed, output kept), then mount.
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mnt: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        super::check_device_fits(self.fstype, self.min_size, device)?;
        let mut argv = command::argv(&[self.mkfs]);
        argv.extend(self.default_args.iter().map(|s| s.to_string()));
        argv.extend(setup.mkfs.iter().cloned());
        argv.push(device.display().to_string());
        super::argv_guard::check(&argv, device)?;
        let out = command::run(&argv, timeout)?;
        let record = MkfsRecord {
            args: argv,
            output: out.combined(),
            seconds: out.seconds,
        };
        let m = self.mount(device, setup, mnt, timeout)?;
        Ok((record, m))
    }

    /// Mount an existing filesystem with the setup's mount options.
    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mnt: &Path,
        timeout: Duration,
    ) -> Result<Box<dyn Mounted>> {
        let dir_held = mount::ensure_mountpoint(mnt)?;
        let created = dir_held.is_some();
        let opts = setup.mount_option_string();
        let held = match mount::mount(
            self.fstype,
            &device.display().to_string(),
            opts.as_deref(),
            mnt,
            timeout,
        ) {
            Ok(h) => h,
            Err(e) => {
                if created {
                    mount::remove_mountpoint(mnt);
                }
                return Err(e);
            }
        };
        let mut m = KernelMount::new(
            Some(device.to_path_buf()),
            mnt.to_path_buf(),
            created,
            self.describe,
        );
        m.held.push(held);
        m.held.extend(dir_held);
        Ok(Box::new(m))
    }
}

/// Run a describe tool briefly; an empty map when it is missing or fails (properties are
/// provenance, never a reason to fail a run).
pub fn tool_text(argv: &[&str]) -> String {
    command::run(&command::argv(argv), Duration::from_secs(30))
        .map(|o| o.stdout)
        .unwrap_or_default()
}
