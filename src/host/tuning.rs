//! Host tunings as setup keys: block-queue settings of the target device (`sched=`,
//! `read_ahead_kb=`, `nr_requests=`, `nomerges=`, `wbt_lat_usec=`) and sysctls under
//! `vm.*` / `fs.*` (`sysctl.vm.dirty_ratio=10`).
//!
//! A setting is validated against the running kernel before anything is created (the key
//! exists, a scheduler is offered, a sysctl value is accepted), applied at the start of the
//! setup-round with its original value in the ledger first (fsync'd), read back (the live value
//! goes into results.json) and put back when the round ends, on error, interrupt or panic
//! ([`Applied`] is a guard); after a SIGKILL the next fsbench puts it back from the ledger.
//! Only the target device's queue is ever touched.

use crate::Error;
use crate::host::ledger::{self, Held, Item, setting_value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One host tuning of a setup, as written: `sched` = `mq-deadline`,
/// `sysctl.vm.dirty_ratio` = `10`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSetting {
    /// The setup key.
    pub key: String,
    /// The value to set.
    pub value: String,
}

/// What values a block-queue key takes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// One of the schedulers `queue/scheduler` lists.
    Scheduler,
    /// An integer in a range.
    Int(i64, i64),
}

/// One block-queue key: setup key, attribute under `/sys/block/DEV/queue`, values.
struct QueueKey {
    key: &'static str,
    attr: &'static str,
    kind: Kind,
}

/// The block-queue keys a setup may use.
const QUEUE_KEYS: &[QueueKey] = &[
    QueueKey {
        key: "sched",
        attr: "scheduler",
        kind: Kind::Scheduler,
    },
    QueueKey {
        key: "read_ahead_kb",
        attr: "read_ahead_kb",
        kind: Kind::Int(0, i64::MAX),
    },
    QueueKey {
        key: "nr_requests",
        attr: "nr_requests",
        kind: Kind::Int(1, i64::MAX),
    },
    QueueKey {
        key: "nomerges",
        attr: "nomerges",
        kind: Kind::Int(0, 2),
    },
    QueueKey {
        key: "wbt_lat_usec",
        attr: "wbt_lat_usec",
        // -1 restores the kernel's default.
        kind: Kind::Int(-1, i64::MAX),
    },
];

/// Sysctl subtrees a setup may change.
const SYSCTL_PREFIXES: &[&str] = &["sysctl.vm.", "sysctl.fs."];

/// Sysctls that share one limit: writing one zeroes the other, so both originals are kept.
const PARTNERS: &[(&str, &str)] = &[
    ("vm/dirty_ratio", "vm/dirty_bytes"),
    ("vm/dirty_bytes", "vm/dirty_ratio"),
    ("vm/dirty_background_ratio", "vm/dirty_background_bytes"),
    ("vm/dirty_background_bytes", "vm/dirty_background_ratio"),
];

/// The host keys, for "valid keys" messages.
pub const KEYS_HELP: &str =
    "sched, read_ahead_kb, nr_requests, nomerges, wbt_lat_usec, sysctl.vm.*, sysctl.fs.*";

fn queue_key(key: &str) -> Option<&'static QueueKey> {
    QUEUE_KEYS.iter().find(|q| q.key == key)
}

/// Whether `key` is a host tuning key (block queue or sysctl).
pub fn is_host_key(key: &str) -> bool {
    queue_key(key).is_some() || SYSCTL_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The /proc/sys file of a `sysctl.vm.x` key.
fn sysctl_path(key: &str) -> Option<PathBuf> {
    let rest = key.strip_prefix("sysctl.")?;
    Some(Path::new("/proc/sys").join(rest.replace('.', "/")))
}

/// Check a key's syntax while parsing a setup (no kernel access): `fs` is its filesystem
/// (`on_device`: whether it lives on a block device, its driver's say), `context` the text
/// for messages.
pub fn parse(
    fs: &str,
    on_device: bool,
    key: &str,
    value: &str,
    context: &str,
) -> crate::Result<HostSetting> {
    let bad = |m: String| Error::invalid("--fs", format!("'{context}': {m}"));
    if value.is_empty() {
        return Err(bad(format!("{key} needs a value ({key}=…)")));
    }
    if let Some(q) = queue_key(key) {
        if !on_device {
            return Err(bad(format!(
                "{key} is a block-device setting and {fs} has no device"
            )));
        }
        if let Kind::Int(lo, hi) = q.kind {
            match value.parse::<i64>() {
                Ok(v) if (lo..=hi).contains(&v) => {}
                _ => {
                    return Err(bad(format!(
                        "{key} takes an integer{}, not '{value}'",
                        if hi == i64::MAX {
                            format!(" ≥ {lo}")
                        } else {
                            format!(" from {lo} to {hi}")
                        }
                    )));
                }
            }
        }
    } else {
        let rest = SYSCTL_PREFIXES
            .iter()
            .find_map(|p| key.strip_prefix(p))
            .unwrap_or("");
        let ok = !rest.is_empty()
            && rest
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !ok {
            return Err(bad(format!(
                "'{key}' is not a sysctl name (sysctl.vm.NAME or sysctl.fs.NAME)"
            )));
        }
    }
    Ok(HostSetting {
        key: key.to_string(),
        value: value.to_string(),
    })
}

/// The queue directory of a block device (its whole disk's `queue/`).
pub fn queue_dir(dev: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dev).ok()?;
    let sys = crate::host::sysfs::DevNum::from_dev(md.rdev()).sysfs_dir()?;
    Some(crate::host::sysfs::whole_disk(&sys).join("queue"))
}

/// Whether a block device is a partition (its queue is its disk's, shared with siblings).
fn is_partition(dev: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dev)
        .ok()
        .and_then(|md| crate::host::sysfs::DevNum::from_dev(md.rdev()).sysfs_dir())
        .is_some_and(|sys| crate::host::sysfs::is_partition(&sys))
}

/// A loop device's queue directory, standing in for the image's loop device before it exists
/// (every loop device offers the same schedulers and attributes).
fn any_loop_queue() -> Option<PathBuf> {
    let mut loops: Vec<PathBuf> = std::fs::read_dir("/sys/block")
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .map(|e| e.path().join("queue"))
        .filter(|q| q.join("scheduler").exists())
        .collect();
    loops.sort();
    loops.into_iter().next()
}

/// Schedulers a queue offers.
fn schedulers(queue: &Path) -> Vec<String> {
    std::fs::read_to_string(queue.join("scheduler"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect()
}

/// Sysctl names beside `path` (for "available" in messages).
fn siblings(path: &Path) -> String {
    let mut v: Vec<String> = path
        .parent()
        .and_then(|p| std::fs::read_dir(p).ok())
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.join(", ")
}

/// Whose block queue a run's queue keys would change.
#[derive(Debug, Clone, Copy)]
pub enum QueueOf<'a> {
    /// `--dir`: no device of fsbench's own.
    Dir,
    /// `--device PATH`.
    Device(&'a Path),
    /// An image on a loop device that does not exist yet.
    Image,
}

/// A setup whose host setting this kernel does not offer (a scheduler it was built without,
/// a queue attribute or sysctl it lacks): not bad input but a missing kernel feature, so a
/// shipped profile leaves the setup out with this note instead of refusing to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOffered {
    /// The setup's name.
    pub setup: String,
    /// What is missing, and how to get it.
    pub why: String,
}

impl NotOffered {
    /// The refusal when the user named the setup: exit 2, naming it.
    pub fn refusal(&self) -> Error {
        Error::invalid("--fs", format!("setup {}: {}", self.setup, self.why))
    }
}

/// Check every setup's host settings against this kernel and the target, before anything is
/// created. Sysctl values are tried: written and put back at once (recorded in the ledger),
/// which is the only way to learn whether the kernel accepts them. Bad input is an error;
/// what this kernel lacks is returned, one entry per setup, for the caller to refuse or drop.
pub fn validate<'a>(
    setups: impl IntoIterator<Item = (&'a str, &'a [HostSetting])>,
    target: QueueOf<'_>,
) -> crate::Result<Vec<NotOffered>> {
    let mut missing = Vec::new();
    for (name, settings) in setups {
        let not_offered = |why: String| NotOffered {
            setup: name.to_string(),
            why,
        };
        for h in settings {
            let bad = |m: String| Error::invalid("--fs", format!("setup {name}: {m}"));
            let Some(q) = queue_key(&h.key) else {
                match validate_sysctl(h) {
                    Ok(()) => continue,
                    Err(Unfit::Kernel(why)) => {
                        missing.push(not_offered(why));
                        break;
                    }
                    Err(Unfit::Input(why)) => return Err(bad(why)),
                }
            };
            let queue = match target {
                QueueOf::Dir => {
                    return Err(bad(format!(
                        "{} changes the target device's queue, and --dir has no device of fsbench's own; use an image or --device",
                        h.key
                    )));
                }
                QueueOf::Device(path) => {
                    if is_partition(path) {
                        return Err(bad(format!(
                            "{} sets the queue of the whole disk, which is more than the target partition {}; use the whole disk as --device or drop {}",
                            h.key,
                            path.display(),
                            h.key
                        )));
                    }
                    queue_dir(path)
                }
                QueueOf::Image => any_loop_queue(),
            };
            // Without a queue to look at (no loop device yet) the kernel decides at apply.
            let Some(queue) = queue else { continue };
            if !queue.join(q.attr).exists() {
                missing.push(not_offered(format!(
                    "this kernel's block queue has no {} ({}); drop {}",
                    q.attr,
                    queue.display(),
                    h.key
                )));
                break;
            }
            if let Kind::Scheduler = q.kind {
                let offered = schedulers(&queue);
                if !offered.contains(&h.value) {
                    missing.push(not_offered(format!(
                        "scheduler '{}' is not offered by the target device (available: {}); \
                         this kernel was built without it: a kernel with \
                         CONFIG_IOSCHED_{}=y, or `modprobe {}` where it is a module, offers it",
                        h.value,
                        offered.join(", "),
                        h.value.to_uppercase().replace('-', "_"),
                        h.value
                    )));
                    break;
                }
            }
        }
    }
    Ok(missing)
}

/// Why a sysctl setting cannot be applied.
enum Unfit {
    /// Bad input: not a setting, a trigger, a value the kernel rejects.
    Input(String),
    /// This kernel has no such sysctl.
    Kernel(String),
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfit::Input(s) | Unfit::Kernel(s) => f.write_str(s),
        }
    }
}

fn validate_sysctl(h: &HostSetting) -> Result<(), Unfit> {
    let path =
        sysctl_path(&h.key).ok_or_else(|| Unfit::Input(format!("'{}' is not a sysctl", h.key)))?;
    let md = std::fs::metadata(&path).map_err(|_| {
        Unfit::Kernel(format!(
            "this kernel has no sysctl {} ({}); available there: {}",
            h.key.trim_start_matches("sysctl."),
            path.display(),
            siblings(&path)
        ))
    })?;
    validate_sysctl_value(h, &path, &md).map_err(Unfit::Input)
}

/// Whether the kernel takes `h`'s value at `path` (tried and put back at once).
fn validate_sysctl_value(
    h: &HostSetting,
    path: &Path,
    md: &std::fs::Metadata,
) -> Result<(), String> {
    let mode = md.permissions().mode();
    if !md.is_file() || mode & 0o444 == 0 || mode & 0o222 == 0 {
        return Err(format!(
            "sysctl {} is not a readable and writable setting (a trigger such as drop_caches is not a tuning)",
            h.key.trim_start_matches("sysctl.")
        ));
    }
    if !rustix::process::geteuid().is_root() {
        return Ok(()); // `fsbench plan` as a user: the run (as root) tries the value
    }
    let original = read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if setting_value(&original) == setting_value(&h.value) {
        return Ok(());
    }
    // Try the value, then put the original back at once; the ledger covers the instant.
    let held = ledger::hold(Item::Setting {
        path: path.to_path_buf(),
        original: original.clone(),
        applied: h.value.clone(),
    })
    .map_err(|e| e.to_string())?;
    let tried = std::fs::write(path, &h.value);
    if let Err(e) = std::fs::write(path, &original) {
        held.keep();
        return Err(format!(
            "could not put {} back to {original:?} after trying {:?}: {e}",
            path.display(),
            h.value
        ));
    }
    drop(held);
    tried.map_err(|e| {
        format!(
            "the kernel rejects {}={} ({e}); it is {original:?} now",
            h.key.trim_start_matches("sysctl."),
            h.value
        )
    })
}

fn read(path: &Path) -> std::io::Result<String> {
    std::fs::read_to_string(path).map(|t| setting_value(&t))
}

/// One changed setting, put back on restore.
struct Changed {
    path: PathBuf,
    original: String,
    held: Held,
}

/// Settings applied for one setup-round. Dropping it puts every original back (in reverse
/// order); [`Applied::restore`] does the same and reports failures.
pub struct Applied {
    changed: Vec<Changed>,
    /// Live values read back after applying, by setup key (`sched` → `mq-deadline`).
    pub live: BTreeMap<String, String>,
}

/// The path a setting lives at, for a target device `device`.
fn path_of(h: &HostSetting, device: Option<&Path>) -> crate::Result<PathBuf> {
    if let Some(q) = queue_key(&h.key) {
        let dev = device.ok_or_else(|| Error::Other(format!("{} needs a target device", h.key)))?;
        let queue = queue_dir(dev)
            .ok_or_else(|| Error::Other(format!("cannot find the queue of {}", dev.display())))?;
        return Ok(queue.join(q.attr));
    }
    sysctl_path(&h.key).ok_or_else(|| Error::Other(format!("'{}' is not a sysctl", h.key)))
}

/// Apply `settings` (the target device `device` for queue keys): original in the ledger,
/// fsync'd, then the write, then the read-back. On any failure what was applied is put back.
pub fn apply(settings: &[HostSetting], device: Option<&Path>) -> crate::Result<Applied> {
    let mut a = Applied {
        changed: Vec::new(),
        live: BTreeMap::new(),
    };
    for h in settings {
        let path = path_of(h, device)?;
        let rel = path
            .strip_prefix("/proc/sys")
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if let Some((_, partner)) = PARTNERS.iter().find(|(k, _)| *k == rel) {
            // Writing dirty_ratio zeroes dirty_bytes (and back): keep the partner's value
            // first, so it is put back after (restoring ours would zero it again).
            let p = Path::new("/proc/sys").join(partner);
            if let Ok(orig) = read(&p)
                && orig != "0"
            {
                a.record(&p, &orig, "0")?;
            }
        }
        a.set(&path, &h.value)?;
        let live = read(&path).map_err(|e| Error::io("cannot read back", &path, e))?;
        a.live.insert(h.key.clone(), live);
    }
    Ok(a)
}

impl Applied {
    /// Record a change the kernel makes on its own (a partner zeroed) without writing.
    fn record(&mut self, path: &Path, original: &str, applied: &str) -> crate::Result<()> {
        let held = ledger::hold(Item::Setting {
            path: path.to_path_buf(),
            original: original.to_string(),
            applied: applied.to_string(),
        })?;
        self.changed.push(Changed {
            path: path.to_path_buf(),
            original: original.to_string(),
            held,
        });
        Ok(())
    }

    fn set(&mut self, path: &Path, value: &str) -> crate::Result<()> {
        let original = read(path).map_err(|e| Error::io("cannot read", path, e))?;
        if original == setting_value(value) {
            return Ok(());
        }
        self.record(path, &original, value)?;
        if let Err(e) = std::fs::write(path, value) {
            // Nothing changed: the entry goes with it.
            drop(self.changed.pop());
            return Err(Error::io(format!("cannot write {value:?} to"), path, e));
        }
        Ok(())
    }

    /// Put every original back now; the first failure is returned (the others still tried).
    pub fn restore(mut self) -> crate::Result<()> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> crate::Result<()> {
        let mut first = None;
        while let Some(c) = self.changed.pop() {
            let ok = std::fs::write(&c.path, &c.original)
                .and_then(|()| read(&c.path))
                .map(|now| now == setting_value(&c.original));
            match ok {
                Ok(true) => drop(c.held),
                other => {
                    // Left in the ledger: the next fsbench tries again.
                    c.held.keep();
                    let why = match other {
                        Err(e) => e.to_string(),
                        _ => "it reads back differently".into(),
                    };
                    first.get_or_insert(Error::Other(format!(
                        "cannot put {} back to {:?}: {why}",
                        c.path.display(),
                        c.original
                    )));
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        if let Err(e) = self.restore_all() {
            crate::host::stdio::note(&format!("fsbench: warning: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_recognised_and_checked() {
        assert!(is_host_key("sched") && is_host_key("sysctl.vm.dirty_ratio"));
        assert!(!is_host_key("sysctl.kernel.panic") && !is_host_key("mount"));
        assert!(parse("ext4", true, "nomerges", "2", "x").is_ok());
        let e = parse("ext4", true, "nomerges", "3", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 0 to 2"), "{e}");
        let e = parse("tmpfs", false, "sched", "none", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no device"), "{e}");
        let e = parse("ext4", true, "sysctl.vm.", "1", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a sysctl name"), "{e}");
        assert_eq!(
            sysctl_path("sysctl.vm.dirty_ratio").unwrap(),
            Path::new("/proc/sys/vm/dirty_ratio")
        );
    }

    #[test]
    fn unknown_sysctls_name_what_is_there() {
        let h = HostSetting {
            key: "sysctl.vm.no_such_knob".into(),
            value: "1".into(),
        };
        let e = validate_sysctl(&h).unwrap_err();
        assert!(
            matches!(e, Unfit::Kernel(_)),
            "a missing sysctl is the kernel's: {e}"
        );
        let e = e.to_string();
        assert!(
            e.contains("no sysctl vm.no_such_knob") && e.contains("dirty_ratio"),
            "{e}"
        );
        let h = HostSetting {
            key: "sysctl.vm.drop_caches".into(),
            value: "3".into(),
        };
        let e = validate_sysctl(&h).unwrap_err();
        assert!(matches!(e, Unfit::Input(_)) && e.to_string().contains("not a readable"));
    }
}
