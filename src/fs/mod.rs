//! Filesystem drivers behind one trait: create (mkfs / zpool create), mount, describe, release,
//! and what a filesystem does beyond that (check, grow, shrink, snapshot, compression ratio,
//! what its options mean for durability, its tool versions, scrub/degrade/rebuild of its
//! redundant layouts, what it needs running), each method defaulting to what
//! its [`Caps`] declares or to "unsupported" with the reason, so no other module runs a
//! filesystem's program or matches its name.
//!
//! One file per driver. Mounts are RAII guards: dropping one unmounts it (or destroys the
//! pool) and removes the mountpoint directory fsbench created under [`mount_root`].

pub mod caps;
/// The drivers, one folder (or file) each with its mechanisms, and their registration.
pub mod drivers;
pub mod durability;
pub mod layout;
pub mod maintenance;
pub mod mount;
pub mod ops;
/// Option spaces `fsbench tune` searches: the shared model (each driver's space is in its
/// folder).
pub mod options;
pub mod packages;
pub mod provenance;
pub mod redundancy;
pub mod resize;
/// The setup model: a setup, its variant keys and arguments, the argv guard, aging.
pub mod setup;
pub mod snapshot_ops;

// The drivers' values, named where the rest of the crate looks for filesystems.
pub use drivers::btrfs::BTRFS;
pub use drivers::ext4::EXT4;
#[cfg(test)]
pub use drivers::fake;
pub use drivers::simple::KernelFs;
pub use drivers::tmpfs::Tmpfs;
pub use drivers::xfs::XFS;
pub use drivers::zfs::{self, Zfs};

pub use caps::Caps;
pub use setup::SetupSpec;
use setup::{variant_args, variant_keys};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What mkfs (or zpool create) did.
#[derive(Debug, Clone, Default)]
pub struct MkfsRecord {
    /// The full command line.
    pub args: Vec<String>,
    /// Its stdout + stderr.
    pub output: String,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// A mounted filesystem. Dropping it unmounts (or destroys the pool); errors are printed.
pub trait Mounted: Send {
    /// Where it is mounted.
    fn path(&self) -> &Path;
    /// Mount options as /proc/self/mountinfo shows them.
    fn mount_options(&self) -> String;
    /// Properties worth recording (zfs get all, tune2fs -l excerpt, xfs_info…).
    fn properties(&self) -> BTreeMap<String, String>;
    /// Implementation label (`zfs-fuse`, `OpenZFS 2.2`, `linux`).
    fn implementation(&self) -> String;
    /// What this implementation substitutes for when its figures are not comparable with that
    /// one's published figures (zfs-fuse for kernel OpenZFS): the results carry it, the report
    /// warns and the claims read it. `None`, the real thing, by default.
    fn substitute(&self) -> Option<crate::results::Substitute> {
        None
    }
    /// The ZFS pool behind this mount, if it is one (its layout steps, in its driver's folder).
    fn pool(&self) -> Option<&str> {
        None
    }
    /// Unmount / destroy now, reporting errors (Drop does the same silently).
    fn release(self: Box<Self>) -> crate::Result<()>;
    /// Unmount but keep the filesystem on the device, so [`Filesystem::mount`] can mount it
    /// again (probes that corrupt or resize it offline). ZFS exports the pool instead of
    /// destroying it; for the others this is the same as [`Mounted::release`].
    fn unmount(self: Box<Self>) -> crate::Result<()> {
        self.release()
    }
}

/// A filesystem driver.
pub trait Filesystem: Send + Sync {
    /// Driver name (`ext4`).
    fn name(&self) -> &'static str;
    /// Programs that must be on PATH; a missing one skips the setup with a note.
    fn required_tools(&self) -> &'static [&'static str];
    /// Smallest device this filesystem can be created on, bytes.
    fn min_device_size(&self) -> u64;
    /// Reject variant options this driver does not understand.
    fn validate(&self, setup: &SetupSpec) -> crate::Result<()>;
    /// The setup keys this driver takes (the only list `--fs` parsing and its errors use).
    fn accepts(&self) -> &variant_keys::Accepts;
    /// How this driver's tools read `mkfs=`/`mount=` words (for [`variant_args::check`]).
    /// With [`variant_args::ArgRules::NONE`] a driver still gets the generic checks: no
    /// positional words, no devices, no paths outside the scratch area.
    fn arg_rules(&self) -> &variant_args::ArgRules {
        &self.accepts().args
    }
    /// What it offers beyond create and mount (checks, resize, snapshots, compression, what
    /// lies under its mounts, ETA constants): the facts workloads, device accounting and the
    /// planner read instead of matching its name.
    fn caps(&self) -> &Caps {
        &Caps::NONE
    }
    /// Mount an existing filesystem of this type (no mkfs; ZFS: `zpool import`).
    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<Box<dyn Mounted>>;
    /// Create the filesystem on `device` (timed) and mount it at `mountpoint`.
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<(MkfsRecord, Box<dyn Mounted>)>;
    /// Create the filesystem in `layout` over `devices` (all of the target's, in order, at
    /// least `layout.min_devices`) and mount it. Drivers without layouts refuse.
    fn create_layout(
        &self,
        layout: &layout::Layout,
        devices: &[PathBuf],
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<(MkfsRecord, Box<dyn Mounted>)> {
        let _ = (devices, mountpoint, timeout);
        Err(crate::Error::invalid(
            "--fs",
            format!(
                "setup {:?}: {} builds no raid={} layout",
                setup.name,
                self.name(),
                layout.name
            ),
        ))
    }
    /// The on-disk compression ratio (logical / physical) of what lies at `path_or_dataset`
    /// (a path, or for a pool a dataset name); `None` where this filesystem does not
    /// compress data (the default: a driver that does reads it in its own folder).
    fn compression_ratio(&self, path_or_dataset: &str) -> crate::Result<Option<f64>> {
        let _ = path_or_dataset;
        Ok(None)
    }

    /// Wait until the space of what was just written at `path` is accounted (ZFS: its txg
    /// commit); by default nothing to wait for (fsync accounts it).
    fn settle_space(&self, path: &Path) -> crate::Result<()> {
        let _ = path;
        Ok(())
    }

    /// Its capacity and maintenance facts (inodes, metadata space, scrub): what the capacity
    /// probes read instead of its name. By default none are known.
    fn maintenance(&self) -> maintenance::Maintenance {
        self.caps().maintenance
    }

    /// A read-only consistency check of the live filesystem (the `probe-fsck` probe): by
    /// default the offline checker its [`Caps::check`] names, run on the unmounted device;
    /// unsupported where it names none.
    fn check(
        &self,
        live: &mut dyn ops::Live,
        timeout: Duration,
    ) -> crate::Result<ops::Outcome<ops::Checked>> {
        ops::check(self.caps(), self.name(), live, timeout)
    }

    /// Grow the filesystem into its device, which just grew (`probe-resize`): by default the
    /// command its [`Caps::grow`] names.
    fn grow(
        &self,
        live: &mut dyn ops::Live,
        timeout: Duration,
    ) -> crate::Result<ops::Outcome<resize::Grown>> {
        resize::grow(self.caps(), self.name(), live, timeout)
    }

    /// Give back `by` bytes (`probe-resize`), and where only a tail can go, try `tail_by`
    /// (a driver's own shrink): by default the mechanism its [`Caps::shrink`] names.
    fn shrink(
        &self,
        live: &mut dyn ops::Live,
        by: u64,
        tail_by: u64,
        timeout: Duration,
    ) -> crate::Result<ops::Outcome<resize::Shrunk>> {
        let _ = tail_by;
        resize::shrink(self.caps(), live, by, timeout)
    }

    /// Snapshot a directory `job` fills (`probe-snapshot`); the seconds of the snapshot
    /// command. By default its [`Caps::snapshot`] subvolumes, unsupported without.
    fn snapshot(
        &self,
        live: &dyn ops::Live,
        job: ops::SnapshotJob<'_>,
        timeout: Duration,
    ) -> crate::Result<ops::Outcome<f64>> {
        ops::snapshot(self.caps(), self.name(), live, job, timeout)
    }

    /// Take the live filesystem off its device but keep it, where unmounting is not the way
    /// (a pool's driver guard destroys it on release; an export keeps it): the name to give
    /// [`Filesystem::reattach`], or `None` when the owner should simply unmount.
    fn detach(&self, live: &dyn ops::Live, timeout: Duration) -> crate::Result<Option<String>> {
        let _ = (live, timeout);
        Ok(None)
    }

    /// Bring back what [`Filesystem::detach`] kept as `name`, from `device` only (`link_dir`:
    /// a directory the driver may keep links in while it lives).
    fn reattach(
        &self,
        name: &str,
        device: &Path,
        link_dir: &Path,
        timeout: Duration,
    ) -> crate::Result<()> {
        let _ = (device, link_dir, timeout);
        Err(crate::Error::Other(format!(
            "{} keeps nothing detached to reattach ({name}): unsupported here",
            self.name()
        )))
    }

    /// Why `setup` is less durable than this filesystem's default, one sentence each
    /// (`fs/durability.rs`: barriers and `commit=` for all, its [`Caps::weakens`]).
    fn durability_warnings(&self, setup: &SetupSpec) -> Vec<String> {
        durability::warnings(self.caps(), setup)
    }

    /// The programs its setups depend on and how each says its version ([`Caps::versions`]).
    fn versions(&self) -> &'static [provenance::ToolVersion] {
        self.caps().versions
    }

    /// What the filesystem mounted as `entry` has now of its option space
    /// ([`options::Space`]) beyond what its mount options show (mkfs-time values, ZFS
    /// properties), as the space's words (`-I 512`, `recordsize=16K`), read where that is
    /// cheap and read-only: `fsbench tune --current`'s baseline. `Err` says why it could not
    /// be read. Nothing by default (a space set wholly by mount options: Btrfs).
    fn current_options(
        &self,
        entry: &crate::host::mountinfo::MountEntry,
    ) -> Result<Vec<String>, String> {
        let _ = entry;
        Ok(Vec::new())
    }

    /// The package that brings its program `tool` ([`Caps::packages`]); `kernel_module`:
    /// whether the kernel has this filesystem's module, since without it a driver served by
    /// a [`Caps::userspace_daemon`] gets every program from the daemon's package. `None` for
    /// a program it does not declare.
    fn package_of(
        &self,
        tool: &str,
        kernel_module: bool,
    ) -> Option<crate::host::packages::Package> {
        let caps = self.caps();
        let own = |name: &str| caps.packages.iter().find(|t| t.name == name);
        let declared = own(tool)?;
        match caps.userspace_daemon {
            Some(daemon) if !kernel_module => own(daemon).map(|d| d.package),
            _ => Some(declared.package),
        }
    }

    /// Scrub a redundant layout of this filesystem, healthy, until it is done (the
    /// redundancy phase's first step); seconds. `tick` gets the percent done its tool
    /// reports. Unsupported by default: only a driver whose layouts survive a failed device
    /// offers it.
    fn scrub_layout(
        &self,
        array: &redundancy::LiveArray<'_>,
        tick: &dyn Fn(f64),
    ) -> crate::Result<f64> {
        let _ = (array, tick);
        Err(redundancy::unsupported(self.name(), "a scrub"))
    }

    /// Fail the layout's last member ([`redundancy::LiveArray::failed`]) so it runs
    /// degraded, and where the rebuild goes onto it, leave it blank; a driver that must
    /// mount again to run degraded replaces `array.mounted`. Unsupported by default.
    fn degrade_layout(&self, array: &mut redundancy::LiveArray<'_>) -> crate::Result<()> {
        let _ = array;
        Err(redundancy::unsupported(self.name(), "failing a device"))
    }

    /// Rebuild the failed member onto [`redundancy::LiveArray::rebuild_onto`] (the spare, or
    /// the failed device wiped) and wait until the layout is whole; seconds. `tick` gets the
    /// percent done. Unsupported by default.
    fn rebuild_layout(
        &self,
        array: &redundancy::LiveArray<'_>,
        tick: &dyn Fn(f64),
    ) -> crate::Result<f64> {
        let _ = (array, tick);
        Err(redundancy::unsupported(self.name(), "a rebuild"))
    }

    /// Install what layers below `fs` need to know of this driver and cannot ask it (the
    /// ledger's release of its leftovers, a pool's devices and forced commit for `measure`,
    /// the devices it holds for the target's safety checks); called once by [`register`].
    /// By default nothing.
    fn register_below(&self) {}

    /// Whether it can run here beyond its tools being on PATH (ZFS: its kernel module, or
    /// zfs-fuse to serve it from user space); `Err` says what is missing, in words fit for a
    /// "skipping setup" note. By default nothing more is needed.
    fn runnable_here(&self) -> Result<(), String> {
        Ok(())
    }

    /// Hold what this filesystem needs running for as long as a run may use it (ZFS: a
    /// zfs-fuse daemon fsbench starts on first use stays up across setups, and is stopped
    /// when the last hold goes). The runner takes one per driver of its plan for the whole
    /// run and drops it after the target is released. By default nothing.
    fn hold_services(&self) -> Option<ServiceHold> {
        None
    }
}

/// What a driver keeps running while a run holds it ([`Filesystem::hold_services`]); let go
/// when dropped.
#[must_use = "what it holds is let go when it is dropped"]
pub struct ServiceHold {
    _held: Box<dyn std::any::Any + Send>,
}

impl ServiceHold {
    /// A hold that keeps `held` (a guard of the driver's own) until it is dropped.
    pub fn new(held: impl Send + 'static) -> ServiceHold {
        ServiceHold {
            _held: Box::new(held),
        }
    }
}

impl dyn Filesystem {
    /// Create the filesystem over the target's `devices` (the first alone unless the setup
    /// has a `raid=` layout; all but the last with `spare=yes`) and mount it. The layout's device count is checked again here
    /// (a resumed plan.json may have been edited).
    pub fn create_and_mount_on(
        &self,
        devices: &[PathBuf],
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> crate::Result<(MkfsRecord, Box<dyn Mounted>)> {
        let Some(first) = devices.first() else {
            return Err(crate::Error::Other("the target has no block device".into()));
        };
        let Some(l) = layout::of_setup(setup) else {
            return self.create_and_mount(first, setup, mountpoint, timeout);
        };
        // With `spare=yes` the last device stays out: the argv guard then admits exactly
        // the members, and refuses the spare like any other device.
        let (devices, _spare) = layout::members(setup, devices);
        if devices.len() < l.min_devices {
            return Err(crate::Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} needs at least {} devices and the target has {}",
                    setup.name,
                    l.name,
                    l.min_devices,
                    devices.len()
                ),
            ));
        }
        self.create_layout(l, devices, setup, mountpoint, timeout)
    }
}

pub use drivers::{DRIVERS, Registration};

#[cfg(test)]
thread_local! {
    /// Drivers tests registered on this thread ([`register_for_test`]).
    static EXTRA: std::cell::RefCell<Vec<&'static dyn Filesystem>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Tests only: add a driver that [`driver`] finds on this thread (by its name), as a line in
/// [`DRIVERS`] would, e.g. a fake filesystem whose mkfs and mount need no root.
#[cfg(test)]
pub fn register_for_test(driver: &'static dyn Filesystem) {
    EXTRA.with(|e| e.borrow_mut().push(driver));
}

/// Look up a driver by name: the setup resolves it once and holds it
/// ([`SetupSpec::driver`]).
pub fn driver(name: &str) -> Option<&'static dyn Filesystem> {
    match DRIVERS.iter().find(|r| r.name == name) {
        Some(r) => Some(r.driver),
        None => registered_for_test(name),
    }
}

#[cfg(test)]
fn registered_for_test(name: &str) -> Option<&'static dyn Filesystem> {
    EXTRA.with(|e| e.borrow().iter().copied().find(|d| d.name() == name))
}

#[cfg(not(test))]
fn registered_for_test(_: &str) -> Option<&'static dyn Filesystem> {
    None
}

/// The names of a table of drivers, in its order (so [`KNOWN`] is [`DRIVERS`]' names).
const fn names<const N: usize>(drivers: &[Registration; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = drivers[i].name;
        i += 1;
    }
    out
}

/// Whether a driver's tools are present; `Err` says what is missing (unknown name, a tool,
/// what the driver needs running, [`Filesystem::runnable_here`]), in words fit for a "skipping setup" note. Root is the
/// caller's check: `fsbench plan` needs none.
pub fn available(name: &str) -> Result<(), String> {
    let d = driver(name).ok_or_else(|| {
        format!(
            "unknown filesystem {name:?}; known filesystems: {}",
            KNOWN.join(", ")
        )
    })?;
    for tool in d.required_tools() {
        if !crate::host::command::available(tool) {
            return Err(format!(
                "{name}: {tool} is not installed (package {}; --install-missing installs it)",
                packages::debian_package(d, tool)
            ));
        }
    }
    d.runnable_here()
}

/// A fresh mountpoint path under [`mount_root`] (`/run/fsbench/<label>-<pid>-<n>`); the
/// drivers create it and their guards remove it.
pub fn unique_mountpoint(label: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let label: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    mount_root().join(format!("{label}-{}-{n}", std::process::id()))
}

/// Refuse a target smaller than a filesystem needs, naming the flag to change. `flag` is
/// `--image-size` for images and `--device` for devices.
fn fits(name: &str, min: u64, size: u64, flag: &str) -> crate::Result<()> {
    if size >= min {
        return Ok(());
    }
    let f = crate::units::format_size;
    let advice = if flag == "--image-size" {
        format!(
            "use --image-size {} or larger",
            crate::units::fio_size(min.div_ceil(1 << 20) << 20).to_uppercase()
        )
    } else {
        format!("use a larger device or skip {name}")
    };
    Err(crate::Error::invalid(
        flag,
        format!(
            "{name} needs at least {} but the target has {}; {advice}",
            f(min),
            f(size)
        ),
    ))
}

/// The size check at mkfs time, with the flag guessed from the device (loop = image).
pub(crate) fn check_device_fits(name: &str, min: u64, device: &Path) -> crate::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let size = crate::scratch::size_of(device)?;
    let is_loop = std::fs::metadata(device)
        .map(|m| libc::major(m.rdev() as libc::dev_t) == 7)
        .unwrap_or(false);
    fits(
        name,
        min,
        size,
        if is_loop { "--image-size" } else { "--device" },
    )
}

/// Names of every driver fsbench knows, from [`DRIVERS`].
pub const KNOWN: &[&str] = &names(&DRIVERS);

/// Install what lower layers need to know from the drivers (what lies under each
/// filesystem's mounts, then each driver's own [`Filesystem::register_below`]: a pool's
/// release hooks for the ledger, how its devices are listed and its commit forced, which
/// devices it holds for the target's safety checks); `commands::dispatch` calls it before any
/// command, and a library user that measures devices on Btrfs or ZFS calls it first.
pub fn register() {
    caps::register_backings();
    for r in &DRIVERS {
        r.driver.register_below();
    }
}

/// Directory in which fsbench creates mountpoints.
pub fn mount_root() -> PathBuf {
    crate::host::run_dir()
}
