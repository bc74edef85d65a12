//! Crash consistency (`crash-fsync`, `crash-append`, `crash-rename`): does data an application
//! was told is durable survive a power cut, on this setup?
//!
//! 1. Record: the setup's filesystem is made on a small image of its own, a direct-I/O loop
//!    device over fsbench's FUSE recorder ([`crate::host::recorder`]); recording starts after
//!    mkfs (the base image) and covers mount, the oracle ([`oracle`]) and unmount. Each
//!    acknowledged operation is marked with the log position read when its last durability
//!    call returned.
//! 2. Crash states ([`states`]): at crash points spread over the log, everything before the
//!    last flush plus none, all, or a seeded random subset of the later writes.
//! 3. Check ([`replay`]): each state on a scratch image is mounted (journal replay), every
//!    operation acknowledged before its crash point must read back intact, then the
//!    filesystem's read-only checker runs. Failing states are kept for replay by hand.
//!
//! `crash-pgbench` ([`pg`]) is PostgreSQL itself as the oracle: a cluster made before
//! recording, transactions acknowledged by COMMIT, and crash recovery in each state.
//!
//! The model is the volatile write cache of a disk that honours flushes: a write is never
//! torn below the size the loop device issued it in (sector tearing is not modelled).

pub mod kind;
pub mod oracle;
pub mod pg;
pub mod replay;
pub mod shutdown;
pub mod states;

use super::{Metric, WorkloadOutput};
use crate::fs::{Filesystem, SetupSpec};
use crate::host::recorder::Recorder;
use crate::metrics::registry::{
    ACKED_OPS, CORRUPT_FILES, CRASH_STATES, FSCK_ERRORS, LOG_BYTES, LOST_ACKED_OPS, LOST_STATES,
    SECONDS_PER_STATE, UNMOUNTABLE_STATES,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// The directory the oracle works in, on the recording filesystem.
pub const DIR: &str = "fsbench-crash";
/// Failing states kept per workload and setup (each is a sparse image).
pub const KEEP_AT_MOST: usize = 3;
/// Size of the recording image (XFS needs more: its driver's minimum wins).
pub const IMAGE_SIZE: u64 = 256 << 20;

/// Which durability idiom the oracle uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// create + write + fsync + fsync of the directory, one file per record.
    Fsync,
    /// append + fdatasync to one file.
    Append,
    /// write a temporary file + fsync + rename over the old one + fsync of the directory.
    Rename,
    /// PostgreSQL transactions, each acknowledged by COMMIT ([`pg`]).
    Pgbench,
}

impl Mode {
    /// Every mode, in catalog order.
    pub const ALL: [Mode; 4] = [Mode::Fsync, Mode::Append, Mode::Rename, Mode::Pgbench];

    /// The shipped workload id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Fsync => "crash-fsync",
            Mode::Append => "crash-append",
            Mode::Rename => "crash-rename",
            Mode::Pgbench => "crash-pgbench",
        }
    }

    /// The calls, for `fsbench plan` and notes.
    pub fn calls(self) -> &'static str {
        match self {
            Mode::Fsync => "create + write + fsync + directory fsync",
            Mode::Append => "append + fdatasync",
            Mode::Rename => "write temp + fsync + rename + directory fsync",
            Mode::Pgbench => "PostgreSQL transactions: UPDATE a counter + INSERT a record, COMMIT",
        }
    }

    /// What `sync = false` means, for `fsbench plan` and notes.
    pub fn unsynced(self) -> &'static str {
        match self {
            Mode::Pgbench => "PostgreSQL with fsync=off",
            _ => "durability calls skipped",
        }
    }

    /// The plan-file value of `mode`.
    fn key(self) -> &'static str {
        self.id().trim_start_matches("crash-")
    }

    /// Default (operations, states): a PostgreSQL state costs a server start and stop (a few
    /// seconds), a file oracle's about half a second.
    fn defaults(self) -> (u64, u64) {
        match self {
            Mode::Pgbench => (60, 12),
            _ => (60, 24),
        }
    }

    /// (recording, per state) seconds for the ETA: initdb and two server starts before and
    /// during recording, a start (crash recovery) and a stop per state.
    pub fn cost_seconds(self) -> (f64, f64) {
        match self {
            Mode::Pgbench => (8.0, 2.0),
            _ => (5.0, 0.6),
        }
    }

    /// Where the mountpoints go: PostgreSQL runs as the `postgres` user, who must reach its
    /// data directory, and a scratch directory may be private (a 0700 tempdir); fsbench's
    /// mount root is not.
    fn work_base(self, scratch: &Path) -> std::path::PathBuf {
        match self {
            Mode::Pgbench => crate::fs::mount_root(),
            _ => scratch.to_path_buf(),
        }
    }
}

/// How crash states are made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Record every write and flush under the FUSE recorder, replay chosen subsets.
    #[default]
    Replay,
    /// The quick path: the filesystem's shutdown ioctl, no recorder ([`shutdown`]).
    Shutdown,
}

/// A crash workload's parameters (plan-file keys `mode`, `ops`, `states`, `seed`, `sync`,
/// `method`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashParams {
    /// The durability idiom.
    pub mode: Mode,
    /// Operations the oracle acknowledges.
    pub ops: u64,
    /// Crash states built and checked.
    pub states: u64,
    /// Seed of the random subsets.
    pub seed: u64,
    /// Whether the oracle makes its durability calls (false: the negative control).
    #[serde(default = "yes")]
    pub sync: bool,
    /// Recorded crash states, or the shutdown quick path (`states` is then its cycles).
    #[serde(default)]
    pub method: Method,
}

fn yes() -> bool {
    true
}

impl CrashParams {
    /// The defaults for `mode`: 60 operations, 24 states (PostgreSQL: 12 states).
    pub fn new(mode: Mode) -> CrashParams {
        let (ops, states) = mode.defaults();
        CrashParams {
            mode,
            ops,
            states,
            seed: 0x00c0_ffee,
            sync: true,
            method: Method::Replay,
        }
    }

    /// The shipped quick path, `crash-shutdown`: 5 shutdowns after 60 fsync'd files each.
    pub fn shutdown() -> CrashParams {
        CrashParams {
            states: 5,
            method: Method::Shutdown,
            ..CrashParams::new(Mode::Fsync)
        }
    }

    /// Take this kind's keys out of a `[[workload]]` table.
    pub fn take_from(&mut self, t: &mut toml::Table) -> std::result::Result<(), String> {
        if let Some(v) = t.remove("mode") {
            self.mode = Mode::ALL
                .into_iter()
                .find(|m| v.as_str() == Some(m.key()))
                .ok_or_else(|| {
                    format!("mode = {v}: use \"fsync\", \"append\", \"rename\" or \"pgbench\"")
                })?;
        }
        for (key, slot, min, max) in [
            ("ops", &mut self.ops, 1, 100_000),
            ("states", &mut self.states, 1, 100_000),
        ] {
            if let Some(v) = t.remove(key) {
                *slot = v
                    .as_integer()
                    .filter(|i| (min..=max).contains(i))
                    .ok_or_else(|| {
                        format!("{key} = {v}: give a whole number from {min} to {max}")
                    })? as u64;
            }
        }
        if let Some(v) = t.remove("seed") {
            self.seed = v
                .as_integer()
                .and_then(|i| u64::try_from(i).ok())
                .ok_or_else(|| format!("seed = {v}: give a whole number ≥ 0"))?;
        }
        if let Some(v) = t.remove("method") {
            self.method = match v.as_str() {
                Some("replay") => Method::Replay,
                Some("shutdown") => Method::Shutdown,
                _ => return Err(format!("method = {v}: use \"replay\" or \"shutdown\"")),
            };
        }
        if let Some(v) = t.remove("sync") {
            self.sync = v
                .as_bool()
                .ok_or_else(|| format!("sync = {v}: give true or false"))?;
        }
        if self.mode == Mode::Pgbench && self.method == Method::Shutdown {
            return Err(
                "mode = \"pgbench\" with method = \"shutdown\": the quick path runs the file \
                 oracles only; PostgreSQL's crash states are recorded (method = \"replay\")"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The totals over a run's states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// States checked.
    pub states: u64,
    /// Acknowledged operations lost, summed over states.
    pub lost: u64,
    /// States that lost or tore an acknowledged operation, or would not mount.
    pub lost_states: u64,
    /// Corrupt files, summed over states.
    pub corrupt: u64,
    /// States the checker found errors in.
    pub fsck_errors: u64,
    /// States that would not mount.
    pub unmountable: u64,
    /// Seconds spent checking states.
    pub seconds: f64,
}

/// The workload's directory in the scratch directory (the mountpoints), in the ledger so a
/// killed run's is removed by recovery once its mounts are gone.
pub(super) struct WorkDir {
    path: std::path::PathBuf,
    _held: crate::host::ledger::Held,
}

impl WorkDir {
    pub(super) fn create(base: &Path, id: &str) -> Result<WorkDir> {
        let path = base.join(format!("fsbench-crash-{}-{id}", std::process::id()));
        let held =
            crate::host::ledger::hold(crate::host::ledger::Item::Dir { path: path.clone() })?;
        std::fs::create_dir(&path).map_err(|e| Error::io("cannot create", &path, e))?;
        Ok(WorkDir { path, _held: held })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        // Only its empty mountpoints are left once everything is released; remove_dir, not
        // remove_dir_all, so a mount that would not go is never emptied.
        for sub in ["mnt", "state"] {
            let _ = std::fs::remove_dir(self.path.join(sub));
        }
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// Workload `id`: record `p`'s oracle on `setup`'s filesystem, build and check its crash states.
pub fn run(
    id: &str,
    fs: &dyn Filesystem,
    setup: &SetupSpec,
    p: &CrashParams,
    scratch: &Path,
    timeout: Duration,
) -> Result<WorkloadOutput> {
    let size = IMAGE_SIZE.max(fs.min_device_size());
    let work = WorkDir::create(&p.mode.work_base(scratch), id)?;
    let mnt = work.path().join("mnt");
    let dir = mnt.join(DIR);

    // 1. Record (what the oracle prepares, PostgreSQL's cluster, is part of the base image).
    let rec = Recorder::start(scratch, size, crate::host::recorder::DEFAULT_LOG_LIMIT)?;
    let lo = crate::scratch::fileloop::FileLoop::attach(&rec.file(), true)?;
    let (_mkfs, m) = fs.create_and_mount(lo.device(), setup, &mnt, timeout)?;
    oracle::prepare(p.mode, &dir, timeout)?;
    m.release()?;
    // Only its nonzero blocks: every state is built on a fresh sparse image.
    let base = replay::nonzero_runs(rec.base_extents()?, 4096);
    rec.log().start();
    let m = fs.mount(lo.device(), setup, &mnt, timeout)?;
    let oracle_out = oracle::make_dir(p.mode, &dir, p.sync).and_then(|()| {
        oracle::run(
            p.mode,
            &dir,
            p.ops,
            p.sync,
            &|| rec.log().position(),
            timeout,
        )
    });
    let released = m.release();
    let log = rec.log().stop();
    replay::forget(fs, lo.device(), timeout);
    drop(lo);
    drop(rec);
    let acks = oracle_out?;
    released?;
    if log.overflowed {
        return Err(Error::workload(
            id,
            format!(
                "the write log passed its bound of {}; use fewer ops",
                crate::units::format_size(crate::host::recorder::DEFAULT_LOG_LIMIT)
            ),
        ));
    }
    let marks: Vec<usize> = acks.iter().map(|a| a.mark).collect();

    // 2–3. Crash states.
    let mut check_setup = setup.clone();
    for opt in replay::clone_mount_options(fs) {
        // Every state is a clone of the recording (XFS: with its UUID, `nouuid`).
        if !check_setup.mount.iter().any(|o| o == opt) {
            check_setup.mount.push(opt.to_string());
        }
    }
    let keep_dir = scratch.join(format!("fsbench-crash-kept-{}-{}", setup.name, id));
    let _ = std::fs::remove_dir_all(&keep_dir);
    let replay = replay::Replay {
        fs,
        setup: check_setup,
        scratch,
        size,
        base: &base,
        entries: &log.entries,
        mode: p.mode,
        marks: &marks,
        mountpoint: work.path().join("state"),
        timeout,
        keep_dir: Some(keep_dir.clone()),
    };
    let planned = states::plan(log.entries.len(), p.states as usize, p.seed);
    let mut t = Totals::default();
    let mut kept = Vec::new();
    let mut worst: Option<(states::CrashState, replay::Verdict)> = None;
    let started = Instant::now();
    let mut last_note = Instant::now();
    for s in &planned {
        if crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        let v = replay.check(s, kept.len())?;
        t.states += 1;
        t.lost += v.checked.lost;
        t.corrupt += v.checked.corrupt;
        t.fsck_errors += u64::from(!v.fsck_clean);
        t.unmountable += u64::from(v.unrecoverable());
        t.lost_states += u64::from(v.lost_data());
        if let Some(k) = &v.kept {
            kept.push(k.clone());
        }
        if v.failed() && worst.is_none() {
            worst = Some((*s, v.clone()));
        }
        if last_note.elapsed() >= Duration::from_secs(2) || t.states == planned.len() as u64 {
            last_note = Instant::now();
            let per = replay::since(started) / t.states as f64;
            crate::host::stdio::note(&format!(
                "fsbench: {id} on {}: {}/{} crash states, {} lost acknowledged, ETA {:.0} s",
                setup.name,
                t.states,
                planned.len(),
                t.lost,
                per * (planned.len() as u64 - t.states) as f64
            ));
        }
    }
    t.seconds = replay::since(started);
    if kept.is_empty() {
        let _ = std::fs::remove_dir_all(&keep_dir);
    }

    let first_failing = worst.map(|(s, v)| (s, v, (!kept.is_empty()).then_some(keep_dir)));
    let notes = run_notes(p, acks.len(), &log, &t, first_failing);
    Ok(output(&t, acks.len() as u64, Some(log.bytes), notes))
}

/// What a crash run's notes say: what was recorded and checked, a run without flushes, and
/// the first failing state (with where its image was kept, if it was).
fn run_notes(
    p: &CrashParams,
    acks: usize,
    log: &crate::host::recorder::Recorded,
    t: &Totals,
    first_failing: Option<(
        states::CrashState,
        replay::Verdict,
        Option<std::path::PathBuf>,
    )>,
) -> Vec<String> {
    let mut notes = vec![format!(
        "{} operations ({}{}), a {} write log of {} writes and {} flushes; {} crash states \
         (none/all/random subsets of the unflushed writes, seed {})",
        acks,
        p.mode.calls(),
        if p.sync {
            String::new()
        } else {
            format!(", {}: negative control", p.mode.unsynced())
        },
        crate::units::format_size(log.bytes),
        log.writes(),
        log.flushes(),
        t.states,
        p.seed
    )];
    if log.flushes() == 0 {
        notes.push(
            "no flush reached the device during the run: nothing the filesystem acknowledged was \
             durable (barriers off?)"
                .into(),
        );
    }
    if let Some((s, v, kept_in)) = &first_failing {
        notes.push(format!(
            "first failing state: #{} at log position {}/{} ({:?}): {} of {} acknowledged lost, \
             {} corrupt{}{}",
            s.index,
            s.point,
            log.entries.len(),
            s.subset,
            v.checked.lost,
            v.acked,
            v.checked.corrupt,
            if v.detail.is_empty() {
                String::new()
            } else {
                format!("; {}", v.detail)
            },
            match kept_in {
                None => String::new(),
                Some(d) => format!("; kept in {}", d.display()),
            }
        ));
    }
    notes
}

/// The metrics of a run's totals (`log_bytes` when a log was recorded).
pub(super) fn output(
    t: &Totals,
    acked: u64,
    log_bytes: Option<u64>,
    notes: Vec<String>,
) -> WorkloadOutput {
    let mut metrics = vec![
        Metric::new(CRASH_STATES, "count", t.states as f64),
        Metric::new(LOST_ACKED_OPS, "count", t.lost as f64),
        Metric::new(LOST_STATES, "count", t.lost_states as f64),
        Metric::new(CORRUPT_FILES, "count", t.corrupt as f64),
        Metric::new(FSCK_ERRORS, "count", t.fsck_errors as f64),
        Metric::new(UNMOUNTABLE_STATES, "count", t.unmountable as f64),
        Metric::new(
            SECONDS_PER_STATE,
            "s",
            if t.states > 0 {
                t.seconds / t.states as f64
            } else {
                0.0
            },
        ),
        Metric::new(ACKED_OPS, "count", acked as f64),
    ];
    metrics.extend(log_bytes.map(|b| Metric::new(LOG_BYTES, "bytes", b as f64)));
    WorkloadOutput {
        metrics,
        notes,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_take_their_keys_and_refuse_bad_values() {
        let mut p = CrashParams::new(Mode::Fsync);
        let mut t: toml::Table = toml::from_str(
            "mode = \"rename\"\nops = 5\nstates = 9\nseed = 3\nsync = false\nx = 1\n\
                 method = \"shutdown\"",
        )
        .unwrap();
        p.take_from(&mut t).unwrap();
        assert_eq!(
            p,
            CrashParams {
                mode: Mode::Rename,
                ops: 5,
                states: 9,
                seed: 3,
                sync: false,
                method: Method::Shutdown,
            }
        );
        assert_eq!(t.len(), 1, "unknown keys are left for the common reader");
        for bad in [
            "ops = 0",
            "states = -1",
            "mode = \"x\"",
            "sync = 1",
            "method = \"dm\"",
        ] {
            let mut t: toml::Table = toml::from_str(bad).unwrap();
            assert!(p.take_from(&mut t).is_err(), "{bad}");
        }
    }
}
