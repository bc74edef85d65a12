//! The driver shared by the kernel filesystems (ext4, XFS, Btrfs): each is a [`KernelFs`]
//! constant naming its mkfs, defaults, minimum size, accepted variant keys and describer.

use crate::Result;
use crate::fs::SetupSpec;
use crate::fs::layout::{Builder, Layout};
use crate::fs::mount::{self, Describe, KernelMount};
use crate::fs::redundancy::{self, ArrayOps, LiveArray};
use crate::fs::setup::variant_keys::{self, Accepts};
use crate::fs::{Filesystem, MkfsRecord, Mounted};
use crate::host::command;
use std::path::{Path, PathBuf};
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
    pub caps: crate::fs::Caps,
    /// What its own redundant layouts do in the redundancy phase (Btrfs); `None`: its
    /// layout steps are unsupported here.
    pub array: Option<ArrayOps>,
    /// Its mechanisms of its own (in its folder), where the shared defaults do not fit.
    pub own: Own,
}

/// A kernel filesystem's mechanisms of its own, each replacing the shared default of a
/// [`Filesystem`] method (the one place a [`KernelFs`] constant names code of its folder).
#[derive(Clone, Copy)]
pub struct Own {
    /// Its compression ratio ([`Filesystem::compression_ratio`]); `None`: it does not
    /// compress data.
    pub compression_ratio: Option<RatioFn>,
    /// Its shrink ([`Filesystem::shrink`]); `None`: the one its `Caps::shrink` names.
    pub shrink: Option<ShrinkFn>,
    /// Its option space's values a mount has now beyond its mount options
    /// ([`Filesystem::current_options`]); `None`: none to read.
    pub current_options: Option<CurrentFn>,
}

/// A driver's own compression ratio of what lies at a path (`None` when it holds no data).
pub type RatioFn = fn(&str) -> Result<Option<f64>>;

/// A driver's own shrink: the live filesystem, the bytes to give back, the smaller tail to
/// try when that is refused, the timeout.
pub type ShrinkFn = fn(
    &mut dyn crate::fs::ops::Live,
    u64,
    u64,
    Duration,
) -> Result<crate::fs::ops::Outcome<crate::fs::resize::Shrunk>>;

/// A driver's reading of the option-space values a mount has now (`tune2fs -l`, `xfs_info`).
pub type CurrentFn =
    fn(&crate::host::mountinfo::MountEntry) -> std::result::Result<Vec<String>, String>;

impl Own {
    /// Nothing of its own: every method's shared default.
    pub const NONE: Own = Own {
        compression_ratio: None,
        shrink: None,
        current_options: None,
    };
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
        variant_keys::check(self.fstype, setup, &self.accepts)
    }

    fn accepts(&self) -> &Accepts {
        &self.accepts
    }

    fn caps(&self) -> &crate::fs::Caps {
        &self.caps
    }

    fn compression_ratio(&self, path_or_dataset: &str) -> Result<Option<f64>> {
        match self.own.compression_ratio {
            Some(ratio) => ratio(path_or_dataset),
            None => Ok(None),
        }
    }

    fn current_options(
        &self,
        entry: &crate::host::mountinfo::MountEntry,
    ) -> std::result::Result<Vec<String>, String> {
        match self.own.current_options {
            Some(read) => read(entry),
            None => Ok(Vec::new()),
        }
    }

    fn shrink(
        &self,
        live: &mut dyn crate::fs::ops::Live,
        by: u64,
        tail_by: u64,
        timeout: Duration,
    ) -> Result<crate::fs::ops::Outcome<crate::fs::resize::Shrunk>> {
        match self.own.shrink {
            Some(shrink) => shrink(live, by, tail_by, timeout),
            None => crate::fs::resize::shrink(&self.caps, live, by, timeout),
        }
    }

    /// mkfs (timed, output kept), then mount.
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mnt: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        crate::fs::check_device_fits(self.fstype, self.min_size, device)?;
        let mut argv = command::argv(&[self.mkfs]);
        argv.extend(self.default_args.iter().map(|s| s.to_string()));
        argv.extend(setup.mkfs.iter().cloned());
        argv.push(device.display().to_string());
        crate::fs::setup::argv_guard::check(&argv, device)?;
        let out = command::run_device_tool(&argv, timeout)?;
        let record = MkfsRecord {
            args: argv,
            output: out.combined(),
            seconds: out.seconds,
        };
        let m = self.mount(device, setup, mnt, timeout)?;
        Ok((record, m))
    }

    /// A layout over several devices: Btrfs profiles here; md arrays (ext4, XFS) are refused
    /// at plan time where the kernel has no md, and their lifecycle is not written yet.
    fn create_layout(
        &self,
        layout: &Layout,
        devices: &[PathBuf],
        setup: &SetupSpec,
        mnt: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        if layout.builder != Builder::Profile {
            return Err(crate::Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} under {} needs an md array, which this version plans \
                     (docs/multidev.md) but does not build yet",
                    setup.name, layout.name, self.fstype
                ),
            ));
        }
        for d in devices {
            crate::fs::check_device_fits(self.fstype, self.min_size, d)?;
        }
        let argv = self.layout_argv(layout, devices, setup);
        let at = argv.len() - devices.len();
        crate::fs::setup::argv_guard::check_devices(&argv, devices, at)?;
        let out = command::run_device_tool(&argv, timeout)?;
        // The kernel must know every member before mounting by the first (no udev here).
        let mut scan = command::argv(&["btrfs", "device", "scan"]);
        scan.extend(devices.iter().map(|d| d.display().to_string()));
        crate::fs::setup::argv_guard::check_devices(&scan, devices, 3)?;
        command::run(&scan, timeout)?;
        let record = MkfsRecord {
            args: argv,
            output: out.combined(),
            seconds: out.seconds,
        };
        let m = self.mount(&devices[0], setup, mnt, timeout)?;
        Ok((record, m))
    }

    fn scrub_layout(&self, array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> Result<f64> {
        (self.array_ops("a scrub")?.scrub)(array, tick)
    }

    fn degrade_layout(&self, array: &mut LiveArray<'_>) -> Result<()> {
        (self.array_ops("failing a device")?.degrade)(array)
    }

    fn rebuild_layout(&self, array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> Result<f64> {
        (self.array_ops("a rebuild")?.rebuild)(array, tick)
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

impl KernelFs {
    /// Its layout steps, or `what` unsupported here.
    fn array_ops(&self, what: &str) -> Result<&ArrayOps> {
        self.array
            .as_ref()
            .ok_or_else(|| redundancy::unsupported(self.fstype, what))
    }

    /// The mkfs command of a Btrfs layout: defaults, `-d P -m M`, the variant's words, then
    /// the target's devices in order (the last words, where the guard expects them).
    pub fn layout_argv(
        &self,
        layout: &Layout,
        devices: &[PathBuf],
        setup: &SetupSpec,
    ) -> Vec<String> {
        let mut argv = command::argv(&[self.mkfs]);
        argv.extend(self.default_args.iter().map(|s| s.to_string()));
        argv.extend(crate::fs::layout::btrfs_profile_args(setup, layout));
        argv.extend(setup.mkfs.iter().cloned());
        argv.extend(devices.iter().map(|d| d.display().to_string()));
        argv
    }
}

/// Run a describe tool briefly; an empty map when it is missing or fails (properties are
/// provenance, never a reason to fail a run).
pub fn tool_text(argv: &[&str]) -> String {
    command::run(&command::argv(argv), Duration::from_secs(30))
        .map(|o| o.stdout)
        .unwrap_or_default()
}
