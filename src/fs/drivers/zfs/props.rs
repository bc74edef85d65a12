//! Its recorded properties: the dataset's `zfs get all` minus volatile entries, and the
//! pools `zpool import` lists.
//! Only what explains a performance difference is kept; what changes every run is dropped,
//! so two runs can be compared key by key.

use std::collections::BTreeMap;

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
