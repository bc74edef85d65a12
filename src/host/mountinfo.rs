//! `/proc/self/mountinfo`: what is mounted where, from which device, with which options.
//!
//! mountinfo (not /proc/mounts) because it carries the device number, which is how safety
//! checks recognise a device under any of its names, and it separates per-mount options from
//! superblock options (Btrfs' `compress=zstd:3` lives in the latter).

use crate::host::sysfs::DevNum;
use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    /// Mount id.
    pub id: u32,
    /// Device number of the filesystem (0:N for Btrfs, FUSE, tmpfs).
    pub dev: DevNum,
    /// Root of the mount within the filesystem.
    pub root: String,
    /// Where it is mounted (unescaped).
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    /// Filesystem type (`ext4`, `fuse.zfs`).
    pub fs_type: String,
    /// Mount source (`/dev/loop3`, pool name, `tmpfs`), unescaped.
    pub source: String,
    /// Superblock options.
    pub super_options: String,
}

impl MountEntry {
    /// Per-mount options followed by the superblock options not already listed.
    pub fn all_options(&self) -> String {
        let mut seen: Vec<&str> = self.mount_options.split(',').collect();
        for o in self.super_options.split(',') {
            if !o.is_empty() && !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.retain(|o| !o.is_empty());
        seen.join(",")
    }
}

/// Undo mountinfo's octal escapes (`\040` for space, `\011`, `\012`, `\134`).
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse mountinfo text; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 {
        return None;
    }
    Some(MountEntry {
        id: l[0].parse().ok()?,
        dev: DevNum::parse(l[2])?,
        root: unescape(l[3]),
        mount_point: PathBuf::from(unescape(l[4])),
        mount_options: l[5].to_string(),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r.get(2).map(|s| s.to_string()).unwrap_or_default(),
    })
}

/// The current mount table of this process.
pub fn read() -> crate::Result<Vec<MountEntry>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| crate::Error::io("cannot read", "/proc/self/mountinfo", e))?;
    Ok(parse(&text))
}

/// The topmost mount at exactly `path`, if any.
pub fn find_mount_point(entries: &[MountEntry], path: &Path) -> Option<MountEntry> {
    entries
        .iter()
        .rev()
        .find(|e| e.mount_point == path)
        .cloned()
}

/// The mount containing `path` (longest mount-point prefix, topmost).
pub fn containing(entries: &[MountEntry], path: &Path) -> Option<MountEntry> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| path.starts_with(&e.mount_point))
        .max_by_key(|(i, e)| (e.mount_point.components().count(), *i))
        .map(|(_, e)| e.clone())
}

/// Whether something is mounted exactly at `mnt`.
pub fn is_mounted(mnt: &Path) -> bool {
    read()
        .map(|m| find_mount_point(&m, mnt).is_some())
        .unwrap_or(false)
}

/// Unmount `mnt`: retry a few times while busy (a workload's files may still be closing),
/// then detach lazily as a last resort, with a warning.
pub fn unmount(mnt: &Path) -> crate::Result<()> {
    use rustix::mount::UnmountFlags;
    let mut last = std::io::Error::from_raw_os_error(libc::EBUSY);
    for attempt in 0..6 {
        match rustix::mount::unmount(mnt, UnmountFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(e) => last = e.into(),
        }
        match last.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ENOENT) if !is_mounted(mnt) => return Ok(()),
            Some(libc::EBUSY) => {
                super::sync_all();
                std::thread::sleep(std::time::Duration::from_millis(200 * (attempt + 1)));
            }
            _ => break,
        }
    }
    if last.raw_os_error() == Some(libc::EBUSY) {
        match rustix::mount::unmount(mnt, UnmountFlags::DETACH) {
            Ok(()) => {
                eprintln!(
                    "fsbench: warning: {} stayed busy; detached it lazily (it disappears once \
                     its last open file is closed)",
                    mnt.display()
                );
                return Ok(());
            }
            Err(e) => last = e.into(),
        }
    }
    Err(crate::Error::io("cannot unmount", mnt, last))
}

/// The mount points at or below `root`, in the order to unmount them: deepest first, and at
/// one depth the newest first (mountinfo lists mounts in the order they were made, so a mount
/// stacked on another comes after it).
pub fn below(entries: &[MountEntry], root: &Path) -> Vec<PathBuf> {
    let mut points: Vec<PathBuf> = entries
        .iter()
        .rev()
        .map(|e| e.mount_point.clone())
        .filter(|p| p.starts_with(root))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points
}

/// Unmount every mount at or below `root` ([`below`]'s order); returns how many. For the
/// directory of a program fsbench runs that mounts inside it (Podman's storage root).
pub fn unmount_under(root: &Path) -> crate::Result<usize> {
    let points = below(&read()?, root);
    for p in &points {
        unmount(p)?;
    }
    Ok(points.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
43 27 0:40 / /tmp/zt/mnt rw,relatime - fuse.zfs fsbtest_me rw,user_id=0,group_id=0
50 22 7:3 / /mnt/with\\040space rw,noatime shared:30 master:2 - ext4 /dev/loop3 rw
51 22 0:52 /sub /run/fsbench/b rw,relatime - btrfs /dev/loop4 rw,ssd,space_cache=v2,compress=zstd:3,subvolid=5,subvol=/
garbage line
";

    #[test]
    fn mounts_below_a_root_go_deepest_and_newest_first() {
        let text = "\
1 0 8:1 / / rw - ext4 /dev/vda rw
2 1 7:1 / /run/f/m rw - ext4 /dev/loop1 rw
3 2 7:1 /p/root/overlay /run/f/m/p/root/overlay rw - ext4 /dev/loop1 rw
4 3 0:60 / /run/f/m/p/root/overlay/ab/merged rw - overlay overlay rw
5 2 0:61 / /run/f/m/p/run/shm rw - tmpfs shm rw
6 3 7:1 /p/root/overlay /run/f/m/p/root/overlay rw - ext4 /dev/loop1 rw
";
        let got = below(&parse(text), Path::new("/run/f/m/p"));
        let want: Vec<PathBuf> = [
            "/run/f/m/p/root/overlay/ab/merged",
            "/run/f/m/p/root/overlay",
            "/run/f/m/p/run/shm",
            "/run/f/m/p/root/overlay",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(got, want);
        assert!(below(&parse(text), Path::new("/run/f/m/px")).is_empty());
    }

    #[test]
    fn parses_fields_and_escapes() {
        let m = parse(SAMPLE);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].mount_point, PathBuf::from("/"));
        assert_eq!(
            m[0].dev,
            DevNum {
                major: 253,
                minor: 1
            }
        );
        assert_eq!(m[1].fs_type, "fuse.zfs");
        assert_eq!(m[1].source, "fsbtest_me");
        assert_eq!(m[2].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(m[2].mount_options, "rw,noatime");
        assert_eq!(m[2].super_options, "rw");
        assert_eq!(m[2].all_options(), "rw,noatime");
        assert_eq!(m[3].root, "/sub");
        assert_eq!(
            m[3].all_options(),
            "rw,relatime,ssd,space_cache=v2,compress=zstd:3,subvolid=5,subvol=/"
        );
    }

    #[test]
    fn finds_mounts() {
        let m = parse(SAMPLE);
        let c = containing(&m, Path::new("/mnt/with space/x")).unwrap();
        assert_eq!(c.source, "/dev/loop3");
        assert_eq!(containing(&m, Path::new("/etc")).unwrap().id, 22);
        assert!(find_mount_point(&m, Path::new("/mnt")).is_none());
        assert_eq!(unescape("a\\134b\\011"), "a\\b\t");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
    }
}
