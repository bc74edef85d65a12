//! Block-device facts from sysfs: model, rotational flag, scheduler, partitions, holders.
//!
//! Every lookup goes through `/sys/dev/block/MAJ:MIN`, so a device is identified by its
//! number and never by a name that could be re-used between two checks.

use std::path::{Path, PathBuf};

/// A device number split into major and minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DevNum {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl DevNum {
    /// From an `st_rdev` / `st_dev` value.
    pub fn from_dev(dev: u64) -> Self {
        DevNum {
            major: libc::major(dev as libc::dev_t),
            minor: libc::minor(dev as libc::dev_t),
        }
    }

    /// Parse `8:16`.
    pub fn parse(s: &str) -> Option<Self> {
        let (a, b) = s.trim().split_once(':')?;
        Some(DevNum {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }

    /// The sysfs directory of this device (canonical, under /sys/devices), if it exists.
    pub fn sysfs_dir(&self) -> Option<PathBuf> {
        std::fs::canonicalize(format!("/sys/dev/block/{}:{}", self.major, self.minor)).ok()
    }
}

impl std::fmt::Display for DevNum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// Read a sysfs attribute, trimmed; `None` when absent.
pub fn read_attr(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Kernel name of the device (`sdb`, `sdb1`, `loop3`).
pub fn kernel_name(sys: &Path) -> String {
    sys.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether this sysfs dir is a partition (then its parent is the whole disk).
pub fn is_partition(sys: &Path) -> bool {
    sys.join("partition").exists()
}

/// The whole-disk sysfs dir (itself unless it is a partition); queue attributes live there.
pub fn whole_disk(sys: &Path) -> PathBuf {
    if is_partition(sys) {
        sys.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| sys.to_path_buf())
    } else {
        sys.to_path_buf()
    }
}

/// Partitions of a whole disk: (kernel name, device number).
pub fn partitions(sys: &Path) -> Vec<(String, DevNum)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists()
                && let Some(dev) = read_attr(&p, "dev").and_then(|d| DevNum::parse(&d))
            {
                out.push((kernel_name(&p), dev));
            }
        }
    }
    out.sort();
    out
}

/// Names in `holders/` (dm-0, md127…): kernel users stacked on top of the device.
pub fn holders(sys: &Path) -> Vec<String> {
    list_dir(&sys.join("holders"))
}

/// Names in `slaves/`: devices this one is stacked on (dm/md members).
pub fn slaves(sys: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(sys.join("slaves"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn list_dir(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The active scheduler from `queue/scheduler` text: the `[bracketed]` entry, or the only one.
pub fn parse_scheduler(text: &str) -> String {
    let t = text.trim();
    if let (Some(a), Some(b)) = (t.find('['), t.find(']'))
        && a < b
    {
        return t[a + 1..b].to_string();
    }
    t.split_whitespace().next().unwrap_or("").to_string()
}

/// Queue and identity facts of a device, for provenance.
#[derive(Debug, Clone, Default)]
pub struct QueueFacts {
    /// Kernel name (`sdb1`).
    pub name: String,
    /// `device/model` of the whole disk, trimmed.
    pub model: String,
    /// `queue/rotational`.
    pub rotational: Option<bool>,
    /// Active scheduler.
    pub scheduler: String,
    /// `queue/logical_block_size`.
    pub logical_block_size: u64,
    /// `queue/discard_max_bytes > 0`.
    pub discard: Option<bool>,
    /// `size` × 512.
    pub size_bytes: u64,
    /// `ro`.
    pub read_only: bool,
}

/// Collect [`QueueFacts`] for a device number.
pub fn queue_facts(dev: DevNum) -> Option<QueueFacts> {
    let sys = dev.sysfs_dir()?;
    let disk = whole_disk(&sys);
    let q = disk.join("queue");
    let num = |dir: &Path, name: &str| read_attr(dir, name).and_then(|s| s.parse::<u64>().ok());
    Some(QueueFacts {
        name: kernel_name(&sys),
        model: read_attr(&disk, "device/model").unwrap_or_default(),
        rotational: num(&q, "rotational").map(|v| v != 0),
        scheduler: read_attr(&q, "scheduler")
            .map(|s| parse_scheduler(&s))
            .unwrap_or_default(),
        logical_block_size: num(&q, "logical_block_size").unwrap_or(0),
        discard: num(&q, "discard_max_bytes").map(|v| v > 0),
        size_bytes: num(&sys, "size").unwrap_or(0) * 512,
        read_only: num(&sys, "ro").unwrap_or(0) != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_is_the_bracketed_one() {
        assert_eq!(
            parse_scheduler("none [mq-deadline] kyber bfq\n"),
            "mq-deadline"
        );
        assert_eq!(parse_scheduler("[none] mq-deadline"), "none");
        assert_eq!(parse_scheduler("none\n"), "none");
        assert_eq!(parse_scheduler(""), "");
    }

    #[test]
    fn devnum_parses() {
        assert_eq!(
            DevNum::parse("259:3\n"),
            Some(DevNum {
                major: 259,
                minor: 3
            })
        );
        assert_eq!(DevNum::parse("x"), None);
        assert_eq!(DevNum::parse("8:").map(|d| d.minor), None);
    }
}
