//! The ledger of held resources: what this process holds that would outlive it, written down
//! before it is acquired, so that the next fsbench can release it after a SIGKILL, an OOM kill
//! or a crash (guards cannot run then).
//!
//! # API (small on purpose)
//!
//! - [`hold`]`(Item) -> Result<Held>`: record an item, fsync'd, **before** acquiring it.
//! - [`Held::set`]: refine the record once more is known (the image's inode after creating it,
//!   the loop device the kernel handed out).
//! - Dropping a [`Held`] (after the release succeeded) removes the entry; [`Held::keep`]
//!   leaves it for the next recovery when the release failed.
//! - [`recover_stale`]`(dry_run) -> Vec<RecoveryLine>`: for every ledger whose process is gone
//!   (PID and start time from `/proc/PID/stat`), release what it names in reverse order, only
//!   when the live object still matches the record; one line per item. A live process's
//!   ledger is never touched.
//! - [`restore_settings`]`(dry_run)`: the same for changed settings only (`doctor --restore`).
//! - [`stale`]: what dead processes' ledgers hold, touching nothing (for `doctor`'s findings).
//! - [`recover_and_report`]: the prologue of every command that needs root (`run`,
//!   `run --resume`, `doctor`): recovery with its lines printed to stderr.
//!   [`hint_unrestored`]: what other commands print when a killed run left settings changed.
//! - [`dir`]: where ledgers live, `/run/fsbench/ledger` (`FSBENCH_LEDGER_DIR` overrides it, for
//!   tests that must not see each other's ledgers).
//!
//! One file per process, `<pid>-<starttime>.json`, rewritten atomically (temporary file,
//! fsync, rename, fsync of the directory) on every change and deleted when empty. /run is
//! cleared at boot, which is right for mounts, loop devices, pools and settings (a reboot
//! released them); an image file in the scratch directory survives a reboot and is then only
//! found by its name `fsbench-<pid>-<n>.img`.

pub mod hooks;
mod release;

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use release::setting_value;

/// One thing fsbench holds that outlives the process if nobody releases it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// An image file fsbench created; `id` is its (st_dev, st_ino), `None` only in the instant
    /// between choosing the name and creating the file.
    Image {
        /// The file.
        path: PathBuf,
        /// (st_dev, st_ino) once created.
        id: Option<(u64, u64)>,
    },
    /// A loop device bound to an image; `device` is `None` until the kernel said which.
    Loop {
        /// `/dev/loopN` once known.
        device: Option<PathBuf>,
        /// The backing image.
        image: PathBuf,
        /// The image's (st_dev, st_ino): a reused loop number is never mistaken for ours.
        image_id: (u64, u64),
    },
    /// A directory fsbench created to mount on; removed only when empty.
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// A mount fsbench made.
    Mount {
        /// Mountpoint.
        target: PathBuf,
        /// Source as mountinfo shows it (`/dev/loop3`, `fsbench-tmpfs`).
        source: String,
    },
    /// Every mount at or below a directory of fsbench's own that a program it runs mounts
    /// inside of and may leave (Podman's storage root: the private bind mount of its graph
    /// root, a container's root and /dev/shm); released deepest first.
    MountsUnder {
        /// The directory.
        root: PathBuf,
    },
    /// A directory fsbench created directly under its runtime directory (`/run/fsbench`) for a
    /// program's own state (Podman's run root: its locks and container state), holding
    /// nothing anyone else wrote: its release unmounts what is below it, deepest first, then
    /// removes it with its contents (symlinks inside removed, never followed). A path
    /// anywhere else is refused at release, so a hand-edited ledger cannot aim it elsewhere.
    StateDir {
        /// The directory (`/run/fsbench/podman-<pid>-<n>`).
        path: PathBuf,
    },
    /// A ZFS pool fsbench created or imported.
    Zpool {
        /// Pool name (`fsbench_<pid>_<n>`).
        name: String,
    },
    /// A process fsbench started that may outlive it (a daemon, a database server), with the
    /// data directory to remove once it is stopped.
    Process {
        /// Its PID.
        pid: u32,
        /// Its start time (field 22 of `/proc/PID/stat`), so a reused PID is never signalled.
        start_time: u64,
        /// What it is, for messages (`postgres`).
        name: String,
        /// A directory fsbench made for it, removed after it stopped.
        data_dir: Option<PathBuf>,
    },
    /// A cgroup directory fsbench created.
    Cgroup {
        /// The cgroup's directory under /sys/fs/cgroup.
        path: PathBuf,
    },
    /// A kernel setting fsbench changed (a sysctl under /proc/sys, a block-queue attribute
    /// under /sys/block/DEV/queue): put back only while it still reads `applied`.
    Setting {
        /// The file.
        path: PathBuf,
        /// The value found before the change.
        original: String,
        /// The value fsbench wrote.
        applied: String,
    },
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Item::Image { path, .. } => write!(f, "image {}", path.display()),
            Item::Loop { device, image, .. } => match device {
                Some(d) => write!(f, "loop device {} on {}", d.display(), image.display()),
                None => write!(f, "loop device on {}", image.display()),
            },
            Item::Dir { path } => write!(f, "directory {}", path.display()),
            Item::Mount { target, source } => {
                write!(f, "mount {} ({source})", target.display())
            }
            Item::MountsUnder { root } => write!(f, "mounts under {}", root.display()),
            Item::StateDir { path } => write!(f, "state directory {}", path.display()),
            Item::Zpool { name } => write!(f, "zpool {name}"),
            Item::Process { pid, name, .. } => write!(f, "{name} (pid {pid})"),
            Item::Cgroup { path } => write!(f, "cgroup {}", path.display()),
            Item::Setting {
                path,
                original,
                applied,
            } => write!(
                f,
                "setting {} (was {original:?}, set to {applied:?})",
                path.display()
            ),
        }
    }
}

/// What recovery did with one item (or one ledger).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Released now.
    Released,
    /// `--dry-run`: would be released.
    WouldRelease,
    /// Nothing left to release (already unmounted, detached, deleted, put back).
    AlreadyGone,
    /// The live object no longer matches the record: left alone, entry dropped (what the
    /// ledger named is no longer there to release).
    NotOurs,
    /// Releasing failed or the record is ambiguous: left alone, entry kept for another try.
    Failed,
    /// The ledger belongs to a live process: untouched.
    Live,
}

/// One line of a recovery report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecoveryLine {
    /// The PID of the process whose ledger it was.
    pub pid: u32,
    /// The item, in words (`mount /run/fsbench/… (/dev/loop3)`); empty for ledger-level lines.
    pub item: String,
    /// What happened.
    pub outcome: Outcome,
    /// How or why.
    pub detail: String,
}

impl std::fmt::Display for RecoveryLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = match self.outcome {
            Outcome::Released => "released",
            Outcome::WouldRelease => "would release",
            Outcome::AlreadyGone => "nothing to release for",
            Outcome::NotOurs => "not released",
            Outcome::Failed => "could not release",
            Outcome::Live => "left alone",
        };
        let item = if self.item.is_empty() {
            String::new()
        } else {
            format!(" {}", self.item)
        };
        write!(
            f,
            "fsbench: recovery (pid {}): {verb}{item}: {}",
            self.pid, self.detail
        )
    }
}

/// Directory holding every process's ledger.
pub fn dir() -> PathBuf {
    std::env::var_os("FSBENCH_LEDGER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::run_dir().join("ledger"))
}

/// A ledger file's contents.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LedgerFile {
    /// Owner PID.
    pub pid: u32,
    /// Owner start time (clock ticks since boot, `/proc/PID/stat` field 22).
    pub start_time: u64,
    /// Owner command line, for humans reading the file.
    #[serde(default)]
    pub argv: Vec<String>,
    /// Entries in acquisition order.
    pub entries: Vec<Entry>,
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// Unique within the file.
    pub id: u64,
    /// What is held.
    pub item: Item,
}

impl LedgerFile {
    /// File name for an owner.
    pub fn file_name(pid: u32, start_time: u64) -> String {
        format!("{pid}-{start_time}.json")
    }

    /// Write atomically and durably to `path`, or delete it when there are no entries.
    pub fn store(&self, path: &Path) -> std::io::Result<()> {
        if self.entries.is_empty() {
            return match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => sync_dir(path),
            };
        }
        let parent = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)?;
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&text)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        sync_dir(path)
    }

    /// Read one ledger file.
    pub fn load(path: &Path) -> std::io::Result<LedgerFile> {
        let text = std::fs::read(path)?;
        serde_json::from_slice(&text)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

fn sync_dir(path: &Path) -> std::io::Result<()> {
    if let Some(p) = path.parent()
        && let Ok(d) = std::fs::File::open(p)
    {
        d.sync_all()?;
    }
    Ok(())
}

/// This process's ledger (created lazily on the first [`hold`]).
struct Own {
    path: PathBuf,
    file: LedgerFile,
    next: u64,
}

static OWN: Mutex<Option<Own>> = Mutex::new(None);

fn with_own<T>(f: impl FnOnce(&mut Own) -> T) -> T {
    // A panic while holding the lock must not stop guards from releasing during unwind.
    let mut g = OWN.lock().unwrap_or_else(|p| p.into_inner());
    let own = g.get_or_insert_with(|| {
        let pid = std::process::id();
        let start_time = start_time_of(pid).unwrap_or(0);
        Own {
            path: dir().join(LedgerFile::file_name(pid, start_time)),
            file: LedgerFile {
                pid,
                start_time,
                argv: std::env::args().collect(),
                entries: Vec::new(),
            },
            next: 1,
        }
    });
    f(own)
}

/// A recorded item. Drop it after the release succeeded: the entry goes. Must be kept alive
/// as long as the item is held (store it in the guard that releases the item).
#[derive(Debug)]
#[must_use = "dropping a Held removes its ledger entry at once"]
pub struct Held {
    id: u64,
    active: bool,
}

/// Record `item` in this process's ledger, fsync'd, before acquiring it. Fails when the ledger
/// cannot be written: then the caller must not acquire the item either.
pub fn hold(item: Item) -> crate::Result<Held> {
    with_own(|own| {
        let id = own.next;
        own.next += 1;
        own.file.entries.push(Entry { id, item });
        match own.file.store(&own.path) {
            Ok(()) => Ok(Held { id, active: true }),
            Err(e) => {
                own.file.entries.retain(|x| x.id != id);
                Err(crate::Error::io(
                    "cannot record what fsbench is about to hold in the ledger",
                    &own.path,
                    e,
                ))
            }
        }
    })
}

impl Held {
    /// Replace the recorded item (same place in the order), fsync'd.
    pub fn set(&self, item: Item) -> crate::Result<()> {
        with_own(|own| {
            if let Some(e) = own.file.entries.iter_mut().find(|x| x.id == self.id) {
                e.item = item;
            }
            own.file
                .store(&own.path)
                .map_err(|e| crate::Error::io("cannot update the ledger", &own.path, e))
        })
    }

    /// Leave the entry in place (the release failed): recovery tries again once this process
    /// has exited.
    pub fn keep(mut self) {
        self.active = false;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        with_own(|own| {
            own.file.entries.retain(|x| x.id != self.id);
            if let Err(e) = own.file.store(&own.path) {
                eprintln!(
                    "fsbench: warning: cannot update the ledger {}: {e}",
                    own.path.display()
                );
            }
        });
    }
}

/// Create the new file `path` (it must not exist) recorded in the ledger as an image: the
/// name first, then its (st_dev, st_ino) once it exists, so recovery after a SIGKILL deletes
/// it and never another file of that name. The caller removes it before dropping the
/// [`Held`]; a failure here leaves nothing behind.
pub fn create_file(path: &Path, what: &str) -> crate::Result<(std::fs::File, Held)> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let held = hold(Item::Image {
        path: path.to_path_buf(),
        id: None,
    })?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| crate::Error::io(format!("cannot create {what}"), path, e))?;
    let recorded = file
        .metadata()
        .map_err(|e| crate::Error::io("cannot stat", path, e))
        .and_then(|md| {
            held.set(Item::Image {
                path: path.to_path_buf(),
                id: Some((md.dev(), md.ino())),
            })
        });
    if let Err(e) = recorded {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok((file, held))
}

/// Start time of `pid` in clock ticks since boot (`/proc/PID/stat` field 22), `None` when
/// there is no such process.
pub fn start_time_of(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm (field 2) may contain spaces and parentheses: count from the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `pid` has exited and waits to be reaped (state `Z` in `/proc/PID/stat`).
pub fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|t| stat_state(&t) == Some('Z'))
}

/// The state letter of a `/proc/PID/stat` line (after the comm, which may hold spaces).
pub fn stat_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Whether a recorded (pid, start time) is the same process today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alive {
    /// Same PID, same start time.
    Same,
    /// The PID now belongs to another process (its start time).
    Reused(u64),
    /// No such process.
    Gone,
}

pub(crate) fn alive(pid: u32, start_time: u64) -> Alive {
    // A zombie (killed, not yet reaped by its parent) holds nothing and runs nothing.
    if is_zombie(pid) {
        return Alive::Gone;
    }
    match start_time_of(pid) {
        Some(t) if t == start_time => Alive::Same,
        Some(t) => Alive::Reused(t),
        None => Alive::Gone,
    }
}

/// Release what the ledgers of dead processes hold (see the module docs). With `dry_run`
/// nothing is changed and the lines say what would be done.
pub fn recover_stale(dry_run: bool) -> Vec<RecoveryLine> {
    recover_in(&dir(), dry_run, |_| true)
}

/// Put back the settings (sysctls, queue attributes) that dead processes' ledgers record as
/// changed; their other entries stay for [`recover_stale`].
pub fn restore_settings(dry_run: bool) -> Vec<RecoveryLine> {
    recover_in(&dir(), dry_run, |i| matches!(i, Item::Setting { .. }))
}

/// What the ledgers of dead processes hold, as (pid, item) in acquisition order. Reads only.
pub fn stale() -> Vec<(u32, Item)> {
    let mut v = Vec::new();
    for (_, file) in ledger_files(&dir()) {
        if file.pid != std::process::id() && alive(file.pid, file.start_time) != Alive::Same {
            v.extend(file.entries.into_iter().map(|e| (file.pid, e.item)));
        }
    }
    v
}

/// For commands that do not recover (no root needed): one note when a killed fsbench left a
/// setting changed.
pub fn hint_unrestored() {
    let n = stale()
        .iter()
        .filter(|(_, i)| matches!(i, Item::Setting { .. }))
        .count();
    if n > 0 {
        crate::host::stdio::note(&format!(
            "fsbench: note: a killed fsbench left {n} host setting(s) changed; `sudo fsbench run` \
             puts them back first, or run `sudo fsbench doctor --restore`"
        ));
    }
}

/// Delete `<pid>-<start>.json.tmp` files of processes that are gone: a write killed before
/// its rename. [`LedgerFile::store`] renames before it returns and an item is acquired only
/// after that, so such a file never names anything that was acquired.
fn remove_unfinished_writes(tmps: &[PathBuf], me: u32) {
    for t in tmps {
        let name = t.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some((pid, start)) = name
            .strip_suffix(".json.tmp")
            .and_then(|s| s.split_once('-'))
            .and_then(|(p, st)| Some((p.parse::<u32>().ok()?, st.parse::<u64>().ok()?)))
        else {
            continue;
        };
        if pid != me && alive(pid, start) != Alive::Same {
            let _ = std::fs::remove_file(t);
        }
    }
}

/// Readable ledger files in `ledger_dir`, sorted by name.
fn ledger_files(ledger_dir: &Path) -> Vec<(PathBuf, LedgerFile)> {
    let Ok(rd) = std::fs::read_dir(ledger_dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| LedgerFile::load(&p).ok().map(|f| (p, f)))
        .collect()
}

/// [`recover_stale`] on a given ledger directory, acting only on items `wanted` selects.
pub fn recover_in(
    ledger_dir: &Path,
    dry_run: bool,
    wanted: impl Fn(&Item) -> bool,
) -> Vec<RecoveryLine> {
    let mut lines = Vec::new();
    let Ok(rd) = std::fs::read_dir(ledger_dir) else {
        return lines; // no ledger directory: nothing was ever recorded
    };
    // Two fsbench starting at once must not release the same item twice.
    let _lock = release::RecoveryLock::take(ledger_dir);
    let me = std::process::id();
    let (mut files, unfinished): (Vec<PathBuf>, Vec<PathBuf>) = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "tmp"))
        .partition(|p| p.extension().is_some_and(|x| x == "json"));
    if !dry_run {
        remove_unfinished_writes(&unfinished, me);
    }
    files.sort();
    for path in files {
        let mut file = match LedgerFile::load(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                lines.push(RecoveryLine {
                    pid: 0,
                    item: format!("ledger {}", path.display()),
                    outcome: Outcome::Failed,
                    detail: format!("unreadable ({e}); left for you to inspect"),
                });
                continue;
            }
        };
        if file.pid == me {
            continue;
        }
        match alive(file.pid, file.start_time) {
            Alive::Same => {
                lines.push(RecoveryLine {
                    pid: file.pid,
                    item: String::new(),
                    outcome: Outcome::Live,
                    detail: format!(
                        "fsbench pid {} is still running; its ledger is not touched",
                        file.pid
                    ),
                });
                continue;
            }
            Alive::Reused(_) | Alive::Gone => {}
        }
        let mut kept = Vec::new();
        // What could not be released may still stand on what was acquired before it (a pool
        // on its loop device and daemon, a mount on its image): those stay too.
        let mut blocked: Option<String> = None;
        for entry in file.entries.iter().rev() {
            if !wanted(&entry.item) {
                kept.push(entry.clone());
                continue;
            }
            let (outcome, detail) = match &blocked {
                Some(above) if stands_under(&entry.item) => (
                    Outcome::Failed,
                    format!("left in place because {above} could not be released and may need it"),
                ),
                _ => release::release(&entry.item, dry_run),
            };
            if outcome == Outcome::Failed && blocked.is_none() && stands_under(&entry.item) {
                blocked = Some(entry.item.to_string());
            }
            lines.push(RecoveryLine {
                pid: file.pid,
                item: entry.item.to_string(),
                outcome,
                detail,
            });
            if matches!(outcome, Outcome::Failed | Outcome::WouldRelease) {
                kept.push(entry.clone());
            }
        }
        if dry_run {
            continue;
        }
        kept.reverse();
        file.entries = kept;
        if let Err(e) = file.store(&path) {
            lines.push(RecoveryLine {
                pid: file.pid,
                item: format!("ledger {}", path.display()),
                outcome: Outcome::Failed,
                detail: format!("cannot update it: {e}"),
            });
        }
    }
    lines
}

/// Whether an item can be something later items depend on, or depend on earlier ones: all
/// but settings and cgroups, which are put back and removed whatever else failed.
fn stands_under(item: &Item) -> bool {
    !matches!(item, Item::Setting { .. } | Item::Cgroup { .. })
}

/// Recovery as every root command's first step: lines about live runs are not printed (they
/// are not this command's business), all others go to stderr. Returns the lines.
pub fn recover_and_report() -> Vec<RecoveryLine> {
    let lines = recover_stale(false);
    for l in lines.iter().filter(|l| l.outcome != Outcome::Live) {
        crate::host::stdio::note(&l.to_string());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_of_self_and_of_nobody() {
        assert!(start_time_of(std::process::id()).is_some());
        assert_eq!(start_time_of(u32::MAX), None);
        assert_eq!(stat_state("7 (a) b) Z 1 7"), Some('Z'));
        assert!(!is_zombie(std::process::id()));
    }

    #[test]
    fn file_round_trip_and_empty_deletes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("1-2.json");
        let mut f = LedgerFile {
            pid: 1,
            start_time: 2,
            argv: vec!["fsbench".into()],
            entries: vec![Entry {
                id: 1,
                item: Item::Setting {
                    path: "/proc/sys/vm/dirty_ratio".into(),
                    original: "20".into(),
                    applied: "10".into(),
                },
            }],
        };
        f.store(&p).unwrap();
        let back = LedgerFile::load(&p).unwrap();
        assert_eq!(back.entries, f.entries);
        f.entries.clear();
        f.store(&p).unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn a_live_ledger_is_untouched() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("still-here");
        std::fs::create_dir(&target).unwrap();
        // PID 1 is alive; its real start time makes the ledger "live".
        let f = LedgerFile {
            pid: 1,
            start_time: start_time_of(1).unwrap(),
            argv: vec![],
            entries: vec![Entry {
                id: 1,
                item: Item::Dir {
                    path: target.clone(),
                },
            }],
        };
        let p = d.path().join("1-x.json");
        f.store(&p).unwrap();
        let lines = recover_in(d.path(), false, |_| true);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].outcome, Outcome::Live);
        assert!(target.exists() && p.exists());
    }

    #[test]
    fn restoring_settings_only_keeps_the_other_entries() {
        let d = tempfile::tempdir().unwrap();
        let dir_item = Item::Dir {
            path: d.path().join("keep-me"),
        };
        std::fs::create_dir(d.path().join("keep-me")).unwrap();
        let knob = d.path().join("knob");
        std::fs::write(&knob, "10\n").unwrap();
        let p = dead_ledger(
            d.path(),
            vec![
                dir_item.clone(),
                Item::Setting {
                    path: knob.clone(),
                    original: "20".into(),
                    applied: "10".into(),
                },
            ],
        );
        let lines = recover_in(d.path(), false, |i| matches!(i, Item::Setting { .. }));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].outcome, Outcome::Released);
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "20");
        let left = LedgerFile::load(&p).unwrap();
        assert_eq!(left.entries.len(), 1);
        assert_eq!(left.entries[0].item, dir_item);
    }

    /// A ledger of a process that is gone (PID 1 with a start time it does not have) holding
    /// `items` in acquisition order, stored in `dir`.
    #[test]
    fn a_dead_process_s_unfinished_write_is_removed_and_a_live_one_s_kept() {
        let d = tempfile::tempdir().unwrap();
        // pid 1 never has start time 2; this process is alive with its own start time.
        let dead = d.path().join("1-2.json.tmp");
        let me = std::process::id();
        let mine = d
            .path()
            .join(format!("{me}-{}.json.tmp", start_time_of(me).unwrap()));
        std::fs::write(&dead, "{").unwrap();
        std::fs::write(&mine, "{").unwrap();
        recover_in(d.path(), true, |_| true);
        assert!(dead.exists(), "a dry run changes nothing");
        recover_in(d.path(), false, |_| true);
        assert!(!dead.exists());
        assert!(mine.exists(), "a live process's write is its own");
    }

    fn dead_ledger(dir: &Path, items: Vec<Item>) -> PathBuf {
        let f = LedgerFile {
            pid: 1,
            start_time: u64::MAX,
            argv: vec![],
            entries: (1..)
                .zip(items)
                .map(|(id, item)| Entry { id, item })
                .collect(),
        };
        let p = dir.join("1-dead.json");
        f.store(&p).unwrap();
        p
    }

    #[test]
    fn what_a_failed_item_may_stand_on_is_kept_but_settings_are_put_back() {
        let d = tempfile::tempdir().unwrap();
        let under = d.path().join("under");
        std::fs::create_dir(&under).unwrap();
        let knob = d.path().join("knob");
        std::fs::write(&knob, "10\n").unwrap();
        // An image whose identity was never recorded cannot be released: it fails.
        let img = d.path().join("fsbench-1-0.img");
        std::fs::write(&img, "x").unwrap();
        let p = dead_ledger(
            d.path(),
            vec![
                Item::Dir {
                    path: under.clone(),
                },
                Item::Setting {
                    path: knob.clone(),
                    original: "20".into(),
                    applied: "10".into(),
                },
                Item::Image {
                    path: img.clone(),
                    id: None,
                },
            ],
        );
        let lines = recover_in(d.path(), false, |_| true);
        let outcomes: Vec<Outcome> = lines.iter().map(|l| l.outcome).collect();
        assert_eq!(
            outcomes,
            [Outcome::Failed, Outcome::Released, Outcome::Failed],
            "{lines:?}"
        );
        assert!(
            lines[2].detail.contains("could not be released"),
            "{lines:?}"
        );
        assert!(under.exists() && img.exists());
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "20");
        let left: Vec<u64> = LedgerFile::load(&p)
            .unwrap()
            .entries
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(left, [1, 3], "kept for the next recovery");
    }

    #[test]
    fn a_dead_ledger_is_released_in_reverse_order() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = a.join("b");
        std::fs::create_dir_all(&b).unwrap();
        // PID 1 with a start time it does not have: the owner is gone, the PID reused.
        let f = LedgerFile {
            pid: 1,
            start_time: u64::MAX,
            argv: vec![],
            entries: vec![
                Entry {
                    id: 1,
                    item: Item::Dir { path: a.clone() },
                },
                Entry {
                    id: 2,
                    item: Item::Dir { path: b.clone() },
                },
            ],
        };
        let p = d.path().join("1-dead.json");
        f.store(&p).unwrap();
        let dry = recover_in(d.path(), true, |_| true);
        // A dry run changes nothing, so `a` still holds `b` and would not be removed yet.
        assert_eq!(dry[0].outcome, Outcome::WouldRelease, "{dry:?}");
        assert!(b.exists() && p.exists());
        let lines = recover_in(d.path(), false, |_| true);
        // b (acquired last) goes first, so a is empty by the time it is removed.
        assert!(lines[0].item.ends_with("/a/b"), "{lines:?}");
        assert!(lines.iter().all(|l| l.outcome == Outcome::Released));
        assert!(!a.exists());
        assert!(!p.exists(), "an emptied ledger is deleted");
    }
}
