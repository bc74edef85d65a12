//! Recovery's release of one ledger item: check that the live object still is the recorded
//! one, then release it; anything that does not match is reported and left alone.

use super::hooks::{self, Hooks, Verdict};
use super::{Alive, Item, Outcome, alive};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A kernel setting's value as fsbench compares it: the `[active]` entry of a scheduler list,
/// otherwise the text with its whitespace collapsed (`4096\t16384` → `4096 16384`).
pub fn setting_value(text: &str) -> String {
    if text.contains('[') {
        crate::host::sysfs::parse_scheduler(text)
    } else {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Exclusive lock on the ledger directory for the duration of a recovery.
pub(super) struct RecoveryLock {
    _file: Option<std::fs::File>,
}

impl RecoveryLock {
    pub(super) fn take(dir: &Path) -> RecoveryLock {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".recovery.lock"))
            .ok();
        if let Some(f) = &f {
            // Released when the descriptor is closed.
            let _ = rustix::fs::flock(f, rustix::fs::FlockOperation::LockExclusive);
        }
        RecoveryLock { _file: f }
    }
}

fn would(dry_run: bool, what: &str) -> Option<Verdict> {
    dry_run.then(|| (Outcome::WouldRelease, what.to_string()))
}

/// Release one item if it still matches its record.
pub(super) fn release(item: &Item, dry_run: bool) -> Verdict {
    match item {
        Item::Image { path, id } => image(path, *id, dry_run),
        Item::Loop {
            device,
            image,
            image_id,
        } => loop_device(device.as_deref(), image, *image_id, dry_run),
        Item::Dir { path } => dir(path, dry_run),
        Item::Mount { target, source } => mount(target, source, dry_run),
        Item::MountsUnder { root } => mounts_under(root, dry_run),
        Item::StateDir { path } => state_dir(&crate::host::run_dir(), path, dry_run),
        Item::Zpool { name } => match hooks::get() {
            Some(h) => (h.release_pool)(name, dry_run),
            None => no_hooks(),
        },
        Item::Process {
            pid,
            start_time,
            name,
            data_dir,
        } => {
            // Without the hooks a zfs-fuse could be stopped while it serves other pools.
            let Some(h) = hooks::get() else {
                return no_hooks();
            };
            let (outcome, mut detail) =
                process(h, *pid, *start_time, name, data_dir.as_deref(), dry_run);
            // A zfs-fuse that was killed leaves its own FUSE mount and its socket behind.
            if name == h.daemon
                && !matches!(outcome, Outcome::Failed | Outcome::NotOurs)
                && let Some(more) = (h.after_daemon_gone)(dry_run)
            {
                detail = format!("{detail}; {more}");
                if outcome == Outcome::AlreadyGone
                    && (more.starts_with("unmounted") || more.starts_with("removed"))
                {
                    return (Outcome::Released, detail);
                }
            }
            (outcome, detail)
        }
        Item::Cgroup { path } => cgroup(path, dry_run),
        Item::Setting {
            path,
            original,
            applied,
        } => setting(path, original, applied, dry_run),
    }
}

/// A zpool or process item met before any command installed the release hooks: kept.
fn no_hooks() -> Verdict {
    (
        Outcome::Failed,
        "no release hooks installed (fsbench::fs::drivers::zfs::recover::register); left for the next recovery"
            .into(),
    )
}

fn mount(target: &Path, source: &str, dry_run: bool) -> Verdict {
    let entries = match crate::host::mountinfo::read() {
        Ok(e) => e,
        Err(e) => return (Outcome::Failed, format!("cannot read mountinfo: {e}")),
    };
    let Some(m) = crate::host::mountinfo::find_mount_point(&entries, target) else {
        return (Outcome::AlreadyGone, "not mounted".into());
    };
    if m.source != source {
        return (
            Outcome::NotOurs,
            format!(
                "{} is now mounted from {} ({}), not the recorded {source}; left mounted",
                target.display(),
                m.source,
                m.fs_type
            ),
        );
    }
    if let Some(v) = would(dry_run, &format!("would unmount {}", target.display())) {
        return v;
    }
    match crate::host::mountinfo::unmount(target) {
        Ok(()) => (Outcome::Released, format!("unmounted ({})", m.fs_type)),
        Err(e) => (Outcome::Failed, e.to_string()),
    }
}

fn mounts_under(root: &Path, dry_run: bool) -> Verdict {
    let entries = match crate::host::mountinfo::read() {
        Ok(e) => e,
        Err(e) => return (Outcome::Failed, format!("cannot read mountinfo: {e}")),
    };
    let points = crate::host::mountinfo::below(&entries, root);
    if points.is_empty() {
        return (Outcome::AlreadyGone, "nothing mounted under it".into());
    }
    let what = format!("{} mount(s)", points.len());
    if let Some(v) = would(dry_run, &format!("would unmount {what}")) {
        return v;
    }
    for p in &points {
        if let Err(e) = crate::host::mountinfo::unmount(p) {
            return (Outcome::Failed, e.to_string());
        }
    }
    (Outcome::Released, format!("unmounted {what}"))
}

/// A program's state directory directly under `base` (fsbench's runtime directory): what is
/// mounted below it unmounted, then the directory removed with its contents. Anything that is
/// not a real directory directly under `base` (a symlink, a file, a path elsewhere) is left
/// alone: only a directory fsbench made there for this purpose is emptied.
fn state_dir(base: &Path, path: &Path, dry_run: bool) -> Verdict {
    let direct_child = path.parent() == Some(base)
        && path
            .file_name()
            .is_some_and(|n| n != "." && n != ".." && n != "ledger");
    if !direct_child {
        return (
            Outcome::NotOurs,
            format!(
                "not a directory of fsbench's directly under {}; left alone",
                base.display()
            ),
        );
    }
    if let Some(gone) = not_a_directory(path) {
        return gone;
    }
    // Neither the base nor anything above it may lead elsewhere through a symlink.
    let real_base = std::fs::canonicalize(base).ok();
    let expected = real_base.zip(path.file_name()).map(|(b, n)| b.join(n));
    if std::fs::canonicalize(path).ok() != expected {
        return (
            Outcome::NotOurs,
            "its path goes through a symlink; left alone".into(),
        );
    }
    let unmounted = match mounts_under(path, dry_run) {
        (Outcome::Failed | Outcome::NotOurs, why) => return (Outcome::Failed, why),
        (Outcome::AlreadyGone, _) => String::new(),
        (_, what) => format!("{what}, "),
    };
    if let Some(v) = would(
        dry_run,
        &format!("{unmounted}would remove the directory and its contents"),
    ) {
        return v;
    }
    // remove_dir_all removes symlinks inside without following them.
    match std::fs::remove_dir_all(path) {
        Ok(()) => (
            Outcome::Released,
            format!("{unmounted}removed the directory and its contents"),
        ),
        Err(e) => (Outcome::Failed, format!("cannot remove it: {e}")),
    }
}

/// The verdict on a recorded directory that is gone or no longer a directory (a symlink
/// included); `None` while it is one.
fn not_a_directory(path: &Path) -> Option<Verdict> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Some((Outcome::AlreadyGone, "does not exist".into())),
        Ok(m) if !m.is_dir() => Some((
            Outcome::NotOurs,
            "is no longer a directory; left alone".into(),
        )),
        Ok(_) => None,
    }
}

fn dir(path: &Path, dry_run: bool) -> Verdict {
    if let Some(gone) = not_a_directory(path) {
        return gone;
    }
    if crate::host::mountinfo::is_mounted(path) {
        return (
            Outcome::Failed,
            "something is mounted on it; left alone".into(),
        );
    }
    if std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()) {
        return (
            Outcome::NotOurs,
            "is not empty (something else wrote into it); left alone".into(),
        );
    }
    if let Some(v) = would(dry_run, "would remove the empty directory") {
        return v;
    }
    match std::fs::remove_dir(path) {
        Ok(()) => (Outcome::Released, "removed the empty directory".into()),
        Err(e) => (Outcome::Failed, format!("cannot remove it: {e}")),
    }
}

/// Which file a loop device is bound to: `None` when unbound.
fn loop_backing(dev: &Path) -> std::io::Result<Option<((u64, u64), String)>> {
    let f = std::fs::OpenOptions::new().read(true).open(dev)?;
    match crate::host::sys::loop_get_status(f.as_fd()) {
        Ok(st) => {
            let name = dev
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let file = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            Ok(Some(((st.lo_device, st.lo_inode), file)))
        }
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Loop devices currently bound to the file with `id` (and, so that a reused inode number is
/// not mistaken for the image, whose backing file name is `image`).
fn loops_backing(image: &Path, id: (u64, u64)) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return v;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let dev = PathBuf::from("/dev").join(&name);
        if let Ok(Some((bid, file))) = loop_backing(&dev)
            && bid == id
            && same_file_name(&file, image)
        {
            v.push(dev);
        }
    }
    v.sort();
    v
}

/// sysfs shows a deleted backing file as `PATH (deleted)`.
fn same_file_name(shown: &str, image: &Path) -> bool {
    let img = image.display().to_string();
    shown == img || shown.strip_suffix(" (deleted)") == Some(img.as_str())
}

fn detach(dev: &Path) -> Verdict {
    let f = match std::fs::OpenOptions::new().read(true).open(dev) {
        Ok(f) => f,
        Err(e) => return (Outcome::Failed, format!("cannot open it: {e}")),
    };
    match crate::host::sys::ioctl_int(f.as_fd(), crate::host::sys::LOOP_CLR_FD, 0) {
        // With other openers left the kernel turns this into autoclear on last close.
        Ok(_) => (Outcome::Released, "detached".into()),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            (Outcome::AlreadyGone, "already detached".into())
        }
        Err(e) => (Outcome::Failed, format!("LOOP_CLR_FD failed: {e}")),
    }
}

fn loop_device(device: Option<&Path>, image: &Path, id: (u64, u64), dry_run: bool) -> Verdict {
    let Some(dev) = device else {
        // Killed between asking for a free device and recording which: look for any loop
        // device that backs exactly the recorded image.
        let found = loops_backing(image, id);
        if found.is_empty() {
            return (
                Outcome::AlreadyGone,
                "no loop device backs the image".into(),
            );
        }
        if dry_run {
            return (
                Outcome::WouldRelease,
                format!("would detach {}", show(&found)),
            );
        }
        let all: Vec<Verdict> = found.iter().map(|d| detach(d)).collect();
        let failed = all.iter().find(|v| v.0 == Outcome::Failed).cloned();
        return failed.unwrap_or_else(|| (Outcome::Released, format!("detached {}", show(&found))));
    };
    match loop_backing(dev) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            (Outcome::AlreadyGone, "the device no longer exists".into())
        }
        Err(e) => (
            Outcome::Failed,
            format!("cannot query {}: {e}", dev.display()),
        ),
        Ok(None) => (Outcome::AlreadyGone, "already detached (autoclear)".into()),
        Ok(Some((bid, file))) if bid != id || !same_file_name(&file, image) => (
            Outcome::NotOurs,
            format!(
                "{} now backs {} (inode {}:{}), not the recorded {} (inode {}:{}); left attached",
                dev.display(),
                if file.is_empty() {
                    "another file"
                } else {
                    &file
                },
                bid.0,
                bid.1,
                image.display(),
                id.0,
                id.1
            ),
        ),
        Ok(Some(_)) => would(dry_run, &format!("would detach {}", dev.display()))
            .unwrap_or_else(|| detach(dev)),
    }
}

fn show(devs: &[PathBuf]) -> String {
    devs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn image(path: &Path, id: Option<(u64, u64)>, dry_run: bool) -> Verdict {
    let md = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => return (Outcome::AlreadyGone, "already deleted".into()),
    };
    let Some(id) = id else {
        return (
            Outcome::Failed,
            "fsbench was killed before it recorded which file this is; check it and delete it by hand"
                .into(),
        );
    };
    if !md.is_file() || (md.dev(), md.ino()) != id {
        return (
            Outcome::NotOurs,
            format!(
                "{} is now another file (inode {}:{}, recorded {}:{}); left alone",
                path.display(),
                md.dev(),
                md.ino(),
                id.0,
                id.1
            ),
        );
    }
    // Autoclear detaches a loop device once its last user (a mount just unmounted) is gone;
    // give the kernel a moment (udev may still hold the device open under load) before
    // deciding the image is still in use.
    let t0 = Instant::now();
    let mut users = loops_backing(path, id);
    while !users.is_empty() && !dry_run && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
        users = loops_backing(path, id);
    }
    if !users.is_empty() && !dry_run {
        return (
            Outcome::Failed,
            format!("{} still backs it; not deleted", show(&users)),
        );
    }
    if let Some(v) = would(
        dry_run,
        &format!("would delete it ({})", crate::units::format_size(md.len())),
    ) {
        return v;
    }
    match std::fs::remove_file(path) {
        Ok(()) => (
            Outcome::Released,
            format!("deleted ({})", crate::units::format_size(md.len())),
        ),
        Err(e) => (Outcome::Failed, format!("cannot delete it: {e}")),
    }
}

fn process(
    h: &Hooks,
    pid: u32,
    start_time: u64,
    name: &str,
    data_dir: Option<&Path>,
    dry_run: bool,
) -> Verdict {
    let remove_data = |how: String| -> Verdict {
        let Some(d) = data_dir.filter(|d| d.exists()) else {
            return (Outcome::Released, how);
        };
        match std::fs::remove_dir_all(d) {
            Ok(()) => (
                Outcome::Released,
                format!("{how}; removed its data directory {}", d.display()),
            ),
            Err(e) => (
                Outcome::Failed,
                format!("{how}; cannot remove {}: {e}", d.display()),
            ),
        }
    };
    match alive(pid, start_time) {
        Alive::Reused(t) => (
            Outcome::NotOurs,
            format!(
                "pid {pid} now belongs to another process (start time {t}, recorded {start_time}); not signalled"
            ),
        ),
        Alive::Gone => {
            if dry_run {
                return (
                    Outcome::WouldRelease,
                    "not running; would remove its data directory".into(),
                );
            }
            match data_dir.filter(|d| d.exists()) {
                None => (Outcome::AlreadyGone, "not running".into()),
                Some(_) => remove_data("not running".into()),
            }
        }
        Alive::Same => {
            if name == h.daemon
                && let Some(why) = (h.daemon_still_needed)()
            {
                return (Outcome::Failed, why);
            }
            if let Some(v) = would(dry_run, &format!("would stop {name} (SIGTERM)")) {
                return v;
            }
            // A PID whose start time we just matched. SIGCONT so that a stopped process gets
            // to act on the SIGTERM.
            crate::host::sys::signal(pid as i32, rustix::process::Signal::TERM);
            crate::host::sys::signal(pid as i32, rustix::process::Signal::CONT);
            let t0 = Instant::now();
            while alive(pid, start_time) == Alive::Same && t0.elapsed() < Duration::from_secs(15) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let how = if alive(pid, start_time) == Alive::Same {
                // Still the same process.
                crate::host::sys::signal(pid as i32, rustix::process::Signal::KILL);
                std::thread::sleep(Duration::from_millis(200));
                "stopped (SIGKILL after 15 s of SIGTERM)"
            } else {
                "stopped (SIGTERM)"
            };
            remove_data(how.into())
        }
    }
}

fn cgroup(path: &Path, dry_run: bool) -> Verdict {
    if !path.is_dir() {
        return (Outcome::AlreadyGone, "already removed".into());
    }
    let named_ours = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("fsbench-"));
    if !path.starts_with("/sys/fs/cgroup") || !named_ours {
        return (
            Outcome::NotOurs,
            "not an fsbench cgroup under /sys/fs/cgroup; left alone".into(),
        );
    }
    let pids = || {
        std::fs::read_to_string(path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .collect::<Vec<_>>()
    };
    let left = pids();
    if let Some(v) = would(
        dry_run,
        &format!("would stop its {} process(es) and remove it", left.len()),
    ) {
        return v;
    }
    if !left.is_empty() {
        // The processes in fsbench's own group are fsbench's (a memory-capped job).
        if std::fs::write(path.join("cgroup.kill"), "1").is_err() {
            for p in &left {
                // The PIDs were just read from the group's member list.
                crate::host::sys::signal(*p, rustix::process::Signal::KILL);
            }
        }
    }
    let t0 = Instant::now();
    loop {
        match std::fs::remove_dir(path) {
            Ok(()) => {
                return (
                    Outcome::Released,
                    if left.is_empty() {
                        "removed".into()
                    } else {
                        format!("killed {} process(es) and removed it", left.len())
                    },
                );
            }
            Err(_) if t0.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => return (Outcome::Failed, format!("cannot remove it: {e}")),
        }
    }
}

fn setting(path: &Path, original: &str, applied: &str, dry_run: bool) -> Verdict {
    let now = match std::fs::read_to_string(path) {
        Ok(t) => setting_value(&t),
        Err(e) => {
            return (
                Outcome::AlreadyGone,
                format!("cannot read it any more ({e}); the device may be gone"),
            );
        }
    };
    if now == setting_value(original) {
        return (Outcome::AlreadyGone, format!("already {original:?}"));
    }
    if now != setting_value(applied) {
        return (
            Outcome::NotOurs,
            format!(
                "now {now:?}, neither the original {original:?} nor fsbench's {applied:?}: someone else changed it; left as is"
            ),
        );
    }
    if let Some(v) = would(dry_run, &format!("would put back {original:?}")) {
        return v;
    }
    match std::fs::write(path, original) {
        Ok(()) => {
            let back = std::fs::read_to_string(path)
                .map(|t| setting_value(&t))
                .unwrap_or_default();
            if back == setting_value(original) {
                (Outcome::Released, format!("put back {original:?}"))
            } else {
                (
                    Outcome::Failed,
                    format!("wrote {original:?} but it reads {back:?}"),
                )
            }
        }
        Err(e) => (Outcome::Failed, format!("cannot write {original:?}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_normalised() {
        assert_eq!(setting_value("none [bfq] kyber\n"), "bfq");
        assert_eq!(
            setting_value("4096\t16384  4194304\n"),
            "4096 16384 4194304"
        );
        assert_eq!(setting_value("20\n"), "20");
    }

    #[test]
    fn deleted_backing_files_still_match_their_name() {
        let p = Path::new("/var/tmp/fsbench-1-0.img");
        assert!(same_file_name("/var/tmp/fsbench-1-0.img", p));
        assert!(same_file_name("/var/tmp/fsbench-1-0.img (deleted)", p));
        assert!(!same_file_name("/var/tmp/other.img", p));
    }

    /// Hooks that release nothing (the tests here never meet a zpool or the daemon).
    const TEST_HOOKS: Hooks = Hooks {
        release_pool: |_, _| (Outcome::Failed, "test".into()),
        daemon: "zfs-fuse",
        daemon_still_needed: || None,
        after_daemon_gone: |_| None,
    };

    #[test]
    fn a_reused_pid_is_not_signalled() {
        let me = std::process::id();
        let real = super::super::start_time_of(me).unwrap();
        let (o, why) = process(&TEST_HOOKS, me, real + 1, "daemon", None, false);
        assert_eq!(o, Outcome::NotOurs);
        assert!(why.contains("another process"), "{why}");
    }

    #[test]
    fn a_setting_someone_else_changed_is_left() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("dirty_ratio");
        std::fs::write(&p, "30\n").unwrap();
        let (o, _) = setting(&p, "20", "10", false);
        assert_eq!(o, Outcome::NotOurs);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "30\n");
        std::fs::write(&p, "10\n").unwrap();
        let (o, why) = setting(&p, "20", "10", false);
        assert_eq!(o, Outcome::Released, "{why}");
        assert_eq!(std::fs::read_to_string(&p).unwrap().trim(), "20");
    }

    #[test]
    fn a_state_directory_goes_with_its_contents_only_directly_under_the_base() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("run");
        let state = base.join("podman-1-0");
        std::fs::create_dir_all(state.join("overlay-locks")).unwrap();
        std::fs::write(state.join("overlay-locks/lock"), "x").unwrap();
        // A symlink inside leads out; removing the directory must not follow it.
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, state.join("link")).unwrap();
        let (o, why) = state_dir(&base, &state, true);
        assert_eq!(o, Outcome::WouldRelease, "{why}");
        assert!(state.exists(), "a dry run removes nothing");
        let (o, why) = state_dir(&base, &state, false);
        assert_eq!(o, Outcome::Released, "{why}");
        assert!(!state.exists());
        assert!(outside.join("keep").exists(), "the symlink was followed");
        let (o, _) = state_dir(&base, &state, false);
        assert_eq!(o, Outcome::AlreadyGone);
        // Not directly under the base, the ledger's own directory, a symlink: left alone.
        let deep = base.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(base.join("ledger")).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("podman-2-0")).unwrap();
        for p in [
            deep.clone(),
            base.join("ledger"),
            base.join("podman-2-0"),
            outside.clone(),
        ] {
            let (o, why) = state_dir(&base, &p, false);
            assert_eq!(o, Outcome::NotOurs, "{}: {why}", p.display());
            assert!(p.exists(), "{}", p.display());
        }
    }
}
