//! What a mounted ZFS dataset has now of its option space: the properties the space searches
//! (`zfs get`, read-only), for `fsbench tune --current`.

use crate::host::mountinfo::MountEntry;
use std::time::Duration;

/// The properties of the space ([`super::options::SPACE`]) that `zfs get` asks.
const PROPERTIES: &str = "recordsize,compression,atime,sync,logbias,primarycache";

/// The space's properties of the dataset mounted as `entry` as `key=value` words; `Err` says
/// why `zfs get` could not be read.
pub fn read(entry: &MountEntry) -> Result<Vec<String>, String> {
    let argv = crate::host::command::argv(&[
        "zfs",
        "get",
        "-H",
        "-o",
        "property,value",
        PROPERTIES,
        &entry.source,
    ]);
    let out =
        crate::host::command::run(&argv, Duration::from_secs(20)).map_err(|e| e.to_string())?;
    Ok(words(&out.stdout))
}

/// ZFS properties from `zfs get -H -o property,value …` as `key=value` words.
pub fn words(zfs_get: &str) -> Vec<String> {
    zfs_get
        .lines()
        .filter_map(|l| {
            let mut it = l.split('\t');
            Some(format!("{}={}", it.next()?.trim(), it.next()?.trim()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_property_line_becomes_a_key_value_word() {
        assert_eq!(
            super::words("recordsize\t16K\natime\toff\n"),
            ["recordsize=16K", "atime=off"]
        );
    }

    #[test]
    fn every_property_asked_is_a_factor_of_the_space() {
        for p in super::PROPERTIES.split(',') {
            assert!(
                super::super::options::SPACE.factor(p).is_some(),
                "{p} is asked but not searched"
            );
        }
    }
}
