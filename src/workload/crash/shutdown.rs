//! The quick path (`crash-shutdown`, `method = "shutdown"`): no recorder, no replay. On a plain
//! loop image of its own the oracle writes and syncs, then the filesystem is shut down with
//! `FS_IOC_SHUTDOWN` and `FSOP_FLAGS_NOLOGFLUSH` (what `xfs_io -x -c 'shutdown'` does without
//! `-f`: the log is not flushed, nothing more reaches the device), unmounted, mounted again (the
//! log replays) and checked like a crash state, then fsck'd.
//!
//! It tests the filesystem's own log and fsync path: what it had made durable when the power
//! was "cut". It does not model a device's volatile cache or write reordering (the recorded
//! crash states do), so it is a weaker check, named as such in its notes.

use super::{CrashParams, Totals, WorkDir, oracle, replay};
use crate::fs::{Filesystem, SetupSpec};
use crate::{Error, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// Shut the filesystem mounted at `mnt` down, its log unflushed.
pub fn shut_down(mnt: &Path) -> std::io::Result<()> {
    crate::host::sys::shutdown::shut_down_no_log_flush(mnt)
}

/// Workload `id` by the quick path: `p.states` cycles of write + sync, shutdown, remount, check.
pub fn run(
    id: &str,
    fs: &dyn Filesystem,
    setup: &SetupSpec,
    p: &CrashParams,
    scratch: &Path,
    timeout: Duration,
) -> Result<super::WorkloadOutput> {
    use crate::scratch::Target;
    let size = super::IMAGE_SIZE.max(fs.min_device_size());
    let work = WorkDir::create(scratch, id)?;
    let mnt = work.path().join("mnt");
    let target = crate::scratch::image::ImageTarget::acquire(scratch, size, false)?;
    let dev = target
        .block_device()
        .ok_or_else(|| Error::Other("the shutdown image has no loop device".into()))?
        .to_path_buf();
    let (_mkfs, m) = fs.create_and_mount(&dev, setup, &mnt, timeout)?;
    m.release()?;
    let mut t = Totals::default();
    let mut acked = 0u64;
    let mut first_failure: Option<String> = None;
    let started = Instant::now();
    for cycle in 0..p.states {
        if crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        let m = fs.mount(&dev, setup, &mnt, timeout)?;
        let dir = mnt.join(super::DIR).join(format!("cycle-{cycle:03}"));
        let written = std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io("cannot create", &dir, e))
            .and_then(|()| {
                if p.sync {
                    for d in [mnt.join(super::DIR), mnt.clone()] {
                        std::fs::File::open(&d)
                            .and_then(|f| f.sync_all())
                            .map_err(|e| Error::io("cannot fsync", &d, e))?;
                    }
                }
                oracle::run(p.mode, &dir, p.ops, p.sync, &|| 0, timeout)
            });
        let down = written.as_ref().ok().map(|_| shut_down(&mnt));
        let released = m.release();
        let acks = written?;
        match down {
            Some(Err(e)) => {
                return Err(Error::workload(
                    id,
                    format!(
                        "{} refuses FS_IOC_SHUTDOWN on this kernel ({e}); the quick path needs \
                         it (the recorded crash states do not: crash-fsync)",
                        fs.name()
                    ),
                ));
            }
            _ => released?,
        }
        acked += acks.len() as u64;
        let mut v = replay::Verdict {
            acked: acks.len() as u64,
            ..Default::default()
        };
        match fs.mount(&dev, setup, &mnt, timeout) {
            Ok(m) => {
                v.mounted = true;
                v.take(oracle::check(p.mode, &dir, v.acked, timeout));
                m.release()?;
            }
            Err(e) => v.detail = format!("mount after the shutdown failed: {e}"),
        }
        v.fsck_clean = match replay::fsck_argv(fs, &dev) {
            Some(cmd) => {
                let out = crate::host::command::run_unchecked(&cmd, timeout)?;
                if out.status != Some(0) && v.detail.is_empty() {
                    v.detail = format!("`{}` found errors", crate::host::command::display(&cmd));
                }
                out.status == Some(0)
            }
            None => true,
        };
        t.states += 1;
        t.lost += v.checked.lost;
        t.corrupt += v.checked.corrupt;
        t.fsck_errors += u64::from(!v.fsck_clean);
        t.unmountable += u64::from(v.unrecoverable());
        t.lost_states += u64::from(v.lost_data());
        crate::host::stdio::note(&format!(
            "fsbench: {id} on {}: {}/{} crash states, {} lost acknowledged (shutdowns)",
            setup.name, t.states, p.states, t.lost
        ));
        if v.failed() && first_failure.is_none() {
            first_failure = Some(format!(
                "first failing shutdown: cycle {cycle}: {} of {} acknowledged lost, {} corrupt{}",
                v.checked.lost,
                v.acked,
                v.checked.corrupt,
                if v.detail.is_empty() {
                    String::new()
                } else {
                    format!("; {}", v.detail)
                }
            ));
        }
    }
    t.seconds = replay::since(started);
    drop(target);
    drop(work);
    let mut notes = vec![format!(
        "quick path: {} shutdown(s) (FS_IOC_SHUTDOWN, log not flushed) after {} operations each \
         ({}{}), remounted and checked; a weaker check than crash-fsync's states: it tests the \
         filesystem's own log, not a device's volatile cache or write reordering",
        t.states,
        p.ops,
        p.mode.calls(),
        if p.sync {
            String::new()
        } else {
            format!(", {}: negative control", p.mode.unsynced())
        }
    )];
    notes.extend(first_failure);
    Ok(super::output(&t, acked, None, notes))
}
