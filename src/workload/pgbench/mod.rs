//! `pgbench-rw` / `pgbench-ro`: PostgreSQL's own benchmark on a private server whose data
//! directory lives on the filesystem under test (seed 004: "on pgbench at 32 clients xfs
//! delivered 11 % more TPS than ext4").
//!
//! One workload step is self-contained: `initdb` → start ([`server::PgServer`]) →
//! `pgbench -i -s SCALE` (timed: `init_seconds`) → `CHECKPOINT` → the measured
//! `pgbench -c C -j J -T S -M prepared` (`-S` for read-only) → `CHECKPOINT` → stop → the data
//! directory is removed. The closing checkpoint is inside the accounting window, so device
//! bytes and data bytes include writing back the pages the run dirtied; `tps` is pgbench's own
//! figure (without connection time) and does not include it.
//!
//! Metrics: `tps`, `transactions`, `failed_transactions`, `lat_mean_ms` and
//! `lat_p50_ms`/`lat_p95_ms`/`lat_p99_ms` (from pgbench's per-transaction `--log` lines, written
//! to a private directory off the device under test), `init_seconds`, `wal_bytes`
//! (`pg_current_wal_lsn()` before and after), `data_bytes` (buffers the checkpointer, the
//! background writer and backends wrote, `pg_stat_bgwriter`, × block size),
//! `device_write_bytes`, `write_amplification` (device bytes over WAL + data bytes),
//! `cpu_server_s` (the postmaster's process tree, from /proc), `cpu_client_s` (pgbench) and
//! `system_cpu_util` (whole machine, % of all CPUs).

pub mod kind;
pub mod output;
pub mod server;
pub mod settings;

use super::{Metric, WorkloadContext, WorkloadOutput};
use crate::host::command::{self, OnCancel};
use crate::measure::CpuSnapshot;
use crate::metrics::registry::{
    CPU_CLIENT_S, CPU_SERVER_S, DATA_BYTES, DEVICE_WRITE_BYTES, FAILED_TRANSACTIONS, INIT_SECONDS,
    LAT_MEAN_MS, LAT_P50_MS, LAT_P95_MS, LAT_P99_MS, SYSTEM_CPU_UTIL, TPS, TRANSACTIONS, WAL_BYTES,
    WRITE_AMPLIFICATION,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use server::{Binaries, PgServer, ServerConfig};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Which of pgbench's built-in scripts runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// TPC-B (sort of): three updates, a select and an insert per transaction.
    ReadWrite,
    /// `-S`: one primary-key select per transaction.
    ReadOnly,
}

/// Parameters of a pgbench workload (plan-file keys of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgbenchParams {
    /// Built-in script.
    pub mode: Mode,
    /// `pgbench -i -s`: 1 ≈ 15 MiB of tables, 100 000 accounts.
    pub scale: u32,
    /// `-c`: client connections.
    pub clients: u32,
    /// `-j`: pgbench worker threads (≤ clients).
    pub threads: u32,
    /// `-T`: measured time; the plan's runtime when not given.
    #[serde(default)]
    pub duration: Option<Duration>,
    /// `shared_buffers`, bytes; small by default so that the database does not fit in it.
    pub shared_buffers: u64,
    /// Further server settings, passed as `-c name=value`.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

impl PgbenchParams {
    /// Defaults after seed 004: 32 clients, scale 10 (≈150 MiB) against 32 MiB of buffers.
    pub fn new(mode: Mode) -> Self {
        PgbenchParams {
            mode,
            scale: 10,
            clients: 32,
            threads: 2,
            duration: None,
            shared_buffers: 32 << 20,
            settings: BTreeMap::new(),
        }
    }

    /// Refuse values pgbench or the server would reject; `Err` names the key.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.scale == 0 {
            return Err("scale = 0: must be at least 1 (1 ≈ 15 MiB of tables)".into());
        }
        if self.clients == 0 {
            return Err("clients = 0: must be at least 1".into());
        }
        if self.threads == 0 || self.threads > self.clients {
            return Err(format!(
                "threads = {}: must be between 1 and clients ({})",
                self.threads, self.clients
            ));
        }
        if self.duration.is_some_and(|d| d < Duration::from_secs(1)) {
            return Err("duration: pgbench runs whole seconds; use at least \"1s\"".into());
        }
        if self.shared_buffers < 128 << 10 {
            return Err("shared_buffers: PostgreSQL needs at least 128kB".into());
        }
        Ok(())
    }

    /// Take this workload's keys (`mode`, `scale`, `clients`, `threads`, `duration`,
    /// `shared_buffers`, `settings`) out of a plan-file table, over `self`'s values.
    pub fn take_from(&mut self, t: &mut toml::Table) -> std::result::Result<(), String> {
        if let Some(v) = t.remove("mode") {
            self.mode = match v.as_str() {
                Some("rw" | "read-write") => Mode::ReadWrite,
                Some("ro" | "read-only") => Mode::ReadOnly,
                _ => return Err(format!("mode = {v}: use \"rw\" or \"ro\"")),
            };
        }
        for (key, slot) in [
            ("scale", &mut self.scale),
            ("clients", &mut self.clients),
            ("threads", &mut self.threads),
        ] {
            if let Some(v) = t.remove(key) {
                *slot = v
                    .as_integer()
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(|| format!("{key} = {v}: give a whole number"))?;
            }
        }
        if let Some(v) = t.remove("duration") {
            let s = v
                .as_str()
                .ok_or_else(|| format!("duration = {v}: give a time such as \"30s\""))?;
            self.duration =
                Some(crate::units::parse_duration(s).map_err(|e| format!("duration: {e}"))?);
        }
        if let Some(v) = t.remove("shared_buffers") {
            self.shared_buffers = match &v {
                toml::Value::String(s) => {
                    crate::units::parse_size(s).map_err(|e| format!("shared_buffers: {e}"))?
                }
                toml::Value::Integer(i) if *i > 0 => *i as u64,
                other => {
                    return Err(format!(
                        "shared_buffers = {other}: give a size like \"32M\""
                    ));
                }
            };
        }
        if let Some(v) = t.remove("settings") {
            let table = v
                .as_table()
                .ok_or("settings must be a table: settings = { work_mem = \"8MB\" }")?;
            for (k, v) in table {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                        v.to_string()
                    }
                    other => return Err(format!("settings.{k} = {other}: give a single value")),
                };
                self.settings.insert(k.clone(), text);
            }
        }
        self.validate()
    }
}

/// One line for `fsbench plan`: what the step runs.
pub fn describe(p: &PgbenchParams, runtime: Duration) -> String {
    let secs = p.duration.unwrap_or(runtime).as_secs_f64().ceil().max(1.0) as u64;
    let mut d = format!(
        "PostgreSQL: initdb, pgbench -i -s {} (timed), pgbench {} ({}), shared_buffers={}",
        p.scale,
        pgbench_args(p, secs)[..8].join(" ").replace(" --log", ""),
        match p.mode {
            Mode::ReadWrite => "TPC-B-like read-write",
            Mode::ReadOnly => "-S, read-only",
        },
        crate::units::format_size(p.shared_buffers)
    );
    for (k, v) in &p.settings {
        d.push_str(&format!(" {k}={v}"));
    }
    d
}

/// Whether this machine can run the workload; `Err` says what is missing.
pub fn available() -> std::result::Result<(), String> {
    Binaries::find()?;
    server::server_user()?;
    Ok(())
}

/// Everything one step needs beyond the filesystem.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// Workload id (names the data directory and errors).
    pub id: &'a str,
    /// Parameters.
    pub params: &'a PgbenchParams,
    /// Measured time (`-T`).
    pub duration: Duration,
    /// Longest wait for initdb, start-up, shutdown and single statements.
    pub timeout: Duration,
}

/// Run one pgbench step in `ctx.dir`. The server is stopped and the data directory removed
/// whatever happens; a failure after start-up carries the server log's last lines.
pub fn run(ctx: &WorkloadContext<'_>, spec: &RunSpec<'_>) -> Result<WorkloadOutput> {
    let id = spec.id;
    let bins = Binaries::find().map_err(|e| Error::workload(id, e))?;
    let user = server::server_user().map_err(|e| Error::workload(id, e))?;
    let data_dir = ctx.dir.join(format!("pg-{id}"));
    // Declared before the server so that it is dropped after it: the directory goes once the
    // server has stopped.
    let _remove = RemoveDir(data_dir.clone());
    server::init_cluster(&bins, user, &data_dir, spec.timeout).map_err(|e| keep(id, e))?;
    let mut extra: Vec<(String, String)> = spec
        .params
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if spec.params.clients > 90 && !spec.params.settings.contains_key("max_connections") {
        extra.push((
            "max_connections".into(),
            (spec.params.clients + 10).to_string(),
        ));
    }
    let config = ServerConfig {
        shared_buffers: spec.params.shared_buffers,
        extra,
        timeout: spec.timeout,
    };
    let server = PgServer::start(&bins, user, &data_dir, &config).map_err(|e| keep(id, e))?;
    let measured = measure(&server, ctx, spec).map_err(|e| {
        if matches!(e, Error::Interrupted) || crate::cancel::requested() {
            Error::Interrupted
        } else {
            Error::workload(
                id,
                format!("{e}\nserver log (last lines):\n{}", server.log_tail(8)),
            )
        }
    });
    let stopped = server.stop();
    let out = measured?;
    stopped.map_err(|e| keep(id, e))?;
    Ok(out)
}

/// Tag an error with the workload id, leaving an interrupt an interrupt.
fn keep(id: &str, e: Error) -> Error {
    if matches!(e, Error::Interrupted) || crate::cancel::requested() {
        Error::Interrupted
    } else {
        Error::workload(id, e.to_string())
    }
}

/// Removes a directory tree when dropped.
struct RemoveDir(std::path::PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("fsbench: warning: cannot remove {}: {e}", self.0.display());
        }
    }
}

/// Counters read before and after the measured run.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    lsn: u64,
    buffers_written: u64,
    device_write: Option<u64>,
    cpu: CpuSnapshot,
    server_cpu_s: f64,
    children_cpu_s: f64,
}

fn snapshot(server: &PgServer, device: &Path) -> Result<Snapshot> {
    let lsn = server.sql("SELECT pg_current_wal_lsn()")?;
    let lsn = output::parse_lsn(&lsn)
        .ok_or_else(|| Error::Other(format!("unexpected WAL position '{lsn}'")))?;
    let written = server
        .sql("SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter")?;
    let buffers_written = written
        .parse()
        .map_err(|_| Error::Other(format!("unexpected pg_stat_bgwriter sum '{written}'")))?;
    Ok(Snapshot {
        lsn,
        buffers_written,
        device_write: crate::measure::device::counters(device)
            .ok()
            .map(|c| c.write_bytes),
        cpu: CpuSnapshot::now(),
        server_cpu_s: server.pid().map_or(0.0, process_tree_cpu_s),
        children_cpu_s: children_cpu_s(),
    })
}

fn measure(
    server: &PgServer,
    ctx: &WorkloadContext<'_>,
    spec: &RunSpec<'_>,
) -> Result<WorkloadOutput> {
    let p = spec.params;
    let device = ctx.device.unwrap_or(ctx.dir);
    let mut init = server.client("pgbench");
    init.args(["-i", "-q", "-s", &p.scale.to_string(), "postgres"]);
    let init_timeout = spec.timeout + Duration::from_secs(30 * u64::from(p.scale));
    let init = checked(
        command::run_child(&mut init, "pgbench -i", init_timeout, OnCancel::Kill)?,
        "pgbench -i",
    )?;
    // Start from a clean state: the load's dirty pages written, the device idle.
    server.sql("CHECKPOINT")?;
    rustix::fs::sync();
    let block_size: u64 = server.sql("SHOW block_size")?.parse().unwrap_or(8192);
    let before = snapshot(server, device)?;
    let log_prefix = server.scratch_dir().join("txlog");
    let seconds = spec.duration.as_secs_f64().ceil().max(1.0) as u64;
    let mut bench = server.client("pgbench");
    bench
        .args(pgbench_args(p, seconds))
        .arg(format!("--log-prefix={}", log_prefix.display()));
    bench.arg("postgres");
    let run_timeout = spec.timeout + Duration::from_secs(seconds + 60);
    let run = checked(
        command::run_child(&mut bench, "pgbench", run_timeout, OnCancel::Kill)?,
        "pgbench",
    )?;
    server.sql("CHECKPOINT")?;
    let after = snapshot(server, device)?;

    let summary = output::parse_summary(&run.stdout);
    let tps = summary.tps.ok_or_else(|| {
        Error::Other(format!(
            "pgbench printed no tps line:\n{}",
            server::tail(&run.combined(), 10)
        ))
    })?;
    let mut log = output::TxLog::default();
    for entry in std::fs::read_dir(server.scratch_dir())
        .map_err(|e| Error::io("cannot list", server.scratch_dir(), e))?
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with("txlog.") {
            let text = std::fs::read_to_string(entry.path())
                .map_err(|e| Error::io("cannot read", entry.path(), e))?;
            log.add(&text);
            let _ = std::fs::remove_file(entry.path());
        }
    }
    if log.latency.count() == 0 {
        return Err(Error::Other(
            "pgbench's --log held no completed transaction".into(),
        ));
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let wal = after.lsn.saturating_sub(before.lsn);
    let data = after.buffers_written.saturating_sub(before.buffers_written) * block_size;
    let usage = before.cpu.usage_until(&after.cpu);
    let mut metrics = vec![
        Metric::new(TPS, "tx/s", tps),
        Metric::new(
            TRANSACTIONS,
            "count",
            summary.transactions.unwrap_or(log.latency.count()) as f64,
        ),
        Metric::new(
            FAILED_TRANSACTIONS,
            "count",
            summary.failed.unwrap_or(log.failed) as f64,
        ),
        Metric::new(LAT_MEAN_MS, "ms", log.latency.mean() / 1e6),
        Metric::new(LAT_P50_MS, "ms", ms(log.latency.quantile(0.50))),
        Metric::new(LAT_P95_MS, "ms", ms(log.latency.quantile(0.95))),
        Metric::new(LAT_P99_MS, "ms", ms(log.latency.quantile(0.99))),
        Metric::new(INIT_SECONDS, "s", init.seconds),
        Metric::new(WAL_BYTES, "bytes", wal as f64),
        Metric::new(DATA_BYTES, "bytes", data as f64),
        Metric::new(
            CPU_SERVER_S,
            "s",
            (after.server_cpu_s - before.server_cpu_s).max(0.0),
        ),
        Metric::new(
            CPU_CLIENT_S,
            "s",
            (after.children_cpu_s - before.children_cpu_s).max(0.0),
        ),
        Metric::new(SYSTEM_CPU_UTIL, "%", 100.0 * usage.system_util),
    ];
    let mut notes = Vec::new();
    match (before.device_write, after.device_write) {
        (Some(b), Some(a)) => {
            let dev = a.saturating_sub(b);
            metrics.push(Metric::new(DEVICE_WRITE_BYTES, "bytes", dev as f64));
            if wal + data > 0 {
                metrics.push(Metric::new(
                    WRITE_AMPLIFICATION,
                    "x",
                    dev as f64 / (wal + data) as f64,
                ));
            }
        }
        _ => notes.push(format!(
            "no block device counters for {}: device bytes and write amplification are not reported",
            device.display()
        )),
    }
    if log.unparsed > 0 {
        notes.push(format!(
            "{} pgbench --log lines could not be read; latency percentiles leave them out",
            log.unparsed
        ));
    }
    Ok(WorkloadOutput {
        metrics,
        histograms: vec![("transaction".into(), log.latency)],
        notes,
        ..Default::default()
    })
}

/// The measured run's arguments (without connection options, log prefix and database).
pub fn pgbench_args(p: &PgbenchParams, seconds: u64) -> Vec<String> {
    let mut a = vec![
        "-c".to_string(),
        p.clients.to_string(),
        "-j".into(),
        p.threads.to_string(),
        "-T".into(),
        seconds.to_string(),
        "-M".into(),
        "prepared".into(),
    ];
    if p.mode == Mode::ReadOnly {
        a.push("-S".into());
    }
    a.push("--log".into());
    a
}

/// A tool's output when it exited 0; otherwise an error with its last lines.
fn checked(out: command::ToolOutput, shown: &str) -> Result<command::ToolOutput> {
    if out.status == Some(0) {
        Ok(out)
    } else {
        Err(Error::tool(
            shown,
            format!(
                "exit status {}: {}",
                out.status.map_or("signal".into(), |c| c.to_string()),
                server::tail(&out.combined(), 10)
            ),
        ))
    }
}

/// Seconds of CPU used by reaped children of fsbench (pgbench, psql).
fn children_cpu_s() -> f64 {
    let ru = crate::host::sys::rusage(libc::RUSAGE_CHILDREN);
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// utime + stime + reaped children's times of one `/proc/PID/stat` line, and its parent pid.
fn parse_stat(line: &str) -> Option<(u32, u64)> {
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &line[line.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ppid = f.get(1)?.parse().ok()?;
    let ticks = (11..=14)
        .map(|i| f.get(i).and_then(|x| x.parse::<u64>().ok()))
        .sum::<Option<u64>>()?;
    Some((ppid, ticks))
}

/// CPU seconds of the postmaster and its children, alive ones and the ones it already reaped
/// (backends of finished connections count in its cutime/cstime).
fn process_tree_cpu_s(pid: u32) -> f64 {
    let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
    let mut ticks = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(n) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(line) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((ppid, t)) = parse_stat(&line)
            && (n == pid || ppid == pid)
        {
            ticks += t;
        }
    }
    ticks as f64 / hz
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn plan_keys_override_the_defaults() {
        let mut p = PgbenchParams::new(Mode::ReadWrite);
        let mut t = table(
            "id='x'\nmode='ro'\nscale=2\nclients=8\nthreads=4\nduration='7s'\n\
             shared_buffers='16M'\nsettings={ work_mem='8MB', checkpoint_timeout=300 }",
        );
        p.take_from(&mut t).unwrap();
        assert_eq!(p.mode, Mode::ReadOnly);
        assert_eq!((p.scale, p.clients, p.threads), (2, 8, 4));
        assert_eq!(p.duration, Some(Duration::from_secs(7)));
        assert_eq!(p.shared_buffers, 16 << 20);
        assert_eq!(p.settings["checkpoint_timeout"], "300");
        assert_eq!(
            t.keys().collect::<Vec<_>>(),
            ["id"],
            "own keys are taken out"
        );
        let args = pgbench_args(&p, 7);
        assert_eq!(
            args.join(" "),
            "-c 8 -j 4 -T 7 -M prepared -S --log",
            "read-only adds -S"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, needle) in [
            ("scale=0", "scale = 0"),
            ("clients=0", "clients = 0"),
            ("clients=2\nthreads=4", "threads = 4"),
            ("mode='rx'", "mode"),
            ("scale=-1", "scale = -1"),
            ("duration='0s'", "duration"),
            ("shared_buffers='4k'", "shared_buffers"),
            ("settings=3", "settings"),
        ] {
            let mut p = PgbenchParams::new(Mode::ReadWrite);
            let e = p.take_from(&mut table(text)).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn proc_stat_fields_after_the_name() {
        let line = "4242 (postgres: check (x)) S 4200 4242 4242 0 -1 4194560 100 0 0 0 \
                    30 12 5 3 20 0 1 0 100 1000 10";
        assert_eq!(parse_stat(line), Some((4200, 30 + 12 + 5 + 3)));
        assert_eq!(parse_stat("garbage"), None);
        let me = std::process::id();
        assert!(process_tree_cpu_s(me) >= 0.0);
    }
}
