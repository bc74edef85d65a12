//! An image served as a plain file through QEMU's own block layer: `qemu-storage-daemon`
//! with a FUSE export, the way a guest's disk goes through QEMU's qcow2/raw drivers.
//!
//! The FUSE mount is recorded in the ledger before the daemon starts and the daemon itself
//! is a ledger process ([`crate::host::daemon::Daemon`]), so a killed fsbench's daemon is
//! stopped and its mount removed by the next run or `fsbench doctor --cleanup` (recovery
//! releases in reverse order: the daemon first, whose SIGTERM unexports; then the mount, if a
//! SIGKILLed daemon left it). Dropping an [`Export`] does the same in this process.

use super::Format;
use crate::host::daemon::Daemon;
use crate::host::ledger::{self, Held, Item};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the daemon gets to show its FUSE mount.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How mountinfo shows the source of a FUSE export's mount.
const FUSE_SOURCE: &str = "/dev/fuse";

/// A running FUSE export of one image.
pub struct Export {
    daemon: Option<Daemon>,
    mount: Option<Held>,
    /// The exported file (the mountpoint), readable and writable like a disk.
    pub path: PathBuf,
}

impl Export {
    /// Serve `image` (of `format`) at `mountpoint` (created here as an empty file). `direct`
    /// opens the image with O_DIRECT (`cache.direct=on`, libvirt's `cache=none`), so the host
    /// page cache of the filesystem under test is not in the way, as for a real VM.
    pub fn start(image: &Path, format: Format, mountpoint: &Path, direct: bool) -> Result<Export> {
        std::fs::File::create(mountpoint)
            .map_err(|e| Error::io("cannot create the export's mountpoint", mountpoint, e))?;
        let mount = ledger::hold(Item::Mount {
            target: mountpoint.to_path_buf(),
            source: FUSE_SOURCE.into(),
        })?;
        let mut export = Export {
            daemon: None,
            mount: Some(mount),
            path: mountpoint.to_path_buf(),
        };
        let argv = argv(image, format, mountpoint, direct);
        // The daemon's own words when it exits at start-up (bad option, no FUSE).
        let log = std::env::temp_dir().join(format!("fsbench-qsd-{}.log", std::process::id()));
        let log_file = std::fs::File::create(&log)
            .map_err(|e| Error::io("cannot create the daemon's log", &log, e))?;
        export.daemon = Some(Daemon::spawn_with_stderr(&argv, log_file.into())?);
        let t0 = Instant::now();
        let result = loop {
            if crate::host::mountinfo::is_mounted(mountpoint) {
                break Ok(());
            }
            let alive = export.daemon.as_mut().is_some_and(Daemon::alive);
            if !alive || t0.elapsed() > START_TIMEOUT {
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                break Err(Error::tool(
                    crate::host::command::display(&argv),
                    format!(
                        "the FUSE export did not appear at {} ({}){}",
                        mountpoint.display(),
                        if alive {
                            "timed out"
                        } else {
                            "the daemon exited"
                        },
                        if said.trim().is_empty() {
                            String::new()
                        } else {
                            format!(": {}", said.trim())
                        }
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&log);
        result.map(|()| export)
    }

    /// Stop the daemon (it unexports on SIGTERM), unmount what a dead daemon left, and remove
    /// the mountpoint file. What cannot be released stays in the ledger.
    pub fn stop(&mut self) -> Result<()> {
        let mut first: Option<Error> = None;
        if let Some(mut d) = self.daemon.take()
            && let Err(e) = d.stop()
        {
            first = Some(e);
        }
        if let Some(held) = self.mount.take() {
            let unmounted = if crate::host::mountinfo::is_mounted(&self.path) {
                crate::host::mountinfo::unmount(&self.path)
            } else {
                Ok(())
            };
            match unmounted {
                Ok(()) => drop(held),
                Err(e) => {
                    held.keep();
                    first.get_or_insert(e);
                }
            }
        }
        if first.is_none() {
            let _ = std::fs::remove_file(&self.path);
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("fsbench: warning: {e}");
        }
    }
}

/// The daemon's command line: a file node, the format's node over it, a writable FUSE
/// export of that node.
pub fn argv(image: &Path, format: Format, mountpoint: &Path, direct: bool) -> Vec<String> {
    let direct = if direct { "on" } else { "off" };
    vec![
        "qemu-storage-daemon".into(),
        "--blockdev".into(),
        format!(
            "driver=file,node-name=file0,filename={},cache.direct={direct}",
            qemu_escape(image)
        ),
        "--blockdev".into(),
        format!("driver={},node-name=disk0,file=file0", format.driver()),
        "--export".into(),
        format!(
            "type=fuse,id=exp0,node-name=disk0,mountpoint={},writable=on",
            qemu_escape(mountpoint)
        ),
    ]
}

/// QEMU's option syntax doubles a comma inside a value.
fn qemu_escape(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_names_both_nodes_and_escapes_commas() {
        let a = argv(
            Path::new("/m/a,b.qcow2"),
            Format::Qcow2,
            Path::new("/m/disk"),
            true,
        );
        assert_eq!(a[0], "qemu-storage-daemon");
        assert_eq!(
            a[2],
            "driver=file,node-name=file0,filename=/m/a,,b.qcow2,cache.direct=on"
        );
        assert_eq!(a[4], "driver=qcow2,node-name=disk0,file=file0");
        assert!(a[6].contains("mountpoint=/m/disk,writable=on"), "{}", a[6]);
    }
}
