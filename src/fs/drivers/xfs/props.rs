//! Its recorded properties: `xfs_info`'s sections (geometry, crc, reflink).
//! Only what explains a performance difference is kept; what changes every run is dropped,
//! so two runs can be compared key by key.

use std::collections::BTreeMap;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
