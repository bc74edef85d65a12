//! Its recorded properties: the superblock (checksum, node size, flags) and its profiles.
//! Only what explains a performance difference is kept; what changes every run is dropped,
//! so two runs can be compared key by key.

use std::collections::BTreeMap;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
