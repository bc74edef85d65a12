//! Pure parsers that turn tune2fs / xfs_info / btrfs / zfs output into a short property map.
//!
//! Only the lines that explain a performance difference are kept (block and inode sizes,
//! features, checksum type, profiles, ZFS dataset properties); timestamps and counters that
//! change every run are dropped so two runs can be compared key by key.

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

/// `xfs_info` as `section.key` (`data.bsize`, `meta-data.crc`, `log.blocks`); the
/// device path on the first line is dropped.
pub fn parse_xfs_info(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        let (head, rest) = match line.split_once('=') {
            Some((h, r)) => (h.trim(), r),
            None => continue,
        };
        if !head.is_empty() {
            section = head.to_string();
        }
        // The text after the section's '=' starts with its own value (device, "version 2",
        // "internal log"), then space-separated key=value pairs.
        for tok in rest.split([' ', ',']).filter(|t| t.contains('=')) {
            let (k, v) = tok.split_once('=').unwrap_or((tok, ""));
            if k.is_empty() || v.is_empty() {
                continue;
            }
            m.entry(format!("{section}.{k}"))
                .or_insert_with(|| v.to_string());
        }
    }
    m
}

/// Excerpt of `btrfs inspect-internal dump-super`: sizes, checksum, feature flags.
pub fn parse_btrfs_super(text: &str) -> BTreeMap<String, String> {
    const KEYS: &[&str] = &[
        "csum_type",
        "sectorsize",
        "nodesize",
        "num_devices",
        "compat_ro_flags",
        "incompat_flags",
    ];
    let mut m = BTreeMap::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let mut it = line.split_whitespace();
        let Some(k) = it.next() else { continue };
        if !KEYS.contains(&k) {
            continue;
        }
        let mut v: String = it.collect::<Vec<_>>().join(" ");
        if k.ends_with("_flags") {
            // Flag names follow on indented lines: "( A |", "  B )".
            let mut names = Vec::new();
            while let Some(next) = lines.peek() {
                if !next.starts_with(['\t', ' ']) {
                    break;
                }
                let n = lines.next().unwrap_or_default();
                names.extend(
                    n.split(['(', ')', '|'])
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
            }
            if !names.is_empty() {
                v = names.join(",");
            }
        }
        m.insert(k.to_string(), v);
    }
    m
}

/// Data/metadata/system profiles from `btrfs filesystem df` (`Data, single: total=…`).
pub fn parse_btrfs_df(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        if let Some((kind, rest)) = line.split_once(',')
            && let Some((profile, _)) = rest.split_once(':')
        {
            let kind = kind.trim().to_lowercase();
            if ["data", "metadata", "system"].contains(&kind.as_str()) {
                m.insert(format!("{kind}_profile"), profile.trim().to_string());
            }
        }
    }
    m
}

/// ZFS properties that describe the run-to-run varying state, not the setup.
const ZFS_VOLATILE: &[&str] = &[
    "creation",
    "used",
    "available",
    "referenced",
    "usedbysnapshots",
    "usedbydataset",
    "usedbychildren",
    "usedbyrefreservation",
    "written",
    "logicalused",
    "logicalreferenced",
    "mounted",
    "mountpoint",
    "guid",
    "createtxg",
    "objsetid",
];

/// `zfs get -H -o property,value all POOL`, minus volatile entries.
pub fn parse_zfs_get(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, _)| !k.is_empty() && !ZFS_VOLATILE.contains(k))
        .map(|(k, v)| (format!("zfs.{k}"), v.to_string()))
        .collect()
}

/// Pool names listed by `zpool import -d DIR`.
pub fn parse_zpool_import(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("pool:"))
        .map(|p| p.trim().to_string())
        .collect()
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

    #[test]
    fn xfs_info_sections() {
        let t = "meta-data=/dev/loop3             isize=512    agcount=4, agsize=19200 blks\n         =                       sectsz=4096  attr=2, projid32bit=1\n         =                       crc=1        finobt=1, sparse=1, rmapbt=0\n         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0\ndata     =                       bsize=4096   blocks=76800, imaxpct=25\n         =                       sunit=0      swidth=0 blks\nnaming   =version 2              bsize=4096   ascii-ci=0, ftype=1\nlog      =internal log           bsize=4096   blocks=16384, version=2\nrealtime =none                   extsz=4096   blocks=0, rtextents=0\n";
        let m = parse_xfs_info(t);
        assert_eq!(m["meta-data.isize"], "512");
        assert_eq!(m["meta-data.agcount"], "4");
        assert_eq!(m["meta-data.crc"], "1");
        assert_eq!(m["meta-data.reflink"], "1");
        assert_eq!(m["data.bsize"], "4096");
        assert_eq!(m["log.blocks"], "16384");
        assert!(!m.values().any(|v| v.contains("/dev/loop3")));
    }

    #[test]
    fn btrfs_super_and_df() {
        let t = "superblock: bytenr=65536, device=z.img\ncsum_type\t\t0 (crc32c)\nsectorsize\t\t4096\nnodesize\t\t16384\nnum_devices\t\t1\ncompat_ro_flags\t\t0x3\n\t\t\t( FREE_SPACE_TREE |\n\t\t\t  FREE_SPACE_TREE_VALID )\nincompat_flags\t\t0x341\n\t\t\t( MIXED_BACKREF |\n\t\t\t  NO_HOLES )\ncache_generation\t0\n";
        let m = parse_btrfs_super(t);
        assert_eq!(m["csum_type"], "0 (crc32c)");
        assert_eq!(m["nodesize"], "16384");
        assert_eq!(
            m["compat_ro_flags"],
            "FREE_SPACE_TREE,FREE_SPACE_TREE_VALID"
        );
        assert_eq!(m["incompat_flags"], "MIXED_BACKREF,NO_HOLES");
        assert!(!m.contains_key("cache_generation"));
        let df = "Data, single: total=8.00MiB, used=0.00B\nSystem, DUP: total=8.00MiB, used=16.00KiB\nMetadata, DUP: total=51.19MiB, used=128.00KiB\nGlobalReserve, single: total=3.25MiB, used=0.00B\n";
        let d = parse_btrfs_df(df);
        assert_eq!(d["data_profile"], "single");
        assert_eq!(d["metadata_profile"], "DUP");
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn zfs_get_and_import() {
        let t = "type\tfilesystem\ncreation\tMon Nov 30 12:18 2026\nused\t376K\nrecordsize\t16K\ncompressratio\t1.00x\nchecksum\ton\n";
        let m = parse_zfs_get(t);
        assert_eq!(m["zfs.recordsize"], "16K");
        assert_eq!(m["zfs.compressratio"], "1.00x");
        assert!(!m.contains_key("zfs.creation") && !m.contains_key("zfs.used"));
        let i = "  pool: fsbench_1_0\n    id: 116\n state: ONLINE\n";
        assert_eq!(parse_zpool_import(i), vec!["fsbench_1_0"]);
    }
}
