//! Pure parsers for the text the safety checks read: /proc/swaps, `blkid -p -o export`,
//! `wipefs --no-act` output.

use std::collections::BTreeMap;

/// Swap areas listed in /proc/swaps (first column, unescaped).
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(crate::host::mountinfo::unescape)
        .collect()
}

/// `KEY=value` lines from `blkid -p -o export` into a map.
pub fn parse_blkid_export(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// A human description of the signature blkid found, or `None` when there is none.
///
/// `an ext4 filesystem signature (LABEL=data, UUID=…)`, `a gpt partition table`,
/// `a zfs_member signature (a ZFS pool member)`.
pub fn describe_signature(tags: &BTreeMap<String, String>) -> Option<String> {
    let mut what = Vec::new();
    if let Some(t) = tags.get("TYPE") {
        let usage = tags.get("USAGE").map(String::as_str).unwrap_or("");
        let kind = match (t.as_str(), usage) {
            ("zfs_member", _) => "signature (a ZFS pool member)".to_string(),
            ("LVM2_member", _) => "signature (an LVM physical volume)".to_string(),
            ("linux_raid_member", _) => "signature (an md RAID member)".to_string(),
            ("swap", _) => "signature (a swap area)".to_string(),
            (_, "filesystem") => "filesystem signature".to_string(),
            (_, "raid") => "RAID member signature".to_string(),
            (_, "crypto") => "encrypted volume signature".to_string(),
            _ => "signature".to_string(),
        };
        what.push(format!("{} {t} {kind}", article(t)));
    }
    if let Some(pt) = tags.get("PTTYPE") {
        what.push(format!("a {pt} partition table"));
    }
    if what.is_empty() {
        return None;
    }
    let ids: Vec<String> = ["LABEL", "UUID", "PTUUID"]
        .iter()
        .filter_map(|k| tags.get(*k).map(|v| format!("{k}={v}")))
        .collect();
    let mut s = what.join(" and ");
    if !ids.is_empty() {
        s.push_str(&format!(" ({})", ids.join(", ")));
    }
    Some(s)
}

/// Signature types from `wipefs --no-act --noheadings --output TYPE` (one per line).
pub fn parse_wipefs_types(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn article(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        // Acronyms read letter by letter: "an xfs", "an LVM2_member".
        Some('a' | 'e' | 'i' | 'o' | 'u' | 'x') => "an",
        Some('l' | 'n' | 'f')
            if word.len() > 1 && !word[1..2].contains(['a', 'e', 'i', 'o', 'u']) =>
        {
            "an"
        }
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps() {
        let t = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0 partition\t1024\t0\t100\n/swap\\040file file 10 0 -2\n";
        assert_eq!(parse_swaps(t), vec!["/dev/zram0", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn blkid_export() {
        let t =
            "DEVNAME=/dev/loop3\nUUID=1234-abcd\nBLOCK_SIZE=4096\nTYPE=ext4\nUSAGE=filesystem\n";
        let m = parse_blkid_export(t);
        assert_eq!(m["TYPE"], "ext4");
        assert_eq!(
            describe_signature(&m).unwrap(),
            "an ext4 filesystem signature (UUID=1234-abcd)"
        );
        let m = parse_blkid_export("PTUUID=abc\nPTTYPE=gpt\n");
        assert_eq!(
            describe_signature(&m).unwrap(),
            "a gpt partition table (PTUUID=abc)"
        );
        let m = parse_blkid_export("TYPE=zfs_member\nUSAGE=filesystem\nLABEL=tank\n");
        assert_eq!(
            describe_signature(&m).unwrap(),
            "a zfs_member signature (a ZFS pool member) (LABEL=tank)"
        );
        let m = parse_blkid_export("TYPE=xfs\nUSAGE=filesystem\n");
        assert_eq!(
            describe_signature(&m).unwrap(),
            "an xfs filesystem signature"
        );
        assert!(describe_signature(&parse_blkid_export("DEVNAME=/dev/sdb\n")).is_none());
    }

    #[test]
    fn wipefs_types() {
        assert_eq!(parse_wipefs_types("ext4\n\n  gpt \n"), vec!["ext4", "gpt"]);
    }
}
