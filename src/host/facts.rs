//! What the plan resolver needs to know about this host, gathered once.
//!
//! [`HostFacts::gather`] does the looking (sysinfo, `stat`, statvfs, sysfs, PATH, the clock);
//! `plan::resolve` only reads the value, so it does no I/O and its tests pass fake facts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Facts about the host and the requested target.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFacts {
    /// Total RAM, bytes.
    pub ram_bytes: u64,
    /// Bytes the `--device` or `--dir` target offers (None: unknown, or an image).
    pub target_bytes: Option<u64>,
    /// Bytes free in the image's `--scratch-dir` (None: a `--device` or `--dir` target, or it
    /// could not be asked): whether one sparse image per setup fits there.
    pub scratch_free: Option<u64>,
    /// The RAM filesystem (`tmpfs`, `ramfs`) holding the `--dir` target or the image's
    /// `--scratch-dir`, `None` when it is not in RAM (or cannot be asked).
    pub target_in_ram: Option<&'static str>,
    /// `--device`: `Ok` for a block device, else why it is not one (a sentence).
    pub device: Option<Result<(), String>>,
    /// Tools found on PATH, of those asked about.
    pub tools: BTreeSet<String>,
    /// Asked-about paths that are directories.
    pub dirs: BTreeSet<PathBuf>,
    /// Asked-about paths that are regular files.
    pub files: BTreeSet<PathBuf>,
    /// Bytes an asked-about path would take when written out on a filesystem: a file's length,
    /// a directory tree's file data in 4 KiB blocks plus a block per entry. Absent when it
    /// could not be walked.
    pub footprints: std::collections::BTreeMap<PathBuf, u64>,
    /// When the run starts.
    pub now: SystemTime,
    /// A fresh random seed, for runs without `--seed`.
    pub random_seed: u64,
    /// Whether the kernel has md RAID (`/proc/mdstat`), for `raid=` under ext4/XFS.
    pub md: bool,
    /// Whether ZFS is in the kernel (the OpenZFS module is loaded): the default set of
    /// filesystems holds ZFS only then ([`crate::plan::resolve::default_fs`]).
    pub kernel_zfs: bool,
}

/// What to look at.
#[derive(Debug, Clone, Default)]
pub struct Query<'a> {
    /// `--device`, if given.
    pub device: Option<&'a Path>,
    /// `--dir`, if given.
    pub dir: Option<&'a Path>,
    /// Where an image would be created (`--scratch-dir`), when no `--device`/`--dir` is given.
    pub scratch_dir: Option<&'a Path>,
    /// Tools whose presence matters (`fio`).
    pub tools: &'a [&'a str],
    /// Paths whose kind (directory, file) matters.
    pub paths: Vec<&'a Path>,
}

impl Query<'_> {
    fn paths_that(&self, is: fn(&Path) -> bool) -> BTreeSet<PathBuf> {
        self.paths
            .iter()
            .filter(|p| is(p))
            .map(|p| p.to_path_buf())
            .collect()
    }
}

impl HostFacts {
    /// A fixed host for unit tests that resolve plans: 4 GiB RAM, fio installed, a 20 GiB
    /// target, the Unix epoch as the clock, seed 42.
    #[cfg(test)]
    pub fn fixed() -> HostFacts {
        HostFacts {
            ram_bytes: 4 << 30,
            target_bytes: Some(20 << 30),
            scratch_free: None,
            target_in_ram: None,
            device: None,
            tools: BTreeSet::from(["fio".to_string()]),
            dirs: BTreeSet::new(),
            files: BTreeSet::new(),
            footprints: Default::default(),
            now: SystemTime::UNIX_EPOCH,
            random_seed: 42,
            md: false,
            kernel_zfs: false,
        }
    }

    /// Look everything up once.
    pub fn gather(q: &Query) -> HostFacts {
        let device = q.device.map(block_device_check);
        let target_bytes = match (q.device, q.dir) {
            (Some(d), _) => super::sys::block_size_from_sysfs(d),
            (None, Some(d)) => super::sys::available_bytes(d),
            (None, None) => None,
        };
        // The directory data lands in: --dir, else the image's (a device is never in RAM).
        let data_dir = match (q.device, q.dir) {
            (Some(_), _) => None,
            (None, Some(d)) => Some(d),
            (None, None) => q.scratch_dir,
        };
        let scratch_free = match (q.device, q.dir, q.scratch_dir) {
            (None, None, Some(d)) => super::sys::available_bytes(d),
            _ => None,
        };
        let target_in_ram = data_dir.and_then(|d| super::sys::ram_fs_name(d).ok().flatten());
        HostFacts {
            ram_bytes: super::sys::ram_bytes(),
            target_bytes,
            scratch_free,
            target_in_ram,
            device,
            tools: q
                .tools
                .iter()
                .filter(|t| super::command::available(t))
                .map(|t| t.to_string())
                .collect(),
            dirs: q.paths_that(Path::is_dir),
            files: q.paths_that(Path::is_file),
            footprints: q
                .paths
                .iter()
                .filter_map(|p| footprint(p).map(|b| (p.to_path_buf(), b)))
                .collect(),
            now: SystemTime::now(),
            random_seed: super::sys::fresh_seed(),
            md: std::path::Path::new("/proc/mdstat").exists(),
            kernel_zfs: super::zfs::kernel(),
        }
    }

    /// Whether `tool` was found.
    pub fn has_tool(&self, tool: &str) -> bool {
        self.tools.contains(tool)
    }
}

/// A block: the allocation unit a tree's files and entries are rounded up to.
const BLOCK: u64 = 4096;

/// What `path` takes written out: a regular file's length (a tar is extracted to about that),
/// or a directory tree walked with `lstat` (symlinks not followed), its files rounded up to
/// 4 KiB plus 4 KiB per entry — the same rule the synthetic corpus's estimate uses.
fn footprint(path: &Path) -> Option<u64> {
    let md = std::fs::symlink_metadata(path).ok()?;
    if md.is_file() {
        return Some(md.len());
    }
    if !md.is_dir() {
        return None;
    }
    let mut total = 0u64;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(md) = e.metadata() else { continue };
            total += BLOCK;
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file() {
                total += md.len().div_ceil(BLOCK) * BLOCK;
            }
        }
    }
    Some(total)
}

/// Cheap early check (only `stat`) that `dev` is a block device; the target module repeats the
/// full safety checks (mounted, holders, signatures, O_EXCL) when acquiring.
fn block_device_check(dev: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(dev).map_err(|e| {
        format!("cannot stat it ({e}); give an existing block device such as /dev/sdb")
    })?;
    if !meta.file_type().is_block_device() {
        return Err(
            "it is not a block device; --device takes a whole disk or partition such as \
                    /dev/sdb (to benchmark on an image file, drop --device and use \
                    --image-size/--scratch-dir)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tree_counts_its_blocks_and_entries_and_a_file_its_length() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/a"), vec![1u8; 5000]).unwrap();
        std::fs::write(d.path().join("b"), b"x").unwrap();
        // sub, sub/a and b: three entries; a takes two blocks, b one.
        assert_eq!(super::footprint(d.path()), Some(3 * 4096 + 2 * 4096 + 4096));
        assert_eq!(super::footprint(&d.path().join("sub/a")), Some(5000));
        assert_eq!(super::footprint(&d.path().join("none")), None);
    }
}
