//! Releases that need a higher layer's knowledge, installed at startup by that layer: the
//! ledger records a zpool and the zfs-fuse daemon, but only the ZFS driver
//! (`fs/drivers/zfs/recover.rs`) knows how to destroy a dead run's pool, when the daemon still serves
//! other pools, and which dead FUSE mounts a killed daemon leaves. `host` sits below `fs`, so
//! the driver registers these functions ([`install`]) instead of the ledger calling up.

use super::Outcome;
use std::sync::OnceLock;

/// What releasing one item came to: the ledger's outcome and its detail line.
pub type Verdict = (Outcome, String);

/// How recovery releases what only a filesystem driver understands.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// Destroy the pool `name` if it still exists (`dry_run`: say what would be done).
    pub release_pool: fn(name: &str, dry_run: bool) -> Verdict,
    /// The process name under which the ledger records the pool daemon (`zfs-fuse`).
    pub daemon: &'static str,
    /// Why that daemon must keep running, if it must (it still serves pools).
    pub daemon_still_needed: fn() -> Option<String>,
    /// After the daemon stopped or was found dead: what was cleaned up behind it, if anything.
    pub after_daemon_gone: fn(dry_run: bool) -> Option<String>,
}

static HOOKS: OnceLock<Hooks> = OnceLock::new();

/// Install the hooks (the first call wins; later ones are ignored, they install the same).
pub fn install(hooks: Hooks) {
    let _ = HOOKS.set(hooks);
}

/// The installed hooks; `None` when no command installed them (a library caller that did
/// not call `fsbench::fs::drivers::zfs::recover::register`): recovery then leaves pools and daemons
/// recorded, for a later recovery that can release them.
pub(super) fn get() -> Option<&'static Hooks> {
    HOOKS.get()
}
