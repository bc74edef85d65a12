//! Its recorded properties: an excerpt of `tune2fs -l` (block and inode sizes, features).
//! Only what explains a performance difference is kept; what changes every run is dropped,
//! so two runs can be compared key by key.

use std::collections::BTreeMap;

/// Keys of `tune2fs -l` worth recording.
const TUNE2FS_KEYS: &[&str] = &[
    "Filesystem features",
    "Default mount options",
    "Block size",
    "Inode size",
    "Inode count",
    "Block count",
    "Reserved block count",
    "Flex block group size",
    "Journal backup",
    "Checksum type",
];

/// Excerpt of `tune2fs -l`.
pub fn parse_tune2fs(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim();
            if TUNE2FS_KEYS.contains(&k) {
                let key = k.to_lowercase().replace(' ', "_");
                m.insert(key, v.trim().to_string());
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tune2fs_excerpt() {
        let t = "tune2fs 1.47.0 (5-Feb-2023)\nFilesystem UUID:          ae85\nFilesystem features:      has_journal extent 64bit\nBlock size:               4096\nInode size:\t          256\nLast mount time:          n/a\n";
        let m = parse_tune2fs(t);
        assert_eq!(m["filesystem_features"], "has_journal extent 64bit");
        assert_eq!(m["block_size"], "4096");
        assert_eq!(m["inode_size"], "256");
        assert!(!m.contains_key("last_mount_time"));
        assert_eq!(m.len(), 3);
    }
}
