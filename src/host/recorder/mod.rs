//! The recording device: fsbench's own FUSE filesystem serving one file whose writes and
//! fsyncs are logged in order (a user-space dm-log-writes, for kernels without
//! device-mapper). A loop device in direct-I/O mode over [`Recorder::file`] is the block
//! device a filesystem is made on; the loop driver turns each flush (and each FUA write, which
//! the block layer splits into a write and a flush) into an fsync of that file, which the
//! daemon logs as [`Entry::Flush`].
//!
//! The daemon is a thread of this process (fuser's background session). Everything the
//! recorder holds is in the ledger before it is acquired: the backing file (an image), the
//! mountpoint (a directory) and the FUSE mount. After a SIGKILL the kernel aborts the FUSE
//! connection with the process, and recovery unmounts the dead mount, removes the directory
//! and deletes the backing file (the loop device over it and any mount on that are released
//! first: they were recorded later).

pub mod fuse;
pub mod log;

pub use log::{Entry, Log, Recorded};

use crate::host::ledger::{self, Held, Item};
use crate::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The mount's source as mountinfo shows it (what recovery matches).
pub const SOURCE: &str = "fsbench-recorder";

/// The watchdog process's name in the ledger.
const WATCHDOG: &str = "fsbench-recorder-watchdog";

/// Default bound of the log's write data: a crash workload on a 256 MiB image writes a few
/// MiB; a run that reaches this is refused rather than swapping the machine.
pub const DEFAULT_LOG_LIMIT: u64 = 512 << 20;

/// A mounted recorder. Dropping it unmounts the FUSE filesystem, removes the mountpoint and
/// deletes the backing file; whatever could not be released stays in the ledger.
pub struct Recorder {
    serving: bool,
    watchdog: Option<std::process::Child>,
    held_watchdog: Option<Held>,
    log: Arc<Log>,
    mountpoint: PathBuf,
    backing: PathBuf,
    held_mount: Option<Held>,
    held_dir: Option<Held>,
    held_image: Option<Held>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl Recorder {
    /// Create a sparse backing file of `size` bytes in `scratch_dir`, mount the recorder on a
    /// directory beside it, and serve the file; the log keeps at most `log_limit` bytes.
    pub fn start(scratch_dir: &Path, size: u64, log_limit: u64) -> Result<Recorder> {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let stem = format!("fsbench-rec-{}-{n}", std::process::id());
        let backing = scratch_dir.join(format!("{stem}.img"));
        let mountpoint = scratch_dir.join(stem);
        let mut rec = Recorder {
            serving: false,
            watchdog: None,
            held_watchdog: None,
            log: Arc::new(Log::new(log_limit)),
            mountpoint: mountpoint.clone(),
            backing: backing.clone(),
            held_mount: None,
            held_dir: None,
            held_image: None,
        };
        let (file, held) = ledger::create_file(&backing, "the recorder's backing file")?;
        rec.held_image = Some(held);
        file.set_len(size)
            .map_err(|e| Error::io("cannot size", &backing, e))?;

        rec.held_dir = Some(ledger::hold(Item::Dir {
            path: mountpoint.clone(),
        })?);
        std::fs::create_dir(&mountpoint)
            .map_err(|e| Error::io("cannot create the recorder's mountpoint", &mountpoint, e))?;

        rec.held_mount = Some(ledger::hold(Item::Mount {
            target: mountpoint.clone(),
            source: SOURCE.into(),
        })?);
        let fs = fuse::RecorderFs {
            backing: file,
            size,
            log: rec.log.clone(),
        };
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(SOURCE.into()),
            fuser::MountOption::NoExec,
            fuser::MountOption::NoSuid,
            fuser::MountOption::NoDev,
        ];
        let session =
            fuser::Session::new(fs, &mountpoint, &config).map_err(|e| match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => Error::refused(
                    "/dev/fuse",
                    "mounting the crash recorder (FUSE) needs root and /dev/fuse",
                ),
                _ => Error::io("cannot mount the crash recorder (FUSE) on", &mountpoint, e),
            })?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("fsbench-recorder".into())
            .spawn(move || {
                let _ = tx.send(rustix::thread::gettid().as_raw_nonzero().get());
                // Returns once the mount is gone (the drop unmounts it).
                let _ = session.run();
            })
            .map_err(|e| Error::io("cannot start the recorder's thread for", &mountpoint, e))?;
        rec.serving = true;
        let tid = rx
            .recv()
            .map_err(|_| Error::Other("the recorder's thread did not start".into()))?;
        rec.start_watchdog(tid)?;
        Ok(rec)
    }

    /// A SIGKILL ends the daemon thread at once but can leave another thread of this process
    /// waiting in the kernel for a write the daemon will never answer (a journal commit on
    /// the loop device): the process never finishes exiting, so the kernel never aborts the
    /// FUSE connection. The watchdog, a small process of its own, sees the daemon thread gone
    /// while the process still exists and aborts the connection (`umount -f` calls FUSE's
    /// umount_begin, which aborts it; the waits then fail and the process exits).
    fn start_watchdog(&mut self, tid: i32) -> Result<()> {
        let pid = std::process::id();
        let script = "while [ -d /proc/$1/task/$2 ]; do sleep 0.3; done; \
                      [ -d /proc/$1 ] && umount -f \"$3\"; exit 0";
        // Spawned first, recorded right after (as host::daemon does): it exits by itself
        // once the daemon thread is gone, so the instant between leaves nothing behind.
        let child = std::process::Command::new("sh")
            .args(["-c", script, WATCHDOG, &pid.to_string(), &tid.to_string()])
            .arg(&self.mountpoint)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| Error::io("cannot start the recorder's watchdog", Path::new("sh"), e))?;
        let start_time = ledger::start_time_of(child.id()).unwrap_or(0);
        self.watchdog = Some(child);
        let held = ledger::hold(Item::Process {
            pid: self.watchdog.as_ref().map_or(0, |c| c.id()),
            start_time,
            name: WATCHDOG.into(),
            data_dir: None,
        })?;
        self.held_watchdog = Some(held);
        Ok(())
    }

    /// The served file: attach a direct-I/O loop device to it.
    pub fn file(&self) -> PathBuf {
        self.mountpoint.join(fuse::FILE_NAME)
    }

    /// The log (shared with the daemon).
    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    /// The backing file's data extents as they are now (the base image recording starts
    /// from): `(offset, bytes)` per extent, holes left out.
    pub fn base_extents(&self) -> Result<Vec<(u64, Vec<u8>)>> {
        let f =
            File::open(&self.backing).map_err(|e| Error::io("cannot open", &self.backing, e))?;
        data_extents(&f).map_err(|e| Error::io("cannot read", &self.backing, e))
    }
}

/// Read every data extent of `f` (SEEK_DATA / SEEK_HOLE).
pub fn data_extents(f: &File) -> std::io::Result<Vec<(u64, Vec<u8>)>> {
    use rustix::fs::SeekFrom;
    use std::os::unix::fs::FileExt;
    let len = f.metadata()?.len();
    let mut out = Vec::new();
    let mut pos = 0u64;
    while pos < len {
        let start = match rustix::fs::seek(f, SeekFrom::Data(pos)) {
            Ok(s) => s,
            Err(rustix::io::Errno::NXIO) => break,
            Err(e) => return Err(e.into()),
        };
        let end = rustix::fs::seek(f, SeekFrom::Hole(start))?.min(len);
        let mut buf = vec![0u8; (end - start) as usize];
        f.read_exact_at(&mut buf, start)?;
        out.push((start, buf));
        pos = end;
    }
    Ok(out)
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        drop(self.held_watchdog.take());
        // Unmounting ends the daemon thread's session (lazily if a loop device still holds
        // the file: then the mount stays in the ledger for recovery).
        if self.serving
            && crate::host::mountinfo::is_mounted(&self.mountpoint)
            && let Err(e) = crate::host::mountinfo::unmount(&self.mountpoint)
        {
            crate::host::stdio::note(&format!("fsbench: warning: {e}"));
            if let Some(h) = self.held_mount.take() {
                h.keep();
            }
        }
        drop(self.held_mount.take());
        if let Some(h) = self.held_dir.take() {
            match std::fs::remove_dir(&self.mountpoint) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => h.keep(),
                _ => drop(h),
            }
        }
        if self.held_image.is_some() {
            if let Err(e) = std::fs::remove_file(&self.backing) {
                crate::host::stdio::note(&format!(
                    "fsbench: warning: cannot delete {}: {e}",
                    self.backing.display()
                ));
                if let Some(h) = self.held_image.take() {
                    h.keep();
                }
            }
            drop(self.held_image.take());
        }
    }
}
