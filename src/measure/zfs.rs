//! ZFS seen from the measuring side: which block devices a pool writes to, and how to make it
//! write back now.
//!
//! A file on ZFS has an anonymous `st_dev` and mountinfo names the dataset (`tank/home`), not
//! a device; the devices are the pool's leaf vdevs in `zpool status` (with `-P` full paths
//! on OpenZFS; zfs-fuse has no `-P` and prints names relative to /dev, e.g. `loop3`).
//!
//! `syncfs` does not reach zfs-fuse (FUSE passes no syncfs to a daemon this old), and its
//! transaction groups are committed every 20–30 s, so after a job the device stays quiet for
//! that long with the job's data still in the daemon's memory: measured here, a 10 MiB
//! buffered write reached the loop device 21 s later. A transaction-group sync forces it:
//! `zpool sync` where it exists (OpenZFS ≥ 0.8), otherwise a sync task, which waits for its
//! txg to be on disk: setting and then clearing a user property (`fsbench:writeback`), which
//! leaves the dataset as it was.

use crate::host::command::{self, argv};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// User property used to force a transaction-group sync (set, then inherited = removed).
const SYNC_PROPERTY: &str = "fsbench:writeback";

/// How long one ZFS command may take (a txg sync under load takes seconds).
const TIMEOUT: Duration = Duration::from_secs(120);

/// The pool of a dataset name (`tank/home/x` → `tank`).
pub fn pool_of(dataset: &str) -> &str {
    dataset.split(['/', '@']).next().unwrap_or(dataset)
}

/// Leaf vdev names in the `config:` section of `zpool status` output: group rows (`mirror-0`,
/// `raidz1-0`, `logs`, `cache`, …) are skipped, and so are spares (idle until used).
pub fn parse_status_vdevs(text: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| {
        let t = l.trim_start();
        !(t.starts_with("NAME") && t.contains("STATE"))
    });
    lines.next(); // the header
    let rows: Vec<(usize, &str)> = lines
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let indent = l.len() - l.trim_start().len();
            l.split_whitespace().next().map(|n| (indent, n))
        })
        .collect();
    let Some(&(pool_indent, _)) = rows.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut spares_at: Option<usize> = None;
    for (i, &(indent, name)) in rows.iter().enumerate().skip(1) {
        if spares_at.is_some_and(|s| indent > s) {
            continue;
        }
        spares_at = None;
        if name == "spares" {
            spares_at = Some(indent);
            continue;
        }
        if indent <= pool_indent {
            continue;
        }
        let has_children = rows.get(i + 1).is_some_and(|&(next, _)| next > indent);
        if !has_children && !is_group(name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Rows of `zpool status` that group vdevs rather than name a device.
fn is_group(name: &str) -> bool {
    const SECTIONS: &[&str] = &["logs", "cache", "spares", "special", "dedup"];
    const KINDS: &[&str] = &["mirror", "raidz", "draid", "replacing", "spare"];
    SECTIONS.contains(&name)
        || KINDS.iter().any(|k| {
            name.strip_prefix(k).is_some_and(|rest| {
                rest.is_empty()
                    || rest.starts_with('-')
                    || rest.starts_with(|c: char| c.is_ascii_digit())
            })
        })
}

/// The block device a vdev name stands for: absolute paths as they are, bare names under
/// /dev and its by-id/by-path/mapper directories.
fn vdev_path(name: &str) -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = if name.starts_with('/') {
        vec![PathBuf::from(name)]
    } else {
        [
            "/dev",
            "/dev/disk/by-id",
            "/dev/disk/by-path",
            "/dev/disk/by-vdev",
            "/dev/mapper",
        ]
        .iter()
        .map(|d| Path::new(d).join(name))
        .collect()
    };
    let found = candidates
        .iter()
        .find_map(|p| std::fs::canonicalize(p).ok())
        .ok_or_else(|| format!("vdev {name} is not under /dev"))?;
    let md = std::fs::metadata(&found).map_err(|e| format!("{}: {e}", found.display()))?;
    if md.file_type().is_block_device() {
        Ok(found)
    } else {
        Err(format!(
            "vdev {name} is a file ({}), not a block device",
            found.display()
        ))
    }
}

/// The block devices under `pool`, from `zpool status -P` (or plain `zpool status` where
/// `-P` is unknown, as in zfs-fuse). `Err` says why not.
pub fn vdevs(pool: &str) -> Result<Vec<PathBuf>, String> {
    let status = |extra: &[&str]| {
        let mut a = argv(&["zpool", "status"]);
        a.extend(argv(extra));
        a.push(pool.to_string());
        command::run(&a, TIMEOUT)
    };
    let out = status(&["-P"])
        .or_else(|_| status(&[]))
        .map_err(|e| format!("`zpool status {pool}` failed: {e}"))?;
    let names = parse_status_vdevs(&out.stdout);
    if names.is_empty() {
        return Err(format!("`zpool status {pool}` lists no vdev"));
    }
    names.iter().map(|n| vdev_path(n)).collect()
}

/// Make the pool holding `dataset` commit its open transaction group now and wait until it
/// is on disk (see the module docs). Returns the command that did it.
pub fn sync_txg(dataset: &str) -> crate::Result<String> {
    let pool = pool_of(dataset);
    let sync = argv(&["zpool", "sync", pool]);
    if command::run(&sync, TIMEOUT).is_ok() {
        return Ok(command::display(&sync));
    }
    let set = argv(&["zfs", "set", &format!("{SYNC_PROPERTY}=1"), pool]);
    let clear = argv(&["zfs", "inherit", SYNC_PROPERTY, pool]);
    command::run(&set, TIMEOUT)?;
    command::run(&clear, TIMEOUT)?;
    Ok(format!(
        "{}; {}",
        command::display(&set),
        command::display(&clear)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `zpool status` of a single-vdev pool, as zfs-fuse 0.7 prints it (captured here).
    const ZFS_FUSE: &str = "  pool: fsbench_11797_0
 state: ONLINE
 scrub: none requested
config:

\tNAME        STATE     READ WRITE CKSUM
\tfsbench_11797_0  ONLINE       0     0     0
\t  loop0     ONLINE       0     0     0

errors: No known data errors
";

    /// OpenZFS `zpool status -P` with mirrors, a log, a cache device and a spare.
    const OPENZFS: &str = "  pool: tank
 state: ONLINE
config:

\tNAME              STATE     READ WRITE CKSUM
\ttank              ONLINE       0     0     0
\t  mirror-0        ONLINE       0     0     0
\t    /dev/sdb1     ONLINE       0     0     0
\t    /dev/sdc1     ONLINE       0     0     0
\tlogs
\t  /dev/nvme0n1p1  ONLINE       0     0     0
\tcache
\t  /dev/nvme0n1p2  ONLINE       0     0     0
\tspares
\t  /dev/sdd1       AVAIL

errors: No known data errors
";

    #[test]
    fn leaf_vdevs_from_zpool_status() {
        assert_eq!(parse_status_vdevs(ZFS_FUSE), ["loop0"]);
        assert_eq!(
            parse_status_vdevs(OPENZFS),
            ["/dev/sdb1", "/dev/sdc1", "/dev/nvme0n1p1", "/dev/nvme0n1p2"]
        );
        assert!(parse_status_vdevs("no pools available\n").is_empty());
    }

    #[test]
    fn datasets_belong_to_their_pool() {
        assert_eq!(pool_of("tank"), "tank");
        assert_eq!(pool_of("tank/home/x"), "tank");
        assert_eq!(pool_of("tank@snap"), "tank");
    }

    #[test]
    fn group_rows_are_not_devices() {
        for g in [
            "mirror-0", "mirror", "raidz1-0", "raidz2", "draid1", "spare-1", "logs",
        ] {
            assert!(is_group(g), "{g}");
        }
        for d in ["loop0", "sdb", "raidzdisk", "mirrorball"] {
            assert!(!is_group(d), "{d}");
        }
    }

    #[test]
    fn a_file_vdev_is_not_a_block_device() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = vdev_path(&f.path().display().to_string()).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
        assert!(vdev_path("no-such-vdev-anywhere").is_err());
    }
}
