//! Safety checks run on a `--device` before anything destructive happens.
//!
//! mkfs tools run without a terminal do not ask before overwriting, so fsbench asks these
//! questions itself. Each refusal names the device, the reason and what to do; devices are
//! compared by device number, never by name, so `/dev/disk/by-id/…` aliases are caught too.

use super::parse;
use crate::host::command;
use crate::host::mountinfo::{self, MountEntry};
use crate::host::sysfs::{self, DevNum};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A device that passed every check.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The path the user gave.
    pub path: PathBuf,
    /// Its device number.
    pub dev: DevNum,
    /// Its size in bytes.
    pub size: u64,
    /// Its sysfs directory.
    pub sys: PathBuf,
    /// Its kernel name (`sdb`).
    pub name: String,
}

/// The device itself and its partitions, as (display path, number).
struct Family {
    members: Vec<(String, DevNum)>,
}

impl Family {
    fn contains(&self, d: DevNum) -> Option<&str> {
        self.members
            .iter()
            .find(|(_, m)| *m == d)
            .map(|(n, _)| n.as_str())
    }
}

/// Run every check; `Err(Error::Refused)` names the first problem found.
pub fn check_device(path: &Path, force_wipe: bool) -> Result<Checked> {
    let refuse = |reason: String| Error::refused(path, reason);
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refuse(
                "it does not exist; pass an existing block device such as /dev/sdb".into(),
            ));
        }
        Err(e) => return Err(Error::io("cannot inspect", path, e)),
    };
    if !md.file_type().is_block_device() {
        return Err(refuse(format!(
            "it is not a block device (it is {}); --device takes a whole scratch disk or \
             partition, use --dir for a directory or --scratch-dir for an image file",
            describe_type(&md)
        )));
    }
    let dev = DevNum::from_dev(md.rdev());
    let sys = dev.sysfs_dir().ok_or_else(|| {
        refuse(format!(
            "the kernel has no sysfs entry for its device number {dev}"
        ))
    })?;
    let name = sysfs::kernel_name(&sys);
    let mut members = vec![(path.display().to_string(), dev)];
    if !sysfs::is_partition(&sys) {
        for (pname, pdev) in sysfs::partitions(&sys) {
            members.push((format!("/dev/{pname}"), pdev));
        }
    }
    let family = Family { members };

    let mounts = mountinfo::read()?;
    check_mounted(&family, &mounts).map_err(&refuse)?;
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    check_swap(&family, &parse::parse_swaps(&swaps)).map_err(&refuse)?;
    check_holders(&sys, &family).map_err(&refuse)?;
    if sysfs::read_attr(&sys, "ro").as_deref() == Some("1") {
        return Err(refuse("it is read-only".into()));
    }
    check_system(&family, &mounts).map_err(&refuse)?;
    let size = check_exclusive(path).map_err(&refuse)?;
    check_members(path, &name).map_err(&refuse)?;
    if !force_wipe {
        check_signature(path).map_err(&refuse)?;
    }
    Ok(Checked {
        path: path.to_path_buf(),
        dev,
        size,
        sys,
        name,
    })
}

fn describe_type(md: &std::fs::Metadata) -> &'static str {
    let t = md.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a device"
    }
}

/// The device number a mount source path names, when it is a block device.
fn source_dev(source: &str) -> Option<DevNum> {
    if !source.starts_with('/') {
        return None;
    }
    let md = std::fs::metadata(source).ok()?;
    md.file_type()
        .is_block_device()
        .then(|| DevNum::from_dev(md.rdev()))
}

fn entry_devs(e: &MountEntry) -> Vec<DevNum> {
    let mut v = Vec::new();
    if e.dev.major != 0 {
        v.push(e.dev);
    }
    // Btrfs and others report an anonymous 0:N device; the source still names the disk.
    if let Some(d) = source_dev(&e.source)
        && !v.contains(&d)
    {
        v.push(d);
    }
    v
}

fn check_mounted(family: &Family, mounts: &[MountEntry]) -> Result<(), String> {
    for e in mounts {
        for d in entry_devs(e) {
            if let Some(name) = family.contains(d) {
                let whose = if name == family.members[0].0 {
                    "it is".to_string()
                } else {
                    format!("its partition {name} is")
                };
                return Err(format!(
                    "{whose} mounted at {}; unmount it first",
                    e.mount_point.display()
                ));
            }
        }
    }
    Ok(())
}

fn check_swap(family: &Family, swaps: &[String]) -> Result<(), String> {
    for s in swaps {
        if let Some(d) = source_dev(s)
            && let Some(name) = family.contains(d)
        {
            return Err(format!("{name} is active swap; run `swapoff {s}` first"));
        }
    }
    Ok(())
}

fn check_holders(sys: &Path, family: &Family) -> Result<(), String> {
    for (name, d) in &family.members {
        let dir = d.sysfs_dir().unwrap_or_else(|| sys.to_path_buf());
        let h = sysfs::holders(&dir);
        if !h.is_empty() {
            return Err(format!(
                "{name} has holders ({}): it is in use by device-mapper, LVM or md RAID; \
                 remove those first",
                h.join(", ")
            ));
        }
    }
    Ok(())
}

/// Every device a mounted filesystem rests on, with the chain that leads there.
///
/// Follows dm/md `slaves/` and loop devices' backing files, so an image file on the disk
/// that is mounted through a loop device counts as "backing the running system".
fn underlying(dev: DevNum, chain: String, depth: u32, out: &mut BTreeMap<DevNum, String>) {
    if depth > 8 || out.contains_key(&dev) {
        return;
    }
    out.insert(dev, chain.clone());
    let Some(sys) = dev.sysfs_dir() else { return };
    let name = sysfs::kernel_name(&sys);
    for s in sysfs::slaves(&sys) {
        if let Some(d) = sysfs::read_attr(&s, "dev").and_then(|d| DevNum::parse(&d)) {
            let n = sysfs::kernel_name(&s);
            underlying(d, format!("{chain} on {n}"), depth + 1, out);
        }
    }
    if let Some(file) = sysfs::read_attr(&sys, "loop/backing_file")
        && let Ok(md) = std::fs::metadata(&file)
    {
        underlying(
            DevNum::from_dev(md.dev()),
            format!("{chain} via {name}'s backing file {file}"),
            depth + 1,
            out,
        );
    }
}

fn check_system(family: &Family, mounts: &[MountEntry]) -> Result<(), String> {
    // The system mounts first so the message names / rather than some bind mount.
    let mut order: Vec<&MountEntry> = mounts.iter().collect();
    let rank = |e: &MountEntry| match e.mount_point.to_str() {
        Some("/") => 0,
        Some("/usr") => 1,
        Some("/boot") => 2,
        _ => 3,
    };
    order.sort_by_key(|e| rank(e));
    for e in order {
        for d in entry_devs(e) {
            let mut deps = BTreeMap::new();
            underlying(d, format!("mounted from {}", e.source), 0, &mut deps);
            for (dd, chain) in deps {
                if let Some(name) = family.contains(dd) {
                    let what = if rank(e) < 3 {
                        format!("it holds {} of the running system", e.mount_point.display())
                    } else {
                        format!(
                            "it backs the filesystem mounted at {}",
                            e.mount_point.display()
                        )
                    };
                    let whose = if name == family.members[0].0 {
                        String::new()
                    } else {
                        format!(" (through its partition {name})")
                    };
                    return Err(format!(
                        "{what}{whose}: {chain}; pick a scratch device nothing depends on"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Open with O_EXCL (fails with EBUSY while the kernel or a program holds it exclusively);
/// returns the device size.
fn check_exclusive(path: &Path) -> Result<u64, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EBUSY) {
                "it cannot be opened exclusively (busy): a mount, device-mapper, md or \
                 another program is using it"
                    .to_string()
            } else if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) {
                format!("it cannot be opened ({e}); wiping a device needs root")
            } else {
                format!("it cannot be opened: {e}")
            }
        })?;
    use std::os::fd::AsFd;
    crate::host::sys::device_size(f.as_fd()).map_err(|e| format!("cannot read its size: {e}"))
}

/// A check that a device belongs to no pool a user-space filesystem holds open without
/// O_EXCL (zfs-fuse's vdevs): `Err` says which pool and what to do.
pub type MembershipCheck = fn(&Path, &str) -> Result<(), String>;

static MEMBERSHIP: std::sync::RwLock<BTreeMap<&'static str, MembershipCheck>> =
    std::sync::RwLock::new(BTreeMap::new());

/// Install a pool driver's membership check under its filesystem's name (`fs::register`
/// installs the ZFS driver's: `target` sits below the drivers and cannot ask them).
pub fn register_membership(fs: &'static str, check: MembershipCheck) {
    MEMBERSHIP
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(fs, check);
}

/// O_EXCL does not see every claim on a device, so ask each registered pool driver whether
/// the device (`name`: its kernel name) is one of its members.
pub(crate) fn check_members(path: &Path, name: &str) -> Result<(), String> {
    let checks = MEMBERSHIP
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    checks.values().try_for_each(|check| check(path, name))
}

fn check_signature(path: &Path) -> Result<(), String> {
    let dev = path.to_string_lossy().to_string();
    let hint = "use --force-wipe to wipe it";
    if command::available("blkid") {
        let out = command::run_unchecked(
            &command::argv(&["blkid", "-p", "-o", "export", &dev]),
            Duration::from_secs(30),
        )
        .map_err(|e| e.to_string())?;
        match out.status {
            Some(0) => {
                let tags = parse::parse_blkid_export(&out.stdout);
                let what = parse::describe_signature(&tags)
                    .unwrap_or_else(|| "a signature blkid recognises".into());
                return Err(format!("it carries {what}; {hint}"));
            }
            Some(2) => {} // nothing found; wipefs below double-checks secondary signatures
            Some(8) => {
                return Err(format!(
                    "it carries several conflicting signatures (blkid: ambivalent result); {hint}"
                ));
            }
            _ => {
                return Err(format!(
                    "cannot check it for signatures: blkid -p failed: {}; {hint}",
                    out.combined().trim()
                ));
            }
        }
    }
    if command::available("wipefs") {
        let out = command::run_unchecked(
            &command::argv(&[
                "wipefs",
                "--no-act",
                "--noheadings",
                "--output",
                "TYPE",
                &dev,
            ]),
            Duration::from_secs(30),
        )
        .map_err(|e| e.to_string())?;
        if out.status == Some(0) {
            let types = parse::parse_wipefs_types(&out.stdout);
            if !types.is_empty() {
                return Err(format!(
                    "it carries signatures ({}); {hint}",
                    types.join(", ")
                ));
            }
        }
        return Ok(());
    }
    if command::available("blkid") {
        return Ok(());
    }
    Err(format!(
        "cannot check it for signatures: neither blkid nor wipefs is installed (util-linux); {hint}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_a_block_device_is_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = check_device(f.path(), false).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("not a block device (it is a regular file)"),
            "{e}"
        );
        let e = check_device(Path::new("/nonexistent/dev/x"), false).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }
}
