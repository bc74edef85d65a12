//! Recovery of what a killed fsbench left in ZFS (called by the ledger's release through the
//! hooks [`register`] installs, [`crate::host::ledger::hooks`]): its pool, and with zfs-fuse
//! the daemon it started.
//!
//! Found when a SIGKILLed run was recovered on zfs-fuse for real:
//! - right after the kill zfs-fuse answers `zpool destroy` with "pool is busy" for a second or
//!   two (the dead process's files are still being released over FUSE), so destroy is retried;
//! - a pool that could not be destroyed must not lose its daemon, loop device or image (the
//!   ledger keeps what lies beneath a failed item, see `recover_in`), and a daemon is not
//!   stopped while it still serves pools;
//! - when the daemon died too, nothing has the pool imported (fsbench's pools are made with
//!   `cachefile=none`, see [`crate::fs::zfs`]), but its FUSE mount is left dead ("Transport
//!   endpoint is not connected") on the mountpoint, and `/zfs-kstat` likewise: both are
//!   unmounted, and its socket (`/var/run/zfs/zfs_socket`, which makes `zpool` say
//!   "Connection refused") is removed once nothing listens on it. A pool some cache file still names would be imported again by the next daemon
//!   and is reported instead.

use super::daemon::{self, is_fuse};
use crate::host::command::{self, argv};
use crate::host::ledger::Outcome;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The process name under which the ledger records the zfs-fuse daemon fsbench started.
pub const DAEMON: &str = "zfs-fuse";

/// Where the daemons keep the pools they import at start (zfs-fuse, then OpenZFS).
const CACHE_FILES: &[&str] = &["/var/lib/zfs/zpool.cache", "/etc/zfs/zpool.cache"];

/// The kstat mount zfs-fuse makes for itself and removes on a clean exit.
const KSTAT_MOUNT: &str = "/zfs-kstat";

/// How long recovery retries `zpool destroy` while the pool is busy.
const BUSY_FOR: Duration = Duration::from_secs(30);

pub use crate::host::ledger::hooks::Verdict;

/// Install this module's functions as the ledger's release hooks (`commands::dispatch` does
/// it before any command, so every recovery can release pools and the daemon).
pub fn register() {
    crate::host::ledger::hooks::install(crate::host::ledger::hooks::Hooks {
        release_pool,
        daemon: DAEMON,
        daemon_still_needed,
        after_daemon_gone,
    });
}

/// Destroy the pool `name` if it still exists (see the module docs).
pub fn release_pool(name: &str, dry_run: bool) -> Verdict {
    if !command::available("zpool") {
        return (Outcome::Failed, "zpool is not installed".into());
    }
    if is_fuse() && !daemon::daemon_running() {
        return without_daemon(name, dry_run);
    }
    let t = Duration::from_secs(60);
    match command::run_unchecked(&argv(&["zpool", "list", "-H", name]), t) {
        Ok(o) if o.status == Some(0) => {}
        Ok(o) if o.combined().contains("no such pool") => {
            return (Outcome::AlreadyGone, "no such pool".into());
        }
        Ok(o) => {
            return (
                Outcome::Failed,
                format!("zpool list failed: {}", o.combined().trim()),
            );
        }
        Err(e) => return (Outcome::Failed, e.to_string()),
    }
    if dry_run {
        return (Outcome::WouldRelease, "would destroy the pool".into());
    }
    destroy(name)
}

/// `zpool destroy -f`, retried while the pool is busy, up to [`BUSY_FOR`].
fn destroy(name: &str) -> Verdict {
    let t0 = Instant::now();
    let mut tries = 0u32;
    loop {
        tries += 1;
        let o = match command::run_unchecked(
            &argv(&["zpool", "destroy", "-f", name]),
            Duration::from_secs(120),
        ) {
            Ok(o) => o,
            Err(e) => return (Outcome::Failed, e.to_string()),
        };
        if o.status == Some(0) {
            let how = if tries == 1 {
                "destroyed".to_string()
            } else {
                format!(
                    "destroyed (at try {tries}, {:.1} s: zfs-fuse said \"pool is busy\" before)",
                    t0.elapsed().as_secs_f64()
                )
            };
            return (Outcome::Released, how);
        }
        let text = o.combined();
        if !text.contains("busy") || t0.elapsed() >= BUSY_FOR {
            return (
                Outcome::Failed,
                format!(
                    "zpool destroy -f {name}: {} (after {tries} tries in {:.0} s)",
                    text.trim(),
                    t0.elapsed().as_secs_f64()
                ),
            );
        }
        crate::host::sync_all();
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// zfs-fuse is not running: nothing has the pool imported unless a cache file brings it back.
fn without_daemon(name: &str, dry_run: bool) -> Verdict {
    if let Some(cache) = cache_naming(name) {
        return (
            Outcome::Failed,
            format!(
                "no zfs-fuse daemon runs, but {cache} still names the pool, so the next daemon \
                 imports it again: start zfs-fuse, then run `fsbench doctor --cleanup` again"
            ),
        );
    }
    let dead = dead_fuse_mounts(|m| m.source == name || m.source.starts_with(&format!("{name}/")));
    if dead.is_empty() {
        return (
            Outcome::AlreadyGone,
            "no zfs-fuse daemon runs and no cache file names the pool: nothing has it imported"
                .into(),
        );
    }
    let shown = show(&dead);
    if dry_run {
        return (
            Outcome::WouldRelease,
            format!("the zfs-fuse daemon is gone; would unmount its dead mount(s) {shown}"),
        );
    }
    match unmount_all(&dead) {
        Ok(()) => (
            Outcome::Released,
            format!(
                "the zfs-fuse daemon is gone, so nothing has the pool imported (no cache file \
                 names it); unmounted its dead mount(s) {shown}"
            ),
        ),
        Err(e) => (Outcome::Failed, e),
    }
}

/// Why the zfs-fuse daemon `pid` must keep running, if it must: it still serves pools (those
/// of the ledger were destroyed before it, so these are someone else's).
pub fn daemon_still_needed() -> Option<String> {
    let o = command::run(
        &argv(&["zpool", "list", "-H", "-o", "name"]),
        Duration::from_secs(15),
    )
    .ok()?;
    let pools: Vec<&str> = o.stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    (!pools.is_empty()).then(|| {
        format!(
            "it still serves pool(s) {} that this ledger does not name; left running",
            pools.join(", ")
        )
    })
}

/// After the daemon stopped or was found dead: its `/zfs-kstat` mount, left dead when it was
/// killed, is unmounted (only while no zfs-fuse runs). Returns what was done, for the line.
pub fn after_daemon_gone(dry_run: bool) -> Option<String> {
    if daemon::daemon_running() {
        return None;
    }
    let mut done = Vec::new();
    let dead = dead_fuse_mounts(|m| m.mount_point == Path::new(KSTAT_MOUNT));
    if !dead.is_empty() {
        done.push(if dry_run {
            format!("would unmount its dead {KSTAT_MOUNT}")
        } else {
            match unmount_all(&dead) {
                Ok(()) => format!("unmounted its dead {KSTAT_MOUNT}"),
                Err(e) => format!("left {KSTAT_MOUNT} mounted: {e}"),
            }
        });
    }
    done.extend(remove_stale_socket(Path::new(SOCKET), dry_run));
    (!done.is_empty()).then(|| done.join("; "))
}

/// The socket zfs-fuse listens on. A killed daemon leaves it, and `zpool` then fails with
/// "Connection refused" instead of "cannot connect" until it is removed.
pub const SOCKET: &str = "/var/run/zfs/zfs_socket";

/// Remove `path` when it is a socket nothing listens on (connecting is refused); a live
/// socket, or anything that is not a socket, stays. `None` when there was nothing to do.
pub fn remove_stale_socket(path: &Path, dry_run: bool) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_socket() {
        return None;
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
        // Something answers (or the error says nothing about a listener): not ours to remove.
        _ => return None,
    }
    let shown = path.display();
    Some(if dry_run {
        format!("would remove its stale socket {shown}")
    } else {
        match std::fs::remove_file(path) {
            Ok(()) => format!("removed its stale socket {shown}"),
            Err(e) => format!("left its stale socket {shown}: {e}"),
        }
    })
}

/// The first cache file that names pool `name`.
fn cache_naming(name: &str) -> Option<&'static str> {
    CACHE_FILES
        .iter()
        .copied()
        .find(|f| std::fs::read(f).is_ok_and(|b| names_pool(&b, name)))
}

/// Whether a cache file's bytes hold the string `name` (nvlist strings are NUL-terminated,
/// so `fsbench_1_1` does not match `fsbench_1_10`).
fn names_pool(cache: &[u8], name: &str) -> bool {
    let needle: Vec<u8> = name.bytes().chain([0]).collect();
    cache.windows(needle.len()).any(|w| w == needle.as_slice())
}

/// FUSE mounts (of a daemon that is gone) selected by `which`.
fn dead_fuse_mounts(which: impl Fn(&crate::host::mountinfo::MountEntry) -> bool) -> Vec<PathBuf> {
    crate::host::mountinfo::read()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.fs_type.starts_with("fuse") && which(m))
        .map(|m| m.mount_point)
        .collect()
}

fn unmount_all(mounts: &[PathBuf]) -> Result<(), String> {
    for m in mounts {
        crate::fs::mount::unmount(m).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn show(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake stale socket (bound, then its listener dropped, as a killed daemon leaves it)
    /// is removed; a live one and a regular file of that name stay.
    #[test]
    fn a_dead_daemons_socket_is_removed_a_live_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("zfs_socket");
        drop(std::os::unix::net::UnixListener::bind(&p).unwrap());
        assert!(p.exists());
        let said = remove_stale_socket(&p, true).unwrap();
        assert!(said.starts_with("would remove its stale socket"), "{said}");
        assert!(p.exists());
        let said = remove_stale_socket(&p, false).unwrap();
        assert_eq!(said, format!("removed its stale socket {}", p.display()));
        assert!(!p.exists());
        assert_eq!(remove_stale_socket(&p, false), None);
        let live = std::os::unix::net::UnixListener::bind(&p).unwrap();
        assert_eq!(remove_stale_socket(&p, false), None);
        assert!(p.exists());
        drop(live);
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, "not a socket").unwrap();
        assert_eq!(remove_stale_socket(&p, false), None);
        assert!(p.exists());
    }

    #[test]
    fn cache_names_match_whole_strings() {
        let b = b"\x00\x01name\x00fsbench_1_10\x00tail";
        assert!(names_pool(b, "fsbench_1_10"));
        assert!(!names_pool(b, "fsbench_1_1"));
        assert!(
            !names_pool(b, "tail"),
            "not NUL-terminated: not a whole string"
        );
    }
}
