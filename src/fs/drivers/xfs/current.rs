//! What a mounted XFS has now of its option space that its mount options do not show: the
//! number of allocation groups (`xfs_info`, read-only), for `fsbench tune --current`.

use crate::host::mountinfo::MountEntry;
use std::time::Duration;

/// The allocation groups of the XFS mounted as `entry` as a space word (`-d agcount=16`);
/// `Err` says why `xfs_info` could not be read.
pub fn read(entry: &MountEntry) -> Result<Vec<String>, String> {
    let mnt = entry.mount_point.display().to_string();
    let argv = crate::host::command::argv(&["xfs_info", &mnt]);
    let out =
        crate::host::command::run(&argv, Duration::from_secs(20)).map_err(|e| e.to_string())?;
    Ok(words(&out.stdout))
}

/// XFS's allocation groups from `xfs_info` (`… agcount=16, agsize=…`) as a space word.
pub fn words(xfs_info: &str) -> Vec<String> {
    let count = xfs_info
        .split(|c: char| c.is_whitespace() || c == ',')
        .find_map(|w| w.strip_prefix("agcount="))
        .and_then(|v| v.parse::<u32>().ok());
    count
        .map(|n| vec![format!("-d agcount={n}")])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_agcount_becomes_the_space_word() {
        assert_eq!(
            super::words("meta-data=/dev/loop4 isize=512    agcount=16, agsize=4096 blks\n"),
            ["-d agcount=16"]
        );
    }
}
