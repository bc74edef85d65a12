//! ZFS: a uniquely named single-vdev pool per setup, destroyed on release.
//!
//! Where there is no kernel module but zfs-fuse is installed, its daemon is started when no
//! instance runs and stopped again when fsbench is done ([`crate::fs::drivers::zfs::daemon`]; one already
//! running is left alone), and results are labelled `zfs-fuse` because its performance says
//! nothing about OpenZFS in the kernel.

pub mod compression;
pub mod current;
pub mod daemon;
/// Its option space for `fsbench tune`.
pub mod layouts;
pub mod options;
pub mod pool;
pub mod props;
pub mod recover;
pub mod snapshot;

use crate::fs::caps::{AgingEta, ArrayEta, Caps, Check, Crash, Eta, Grow, Shrink, Snapshot};

/// zfs-fuse's aging rate assumed by the plan, MiB/s: a guess, not a measurement (the driver's
/// `eta.aging`).
const ZFS_AGING_MIB_S: f64 = 40.0;
use crate::fs::SetupSpec;
use crate::fs::durability::{Weakening, Weakens};
use crate::fs::mount::{self, ensure_mountpoint, remove_mountpoint};
use crate::fs::setup::variant_args::{ArgRules, OptKey};
use crate::fs::setup::variant_keys::{self, Accepts};
use crate::fs::snapshot_ops::{Backup, Copies, Maint, Own, Stream};
use crate::fs::{Filesystem, MkfsRecord, Mounted};
use crate::host::command::{self, argv};
use crate::host::ledger::{self, Held, Item};
use crate::host::packages::{Package, Tool};
use crate::measure::backing::Backing;
use crate::{Error, Result};
use daemon::DaemonHold;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The ZFS driver.
pub struct Zfs;

/// Dataset properties passed as `-O key=value`, plus the pool property `ashift`.
const PROPS: &[&str] = &[
    "ashift",
    "recordsize",
    "compression",
    "atime",
    "relatime",
    "sync",
    "checksum",
    "logbias",
    "primarycache",
    "secondarycache",
    "dedup",
    "copies",
    "xattr",
    "redundant_metadata",
    "dnodesize",
    "acltype",
];

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: false,
    props: PROPS,
    dir_attrs: &[],
    args: ARGS,
    hints: &[(
        "mount",
        "zfs takes properties, not mount options: write e.g. atime=off instead of mount=noatime",
    )],
};

/// How `zpool create` reads the words of `mkfs=`: any positional word is a vdev (a device or
/// a vdev type that adds devices), so only options pass.
pub const ARGS: ArgRules = ArgRules {
    mkfs_tool: "zpool create",
    // zpool create: -o -O -m -R -t take values; -f -n -d are flags.
    short_with_value: "oOmRt",
    long_with_value: &[],
    path_options: &[
        OptKey {
            option: "-R",
            key: "",
            what: "an alternate root",
        },
        OptKey {
            option: "-m",
            key: "",
            what: "a mountpoint",
        },
        OptKey {
            option: "-o",
            key: "cachefile",
            what: "a cache file",
        },
    ],
    device_options: &[],
    multi_device_words: &[
        "mirror", "raidz", "raidz1", "raidz2", "raidz3", "draid", "draid1", "draid2", "draid3",
        "spare", "log", "cache", "special", "dedup",
    ],
    mount_device_keys: &[],
    mount_inner_path_keys: &[],
    removed_mount_options: &[],
};

/// SPA_MINDEVSIZE: ZFS refuses vdevs under 64 MiB.
const MIN_SIZE: u64 = 64 << 20;

static POOL_COUNTER: AtomicU32 = AtomicU32::new(0);

pub use daemon::is_fuse;

/// `zfs-fuse`, `OpenZFS 2.2.2`, or `zfs`.
pub fn implementation() -> String {
    if let Ok(v) = std::fs::read_to_string("/sys/module/zfs/version") {
        format!("OpenZFS {}", v.trim())
    } else if is_fuse() {
        daemon::LABEL.into()
    } else {
        "zfs".into()
    }
}

fn unique_pool() -> String {
    format!(
        "fsbench_{}_{}",
        std::process::id(),
        POOL_COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn wait_mounted(mnt: &Path, timeout: Duration) -> bool {
    let t0 = Instant::now();
    loop {
        if mount::is_mounted(mnt) {
            return true;
        }
        if t0.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `-o cachefile=none` unless the setup names a cache file itself: a pool fsbench makes is
/// never written to the daemon's cache (`/var/lib/zfs/zpool.cache`), so a daemon restarted
/// after a crash or a reboot does not import it again from a loop device that is gone (or,
/// worse, now backs someone else's image).
fn no_cachefile(setup: &SetupSpec) -> Vec<String> {
    if setup.mkfs.iter().any(|w| w.contains("cachefile=")) {
        Vec::new()
    } else {
        argv(&["-o", "cachefile=none"])
    }
}

/// `zpool create` argv for a setup.
pub fn create_argv(setup: &SetupSpec, pool: &str, device: &Path, mnt: &Path) -> Vec<String> {
    create_argv_layout(setup, pool, None, &[device.to_path_buf()], mnt)
}

/// `zpool create` argv of a layout: `… POOL [VDEV-TYPE] DEV…`, the devices last (where
/// [`crate::fs::setup::argv_guard::check_devices`] expects them).
pub fn create_argv_layout(
    setup: &SetupSpec,
    pool: &str,
    vdev: Option<&str>,
    devices: &[PathBuf],
    mnt: &Path,
) -> Vec<String> {
    let ashift = setup
        .props
        .get("ashift")
        .map(String::as_str)
        .unwrap_or("12");
    let mut a = argv(&["zpool", "create", "-f", "-o"]);
    a.push(format!("ashift={ashift}"));
    a.extend(no_cachefile(setup));
    for (k, v) in &setup.props {
        if k != "ashift" {
            a.push("-O".into());
            a.push(format!("{k}={v}"));
        }
    }
    a.extend(setup.mkfs.iter().cloned());
    a.push("-m".into());
    a.push(mnt.display().to_string());
    a.push(pool.into());
    a.extend(vdev.map(str::to_string));
    a.extend(devices.iter().map(|d| d.display().to_string()));
    a
}

/// A zfs-fuse pool's scrub, offline device and resilver (`zpool status` polled every
/// 250 ms until done): a line through the steps' seconds of two runs of a three-way mirror
/// and a raidz1 over three loop images (256 MiB and 1.5 GiB of data; scrub 0.7–1.1 and
/// 6.3–8.6 s, resilver 0.4–0.5 and 3.6–4.5 s) on the project's 2-core VM at load average 4.
const ZFS_ARRAY: ArrayEta = ArrayEta {
    scrub_s: 0.3,
    scrub_s_per_gib: 5.0,
    fail_s: 0.5,
    rebuild_s: 0.3,
    rebuild_s_per_gib: 2.9,
};

const CAPS: Caps = Caps {
    mount_types: &["zfs", "fuse.zfs"],
    // Mountinfo names the dataset; the devices are the pool's vdevs, and syncfs does not
    // reach zfs-fuse (a txg sync does).
    backing: Backing::Pool,
    // No offline checker: a scrub of the live pool is the equivalent.
    check: Check::Own,
    grow: Grow::Own,
    shrink: Shrink::None("a ZFS pool cannot shrink its only top-level vdev"),
    snapshot: Snapshot::Own,
    layouts: layouts::LAYOUTS,
    crash: Crash::Unsupported(
        " (zfs-fuse runs in user space: a clone would have to be imported by a second daemon, \
         and one zfs-fuse serves the machine)",
    ),
    probes: true,
    // zfs-fuse keeps more metadata than the kernel filesystems.
    probe_image: 768 << 20,
    // ZFS has no journal commit interval; a txg commits every 5 s by default.
    commit_s: 5,
    // zfs-fuse in the calibration runs (plan/eta.rs, 12 steps each): untar 23.5 s, cold find
    // 21.9 s, rm -rf 12.2 s as steps, against ext4's 3.4, 2.2 and 1.5 s: the factors apply to
    // the per-copy constants, not to those totals, so a step's fixed parts stay ext4's.
    eta: Eta {
        mkfs_s: 0.3,
        meta: [9.35, 25.7, 25.3],
        array: ZFS_ARRAY,
        // zfs-fuse: not measured yet, a guess (its metadata steps run 9-26 times ext4's
        // here, its bulk writes far less so); the profiles alike, git at half.
        aging: AgingEta {
            churn: ZFS_AGING_MIB_S,
            overwrite: ZFS_AGING_MIB_S,
            punch: ZFS_AGING_MIB_S,
            git: ZFS_AGING_MIB_S / 2.0,
        },
    },
    userspace_daemon: Some("zfs-fuse"),
    maintenance: crate::fs::maintenance::Maintenance {
        inodes: Some(crate::fs::maintenance::Inodes::Unlimited),
        // One pool of space for data and metadata (its slop space keeps metadata writable).
        metadata_chunks: false,
        scrub: Some(crate::fs::maintenance::Scrub::Pool),
    },
    backup: Backup {
        copies: Copies::Own(Own(&snapshot::DATASET_SNAPSHOTS)),
        stream: Stream::Own,
        // FUSE passes no FITRIM, and zfs-fuse predates `zpool trim`.
        trim: Maint::None("zfs-fuse cannot trim: FUSE passes no FITRIM and it has no `zpool trim`"),
        balance: Backup::NO_BALANCE,
    },
    weakens: &[
        Weakening {
            when: Weakens::Prop("sync", "disabled"),
            why: "ZFS {o} acknowledges fsync before data is on disk; seconds of writes can vanish on power loss",
        },
        Weakening {
            when: Weakens::Prop("checksum", "off"),
            why: "ZFS {o} stops detecting silent corruption",
        },
    ],
    versions: crate::fs::drivers::zfs::pool::VERSIONS,
    packages: &[
        Tool::new("zpool", OPENZFS_UTILS),
        Tool::new("zfs", OPENZFS_UTILS),
        // Packaged by Debian only; elsewhere ZFS means OpenZFS's own repositories.
        Tool::new(
            "zfs-fuse",
            Package {
                apt: "zfs-fuse",
                dnf: "",
                zypper: "",
                pacman: "",
            },
        ),
    ],
};

/// OpenZFS's `zpool` and `zfs` with the kernel module (Arch has them only from the AUR);
/// without the module they come from zfs-fuse ([`Caps::userspace_daemon`]).
const OPENZFS_UTILS: Package = Package {
    apt: "zfsutils-linux",
    dnf: "zfs",
    zypper: "zfs",
    pacman: "",
};

impl Filesystem for Zfs {
    fn name(&self) -> &'static str {
        "zfs"
    }

    fn caps(&self) -> &Caps {
        &CAPS
    }

    /// No offline checker: a scrub of the live pool is the equivalent.
    fn check(
        &self,
        live: &mut dyn crate::fs::ops::Live,
        timeout: Duration,
    ) -> Result<crate::fs::ops::Outcome<crate::fs::ops::Checked>> {
        crate::fs::drivers::zfs::pool::scrub(live, timeout)
    }

    /// `zpool online -e`, or export + import where that has no effect (zfs-fuse).
    fn grow(
        &self,
        live: &mut dyn crate::fs::ops::Live,
        timeout: Duration,
    ) -> Result<crate::fs::ops::Outcome<crate::fs::resize::Grown>> {
        crate::fs::drivers::zfs::pool::expand(live, timeout)
    }

    /// The ledger's release of pools and the daemon, the pool's vdevs and forced commit.
    fn register_below(&self) {
        recover::register();
        pool::register();
    }

    /// Neither the kernel module nor zfs-fuse: nothing can serve a pool.
    fn runnable_here(&self) -> std::result::Result<(), String> {
        let name = self.name();
        match (CAPS.userspace_daemon, crate::host::zfs::implementation()) {
            (Some(daemon), crate::host::zfs::Zfs::None) => Err(format!(
                "{name}: the {name} kernel module is not loaded and {daemon} is not installed \
                 (--install-missing installs {daemon})"
            )),
            _ => Ok(()),
        }
    }

    /// The space's properties of the mounted dataset (`zfs get`).
    fn current_options(
        &self,
        entry: &crate::host::mountinfo::MountEntry,
    ) -> std::result::Result<Vec<String>, String> {
        current::read(entry)
    }

    /// The dataset's `compressratio` (a dataset name, or the dataset a path is on).
    fn compression_ratio(&self, path_or_dataset: &str) -> Result<Option<f64>> {
        compression::ratio(path_or_dataset, CAPS.mount_types)
    }

    /// Wait until the dataset's `used` settles: ZFS accounts at its txg commit.
    fn settle_space(&self, path: &Path) -> Result<()> {
        compression::settle_space(path, CAPS.mount_types)
    }

    /// A dataset snapshot.
    fn snapshot(
        &self,
        live: &dyn crate::fs::ops::Live,
        job: crate::fs::ops::SnapshotJob<'_>,
        timeout: Duration,
    ) -> Result<crate::fs::ops::Outcome<f64>> {
        crate::fs::drivers::zfs::pool::snapshot(live, job, timeout)
    }

    /// Export the pool (its guard would destroy it).
    fn detach(&self, live: &dyn crate::fs::ops::Live, timeout: Duration) -> Result<Option<String>> {
        crate::fs::drivers::zfs::pool::export(live, timeout).map(Some)
    }

    /// Import the exported pool from its one device.
    fn reattach(
        &self,
        name: &str,
        device: &Path,
        link_dir: &Path,
        timeout: Duration,
    ) -> Result<()> {
        crate::fs::drivers::zfs::pool::import(name, device, link_dir, timeout)
    }

    /// `zpool scrub` of the layout's pool, waited for.
    fn scrub_layout(
        &self,
        array: &crate::fs::redundancy::LiveArray<'_>,
        tick: &dyn Fn(f64),
    ) -> Result<f64> {
        crate::fs::drivers::zfs::pool::layout_scrub(array, tick)
    }

    /// `zpool offline` of the last member (wiped too when the rebuild goes onto it).
    fn degrade_layout(&self, array: &mut crate::fs::redundancy::LiveArray<'_>) -> Result<()> {
        crate::fs::drivers::zfs::pool::layout_degrade(array)
    }

    /// `zpool replace`, in place or onto the spare, and the resilver waited for.
    fn rebuild_layout(
        &self,
        array: &crate::fs::redundancy::LiveArray<'_>,
        tick: &dyn Fn(f64),
    ) -> Result<f64> {
        crate::fs::drivers::zfs::pool::layout_rebuild(array, tick)
    }

    /// The zfs-fuse daemon (machine-wide, started on first use where there is no kernel
    /// module) stays up across setups while the run holds it ([`daemon::hold`]).
    fn hold_services(&self) -> Option<crate::fs::ServiceHold> {
        Some(crate::fs::ServiceHold::new(daemon::hold()))
    }

    fn required_tools(&self) -> &'static [&'static str] {
        &["zpool", "zfs"]
    }

    fn min_device_size(&self) -> u64 {
        MIN_SIZE
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant_keys::check("zfs", setup, &ACCEPTS)?;
        if let Some(rs) = setup.props.get("recordsize") {
            let ok = crate::units::parse_size(rs)
                .map(|v| v.is_power_of_two() && (512..=16 << 20).contains(&v))
                .unwrap_or(false);
            if !ok {
                return Err(Error::invalid(
                    "--fs",
                    format!(
                        "setup {:?}: recordsize={rs} is not a power of two between 512 and 16M \
                         (e.g. recordsize=16K)",
                        setup.name
                    ),
                ));
            }
        }
        if let Some(a) = setup.props.get("ashift")
            && !a.parse::<u32>().is_ok_and(|v| (9..=16).contains(&v))
        {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: ashift={a} must be a number from 9 to 16 (12 = 4 KiB sectors)",
                    setup.name
                ),
            ));
        }
        Ok(())
    }

    fn accepts(&self) -> &Accepts {
        &ACCEPTS
    }

    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<Box<dyn Mounted>> {
        // A library user that skipped `fs::register` still gets the pool's safety check.
        crate::fs::drivers::zfs::pool::register();
        let (daemon, note) = daemon::ensure()?;
        // Import scans a directory: give it one holding only this device.
        let devdir = crate::fs::unique_mountpoint("zdev");
        std::fs::create_dir_all(&devdir).map_err(|e| Error::io("cannot create", &devdir, e))?;
        let name = device.file_name().map(|n| n.to_owned()).unwrap_or_default();
        let cleanup = |e: Error| {
            let _ = std::fs::remove_dir_all(&devdir);
            e
        };
        std::os::unix::fs::symlink(device, devdir.join(&name))
            .map_err(|e| cleanup(Error::io("cannot link", device, e)))?;
        let d = devdir.display().to_string();
        let list = command::run_unchecked(&argv(&["zpool", "import", "-d", &d]), timeout)
            .map_err(cleanup)?;
        let Some(pool) = props::parse_zpool_import(&list.combined())
            .into_iter()
            .next()
        else {
            return Err(cleanup(Error::Other(format!(
                "no exported ZFS pool found on {}",
                device.display()
            ))));
        };
        let mut import = argv(&["zpool", "import", "-d", &d, "-f"]);
        import.extend(no_cachefile(setup));
        import.push(pool.clone());
        crate::fs::setup::argv_guard::check(&import, device).map_err(cleanup)?;
        let held = ledger::hold(Item::Zpool { name: pool.clone() }).map_err(cleanup)?;
        command::run_device_tool(&import, timeout).map_err(cleanup)?;
        let mut guard = ZfsMount {
            pool: pool.clone(),
            path: mountpoint.to_path_buf(),
            created_dir: false,
            devdir: Some(devdir),
            note,
            extra: BTreeMap::new(),
            held: vec![held],
            done: false,
            _daemon: daemon,
        };
        let dir_held = ensure_mountpoint(mountpoint)?;
        guard.created_dir = dir_held.is_some();
        guard.held.extend(dir_held);
        command::run(
            &argv(&[
                "zfs",
                "set",
                &format!("mountpoint={}", mountpoint.display()),
                &pool,
            ]),
            timeout,
        )?;
        if !wait_mounted(mountpoint, Duration::from_secs(10)) {
            return Err(Error::tool(
                "zfs set mountpoint",
                format!("pool {pool} did not appear at {}", mountpoint.display()),
            ));
        }
        Ok(Box::new(guard))
    }

    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        create_pool(&[device.to_path_buf()], None, setup, mountpoint, timeout)
    }

    fn create_layout(
        &self,
        layout: &crate::fs::layout::Layout,
        devices: &[PathBuf],
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        let crate::fs::layout::Builder::Vdev(vdev) = layout.builder else {
            return Err(Error::invalid(
                "--fs",
                format!("setup {:?}: zfs builds no raid={}", setup.name, layout.name),
            ));
        };
        create_pool(devices, Some(vdev), setup, mountpoint, timeout)
    }
}

/// `zpool create` over `devices`; `layout` is `None` for the single-device pool (checked by
/// [`crate::fs::setup::argv_guard::check`] as always), else the layout's vdev type (`Some(None)`: a
/// stripe), checked by [`crate::fs::setup::argv_guard::check_devices`].
fn create_pool(
    devices: &[PathBuf],
    layout: Option<Option<&str>>,
    setup: &SetupSpec,
    mountpoint: &Path,
    timeout: Duration,
) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
    for d in devices {
        crate::fs::check_device_fits("zfs", MIN_SIZE, d)?;
    }
    // From the first pool on, the target's safety checks ask whether a device is in one,
    // and device accounting finds its vdevs, even where `fs::register` was not called.
    crate::fs::drivers::zfs::pool::register();
    let (daemon, note) = daemon::ensure()?;
    let pool = unique_pool();
    let dir_held = ensure_mountpoint(mountpoint)?;
    let created_dir = dir_held.is_some();
    let args = create_argv_layout(setup, &pool, layout.flatten(), devices, mountpoint);
    let checked = match layout {
        None => crate::fs::setup::argv_guard::check(&args, &devices[0]),
        Some(_) => {
            crate::fs::setup::argv_guard::check_devices(&args, devices, args.len() - devices.len())
        }
    };
    if let Err(e) = checked {
        if created_dir {
            remove_mountpoint(mountpoint);
        }
        return Err(e);
    }
    let mut guard = ZfsMount {
        pool: pool.clone(),
        path: mountpoint.to_path_buf(),
        created_dir,
        devdir: None,
        note,
        extra: BTreeMap::new(),
        held: dir_held.into_iter().collect(),
        done: true, // nothing to destroy until zpool create succeeded
        _daemon: daemon,
    };
    guard
        .held
        .push(ledger::hold(Item::Zpool { name: pool.clone() })?);
    let out = match command::run_device_tool(&args, timeout) {
        Ok(o) => o,
        Err(e) => {
            // A half-made pool must not outlive the failure.
            if pool_exists(&pool) {
                guard.done = false;
            }
            return Err(e);
        }
    };
    guard.done = false;
    if let Some(a) = args.iter().find_map(|a| a.strip_prefix("ashift=")) {
        guard.extra.insert("zpool.ashift".into(), a.to_string());
    }
    if !wait_mounted(mountpoint, Duration::from_secs(10)) {
        return Err(Error::tool(
            command::display(&args),
            format!("pool {pool} did not appear at {}", mountpoint.display()),
        ));
    }
    let record = MkfsRecord {
        args,
        output: out.combined(),
        seconds: out.seconds,
    };
    Ok((record, Box::new(guard)))
}

fn pool_exists(pool: &str) -> bool {
    command::run(
        &argv(&["zpool", "list", "-H", pool]),
        Duration::from_secs(15),
    )
    .is_ok()
}

/// An imported, mounted pool. Drop destroys it.
pub struct ZfsMount {
    pool: String,
    path: PathBuf,
    created_dir: bool,
    devdir: Option<PathBuf>,
    note: Option<String>,
    extra: BTreeMap<String, String>,
    /// Ledger entries (pool, mountpoint directory), removed once both are gone.
    held: Vec<Held>,
    done: bool,
    /// Dropped last (after `Drop` destroyed the pool), so the daemon outlives the pool.
    _daemon: DaemonHold,
}

impl ZfsMount {
    fn tidy(&mut self) {
        // What is still mounted at this pool's own mountpoint once the pool is gone is the
        // dead FUSE endpoint a killed zfs-fuse leaves ("Transport endpoint is not
        // connected"), also when the runner made the directory.
        if mount::is_mounted(&self.path) {
            let _ = mount::unmount(&self.path);
        }
        if self.created_dir {
            remove_mountpoint(&self.path);
            self.created_dir = false;
        }
        if let Some(d) = self.devdir.take() {
            let _ = std::fs::remove_dir_all(&d);
            remove_mountpoint(&d);
        }
    }

    fn destroy(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        let a = argv(&["zpool", "destroy", "-f", &self.pool]);
        let mut last = None;
        for attempt in 0..4u64 {
            match command::run(&a, Duration::from_secs(120)) {
                Ok(_) => {
                    last = None;
                    break;
                }
                Err(e) => {
                    if !pool_exists(&self.pool) {
                        last = None;
                        break;
                    }
                    last = Some(e);
                    crate::host::sync_all();
                    std::thread::sleep(Duration::from_millis(300 * (attempt + 1)));
                }
            }
        }
        self.tidy();
        match last {
            Some(e) => {
                // The pool is still there: the next fsbench destroys it.
                self.held.drain(..).for_each(Held::keep);
                Err(e)
            }
            None => {
                self.held.clear();
                Ok(())
            }
        }
    }
}

impl Mounted for ZfsMount {
    fn path(&self) -> &Path {
        &self.path
    }

    fn mount_options(&self) -> String {
        mount::options_at(&self.path).unwrap_or_default()
    }

    fn properties(&self) -> BTreeMap<String, String> {
        let out = command::run(
            &argv(&[
                "zfs",
                "get",
                "-H",
                "-o",
                "property,value",
                "all",
                &self.pool,
            ]),
            Duration::from_secs(30),
        )
        .map(|o| o.stdout)
        .unwrap_or_default();
        let mut m = props::parse_zfs_get(&out);
        m.extend(self.extra.clone());
        m.insert("zfs.pool".into(), self.pool.clone());
        if let Some(n) = &self.note {
            m.insert("note".into(), n.clone());
        }
        m
    }

    fn implementation(&self) -> String {
        implementation()
    }

    fn substitute(&self) -> Option<crate::results::Substitute> {
        is_fuse().then(daemon::substitute)
    }

    fn pool(&self) -> Option<&str> {
        Some(&self.pool)
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.destroy()
    }

    fn unmount(mut self: Box<Self>) -> Result<()> {
        if self.done {
            return Ok(());
        }
        // mountpoint=none first, so a later import does not mount at this (gone) path.
        let t = Duration::from_secs(120);
        command::run(&argv(&["zfs", "set", "mountpoint=none", &self.pool]), t)?;
        command::run(&argv(&["zpool", "export", &self.pool]), t)?;
        self.done = true;
        self.tidy();
        // Exported on purpose (a probe imports it again, recording it anew).
        self.held.clear();
        Ok(())
    }
}

impl Drop for ZfsMount {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            eprintln!(
                "fsbench: warning: cannot destroy ZFS pool {}: {e}",
                self.pool
            );
        }
        // Also when zpool create failed and there was no pool to destroy.
        self.tidy();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zpool_create_command() {
        let mut s = SetupSpec::plain("zfs");
        s.props.insert("recordsize".into(), "16K".into());
        s.props.insert("compression".into(), "lz4".into());
        let a = create_argv(
            &s,
            "fsbench_1_0",
            Path::new("/dev/loop3"),
            Path::new("/run/fsbench/m"),
        );
        assert_eq!(
            command::display(&a),
            "zpool create -f -o ashift=12 -o cachefile=none -O compression=lz4 -O recordsize=16K -m /run/fsbench/m fsbench_1_0 /dev/loop3"
        );
        s.props.insert("ashift".into(), "9".into());
        let a = create_argv(&s, "p", Path::new("/d"), Path::new("/m"));
        assert!(a.contains(&"ashift=9".to_string()));
        assert_eq!(a.iter().filter(|x| x.starts_with("ashift")).count(), 1);
        // A cache file the setup asks for replaces fsbench's "none".
        s.mkfs = vec!["-o".into(), "cachefile=/run/fsbench/c".into()];
        let a = create_argv(&s, "p", Path::new("/d"), Path::new("/m"));
        assert_eq!(a.iter().filter(|x| x.contains("cachefile")).count(), 1);
    }

    #[test]
    fn zpool_create_of_a_layout_puts_the_vdev_type_and_devices_last() {
        let s = SetupSpec::plain("zfs");
        let devs = [PathBuf::from("/dev/loop1"), PathBuf::from("/dev/loop2")];
        let a = create_argv_layout(&s, "p", Some("mirror"), &devs, Path::new("/m"));
        assert_eq!(
            command::display(&a),
            "zpool create -f -o ashift=12 -o cachefile=none -m /m p mirror /dev/loop1 /dev/loop2"
        );
        let a = create_argv_layout(&s, "p", None, &devs, Path::new("/m"));
        assert!(command::display(&a).ends_with("-m /m p /dev/loop1 /dev/loop2"));
    }

    #[test]
    fn validation() {
        let mut s = SetupSpec::plain("zfs");
        s.name = "zfs-16k".into();
        s.props.insert("recordsize".into(), "16K".into());
        Zfs.validate(&s).unwrap();
        s.props.insert("recordsize".into(), "3K".into());
        assert!(
            Zfs.validate(&s)
                .unwrap_err()
                .to_string()
                .contains("power of two")
        );
        let mut s = SetupSpec::plain("zfs");
        s.mount = vec!["noatime".into()];
        assert!(
            Zfs.validate(&s)
                .unwrap_err()
                .to_string()
                .contains("atime=off")
        );
        let mut s = SetupSpec::plain("zfs");
        s.props.insert("bogus".into(), "1".into());
        let e = Zfs.validate(&s).unwrap_err().to_string();
        assert!(e.contains("\"bogus\"") && e.contains("recordsize"), "{e}");
    }

    #[test]
    fn zpool_options_pass_and_vdevs_are_refused() {
        use crate::fs::setup::variant_args::tests::verdict;
        let ok = |mkfs: &[&str]| assert_eq!(verdict(&ARGS, mkfs, &[]), "");
        ok(&["-o", "autoexpand=on", "-O", "atime=off", "-d"]);
        let no = |mkfs: &[&str], want: &str| {
            let e = verdict(&ARGS, mkfs, &[]);
            assert!(e.contains(want), "{mkfs:?}: {e}");
        };
        no(&["mirror"], "vdev type");
        no(&["log", "/dev/sdz"], "vdev type");
        no(&["/dev/sdz"], "positional");
        no(&["-R", "/etc"], "outside fsbench's scratch area");
        no(&["-m", "/"], "outside fsbench's scratch area");
        no(
            &["-o", "cachefile=/etc/zpool.cache"],
            "outside fsbench's scratch area",
        );
        no(&["-O", "atime=off", "UUID=1234"], "by UUID");
    }
}
