//! What a redundant layout is bought for: scrub, one device failed, rebuild.
//!
//! The runner ([`crate::runner`]'s redundancy phase) calls these on a layout with
//! `redundancy ≥ 1` after the round's workloads: scrub, then fail the last device (ZFS
//! `zpool offline`; Btrfs: unmount, wipe it, `btrfs device scan --forget`, mount `-o
//! degraded`), the read workloads again, then rebuild onto the wiped device or the spare
//! (`zpool replace`, `btrfs replace start -B`), the tool's percent done polled meanwhile
//! ([`percent_done`]). Every command that names a device goes through
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

/// How far a running scrub or rebuild is, in percent, as its tool's status output says:
/// `zpool status` (`25.06% done` in zfs-fuse's `scrub:` line and OpenZFS's `scan:` block),
/// `btrfs replace status -1` (`12.3% done, 0 write errs…`), `btrfs scrub status`
/// (`Bytes scrubbed:   3.50TiB  (18.59%)`, or without the percent in older btrfs-progs:
/// `Bytes scrubbed` over `Total to scrub`). `None` when the text carries no progress.
pub fn percent_done(text: &str) -> Option<f64> {
    let number_before = |line: &str, at: usize| {
        line[..at]
            .rsplit(|c: char| c.is_whitespace() || c == '(' || c == ',')
            .next()
            .and_then(|n| n.parse::<f64>().ok())
    };
    for line in text.lines() {
        if let Some(at) = line.find("% done") {
            return number_before(line, at);
        }
    }
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(name))
            .map(str::trim)
    };
    let scrubbed = field("Bytes scrubbed:")?;
    if let Some(at) = scrubbed.find("%)") {
        return number_before(scrubbed, at);
    }
    let total = size_of_text(field("Total to scrub:")?)?;
    let done = size_of_text(scrubbed)?;
    (total > 0.0).then(|| 100.0 * done / total)
}

/// `982.05GiB` (btrfs-progs' sizes) in bytes.
fn size_of_text(text: &str) -> Option<f64> {
    let word = text.split_whitespace().next()?;
    let split = word.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = word.split_at(split);
    let shift = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        .iter()
        .position(|u| *u == unit)?;
    Some(n.parse::<f64>().ok()? * (1u64 << (10 * shift)) as f64)
}

/// Poll `zpool status POOL` until no scrub or resilver is in progress; `tick` gets the
/// percent done it prints.
fn wait_zpool(pool: &str, timeout: Duration, tick: &dyn Fn(f64)) -> Result<()> {
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

/// Run `a` (checked like [`run_on`]) to its end, and meanwhile poll `status` once a second,
/// giving `tick` the percent [`percent_done`] reads in it; seconds `a` took. For the Btrfs
/// commands that block until done (`scrub start -B`, `replace start -B`): their own status
/// command reads the kernel's progress counters, a cheap ioctl beside the operation.
fn run_polled(
    a: &[String],
    devices: &[PathBuf],
    at: usize,
    timeout: Duration,
    status: &[String],
    tick: &dyn Fn(f64),
) -> Result<f64> {
    if devices.is_empty() {
        super::argv_guard::check(a, Path::new("/nonexistent"))?;
    } else {
        super::argv_guard::check_devices(a, devices, at)?;
    }
    super::argv_guard::check(status, Path::new("/nonexistent"))?;
    std::thread::scope(|scope| {
        let running = scope.spawn(|| command::run(a, timeout));
        let mut last_poll = Instant::now();
        while !running.is_finished() {
            std::thread::sleep(Duration::from_millis(100));
            if last_poll.elapsed() >= Duration::from_secs(1) {
                last_poll = Instant::now();
                if let Ok(o) = command::run_unchecked(status, Duration::from_secs(30))
                    && let Some(p) = percent_done(&o.stdout)
                {
                    tick(p);
                }
            }
        }
        let out = running
            .join()
            .map_err(|_| Error::Other(format!("{} panicked", command::display(a))))??;
        Ok(out.seconds)
    })
}

/// Scrub the whole array, waiting until it is done; seconds. `tick` gets its percent done
/// as the tool reports it (Btrfs `scrub status`, ZFS `zpool status`).
pub fn scrub(
    builder: Builder,
    mnt: &Path,
    pool: Option<&str>,
    timeout: Duration,
    tick: &dyn Fn(f64),
) -> Result<f64> {
    let t0 = Instant::now();
    match (builder, pool) {
        (Builder::Btrfs, _) => {
            let m = mnt.display().to_string();
            run_polled(
                &argv(&["btrfs", "scrub", "start", "-B", &m]),
                &[],
                0,
                timeout,
                &argv(&["btrfs", "scrub", "status", &m]),
                tick,
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

/// ZFS: rebuild the failed `dev` in its own place, wiped (`zpool replace -f POOL DEV`), or
/// onto the spare `onto` (`zpool replace -f POOL DEV SPARE`), and wait for the resilver;
/// seconds. `tick` gets its percent done.
pub fn zpool_rebuild(
    pool: &str,
    dev: &Path,
    onto: Option<&Path>,
    timeout: Duration,
    tick: &dyn Fn(f64),
) -> Result<f64> {
    let t0 = Instant::now();
    let mut a = argv(&["zpool", "replace", "-f", pool, &dev.display().to_string()]);
    let mut named = vec![dev.to_path_buf()];
    if let Some(s) = onto {
        a.push(s.display().to_string());
        named.push(s.to_path_buf());
    }
    run_on(&a, &named, 4, timeout)?;
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

/// Btrfs: rebuild the missing member `devid` onto `dev` (the wiped failed device or the
/// spare) with `btrfs replace start -B`, polling `btrfs replace status -1` for `tick`;
/// seconds.
pub fn btrfs_rebuild(
    devid: usize,
    dev: &Path,
    mnt: &Path,
    timeout: Duration,
    tick: &dyn Fn(f64),
) -> Result<f64> {
    let d = dev.display().to_string();
    let id = devid.to_string();
    let m = mnt.display().to_string();
    let a = argv(&["btrfs", "replace", "start", "-B", "-f", &id, &d, &m]);
    let status = argv(&["btrfs", "replace", "status", "-1", &m]);
    run_polled(&a, &[dev.to_path_buf()], 6, timeout, &status, tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_read_from_each_tools_status() {
        // zfs-fuse 0.7's `zpool status` during a scrub and a resilver.
        let fuse = "  pool: fsbench_1\n state: ONLINE\n scrub: scrub in progress for 0h0m, \
                    25.06% done, 0h0m to go\nconfig:\n";
        assert_eq!(percent_done(fuse), Some(25.06));
        let resilver = " scrub: resilver in progress for 0h0m, 7.50% done, 0h1m to go";
        assert_eq!(percent_done(resilver), Some(7.5));
        // OpenZFS 2.x's scan block.
        let openzfs = "  scan: scrub in progress since Wed Dec  2 04:00:00 2026\n\t1.2G scanned \
                       at 100M/s, 500M issued at 50M/s, 2G total\n\t0B repaired, 25.00% done, \
                       00:00:10 to go\n";
        assert_eq!(percent_done(openzfs), Some(25.0));
        assert_eq!(
            percent_done("0.0% done, 0 write errs, 0 uncorr. read errs\n"),
            Some(0.0)
        );
        assert_eq!(
            percent_done("Started on  2.Dec 04:00:00, finished on  2.Dec 04:00:03, 0 write errs"),
            None
        );
        // btrfs-progs 6.x while running, and a version without the percent.
        let scrub = "UUID:             x\nStatus:           running\nTotal to scrub:   18.84TiB\n\
                     Bytes scrubbed:   3.50TiB  (18.59%)\nRate:             38.92MiB/s\n";
        assert_eq!(percent_done(scrub), Some(18.59));
        let old = "Total to scrub:   1.00GiB\nBytes scrubbed:   256.00MiB\n";
        assert_eq!(percent_done(old), Some(25.0));
        assert_eq!(percent_done("Status: finished\n"), None);
        assert_eq!(
            size_of_text("982.05GiB"),
            Some(982.05 * (1u64 << 30) as f64)
        );
        assert_eq!(size_of_text("12"), None);
    }
}
