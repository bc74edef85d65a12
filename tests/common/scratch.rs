//! Scratch directories, results files, and what a test run must not leave behind.

use std::path::Path;

use super::{have, sh, stdout};

/// A fresh directory in `/var/tmp` named `<prefix>…`, removed on drop. On a real disk, not
/// tmpfs: loop devices with direct I/O refuse tmpfs backing files.
pub fn scratch(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap_or_else(|e| panic!("a scratch directory in /var/tmp: {e}"))
}

/// `OUT/results.json`, parsed.
#[track_caller]
pub fn load_results(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text).expect("results.json is JSON")
}

/// Loop devices backed by files under `scratch`, and mounts under `scratch` or under
/// fsbench's mount root for the process `pid` (`/run/fsbench/<pid>-…`), one line each.
pub fn leftovers(scratch: &Path, pid: Option<u32>) -> Vec<String> {
    let s = scratch.to_string_lossy().into_owned();
    let loops = stdout(&sh(&["losetup", "-a"]));
    let mut found: Vec<String> = loops
        .lines()
        .filter(|l| l.contains(&s))
        .map(|l| format!("loop: {l}"))
        .collect();
    let ours = pid.map(|p| format!("/run/fsbench/{p}-"));
    found.extend(
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(&s) || ours.as_deref().is_some_and(|o| l.contains(o)))
            .map(|l| format!("mount: {l}")),
    );
    found
}

/// The ZFS pools listed now (none when `zpool` is not installed).
pub fn zfs_pools() -> Vec<String> {
    if !have("zpool") {
        return vec![];
    }
    let o = sh(&["zpool", "list", "-H", "-o", "name"]);
    stdout(&o).lines().map(str::to_string).collect()
}

/// fsbench's pools that exist now and did not before (`pools_before` from [`zfs_pools`]).
pub fn new_fsbench_pools(pools_before: &[String]) -> Vec<String> {
    zfs_pools()
        .into_iter()
        .filter(|p| p.contains("fsbench") && !pools_before.contains(p))
        .map(|p| format!("pool: {p}"))
        .collect()
}
