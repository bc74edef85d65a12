//! A ZFS pool's own mechanisms, the ZFS driver's (`fs/zfs.rs`) behaviour beyond create and
//! mount: which block devices a pool writes to and how to make it write back now (installed
//! for `measure` by [`crate::fs::register`]), whether a device is a member of an imported pool
//! (installed for `target`'s safety checks), what the capability probes ask of a pool —
//! export and import, scrub, expand, a dataset snapshot — and what the redundancy phase asks
//! of a layout's pool (`fs/redundancy.rs`): scrub, a member offline, `zpool replace`.
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

use crate::fs::ops::{Checked, Live, Outcome, SnapshotJob};
use crate::fs::redundancy::{LiveArray, percent_done, run_on, wipe};
use crate::fs::resize::Grown;
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// Tell the measuring layer how to find a pool's devices and force its commit, and the
/// target's safety checks how to ask whether a device is in an imported pool (`measure` and
/// `target` cannot ask the drivers); done by [`crate::fs::register`].
pub fn register() {
    for t in crate::fs::Filesystem::caps(&crate::fs::Zfs).mount_types {
        crate::measure::backing::register_pool(
            t,
            crate::measure::backing::PoolOps {
                vdevs: pool_vdevs,
                sync: sync_txg,
            },
        );
    }
    crate::scratch::safety::register_membership(
        crate::fs::Filesystem::name(&crate::fs::Zfs),
        not_a_vdev,
    );
}

/// The block devices under the pool of a mount source (a dataset, `tank/home`).
fn pool_vdevs(source: &str) -> std::result::Result<Vec<PathBuf>, String> {
    vdevs(pool_of(source))
}

/// zfs-fuse opens its vdevs without O_EXCL, so ask zpool whether the device is in a pool
/// (`name` is its kernel name, `loop3`). Nothing to ask where zpool is not installed.
pub fn not_a_vdev(path: &Path, name: &str) -> std::result::Result<(), String> {
    if !command::available("zpool") {
        return Ok(());
    }
    let Ok(out) = command::run_unchecked(&argv(&["zpool", "status"]), Duration::from_secs(15))
    else {
        return Ok(());
    };
    if out.status != Some(0) {
        return Ok(());
    }
    if let Some(pool) = pool_using(&out.stdout, path, name) {
        return Err(format!(
            "it is a vdev of the imported ZFS pool '{pool}'; run `zpool destroy {pool}` or \
             `zpool export {pool}` first"
        ));
    }
    Ok(())
}

/// Which pool in `zpool status` output lists this device.
pub fn pool_using(status: &str, path: &Path, name: &str) -> Option<String> {
    let full = path.to_string_lossy();
    let mut pool = None;
    for line in status.lines() {
        let t = line.trim();
        if let Some(p) = t.strip_prefix("pool:") {
            pool = Some(p.trim().to_string());
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        if !first.is_empty()
            && (first == full || first == name || first.ends_with(&format!("/{name}")))
        {
            return pool.clone();
        }
    }
    None
}

/// The pool of the dataset mounted at `live`'s mountpoint.
fn pool_at(live: &dyn Live) -> Result<String> {
    let ds = live.source().ok_or_else(|| {
        Error::Other(format!(
            "no ZFS dataset is mounted at {}",
            live.mountpoint().display()
        ))
    })?;
    Ok(ds.split('/').next().unwrap_or(&ds).to_string())
}

/// Export the pool mounted at `live` (the driver's guard would destroy it on release; an
/// export keeps it for [`import`]). Returns its name.
pub fn export(live: &dyn Live, timeout: Duration) -> Result<String> {
    let pool = pool_at(live)?;
    command::run(&argv(&["zpool", "export", &pool]), timeout)?;
    Ok(pool)
}

/// `zpool import` the pool that lives on `device` only: `-d link_dir`, a directory holding one
/// link to the device, so other pools and disks on the host are neither scanned nor imported.
/// The pool remembers its vdev by that link, so `link_dir` must outlive the pool.
pub fn import(pool: &str, device: &Path, link_dir: &Path, timeout: Duration) -> Result<()> {
    std::fs::create_dir_all(link_dir).map_err(|e| Error::io("cannot create", link_dir, e))?;
    let link = link_dir.join(device.file_name().unwrap_or(device.as_os_str()));
    if std::fs::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(device, &link)
            .map_err(|e| Error::io("cannot link", device, e))?;
    }
    let import = argv(&["zpool", "import", "-d", &link_dir.to_string_lossy(), pool]);
    crate::fs::setup::argv_guard::check(&import, device)?;
    command::run_device_tool(&import, timeout)?;
    Ok(())
}

/// The check of a pool: a scrub on the live pool, waited for until `zpool status` no longer
/// shows it in progress; clean when it reports no known data errors.
pub fn scrub(live: &mut dyn Live, timeout: Duration) -> Result<Outcome<Checked>> {
    let pool = pool_at(live)?;
    let start = Instant::now();
    command::run(&argv(&["zpool", "scrub", &pool]), timeout)?;
    loop {
        let st = command::run(&argv(&["zpool", "status", &pool]), timeout)?;
        if !st.stdout.contains("in progress") {
            return Ok(Outcome::Done(Checked {
                argv: argv(&["zpool", "scrub", &pool]),
                seconds: start.elapsed().as_secs_f64(),
                clean: st.stdout.contains("No known data errors"),
                output: st.stdout,
            }));
        }
        if start.elapsed() > timeout {
            let _ = command::run(&argv(&["zpool", "scrub", "-s", &pool]), timeout);
            return Err(Error::tool(
                format!("zpool scrub {pool}"),
                format!(
                    "still running after {:.0} s; stopped",
                    timeout.as_secs_f64()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Grow the pool into its grown vdev: `zpool online -e POOL DEV`; a pool that ignores it
/// (zfs-fuse, pool v23) sizes the vdev anew when it opens it, so export + import then.
pub fn expand(live: &mut dyn Live, timeout: Duration) -> Result<Outcome<Grown>> {
    let pool = pool_at(live)?;
    let d = live.device().to_string_lossy().to_string();
    let before = crate::fs::ops::fs_size(live.mountpoint())?;
    let cmd = argv(&["zpool", "online", "-e", &pool, &d]);
    let mut seconds = command::run(&cmd, timeout)?.seconds;
    let mut online = true;
    let mut note = String::new();
    if crate::fs::ops::settled_size(live.mountpoint(), before)? == before {
        let start = Instant::now();
        live.unmount()?;
        live.mount()?;
        seconds += start.elapsed().as_secs_f64();
        online = false;
        note.push_str(" (`zpool online -e` had no effect; the pool grew on export + import)");
    }
    Ok(Outcome::Done(Grown {
        argv: cmd,
        seconds,
        online,
        note,
    }))
}

/// A dataset snapshot of a filled directory (`zfs snapshot DS@fsbench-probe`), which must
/// then show in `zfs list -t snapshot`; destroyed afterwards. Returns its seconds.
pub fn snapshot(live: &dyn Live, job: SnapshotJob<'_>, timeout: Duration) -> Result<Outcome<f64>> {
    let dataset = live.source().ok_or_else(|| {
        Error::workload("probe-snapshot", "cannot find the ZFS dataset of the mount")
    })?;
    let dir = live.mountpoint().join("fsbench-data");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    (job.fill)(&dir)?;
    let snap = format!("{dataset}@fsbench-probe");
    let out = command::run(&argv(&["zfs", "snapshot", &snap]), timeout)?;
    let listed = command::run(
        &argv(&["zfs", "list", "-H", "-t", "snapshot", "-o", "name"]),
        timeout,
    );
    let _ = command::run(&argv(&["zfs", "destroy", &snap]), timeout);
    let _ = std::fs::remove_dir_all(&dir);
    if !listed?.stdout.lines().any(|l| l.trim() == snap) {
        return Err(Error::workload(
            "probe-snapshot",
            format!("`zfs snapshot {snap}` succeeded but `zfs list -t snapshot` does not show it"),
        ));
    }
    Ok(Outcome::Done(out.seconds))
}

/// The versions a ZFS comparison depends on: OpenZFS ≥ 2.0 has `zpool version`; zfs-fuse's
/// zpool does not, and zfs-fuse itself has no version flag, so the package manager is asked.
pub const VERSIONS: &[crate::fs::provenance::ToolVersion] = &[
    crate::fs::provenance::ToolVersion {
        tool: "zpool",
        asks: &[
            &["zpool", "version"],
            &["dpkg-query", "-W", "-f=zfs-fuse ${Version}", "zfs-fuse"],
        ],
    },
    crate::fs::provenance::ToolVersion {
        tool: "zfs-fuse",
        asks: &[&["dpkg-query", "-W", "-f=${Version}", "zfs-fuse"]],
    },
];

/// Poll `zpool status POOL` until no scrub or resilver is in progress; `tick` gets the
/// percent done it prints.
fn wait_scan(pool: &str, timeout: Duration, tick: &dyn Fn(f64)) -> Result<()> {
    let t0 = Instant::now();
    loop {
        crate::cancel::check()?;
        let st = command::run(&argv(&["zpool", "status", pool]), Duration::from_secs(30))?;
        let text = st.stdout;
        if !text.contains("in progress") {
            return Ok(());
        }
        if let Some(p) = percent_done(&text) {
            tick(p);
        }
        if t0.elapsed() > timeout {
            return Err(Error::tool(
                "zpool status",
                format!("pool {pool} still busy after {timeout:?}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A layout's scrub: `zpool scrub` of its pool, waited for; seconds.
pub fn layout_scrub(array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> Result<f64> {
    let pool = array.pool()?;
    let t0 = Instant::now();
    command::run(&argv(&["zpool", "scrub", &pool]), array.timeout)?;
    wait_scan(&pool, array.timeout, tick)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// A layout's failed device: `zpool offline POOL DEV` of the last member (the pool runs
/// degraded). Rebuilt in its own place, it is wiped now (an offline device keeps its
/// labels), outside the rebuild's time and its per-device counts.
pub fn layout_degrade(array: &mut LiveArray<'_>) -> Result<()> {
    let pool = array.pool()?;
    let failed = array.failed()?.to_path_buf();
    let d = failed.display().to_string();
    let a = argv(&["zpool", "offline", &pool, &d]);
    run_on(&a, std::slice::from_ref(&failed), 3, array.timeout)?;
    if array.spare.is_none() {
        let size = crate::scratch::size_of(&failed)?;
        wipe(&failed, size, array.timeout)?;
    }
    Ok(())
}

/// A layout's rebuild: the failed member replaced in its own place, wiped (`zpool replace -f
/// POOL DEV`), or by the spare (`zpool replace -f POOL DEV SPARE`), and the resilver waited
/// for; seconds.
pub fn layout_rebuild(array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> Result<f64> {
    let pool = array.pool()?;
    let failed = array.failed()?;
    let t0 = Instant::now();
    let mut a = argv(&[
        "zpool",
        "replace",
        "-f",
        &pool,
        &failed.display().to_string(),
    ]);
    let mut named = vec![failed.to_path_buf()];
    if let Some(s) = array.spare {
        a.push(s.display().to_string());
        named.push(s.to_path_buf());
    }
    run_on(&a, &named, 4, array.timeout)?;
    wait_scan(&pool, array.timeout, tick)?;
    Ok(t0.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zpool_status_membership() {
        let st = "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME          STATE\n\ttank          ONLINE\n\t  /dev/loop3  ONLINE\n\n  pool: other\n\tother ONLINE\n\t  loop5 ONLINE\n";
        assert_eq!(
            pool_using(st, Path::new("/dev/loop3"), "loop3").as_deref(),
            Some("tank")
        );
        assert_eq!(
            pool_using(st, Path::new("/dev/disk/by-x"), "loop5").as_deref(),
            Some("other")
        );
        assert_eq!(pool_using(st, Path::new("/dev/loop1"), "loop1"), None);
    }

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
