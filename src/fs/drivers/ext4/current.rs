//! What a mounted ext4 has now of its option space that its mount options do not show: the
//! inode size, from the superblock (`tune2fs -l`, read-only), for `fsbench tune --current`.

use crate::host::mountinfo::MountEntry;
use std::time::Duration;

/// The inode size of the ext4 mounted as `entry` as a space word (`-I 512`); `Err` says why
/// the superblock could not be read.
pub fn read(entry: &MountEntry) -> Result<Vec<String>, String> {
    let argv = crate::host::command::argv(&["tune2fs", "-l", &entry.source]);
    let out =
        crate::host::command::run(&argv, Duration::from_secs(20)).map_err(|e| e.to_string())?;
    Ok(words(&out.stdout))
}

/// ext4's inode size from `tune2fs -l` (`Inode size: 256`) as a space word.
pub fn words(tune2fs: &str) -> Vec<String> {
    let size = tune2fs
        .lines()
        .find_map(|l| l.strip_prefix("Inode size:"))
        .and_then(|v| v.trim().parse::<u32>().ok());
    size.map(|s| vec![format!("-I {s}")]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_inode_size_line_becomes_the_space_word() {
        assert_eq!(
            super::words("Inode count: 1\nInode size:\t          512\n"),
            ["-I 512"]
        );
        assert!(super::words("Inode count: 1\n").is_empty());
    }
}
