//! Logs: appenders committing with `fdatasync`, rotation, and readers following the tails.
//!
//! Each of `appenders` threads appends text records (60–600 bytes, log-uniform, one `write`
//! each) to its own `app<N>.log` and commits with `fdatasync` every `commit_records` records,
//! as a WAL's group commit or a broker's flush does (each commit's latency is one histogram
//! sample). A log that reaches `rotate_bytes` is moved aside and a new file opened (as an
//! application does on logrotate's signal); one rotator thread, as logrotate itself, then
//! shifts the older ones up (the one beyond `keep` deleted), names the moved one `.1` and
//! compresses it with `gzip` when `gzip` is installed (otherwise it stays uncompressed; a note
//! says so). Only that one thread touches the numbered names: a rename chain running while
//! gzip replaced `.1` by `.1.gz` lost the file under it. `readers` threads follow every
//! current log like `tail -F` (reopening after a rotation) and count the records they read.
//! The step runs for `seconds`.

use super::{Gen, RemoveOnDrop, ms};
use crate::Error;
use crate::host::command::OnCancel;
use crate::measure::LatencyHistogram;
use crate::metrics::registry as m;
use crate::workload::{Metric, WorkloadOutput};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A log workload's shape (plan-file keys of `kind = "logs"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogParams {
    /// Appender threads, one log file each.
    pub appenders: u32,
    /// Tail-following reader threads.
    pub readers: u32,
    /// Records between two fdatasyncs of an appender.
    pub commit_records: u32,
    /// Size at which a log is rotated, bytes.
    pub rotate_bytes: u64,
    /// Rotated logs kept (older ones deleted).
    pub keep: u32,
    /// Duration of the step, seconds.
    pub seconds: u32,
}

impl Default for LogParams {
    /// 4 appenders committing every 32 records, 2 readers, rotation at 512 KiB keeping 3,
    /// 10 s. Rotation is small so that every setup rotates within the step: a loaded VM's
    /// slowest setup appended about 1 MiB per appender in 10 s.
    fn default() -> Self {
        LogParams {
            appenders: 4,
            readers: 2,
            commit_records: 32,
            rotate_bytes: 512 << 10,
            keep: 3,
            seconds: 10,
        }
    }
}

impl LogParams {
    /// The keys of a `[[workload]]` table with their ranges.
    const KEYS: [(&'static str, i64, i64); 6] = [
        ("appenders", 1, 256),
        ("readers", 0, 256),
        ("commit_records", 1, 1_000_000),
        ("rotate_bytes", 4096, 1 << 40),
        ("keep", 0, 1000),
        ("seconds", 1, 86_400),
    ];

    /// Take its keys out of a plan file's table (what is missing keeps its value).
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        for (key, lo, hi) in Self::KEYS {
            let Some(v) = t.remove(key) else { continue };
            // A size may be written as one ("4M").
            let v = match (&v, key) {
                (toml::Value::String(_), "rotate_bytes") => {
                    toml::Value::Integer(crate::units::toml_size(&v)? as i64)
                }
                _ => v,
            };
            let n = v
                .as_integer()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| {
                    format!("{key} must be a whole number from {lo} to {hi}, not {v}")
                })?;
            match key {
                "appenders" => self.appenders = n as u32,
                "readers" => self.readers = n as u32,
                "commit_records" => self.commit_records = n as u32,
                "rotate_bytes" => self.rotate_bytes = n as u64,
                "keep" => self.keep = n as u32,
                _ => self.seconds = n as u32,
            }
        }
        Ok(())
    }
}

fn log_path(dir: &Path, who: u32) -> PathBuf {
    dir.join(format!("app{who}.log"))
}

/// What one appender did.
struct Appended {
    hist: LatencyHistogram,
    records: u64,
    bytes: u64,
    rotations: u64,
}

/// One appender until `stop`: records, a commit every `commit_records`, rotation.
fn append(
    dir: &Path,
    who: u32,
    p: &LogParams,
    seed: u64,
    stop: &AtomicBool,
    rotated: &mpsc::Sender<(u32, PathBuf)>,
) -> crate::Result<Appended> {
    let mut g = Gen::new(seed ^ u64::from(who).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let path = log_path(dir, who);
    let open = |p: &Path| {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| Error::io("cannot open the log", p, e))
    };
    let mut f = open(&path)?;
    let mut done = Appended {
        hist: LatencyHistogram::new(),
        records: 0,
        bytes: 0,
        rotations: 0,
    };
    let (mut size, mut pending) = (0u64, 0u32);
    let mut rec = Vec::with_capacity(1024);
    while !stop.load(Ordering::Relaxed) {
        rec.clear();
        let len = g.log_uniform(60, 600) as usize;
        write!(rec, "{:>10} app{who} ", done.records).expect("writing to a Vec");
        g.text(len.saturating_sub(rec.len() + 1), &mut rec);
        // One line per record: the text's own newlines become spaces.
        for b in rec.iter_mut() {
            if *b == b'\n' {
                *b = b' ';
            }
        }
        rec.push(b'\n');
        f.write_all(&rec)
            .map_err(|e| Error::io("cannot append to", &path, e))?;
        done.records += 1;
        done.bytes += rec.len() as u64;
        size += rec.len() as u64;
        pending += 1;
        if pending >= p.commit_records {
            let t = Instant::now();
            f.sync_data()
                .map_err(|e| Error::io("cannot fdatasync", &path, e))?;
            done.hist.record(t.elapsed().as_nanos() as u64);
            pending = 0;
        }
        if size >= p.rotate_bytes {
            f.sync_data()
                .map_err(|e| Error::io("cannot fdatasync", &path, e))?;
            // A name of its own per rotation: the rotator may not have numbered the last one.
            let aside = dir.join(format!("app{who}.log.moved-{}", done.rotations));
            std::fs::rename(&path, &aside).map_err(|e| Error::io("cannot rotate", &path, e))?;
            let _ = rotated.send((who, aside));
            f = open(&path)?;
            size = 0;
            pending = 0;
            done.rotations += 1;
        }
    }
    f.sync_data()
        .map_err(|e| Error::io("cannot fdatasync", &path, e))?;
    Ok(done)
}

/// logrotate's rename chain: `.N` (and `.N.gz`) shifted to `.N+1`, the one beyond `keep`
/// deleted, the moved-aside log `aside` renamed to `.1`; returns `.1` (None when `keep` is 0
/// and the log was deleted).
fn rotate(dir: &Path, who: u32, keep: u32, aside: &Path) -> crate::Result<Option<PathBuf>> {
    let name =
        |n: u32, gz: bool| dir.join(format!("app{who}.log.{n}{}", if gz { ".gz" } else { "" }));
    for gz in [false, true] {
        let _ = std::fs::remove_file(name(keep.max(1), gz));
        for n in (1..keep.max(1)).rev() {
            let from = name(n, gz);
            if from.exists() {
                std::fs::rename(&from, name(n + 1, gz))
                    .map_err(|e| Error::io("cannot rotate", &from, e))?;
            }
        }
    }
    if keep == 0 {
        std::fs::remove_file(aside).map_err(|e| Error::io("cannot delete", aside, e))?;
        return Ok(None);
    }
    let first = name(1, false);
    std::fs::rename(aside, &first).map_err(|e| Error::io("cannot rotate", aside, e))?;
    Ok(Some(first))
}

/// A reader following every appender's current log until `stop`; returns the records read.
fn follow(dir: &Path, appenders: u32, stop: &AtomicBool) -> crate::Result<u64> {
    let mut open: Vec<Option<(File, u64)>> = (0..appenders).map(|_| None).collect();
    let mut records = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    while !stop.load(Ordering::Relaxed) {
        let mut got = false;
        for (who, slot) in open.iter_mut().enumerate() {
            let path = log_path(dir, who as u32);
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if slot.as_ref().is_none_or(|(_, ino)| *ino != meta.ino()) {
                // Rotated (or first seen): follow the new file from its start, as tail -F does.
                match File::open(&path) {
                    Ok(f) => *slot = Some((f, meta.ino())),
                    Err(_) => continue,
                }
            }
            let (f, _) = slot.as_mut().expect("just opened");
            loop {
                let n = f
                    .read(&mut buf)
                    .map_err(|e| Error::io("cannot read", &path, e))?;
                if n == 0 {
                    break;
                }
                // The file keeps its position: the next pass continues where this one stopped.
                got = true;
                records += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
            }
        }
        if !got {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    Ok(records)
}

/// logrotate's part: number each moved-aside log it is sent and gzip it; counts the ones
/// compressed. The only thread that renames numbered logs, so no rename races a gzip.
fn rotator(
    dir: &Path,
    keep: u32,
    rx: mpsc::Receiver<(u32, PathBuf)>,
    gzip: bool,
    count: &AtomicU64,
) -> crate::Result<()> {
    for (who, aside) in rx {
        let Some(first) = rotate(dir, who, keep, &aside)? else {
            continue;
        };
        let mut cmd = std::process::Command::new("gzip");
        cmd.args(["-1", "-f", "-q"]).arg(&first);
        if gzip
            && crate::host::command::run_child(
                &mut cmd,
                "gzip",
                Duration::from_secs(600),
                OnCancel::Wait,
            )
            .is_ok_and(|o| o.status == Some(0))
        {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// The whole workload in `dir/logs`, which is removed afterwards.
pub fn run(dir: &Path, p: &LogParams, id: &str, seed: u64) -> crate::Result<WorkloadOutput> {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let _cleanup = RemoveOnDrop(logs.clone());
    let gzip = crate::host::command::available("gzip");
    let stop = AtomicBool::new(false);
    let compressed = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let (appended, read, rotated) = std::thread::scope(|s| {
        let (stop, logs, compressed) = (&stop, &logs, &compressed);
        let keep = p.keep;
        let rotator = s.spawn(move || rotator(logs, keep, rx, gzip, compressed));
        let writers: Vec<_> = (0..p.appenders)
            .map(|who| {
                let tx = tx.clone();
                s.spawn(move || append(logs, who, p, seed, stop, &tx))
            })
            .collect();
        drop(tx);
        let readers: Vec<_> = (0..p.readers)
            .map(|_| s.spawn(move || follow(logs, p.appenders, stop)))
            .collect();
        let until = start + Duration::from_secs(u64::from(p.seconds));
        while Instant::now() < until && !crate::cancel::requested() {
            std::thread::sleep(Duration::from_millis(20).min(until - Instant::now().min(until)));
            if writers.iter().any(|w| w.is_finished()) {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let panicked = || Error::workload(id, "a log thread panicked");
        let appended: Vec<crate::Result<Appended>> = writers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
            .collect();
        let read: Vec<crate::Result<u64>> = readers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
            .collect();
        let rotated = rotator.join().unwrap_or_else(|_| Err(panicked()));
        (appended, read, rotated)
    });
    let elapsed = start.elapsed().as_secs_f64();
    crate::cancel::check()?;
    let mut hist = LatencyHistogram::new();
    let (mut records, mut bytes, mut rotations) = (0u64, 0u64, 0u64);
    for a in appended {
        let a = a?;
        hist.merge(&a.hist);
        records += a.records;
        bytes += a.bytes;
        rotations += a.rotations;
    }
    rotated?;
    let mut tail = 0u64;
    for r in read {
        tail += r?;
    }
    let mut out = WorkloadOutput::default();
    let mut push = |id, unit: &str, v: f64| out.metrics.push(Metric::new(id, unit, v));
    push(m::RECORDS_PER_S, "records/s", records as f64 / elapsed);
    push(m::LAT_P99_MS, "ms", ms(hist.quantile(0.99)));
    push(m::LAT_MEAN_MS, "ms", hist.mean() / 1e6);
    push(m::LAT_P50_MS, "ms", ms(hist.quantile(0.5)));
    if p.readers > 0 {
        push(m::TAIL_RECORDS_PER_S, "records/s", tail as f64 / elapsed);
    }
    push(m::ROTATIONS, "count", rotations as f64);
    push(m::FSYNCS, "count", hist.count() as f64);
    push(m::SECONDS, "s", elapsed);
    push(m::BYTES, "bytes", bytes as f64);
    if rotations > 0 && !gzip {
        out.notes.push(format!(
            "{id}: gzip is not installed: rotated logs were kept uncompressed"
        ));
    }
    out.notes.push(format!(
        "{records} records ({:.1} MiB) by {} appenders, {} commits, {rotations} rotations ({} compressed), {tail} records read by {} followers",
        bytes as f64 / (1u64 << 20) as f64,
        p.appenders,
        hist.count(),
        compressed.load(Ordering::Relaxed),
        p.readers
    ));
    out.histograms.push(("commit".into(), hist));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appenders_rotate_and_readers_follow() {
        let d = tempfile::tempdir().unwrap();
        let p = LogParams {
            appenders: 2,
            readers: 1,
            commit_records: 16,
            rotate_bytes: 64 << 10,
            keep: 2,
            seconds: 1,
        };
        let out = run(d.path(), &p, "logs", 3).unwrap();
        let get = |id| out.metrics.iter().find(|x| x.metric == id).unwrap().value;
        assert!(get(m::RECORDS_PER_S) > 0.0);
        assert!(get(m::ROTATIONS) >= 1.0, "{:?}", out.notes);
        assert!(get(m::TAIL_RECORDS_PER_S) > 0.0);
        assert!(!d.path().join("logs").exists());
    }

    /// Many rotations while gzip runs: the rename chain once lost `.1` to gzip's own rename.
    #[test]
    fn fast_rotation_with_gzip_loses_no_file() {
        let d = tempfile::tempdir().unwrap();
        let p = LogParams {
            appenders: 4,
            readers: 0,
            commit_records: 8,
            rotate_bytes: 4096,
            keep: 2,
            seconds: 1,
        };
        let out = run(d.path(), &p, "logs", 5).unwrap();
        let get = |id| out.metrics.iter().find(|x| x.metric == id).unwrap().value;
        assert!(get(m::ROTATIONS) >= 20.0, "{:?}", out.notes);
    }

    #[test]
    fn rotation_keeps_only_keep_files() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..5 {
            let aside = d.path().join(format!("moved-{i}"));
            std::fs::write(&aside, b"x\n").unwrap();
            rotate(d.path(), 0, 2, &aside).unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["app0.log.1", "app0.log.2"]);
    }
}
