//! ZFS's compression ratio: the dataset's `compressratio` property, read once its space
//! accounting settled (ZFS accounts when the transaction group commits, seconds after fsync);
//! its driver's `compression_ratio` and `settle_space`.

use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// The `compressratio` of the dataset `path_or_dataset` names (a dataset name), or of the
/// one whose mount (of one of `mount_types`) holds it (a path).
pub fn ratio(path_or_dataset: &str, mount_types: &[&str]) -> Result<Option<f64>> {
    let ds = if path_or_dataset.starts_with('/') {
        dataset_of(Path::new(path_or_dataset), mount_types)?
    } else {
        path_or_dataset.to_string()
    };
    let out = command::run(
        &argv(&["zfs", "get", "-Hp", "-o", "value", "compressratio", &ds]),
        Duration::from_secs(30),
    )?;
    parse_zfs_ratio(&out.stdout)
        .map(Some)
        .ok_or_else(|| Error::tool("zfs get compressratio", out.stdout))
}

/// `1.00x`, `2.41`, or `2.41x` → 2.41.
fn parse_zfs_ratio(s: &str) -> Option<f64> {
    s.trim().trim_end_matches('x').parse().ok()
}

/// The ZFS dataset whose mount (of one of `mount_types`) holds `path` (longest matching
/// mount point).
fn dataset_of(path: &Path, mount_types: &[&str]) -> Result<String> {
    let canon = std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Error::io("cannot read", "/proc/self/mountinfo", e))?;
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mp = left.split(' ').nth(4).unwrap_or("");
        let mut r = right.split(' ');
        let fstype = r.next().unwrap_or("");
        let source = r.next().unwrap_or("");
        if mount_types.contains(&fstype)
            && canon.starts_with(mp)
            && best.as_ref().is_none_or(|(l, _)| mp.len() >= *l)
        {
            best = Some((mp.len(), source.to_string()));
        }
    }
    best.map(|(_, s)| s).ok_or_else(|| {
        Error::Other(format!(
            "{} is not on a mounted ZFS dataset",
            path.display()
        ))
    })
}

/// Wait (up to 30 s) until the `used` of the dataset holding `path` stops changing after a
/// sync, so what was just written there is accounted.
pub fn settle_space(path: &Path, mount_types: &[&str]) -> Result<()> {
    let ds = dataset_of(path, mount_types)?;
    crate::host::sync_all();
    let used = || -> Result<String> {
        Ok(command::run(
            &argv(&["zfs", "get", "-Hp", "-o", "value", "used", &ds]),
            Duration::from_secs(30),
        )?
        .stdout)
    };
    let start = Instant::now();
    let mut last = used()?;
    let mut stable = 0;
    while start.elapsed() < Duration::from_secs(30) && stable < 3 {
        std::thread::sleep(Duration::from_secs(1));
        let now = used()?;
        stable = if now == last { stable + 1 } else { 0 };
        last = now;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_zfs_ratio() {
        assert_eq!(parse_zfs_ratio("2.41x\n"), Some(2.41));
        assert_eq!(parse_zfs_ratio("1.00"), Some(1.0));
        assert_eq!(parse_zfs_ratio("-"), None);
    }
}
