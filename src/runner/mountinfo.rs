//! Which mount holds a path, from /proc/self/mountinfo (for `--dir` provenance).

use std::path::Path;

/// A mount as /proc/self/mountinfo describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    /// Where it is mounted.
    pub mount_point: String,
    /// Filesystem type (`ext4`, `fuse.zfs`…).
    pub fstype: String,
    /// Source device.
    pub source: String,
    /// Per-mount options, then the superblock options.
    pub options: String,
}

/// The mount that holds `path` (the longest mount point that is a prefix of it).
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let real = std::fs::canonicalize(path).ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    best_match(&text, &real.to_string_lossy())
}

fn unescape(s: &str) -> String {
    // mountinfo escapes space, tab, newline and backslash as \ooo octal.
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn best_match(mountinfo: &str, path: &str) -> Option<MountEntry> {
    let mut best: Option<MountEntry> = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let mp = unescape(l[4]);
        let inside = path == mp
            || mp == "/"
            || path
                .strip_prefix(mp.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        if inside
            && best
                .as_ref()
                .is_none_or(|b| mp.len() >= b.mount_point.len())
        {
            best = Some(MountEntry {
                mount_point: mp,
                fstype: r[0].to_string(),
                source: unescape(r[1]),
                options: format!("{},{}", l[5], r[2]),
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        let mi = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
30 22 0:40 / /var/tmp rw,nosuid - tmpfs tmpfs rw,size=1024k
31 22 7:3 / /var/tmpfoo rw - xfs /dev/loop3 rw,attr2
32 22 7:4 / /mnt/my\\040disk rw,noatime - btrfs /dev/loop4 rw,ssd";
        let m = best_match(mi, "/var/tmp/bench").unwrap();
        assert_eq!(
            (m.fstype.as_str(), m.mount_point.as_str()),
            ("tmpfs", "/var/tmp")
        );
        assert_eq!(best_match(mi, "/var/tmpx").unwrap().fstype, "ext4");
        let m = best_match(mi, "/mnt/my disk/x").unwrap();
        assert_eq!(m.fstype, "btrfs");
        assert_eq!(m.options, "rw,noatime,rw,ssd");
        assert!(mount_of(Path::new("/")).is_some());
    }
}
