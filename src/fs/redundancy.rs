//! What a redundant layout is bought for: scrub, one device failed, rebuild.
//!
//! The runner ([`crate::runner`]'s redundancy phase) calls these on a layout with
//! `redundancy ≥ 1` after the round's workloads: scrub, then fail the last device (ZFS
//! `zpool offline`; Btrfs: unmount, wipe it, `btrfs device scan --forget`, mount `-o
//! degraded`), the read workloads again, then rebuild onto the wiped device (`zpool replace`,
//! `btrfs replace start -B`). Every command that names a device goes through
//! [`super::argv_guard::check_devices`] with exactly the target's devices it names.
//!
//! No ledger entry of its own is needed: a degraded pool is still the pool the ledger
//! destroys, a degraded Btrfs mount is a mount entry, and the wiped member is a target device.

use super::layout::Builder;
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes in use on the filesystem at `mnt` (statvfs: blocks minus free blocks).
pub fn used_bytes(mnt: &Path) -> Result<u64> {
    let s = rustix::fs::statvfs(mnt).map_err(|e| Error::io("cannot statvfs", mnt, e.into()))?;
    Ok(s.f_blocks.saturating_sub(s.f_bfree) * s.f_frsize)
}

/// Run a command whose only device words are `devices`, starting at word `at`.
fn run_on(a: &[String], devices: &[PathBuf], at: usize, timeout: Duration) -> Result<f64> {
    if devices.is_empty() {
        super::argv_guard::check(a, Path::new("/nonexistent"))?;
    } else {
        super::argv_guard::check_devices(a, devices, at)?;
    }
    Ok(command::run(a, timeout)?.seconds)
}

/// Poll `zpool status POOL` until no scrub or resilver is in progress; `tick` gets each
/// progress line zfs prints (`… scanned out of …`).
fn wait_zpool(pool: &str, timeout: Duration, tick: &dyn Fn(&str)) -> Result<()> {
    let t0 = Instant::now();
    loop {
        crate::cancel::check()?;
        let st = command::run(&argv(&["zpool", "status", pool]), Duration::from_secs(30))?;
        let text = st.stdout;
        if !text.contains("in progress") {
            return Ok(());
        }
        if let Some(l) = text
            .lines()
            .find(|l| l.contains("scanned") || l.contains("resilvered"))
        {
            tick(l.trim());
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

/// Scrub the whole array, waiting until it is done; seconds.
pub fn scrub(
    builder: Builder,
    mnt: &Path,
    pool: Option<&str>,
    timeout: Duration,
    tick: &dyn Fn(&str),
) -> Result<f64> {
    let t0 = Instant::now();
    match (builder, pool) {
        (Builder::Btrfs, _) => {
            let m = mnt.display().to_string();
            run_on(
                &argv(&["btrfs", "scrub", "start", "-B", &m]),
                &[],
                0,
                timeout,
            )?;
        }
        (Builder::Zpool(_), Some(p)) => {
            command::run(&argv(&["zpool", "scrub", p]), timeout)?;
            wait_zpool(p, timeout, tick)?;
        }
        _ => return Err(Error::Other("scrub: no array to scrub".into())),
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// ZFS: take `dev` offline (the pool runs degraded).
pub fn zpool_offline(pool: &str, dev: &Path, timeout: Duration) -> Result<()> {
    let d = dev.display().to_string();
    let a = argv(&["zpool", "offline", pool, &d]);
    run_on(&a, &[dev.to_path_buf()], 3, timeout).map(|_| ())
}

/// Zero the first and last MiB of a target device (its labels and superblock copies there),
/// so the rebuild writes onto a blank device. Btrfs's further superblock copies (64 MiB)
/// are what `wipefs -a` clears, run too where the device is a Btrfs member.
pub fn wipe(dev: &Path, size: u64, timeout: Duration) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .map_err(|e| Error::io("cannot open for wiping", dev, e))?;
    let zero = vec![0u8; 1 << 20];
    f.write_all_at(&zero, 0)
        .and_then(|()| f.write_all_at(&zero, size.saturating_sub(1 << 20)))
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io("cannot wipe", dev, e))?;
    let d = dev.display().to_string();
    run_on(
        &argv(&["wipefs", "-a", "-q", &d]),
        &[dev.to_path_buf()],
        3,
        timeout,
    )
    .map(|_| ())
}

/// ZFS: rebuild onto the wiped `dev` in its own place (`zpool replace -f POOL DEV`) and wait
/// for the resilver; seconds.
pub fn zpool_rebuild(
    pool: &str,
    dev: &Path,
    timeout: Duration,
    tick: &dyn Fn(&str),
) -> Result<f64> {
    let t0 = Instant::now();
    let d = dev.display().to_string();
    let a = argv(&["zpool", "replace", "-f", pool, &d]);
    run_on(&a, &[dev.to_path_buf()], 4, timeout)?;
    wait_zpool(pool, timeout, tick)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Btrfs: make the kernel forget the (wiped, unmounted) member `dev`, so the next mount
/// must be `-o degraded`.
pub fn btrfs_forget(dev: &Path, timeout: Duration) -> Result<()> {
    let d = dev.display().to_string();
    let a = argv(&["btrfs", "device", "scan", "--forget", &d]);
    // A wiped device is no longer registered: "not found" is the state wanted.
    super::argv_guard::check_devices(&a, &[dev.to_path_buf()], 4)?;
    let _ = command::run_unchecked(&a, timeout)?;
    Ok(())
}

/// Btrfs: rebuild the missing member `devid` onto `dev` (`btrfs replace start -B`); seconds.
pub fn btrfs_rebuild(devid: usize, dev: &Path, mnt: &Path, timeout: Duration) -> Result<f64> {
    let d = dev.display().to_string();
    let id = devid.to_string();
    let m = mnt.display().to_string();
    let a = argv(&["btrfs", "replace", "start", "-B", "-f", &id, &d, &m]);
    run_on(&a, &[dev.to_path_buf()], 6, timeout)
}
