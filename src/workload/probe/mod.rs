//! Capability probes: reflink, snapshot, resize, corruption detection, fsck time; and the
//! capacity probes of seed 004: inode exhaustion, Btrfs metadata exhaustion.
//!
//! Seed 001 tabulates features such as data checksums as claims; these probes measure them.
//! Each probe formats its OWN small loop image with the setup's filesystem ([`run`]), so a
//! probe that flips bytes or shrinks a filesystem never touches the filesystem under test.
//! The probe logic itself works on any mounted filesystem through [`ProbeFs`], which is how the
//! integration tests drive it on filesystems they built with shell tools.

pub mod corruption;
pub mod fsck;
pub mod fsck_rate;
pub mod inodes;
pub mod kind;
pub mod metadata;
pub mod reflink;
pub mod resize;
pub mod snapshot;
pub mod space;
pub mod sys;

use super::{Metric, WorkloadOutput};
use crate::fs::SetupSpec;
use crate::fs::{Filesystem, Mounted};
use crate::metrics::MetricId;
use crate::metrics::registry::SUPPORTED;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which probe to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    /// `probe-reflink`: FICLONE a large file.
    Reflink,
    /// `probe-snapshot`: btrfs subvolume snapshot / zfs snapshot.
    Snapshot,
    /// `probe-resize`: grow and shrink on the image.
    Resize,
    /// `probe-corruption`: flip bytes under a file, see whether reading notices.
    Corruption,
    /// `probe-fsck`: time a read-only check of a filled filesystem.
    Fsck,
    /// `probe-inodes`: empty files until ENOSPC or the cap.
    Inodes,
    /// `probe-metadata`: ENOSPC for want of metadata space while df shows free space.
    Metadata,
}

impl ProbeKind {
    /// Every probe, in report order.
    pub const ALL: [ProbeKind; 7] = [
        ProbeKind::Reflink,
        ProbeKind::Snapshot,
        ProbeKind::Resize,
        ProbeKind::Corruption,
        ProbeKind::Fsck,
        ProbeKind::Inodes,
        ProbeKind::Metadata,
    ];

    /// The workload id used in results.json.
    pub fn id(self) -> &'static str {
        match self {
            ProbeKind::Reflink => "probe-reflink",
            ProbeKind::Snapshot => "probe-snapshot",
            ProbeKind::Resize => "probe-resize",
            ProbeKind::Corruption => "probe-corruption",
            ProbeKind::Fsck => "probe-fsck",
            ProbeKind::Inodes => "probe-inodes",
            ProbeKind::Metadata => "probe-metadata",
        }
    }

    /// Parse a workload id (`probe-reflink`) or short name (`reflink`).
    pub fn from_id(id: &str) -> Option<ProbeKind> {
        let short = id.strip_prefix("probe-").unwrap_or(id);
        ProbeKind::ALL
            .into_iter()
            .find(|k| k.id().strip_prefix("probe-") == Some(short))
    }
}

/// Sizes the probes use; the defaults are the (1 GiB reflink), tests shrink them.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// Size of the file `probe-reflink` clones.
    pub reflink_bytes: u64,
    /// Size of the patterned file `probe-corruption` writes.
    pub corruption_bytes: u64,
    /// Small files `probe-fsck` creates before checking.
    pub fsck_files: u32,
    /// Data `probe-fsck` writes beside them (in 8 MiB files) for its per-GiB rates.
    pub fsck_data_bytes: u64,
    /// Most empty files `probe-inodes` creates (XFS and Btrfs would go on for long).
    pub inode_cap: u32,
    /// Most small files `probe-metadata` creates after filling the data space.
    pub metadata_cap: u32,
    /// Bytes `probe-resize` grows the image by (and tries to shrink the filesystem by).
    pub resize_step: u64,
    /// Bytes of XFS's second, tail-only shrink: small, because XFS can only give back unused
    /// space at the end of its last allocation group (the general shrink is `resize_step`).
    pub resize_shrink: u64,
    /// Pattern seed.
    pub seed: u64,
    /// Timeout for each external tool.
    pub timeout: Duration,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            reflink_bytes: 1 << 30,
            corruption_bytes: 1 << 20,
            fsck_files: 5000,
            fsck_data_bytes: 256 << 20,
            inode_cap: 100_000,
            metadata_cap: 100_000,
            resize_step: 256 << 20,
            resize_shrink: 32 << 20,
            seed: 0x5eed_f5be,
            timeout: Duration::from_secs(300),
        }
    }
}

impl ProbeOptions {
    /// Image size a probe needs so that it has room to work (sparse, so mostly free).
    pub fn image_size(&self, kind: ProbeKind, fs: &dyn Filesystem) -> u64 {
        // The driver's base size (zfs-fuse keeps more metadata; xfs refuses to format below
        // 300 MiB).
        let base = fs.caps().probe_image;
        match kind {
            ProbeKind::Reflink => base + self.reflink_bytes * 5 / 4,
            ProbeKind::Resize => base.max(self.resize_step * 3),
            ProbeKind::Fsck => base + self.fsck_data_bytes * 5 / 4,
            // At 512 MiB and up mke2fs uses its default inode ratio (16 KiB), seed 004's figure;
            // below it the "small" type's 4 KiB.
            ProbeKind::Inodes => base,
            // Small, so filling it is quick; mkfs.btrfs's minimum is 109 MiB.
            ProbeKind::Metadata => 256 << 20,
            _ => base + self.corruption_bytes * 2,
        }
    }
}

/// A mounted filesystem a probe may work on, unmount and mount again.
pub trait ProbeFs {
    /// Filesystem name (`ext4`, `xfs`, `btrfs`, `zfs`).
    fn fs(&self) -> &str;
    /// The block device it lives on (a loop device for resize).
    fn device(&self) -> &Path;
    /// Where it is mounted while mounted.
    fn mountpoint(&self) -> &Path;
    /// Unmount it (ZFS: export the pool) so the device is quiet.
    fn unmount(&mut self) -> Result<()>;
    /// Mount it again after [`ProbeFs::unmount`] (ZFS: import the pool).
    fn mount(&mut self) -> Result<()>;
    /// ZFS dataset mounted at the mountpoint (`pool/ds`), from /proc/self/mountinfo.
    fn dataset(&self) -> Option<String> {
        mount_source(self.mountpoint())
    }
    /// The registered driver of this filesystem, whose methods (check, grow, shrink,
    /// snapshot) the probes call: found by [`ProbeFs::fs`], so a stand-in that made the
    /// filesystem with other tools (`tests/probes.rs`) is checked and resized like the real
    /// one. The one look-up by name the probes keep: a stand-in is known by its name, and
    /// its checks and resizes are the real driver's.
    fn driver(&self) -> Option<&'static dyn Filesystem> {
        crate::fs::driver(self.fs())
    }
    /// The filesystem's capacity and maintenance facts, from its driver.
    fn maintenance(&self) -> crate::fs::maintenance::Maintenance {
        self.driver()
            .map(|d| d.maintenance())
            .unwrap_or(crate::fs::maintenance::Maintenance::NONE)
    }
}

/// A [`ProbeFs`] as the drivers see a live filesystem ([`crate::fs::ops::Live`]).
pub(crate) struct AsLive<'p>(pub(crate) &'p mut dyn ProbeFs);

impl crate::fs::ops::Live for AsLive<'_> {
    fn device(&self) -> &Path {
        self.0.device()
    }
    fn mountpoint(&self) -> &Path {
        self.0.mountpoint()
    }
    fn source(&self) -> Option<String> {
        self.0.dataset()
    }
    fn unmount(&mut self) -> Result<()> {
        self.0.unmount()
    }
    fn mount(&mut self) -> Result<()> {
        self.0.mount()
    }
}

/// The driver a probe works through, or why there is none (the probe reports it
/// unsupported).
pub(crate) fn driver_of(pfs: &dyn ProbeFs) -> std::result::Result<&'static dyn Filesystem, String> {
    pfs.driver()
        .ok_or_else(|| format!("no driver for {}", pfs.fs()))
}

/// Run one probe on `fs` as configured by `setup`, on a fresh small image in `scratch_dir`.
///
/// This is the runner's entry point; the filesystem under test is never touched.
pub fn run(
    kind: ProbeKind,
    fs: &dyn Filesystem,
    setup: &SetupSpec,
    scratch_dir: &Path,
    timeout: Duration,
) -> Result<WorkloadOutput> {
    let opts = ProbeOptions {
        timeout,
        ..ProbeOptions::default()
    };
    run_with(kind, &opts, fs, setup, scratch_dir)
}

/// [`run`] with explicit sizes.
pub fn run_with(
    kind: ProbeKind,
    opts: &ProbeOptions,
    fs: &dyn Filesystem,
    setup: &SetupSpec,
    scratch_dir: &Path,
) -> Result<WorkloadOutput> {
    if !fs.caps().probes {
        return Ok(unsupported(format!(
            "{} is not an on-disk filesystem; capability probes need one of {}",
            fs.name(),
            on_disk().join(", ")
        )));
    }
    if kind == ProbeKind::Metadata
        && let Some(why) = metadata::not_applicable(fs.name(), fs.maintenance().metadata_chunks)
    {
        // Known from the driver: no image to build.
        return Ok(unsupported(why));
    }
    let size = opts.image_size(kind, fs).max(fs.min_device_size());
    let target = crate::scratch::acquire(
        &crate::scratch::TargetKind::Image {
            scratch_dir: scratch_dir.to_path_buf(),
            size,
            keep: false,
        },
        true,
    )?;
    let device = target
        .block_device()
        .ok_or_else(|| Error::workload(kind.id(), "the probe image has no block device"))?
        .to_path_buf();
    let out = run_on_device(kind, opts, fs, setup, &device, scratch_dir);
    drop(target);
    out
}

/// Create the setup's filesystem on `device` (a scratch loop device: it is wiped, and
/// `probe-resize` grows its backing file), run the probe, release the filesystem.
pub fn run_on_device(
    kind: ProbeKind,
    opts: &ProbeOptions,
    fs: &dyn Filesystem,
    setup: &SetupSpec,
    device: &Path,
    scratch_dir: &Path,
) -> Result<WorkloadOutput> {
    let mnt = tempfile::Builder::new()
        .prefix(&format!("fsbench-{}-", kind.id()))
        .tempdir_in(scratch_dir)
        .map_err(|e| Error::io("cannot create a mountpoint in", scratch_dir, e))?;
    let mountpoint = mnt.path().join("mnt");
    std::fs::create_dir_all(&mountpoint).map_err(|e| Error::io("cannot create", &mountpoint, e))?;
    let (_mkfs, mounted) = fs.create_and_mount(device, setup, &mountpoint, opts.timeout)?;
    let mut pfs = DriverFs {
        fs,
        setup,
        device: device.to_path_buf(),
        mountpoint: mounted.path().to_path_buf(),
        mounted: Some(mounted),
        pool: None,
        zdev: mnt.path().join("zdev"),
        timeout: opts.timeout,
    };
    let out = run_on(kind, opts, &mut pfs);
    // Release the filesystem before the caller lets the loop device go.
    let released = pfs.release();
    let out = out?;
    released?;
    Ok(out)
}

/// Filesystems the probes know how to exercise (their drivers' `Caps::probes`).
pub fn on_disk() -> Vec<&'static str> {
    crate::fs::DRIVERS
        .iter()
        .filter(|r| r.driver.caps().probes)
        .map(|r| r.name)
        .collect()
}

/// Run one probe on an already mounted filesystem.
pub fn run_on(
    kind: ProbeKind,
    opts: &ProbeOptions,
    pfs: &mut dyn ProbeFs,
) -> Result<WorkloadOutput> {
    if crate::cancel::requested() {
        return Err(Error::Interrupted);
    }
    match kind {
        ProbeKind::Reflink => reflink::probe(pfs.mountpoint(), opts.reflink_bytes, opts.seed),
        ProbeKind::Snapshot => snapshot::probe(pfs, opts),
        ProbeKind::Resize => resize::probe(pfs, opts),
        ProbeKind::Corruption => corruption::probe(pfs, opts),
        ProbeKind::Fsck => fsck::probe(pfs, opts),
        ProbeKind::Inodes => inodes::probe(pfs, opts),
        ProbeKind::Metadata => metadata::probe(pfs, opts),
    }
}

/// A [`ProbeFs`] backed by fsbench's own filesystem drivers.
struct DriverFs<'a> {
    fs: &'a dyn Filesystem,
    setup: &'a SetupSpec,
    device: PathBuf,
    mountpoint: PathBuf,
    mounted: Option<Box<dyn Mounted>>,
    /// What the driver detached on `unmount` (a ZFS pool exported), to reattach.
    pool: Option<String>,
    /// Directory a driver keeps links in while reattaching (`zpool import -d`).
    zdev: PathBuf,
    timeout: Duration,
}

impl DriverFs<'_> {
    fn release(mut self) -> Result<()> {
        if let (Some(pool), Some(d)) = (self.pool.take(), self.driver()) {
            // Detached and never reattached: reattach so the driver's guard can destroy it.
            let _ = d.reattach(&pool, &self.device, &self.zdev, self.timeout);
        }
        match self.mounted.take() {
            Some(m) => m.release(),
            None => Ok(()),
        }
    }
}

impl ProbeFs for DriverFs<'_> {
    fn fs(&self) -> &str {
        self.fs.name()
    }
    fn device(&self) -> &Path {
        &self.device
    }
    fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }
    fn maintenance(&self) -> crate::fs::maintenance::Maintenance {
        self.fs.maintenance()
    }
    fn unmount(&mut self) -> Result<()> {
        // A pool's driver guard destroys it on release: its driver detaches it (export)
        // instead, for `mount` to reattach.
        let timeout = self.timeout;
        let kept = match self.driver() {
            Some(d) => d.detach(&AsLive(&mut *self), timeout)?,
            None => None,
        };
        if kept.is_some() {
            self.pool = kept;
            return Ok(());
        }
        match self.mounted.take() {
            Some(m) => m.release(),
            None => Ok(()),
        }
    }
    fn mount(&mut self) -> Result<()> {
        if let Some(pool) = self.pool.take() {
            if let Some(d) = self.driver() {
                d.reattach(&pool, &self.device, &self.zdev, self.timeout)?;
            }
            return wait_mounted(&self.mountpoint, Duration::from_secs(10));
        }
        let m = self
            .fs
            .mount(&self.device, self.setup, &self.mountpoint, self.timeout)?;
        self.mountpoint = m.path().to_path_buf();
        self.mounted = Some(m);
        Ok(())
    }
}

/// `zpool import` of the pool on one device only (the ZFS driver's, [`crate::fs::drivers::zfs::pool::import`]),
/// for probes that build their pool with other tools.
pub use crate::fs::drivers::zfs::pool::import as zpool_import;

/// Wait until something is mounted at `mountpoint` (zfs-fuse mounts datasets after `zpool
/// import` returns); a probe reading the bare directory underneath would misjudge.
pub fn wait_mounted(mountpoint: &Path, timeout: Duration) -> Result<()> {
    let start = std::time::Instant::now();
    while mount_source(mountpoint).is_none() {
        if start.elapsed() > timeout {
            return Err(Error::Other(format!(
                "nothing is mounted at {} {:.0} s after mounting",
                mountpoint.display(),
                timeout.as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The mount source (device or ZFS dataset) of the mount at exactly `mountpoint`.
pub fn mount_source(mountpoint: &Path) -> Option<String> {
    let want = std::fs::canonicalize(mountpoint).ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Later lines are newer mounts; the last match is the visible one.
    text.lines().rev().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mp = unescape_mount(left.split(' ').nth(4)?);
        if Path::new(&mp) != want {
            return None;
        }
        right.split(' ').nth(1).map(unescape_mount)
    })
}

/// Undo /proc/self/mountinfo's octal escapes (`\040` for space).
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One cell of the capability table (seed 001's integrity matrix, measured): a short verdict
/// from a probe's metrics, looked up by id (e.g. medians from results.json).
pub fn verdict(kind: ProbeKind, metric: impl Fn(MetricId) -> Option<f64>) -> String {
    use crate::metrics::registry::{
        CLEAN, DETECTED, ENOSPC_WITH_FREE_SPACE, FILES_CREATED, FREE_BYTES_AT_STOP,
        INODE_LIMIT_REACHED, SECONDS, SHRINK_SUPPORTED, SHRINK_TAIL_SUPPORTED, SIZE_BYTES,
    };
    let yes = |id: MetricId| metric(id).map(|v| v >= 0.5);
    let secs = |id: MetricId| metric(id).map(format_seconds).unwrap_or_default();
    match kind {
        ProbeKind::Reflink | ProbeKind::Snapshot => match yes(SUPPORTED) {
            Some(true) => format!("yes ({})", secs(SECONDS)),
            Some(false) => "no".into(),
            None => "?".into(),
        },
        ProbeKind::Resize => {
            let side = |dir: &str| match yes(MetricId::registered(&format!("{dir}_supported"))) {
                Some(true) => match yes(MetricId::registered(&format!("{dir}_online"))) {
                    Some(false) => format!("{dir} offline"),
                    _ => format!("{dir} online"),
                },
                Some(false) => format!("no {dir}"),
                None => format!("{dir} ?"),
            };
            // XFS: no general shrink, but the free tail of its last allocation group can go.
            let shrink = match (yes(SHRINK_SUPPORTED), yes(SHRINK_TAIL_SUPPORTED)) {
                (Some(false), Some(true)) => "shrink only the last AG's free tail".to_string(),
                _ => side("shrink"),
            };
            format!("{}, {shrink}", side("grow"))
        }
        ProbeKind::Corruption => match yes(DETECTED) {
            Some(true) => "detected (read error)".into(),
            Some(false) => "not detected (bad data returned)".into(),
            None => "?".into(),
        },
        ProbeKind::Fsck => match (yes(SUPPORTED), yes(CLEAN)) {
            (Some(false), _) => "n/a".into(),
            (_, Some(true)) => format!("clean ({})", secs(SECONDS)),
            (_, Some(false)) => format!("problems ({})", secs(SECONDS)),
            _ => "?".into(),
        },
        ProbeKind::Inodes | ProbeKind::Metadata => {
            let limit = if kind == ProbeKind::Inodes {
                INODE_LIMIT_REACHED
            } else {
                ENOSPC_WITH_FREE_SPACE
            };
            let files = metric(FILES_CREATED).map(|n| format!("{n:.0}"));
            let share = match (metric(FREE_BYTES_AT_STOP), metric(SIZE_BYTES)) {
                (Some(f), Some(s)) if s > 0.0 => Some(f / s),
                _ => None,
            };
            let full = share.is_some_and(|s| s < space::FREE_LEFT);
            let free = share.map_or("?".into(), |s| format!("{:.0} % free", s * 100.0));
            match (yes(SUPPORTED), yes(limit), files) {
                (Some(false), ..) => "n/a".into(),
                (_, Some(true), Some(n)) => format!("ENOSPC at {n} files, {free}"),
                (_, Some(false), Some(n)) if full => {
                    format!("ENOSPC at {n} files, space used up ({free})")
                }
                (_, Some(false), Some(n)) => format!("no limit reached at {n} files, {free}"),
                _ => "?".into(),
            }
        }
    }
}

fn format_seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// `supported` metric (1/0).
pub(crate) fn supported(id: MetricId, yes: bool) -> Metric {
    Metric::new(id, "bool", if yes { 1.0 } else { 0.0 })
}

/// Output for a probe the filesystem cannot do at all.
pub(crate) fn unsupported(note: impl Into<String>) -> WorkloadOutput {
    WorkloadOutput {
        metrics: vec![supported(SUPPORTED, false)],
        notes: vec![note.into()],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for k in ProbeKind::ALL {
            assert_eq!(ProbeKind::from_id(k.id()), Some(k));
        }
        assert_eq!(ProbeKind::from_id("fsck"), Some(ProbeKind::Fsck));
        assert_eq!(ProbeKind::from_id("probe-nope"), None);
    }

    #[test]
    fn mountinfo_unescape() {
        assert_eq!(unescape_mount("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape_mount("/plain"), "/plain");
    }

    #[test]
    fn verdicts_read_like_a_capability_table() {
        let m = |pairs: &'static [(&'static str, f64)]| {
            move |id: MetricId| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == id.as_str())
                    .map(|(_, v)| *v)
            }
        };
        assert_eq!(
            verdict(
                ProbeKind::Reflink,
                m(&[("supported", 1.0), ("seconds", 0.0003)])
            ),
            "yes (0.3 ms)"
        );
        assert_eq!(verdict(ProbeKind::Snapshot, m(&[("supported", 0.0)])), "no");
        assert_eq!(
            verdict(
                ProbeKind::Resize,
                m(&[
                    ("grow_supported", 1.0),
                    ("grow_online", 0.0),
                    ("shrink_supported", 0.0)
                ])
            ),
            "grow offline, no shrink"
        );
        assert_eq!(
            verdict(
                ProbeKind::Resize,
                m(&[
                    ("grow_supported", 1.0),
                    ("grow_online", 1.0),
                    ("shrink_supported", 0.0),
                    ("shrink_tail_supported", 1.0)
                ])
            ),
            "grow online, shrink only the last AG's free tail"
        );
        assert_eq!(
            verdict(ProbeKind::Corruption, m(&[("detected", 1.0)])),
            "detected (read error)"
        );
        assert_eq!(
            verdict(
                ProbeKind::Fsck,
                m(&[("supported", 1.0), ("clean", 1.0), ("seconds", 2.5)])
            ),
            "clean (2.50 s)"
        );
        assert_eq!(verdict(ProbeKind::Fsck, m(&[])), "?");
        assert_eq!(
            verdict(
                ProbeKind::Inodes,
                m(&[
                    ("supported", 1.0),
                    ("inode_limit_reached", 1.0),
                    ("files_created", 40907.0),
                    ("free_bytes_at_stop", 900.0),
                    ("size_bytes", 1000.0)
                ])
            ),
            "ENOSPC at 40907 files, 90 % free"
        );
        assert_eq!(
            verdict(
                ProbeKind::Inodes,
                m(&[
                    ("supported", 1.0),
                    ("inode_limit_reached", 0.0),
                    ("files_created", 100000.0),
                    ("free_bytes_at_stop", 700.0),
                    ("size_bytes", 1000.0)
                ])
            ),
            "no limit reached at 100000 files, 70 % free"
        );
        assert_eq!(
            verdict(
                ProbeKind::Metadata,
                m(&[
                    ("supported", 1.0),
                    ("enospc_with_free_space", 0.0),
                    ("files_created", 15254.0),
                    ("free_bytes_at_stop", 10.0),
                    ("size_bytes", 1000.0)
                ])
            ),
            "ENOSPC at 15254 files, space used up (1 % free)"
        );
        assert_eq!(
            verdict(ProbeKind::Metadata, m(&[("supported", 0.0)])),
            "n/a"
        );
    }

    #[test]
    fn image_is_big_enough_for_the_clone() {
        let o = ProbeOptions::default();
        assert!(o.image_size(ProbeKind::Reflink, &crate::fs::BTRFS) > o.reflink_bytes);
        assert!(o.image_size(ProbeKind::Resize, &crate::fs::XFS) >= 300 << 20);
    }
}
