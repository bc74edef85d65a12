//! The zfs-fuse daemon: started when ZFS is needed and none runs, stopped when nothing holds it.
//!
//! zfs-fuse is a machine-wide singleton (about 190 MB resident, a steady share of a CPU), so a
//! daemon fsbench starts must not outlive what needed it: every user takes a [`DaemonHold`]
//! (each mounted pool, and the runner for a whole run, through the ZFS driver's
//! `Filesystem::hold_services`, so setups do not restart it), and when
//! the last hold is dropped — the run ended, failed or was interrupted — the daemon fsbench
//! started is stopped and waited for by PID ([`crate::host::daemon`]). A daemon that was
//! already running is someone else's and is left alone. All start/stop goes through this file.

use crate::host::command::{self, argv};
use crate::host::daemon::Daemon;
use crate::host::ledger;
use crate::{Error, Result};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the daemon gets to answer `zpool list` after it was started.
const START_TIMEOUT: Duration = Duration::from_secs(15);

struct State {
    /// Live [`DaemonHold`]s.
    holds: usize,
    /// The daemon this process started, if any.
    owned: Option<Daemon>,
}

static STATE: Mutex<State> = Mutex::new(State {
    holds: 0,
    owned: None,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps a zfs-fuse daemon that fsbench started running; the last hold dropped stops it.
#[derive(Debug)]
#[must_use = "the daemon is stopped when the last hold is dropped"]
pub struct DaemonHold(());

/// Hold the daemon without starting it: one started later, while this lives, stays up.
pub fn hold() -> DaemonHold {
    state().holds += 1;
    DaemonHold(())
}

impl Drop for DaemonHold {
    fn drop(&mut self) {
        let mut st = state();
        st.holds -= 1;
        if st.holds == 0
            && let Some(mut d) = st.owned.take()
        {
            let pid = d.pid().unwrap_or(0);
            match d.stop() {
                Ok(()) => {
                    eprintln!("fsbench: note: stopped the zfs-fuse daemon it started (pid {pid})")
                }
                Err(e) => eprintln!("fsbench: warning: {e}"),
            }
        }
    }
}

/// The PID of the zfs-fuse daemon this process started and still holds, if any.
pub fn owned_pid() -> Option<u32> {
    state().owned.as_ref().and_then(Daemon::pid)
}

fn zpool_works() -> bool {
    command::run(&argv(&["zpool", "list", "-H"]), Duration::from_secs(15)).is_ok()
}

fn wait_zpool(limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if zpool_works() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// Whether any zfs-fuse daemon runs (this process's, another fsbench's, the system's). A
/// killed daemon nobody has reaped yet is a zombie and does not count (`pgrep` would).
pub(crate) fn daemon_running() -> bool {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return false;
    };
    rd.flatten()
        .any(|e| std::fs::read_to_string(e.path().join("stat")).is_ok_and(|t| is_live_daemon(&t)))
}

/// A `/proc/PID/stat` line of a zfs-fuse process that has not exited.
fn is_live_daemon(stat: &str) -> bool {
    let comm = stat
        .find('(')
        .zip(stat.rfind(')'))
        .map(|(a, b)| &stat[a + 1..b]);
    comm == Some("zfs-fuse") && ledger::stat_state(stat).is_some_and(|s| s != 'Z')
}

/// Make sure ZFS commands work: with zfs-fuse (no kernel module), start its daemon when none
/// runs. Returns a hold to keep for as long as ZFS is used, and a note for the record when
/// fsbench started the daemon.
pub fn ensure() -> Result<(DaemonHold, Option<String>)> {
    let h = hold();
    if !is_fuse() {
        return Ok((h, None));
    }
    let mut st = state();
    if let Some(d) = st.owned.as_mut() {
        if d.alive() && wait_zpool(START_TIMEOUT) {
            return Ok((h, Some(started_note())));
        }
        // Ours died: reap it and start a fresh one below.
        let _ = d.stop();
        st.owned = None;
    }
    if zpool_works() {
        return Ok((h, None));
    }
    if daemon_running() {
        // Someone else (maybe another fsbench) just started it: give it time to listen.
        if wait_zpool(START_TIMEOUT) {
            return Ok((h, None));
        }
        return Err(Error::tool(
            "zpool",
            "a zfs-fuse daemon is running but zpool cannot reach it; restart zfs-fuse or skip zfs",
        ));
    }
    // In the foreground (--no-daemon) as our child, so we know the PID we must stop.
    let mut d = Daemon::spawn(&argv(&["zfs-fuse", "--no-daemon"]))?;
    let pid = d.pid().unwrap_or(0);
    if wait_zpool(START_TIMEOUT) {
        eprintln!(
            "fsbench: note: started the zfs-fuse daemon (pid {pid}); it is stopped when fsbench is done with it"
        );
        st.owned = Some(d);
        return Ok((h, Some(started_note())));
    }
    let exited = !d.alive();
    let _ = d.stop();
    Err(Error::tool(
        "zfs-fuse",
        format!(
            "the daemon {} within {} s; start it by hand (`zfs-fuse`) or skip zfs",
            if exited {
                "exited at once"
            } else {
                "did not answer zpool"
            },
            START_TIMEOUT.as_secs()
        ),
    ))
}

fn started_note() -> String {
    "fsbench started the zfs-fuse daemon (none was running); it is stopped when the run ends".into()
}

/// Its implementation label (`SetupInfo::implementation`).
pub const LABEL: &str = "zfs-fuse";

/// Whether ZFS here is zfs-fuse (no kernel module, zfs-fuse installed).
pub fn is_fuse() -> bool {
    crate::host::zfs::implementation() == crate::host::zfs::Zfs::Fuse
}

/// What a setup run on zfs-fuse carries in its results: its figures are not kernel
/// OpenZFS's (the report warns, claims that need OpenZFS are not decided on it).
pub fn substitute() -> crate::results::Substitute {
    crate::results::Substitute {
        implementation: LABEL.into(),
        what: "ZFS in user space over FUSE".into(),
        instead_of: "kernel OpenZFS".into(),
        published: "OpenZFS".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_daemon_is_not_running() {
        assert!(is_live_daemon("41 (zfs-fuse) S 1 41 41 0"));
        assert!(!is_live_daemon("41 (zfs-fuse) Z 1 41 41 0"));
        assert!(!is_live_daemon("42 (zfs-fuse2) S 1 42 42 0"));
    }
}
