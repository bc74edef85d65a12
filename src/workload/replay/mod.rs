//! Your own workload: a trace `fsbench record` made of an application's calls on its files,
//! replayed on every setup (docs/replay.md).
//!
//! - [`trace`]: the file format, its streaming reader (every problem names its line and byte
//!   offset) and writer;
//! - [`strace`]: strace's output turned into trace events;
//! - [`bpftrace`], [`fdtable`], [`ebpf`]: the eBPF capture (the generated bpftrace script and
//!   its output's parser; the descriptor tables that give its numbers their paths, handing
//!   strace-shaped calls to the same parser; running bpftrace and the command);
//! - [`record`]: `fsbench record`'s work (run the command under a capture, scan the directory
//!   before and after, write the trace);
//! - [`proctree`]: `--pid`'s process and the processes it had started, all recorded;
//! - [`scan`]: a directory's state as entries, `--anonymize`'s tokens, the end-state check;
//! - [`data`]: what replay writes (the recreated files, the writes), of a stated
//!   compressibility;
//! - [`exec`]: replay (recreate the starting tree, issue the calls, time them by class);
//! - [`order`]: ARTC's ordering rules and the per-resource index that applies them;
//! - [`concurrent`]: a trace of several threads replayed on a thread each, in that order;
//! - [`kind`]: the `replay` kind's registry entry, and `--replay`'s workloads;
//! - [`speed`]: `--replay-speed`, the kind's flag.

pub mod bpftrace;
pub mod compressibility;
pub mod concurrent;
pub mod data;
pub mod ebpf;
pub mod exec;
pub mod fdtable;
pub mod kind;
pub mod native;
pub mod order;
pub mod proctree;
pub mod record;
pub mod scan;
pub mod speed;
pub mod strace;
pub mod timesort;
pub mod trace;
pub mod window;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Parameters of a `replay` workload (plan-file keys of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayParams {
    /// `trace`: the trace file.
    pub trace: PathBuf,
    /// `name`: what reports call the workload (default: the trace's own name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `speed`: absent, calls go as fast as possible (the comparison's default: what the
    /// filesystem allows); given, `as-recorded` timing: each call waits until its recorded
    /// time divided by the speed (think times kept; 2 = twice as fast as recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// `compress`: percentage of each 4 KiB block of the recreated files and the replayed
    /// writes that compresses (absent or 0: incompressible, the default; the io kind's key of
    /// the same name and meaning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress: Option<u8>,
}

/// `--replay-speed` / `--replay-timing`: how every replay of the run is paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// `as-fast-as-possible`: what the filesystem allows (the comparison's default).
    AsFastAsPossible,
    /// `as-recorded` (speed 1) or a number: think times kept, divided by the speed.
    AsRecorded(f64),
}

impl std::str::FromStr for Timing {
    type Err = String;
    fn from_str(s: &str) -> Result<Timing, String> {
        match s {
            "as-fast-as-possible" => Ok(Timing::AsFastAsPossible),
            "as-recorded" => Ok(Timing::AsRecorded(1.0)),
            _ => s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .map(Timing::AsRecorded)
                .ok_or_else(|| {
                    format!(
                        "{s:?}: give a positive speed (1 = as recorded, 2 = twice as fast), \
                         as-recorded or as-fast-as-possible"
                    )
                }),
        }
    }
}

impl Timing {
    /// The speed a replay's parameters hold (`None`: as fast as possible).
    pub fn speed(self) -> Option<f64> {
        match self {
            Timing::AsFastAsPossible => None,
            Timing::AsRecorded(x) => Some(x),
        }
    }
}

impl ReplayParams {
    /// The data its replay writes, from the run's `seed`.
    pub fn fill(&self, seed: u64) -> data::Fill {
        data::Fill {
            seed,
            compress: self.compress.unwrap_or(0),
        }
    }

    /// Take this workload's keys (`trace`, `name`, `timing`, `speed`, `compress`) out of a
    /// plan-file table.
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        if let Some(v) = t.remove("trace") {
            self.trace = v
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("trace = {v}: give the trace file's path"))?;
        }
        if let Some(v) = t.remove("name") {
            self.name = Some(
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("name = {v}: give a name"))?,
            );
        }
        if let Some(v) = t.remove("timing") {
            match v.as_str() {
                Some("as-fast-as-possible") => self.speed = None,
                Some("as-recorded") => self.speed = Some(self.speed.unwrap_or(1.0)),
                _ => {
                    return Err(format!(
                        "timing = {v}: give \"as-fast-as-possible\" or \"as-recorded\""
                    ));
                }
            }
        }
        if let Some(v) = t.remove("speed") {
            let x = v
                .as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| format!("speed = {v}: give a positive number (1 = as recorded)"))?;
            self.speed = Some(x);
        }
        if let Some(v) = t.remove("compress") {
            let p = v
                .as_integer()
                .and_then(|i| u8::try_from(i).ok())
                .map(|p| p.to_string())
                .or_else(|| v.as_str().map(str::to_string))
                .unwrap_or_else(|| v.to_string());
            self.compress =
                Some(data::parse_percent(&p).map_err(|e| format!("compress = {v}: {e}"))?);
        }
        if self.trace.as_os_str().is_empty() {
            return Err(
                "a replay workload needs `trace = \"FILE\"` (fsbench record wrote it)".into(),
            );
        }
        Ok(())
    }
}

/// What a trace holds, for the plan and the report: its name, calls, bytes, threads and the
/// recorded span.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The trace's name (`fsbench record --name`, else the program's).
    pub name: String,
    /// Recorded calls.
    pub calls: u64,
    /// Bytes the recorded reads moved.
    pub read_bytes: u64,
    /// Bytes the recorded writes moved.
    pub write_bytes: u64,
    /// Recorded threads (one replays serially).
    pub threads: u32,
    /// From the first call to the last one's end, µs.
    pub span_us: u64,
}

impl Summary {
    /// One line: `9,915 calls on 6 threads, 5.6 MiB read, 100.0 MiB written, recorded span
    /// 40.0 s`.
    pub fn line(&self) -> String {
        use crate::metrics::{format_bytes, format_number};
        format!(
            "{} calls on {} thread{}, {} read, {} written, recorded span {:.1} s",
            // Separators from 1,000 up; a few calls are a plain integer, not `1.00`.
            if self.calls >= 1000 {
                format_number(self.calls as f64)
            } else {
                self.calls.to_string()
            },
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            format_bytes(self.read_bytes as f64),
            format_bytes(self.write_bytes as f64),
            self.span_us as f64 / 1e6
        )
    }
}

/// The trace at `path` summed up (read to its end: a bad trace is the same error as
/// [`check_trace`]'s). Read once per file as it is (path, size, mtime): every step of a run
/// replays the same trace, and summing means decompressing all of it.
pub fn summary_of(path: &std::path::Path) -> crate::Result<Summary> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Key = (std::path::PathBuf, u64, Option<std::time::SystemTime>);
    static SUMMED: OnceLock<Mutex<HashMap<Key, Summary>>> = OnceLock::new();
    let md = std::fs::metadata(path).ok();
    let key = (
        path.to_path_buf(),
        md.as_ref().map_or(0, |m| m.len()),
        md.and_then(|m| m.modified().ok()),
    );
    let summed = SUMMED.get_or_init(Default::default);
    if let Some(s) = summed.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(s.clone());
    }
    let fail = |e: trace::TraceError| {
        crate::Error::invalid("--replay", format!("{}: {e}", path.display()))
    };
    let mut r = trace::TraceReader::open(path).map_err(fail)?;
    let mut s = Summary {
        name: r.header.name.clone(),
        calls: 0,
        read_bytes: 0,
        write_bytes: 0,
        threads: 0,
        span_us: 0,
    };
    while let Some(e) = r.next_event().map_err(fail)? {
        s.calls += 1;
        match e.c {
            trace::Call::Read => s.read_bytes += e.n.unwrap_or(0),
            trace::Call::Write => s.write_bytes += e.n.unwrap_or(0),
            _ => {}
        }
        s.span_us = s.span_us.max(e.ts + e.dur);
    }
    s.threads = r.threads;
    summed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, s.clone());
    Ok(s)
}

/// How many threads the trace at `path` recorded ([`summary_of`]'s, counted once per file).
pub fn threads_of(path: &std::path::Path) -> crate::Result<u32> {
    Ok(summary_of(path)?.threads)
}

/// Read `path` to its end, checking every line; its header and trailer. The error says
/// which file, line and byte offset, and what is wrong.
pub fn check_trace(path: &std::path::Path) -> crate::Result<(trace::Header, trace::Trailer)> {
    let r = read_all(path)?;
    Ok((r.header, r.trailer.unwrap_or_default()))
}

/// The reader of `path` after reading it to its end.
fn read_all(path: &std::path::Path) -> crate::Result<trace::TraceReader> {
    let fail = |e: trace::TraceError| {
        crate::Error::invalid("--replay", format!("{}: {e}", path.display()))
    };
    let mut r = trace::TraceReader::open(path).map_err(fail)?;
    r.check_all().map_err(fail)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::Timing;

    #[test]
    fn replay_speed_takes_a_speed_or_a_timing_name() {
        assert_eq!("2".parse::<Timing>(), Ok(Timing::AsRecorded(2.0)));
        assert_eq!("as-recorded".parse::<Timing>(), Ok(Timing::AsRecorded(1.0)));
        assert_eq!(
            "as-fast-as-possible".parse::<Timing>().map(Timing::speed),
            Ok(None)
        );
        for bad in ["0", "-1", "inf", "NaN", "fast"] {
            assert!(bad.parse::<Timing>().is_err(), "{bad}");
        }
    }
}
