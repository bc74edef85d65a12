//! `sqlite-wal` / `sqlite-delete`: N small durable transactions on a real SQLite database.
//!
//! Each transaction inserts `rows` rows and updates `rows` random existing rows of an indexed
//! table (`k` is indexed, so every statement also changes the index), with
//! `synchronous=FULL` and `journal_mode` WAL or DELETE. The table is first filled with
//! `preload` rows in one transaction, outside the measurement.
//!
//! **Which SQLite.** The system library (Debian's `libsqlite3`, through rusqlite without the
//! `bundled` feature): that is the SQLite the machine's applications use, its version is
//! recorded in the step's notes, and no 9 MB C file is compiled into every build on the shared
//! cores. CI needs `libsqlite3-dev`.
//!
//! **Counting fsyncs.** The database is opened through [`vfs`], SQLite's own unix VFS with its
//! sync calls counted (`fsyncs`), plus the directory syncs the unix VFS does after creating a
//! journal or WAL (`dir_fsyncs`, inferred by SQLite's rule). `device_flushes` is what reached
//! the block device (flush requests in its stat file).
//!
//! Metrics: `tx_per_s`, `lat_mean_ms`, `lat_p50_ms`, `lat_p95_ms`, `lat_p99_ms`, `seconds`,
//! `fsyncs`, `fsyncs_per_tx`, `dir_fsyncs`, `device_write_bytes`, `device_flushes`.

pub mod kind;
pub mod vfs;

use super::{Metric, WorkloadContext, WorkloadOutput};
use crate::engine::rng::Xoshiro;
use crate::measure::LatencyHistogram;
use crate::metrics::registry::{
    DEVICE_FLUSHES, DEVICE_WRITE_BYTES, DIR_FSYNCS, FSYNCS, FSYNCS_PER_TX, LAT_MEAN_MS, LAT_P50_MS,
    LAT_P95_MS, LAT_P99_MS, SECONDS, TX_PER_S,
};
use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags, params};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// SQLite's rollback-journal mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalMode {
    /// Write-ahead log (`-wal` file, checkpoints into the database).
    Wal,
    /// Rollback journal created and deleted per transaction (SQLite's default).
    Delete,
}

impl JournalMode {
    /// The PRAGMA value.
    pub fn pragma(self) -> &'static str {
        match self {
            JournalMode::Wal => "wal",
            JournalMode::Delete => "delete",
        }
    }
}

/// Parameters of a SQLite workload (plan-file keys of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqliteParams {
    /// `journal_mode`.
    pub journal_mode: JournalMode,
    /// Measured transactions.
    pub transactions: u32,
    /// Inserts, and as many updates, per transaction.
    pub rows: u32,
    /// Rows written before the measurement.
    pub preload: u32,
}

impl SqliteParams {
    /// 2000 transactions of 5 inserts + 5 updates on a 10 000-row table.
    pub fn new(journal_mode: JournalMode) -> Self {
        SqliteParams {
            journal_mode,
            transactions: 2000,
            rows: 5,
            preload: 10_000,
        }
    }

    /// Take this workload's keys (`journal_mode`, `transactions`, `rows`, `preload`) out of a
    /// plan-file table; `Err` names the key.
    pub fn take_from(&mut self, t: &mut toml::Table) -> std::result::Result<(), String> {
        if let Some(v) = t.remove("journal_mode") {
            self.journal_mode = match v.as_str().map(str::to_ascii_lowercase).as_deref() {
                Some("wal") => JournalMode::Wal,
                Some("delete") => JournalMode::Delete,
                _ => return Err(format!("journal_mode = {v}: use \"wal\" or \"delete\"")),
            };
        }
        for (key, slot, min) in [
            ("transactions", &mut self.transactions, 1),
            ("rows", &mut self.rows, 1),
            ("preload", &mut self.preload, 1),
        ] {
            if let Some(v) = t.remove(key) {
                *slot = v
                    .as_integer()
                    .and_then(|i| u32::try_from(i).ok())
                    .filter(|n| *n >= min)
                    .ok_or_else(|| format!("{key} = {v}: give a whole number ≥ {min}"))?;
            }
        }
        Ok(())
    }
}

/// SQLite's version string.
pub fn library_version() -> String {
    rusqlite::version().to_string()
}

fn db_err(what: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| Error::Other(format!("sqlite: {what}: {e}"))
}

/// Run the workload in `ctx.dir`; the database and its journal are removed afterwards.
pub fn run(ctx: &WorkloadContext<'_>, id: &str, p: &SqliteParams) -> Result<WorkloadOutput> {
    vfs::register().map_err(|e| Error::workload(id, e))?;
    let path = ctx.dir.join(format!("{id}.sqlite"));
    let result = measure(ctx, &path, p).map_err(|e| match e {
        Error::Interrupted => e,
        e => Error::workload(id, e.to_string()),
    });
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut f = path.clone().into_os_string();
        f.push(suffix);
        let _ = std::fs::remove_file(f);
    }
    result
}

fn measure(
    ctx: &WorkloadContext<'_>,
    path: &std::path::Path,
    p: &SqliteParams,
) -> Result<WorkloadOutput> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let vfs_name = vfs::NAME.to_str().expect("ASCII");
    let mut conn =
        Connection::open_with_flags_and_vfs(path, flags, vfs_name).map_err(db_err("open"))?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", p.journal_mode.pragma(), |r| r.get(0))
        .map_err(db_err("journal_mode"))?;
    if !mode.eq_ignore_ascii_case(p.journal_mode.pragma()) {
        return Err(Error::Other(format!(
            "sqlite kept journal_mode={mode} when asked for {}",
            p.journal_mode.pragma()
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(db_err("synchronous"))?;
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);
         CREATE INDEX t_k ON t (k);",
    )
    .map_err(db_err("schema"))?;
    let mut rng = Xoshiro::new(ctx.seed);
    let value = |rng: &mut Xoshiro| format!("{:032x}{:032x}", rng.next_u64(), rng.next_u64());
    {
        let tx = conn.transaction().map_err(db_err("begin"))?;
        {
            let mut ins = tx
                .prepare("INSERT INTO t (k, v) VALUES (?1, ?2)")
                .map_err(db_err("prepare"))?;
            for _ in 0..p.preload {
                ins.execute(params![rng.next_u64() as i64 >> 1, value(&mut rng)])
                    .map_err(db_err("preload"))?;
            }
        }
        tx.commit().map_err(db_err("commit"))?;
    }
    if p.journal_mode == JournalMode::Wal {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(db_err("checkpoint"))?;
    }
    rustix::fs::sync();
    let device = ctx.device.unwrap_or(ctx.dir);
    let dev_before = crate::measure::device::counters(device).ok();
    let syncs_before = vfs::Counts::now();
    let mut hist = LatencyHistogram::new();
    let mut rows_total = u64::from(p.preload);
    let start = Instant::now();
    for _ in 0..p.transactions {
        crate::cancel::check()?;
        let t0 = Instant::now();
        let tx = conn.transaction().map_err(db_err("begin"))?;
        {
            let mut ins = tx
                .prepare_cached("INSERT INTO t (k, v) VALUES (?1, ?2)")
                .map_err(db_err("prepare"))?;
            let mut upd = tx
                .prepare_cached("UPDATE t SET k = ?1, v = ?2 WHERE id = ?3")
                .map_err(db_err("prepare"))?;
            for _ in 0..p.rows {
                ins.execute(params![rng.next_u64() as i64 >> 1, value(&mut rng)])
                    .map_err(db_err("insert"))?;
                rows_total += 1;
                let target = 1 + rng.below(rows_total) as i64;
                upd.execute(params![rng.next_u64() as i64 >> 1, value(&mut rng), target])
                    .map_err(db_err("update"))?;
            }
        }
        tx.commit().map_err(db_err("commit"))?;
        hist.record(t0.elapsed().as_nanos() as u64);
    }
    let seconds = start.elapsed().as_secs_f64();
    let syncs = syncs_before.until(&vfs::Counts::now());
    drop(conn);
    let dev = match (dev_before, crate::measure::device::counters(device).ok()) {
        (Some(b), Some(a)) => Some(b.delta(&a)),
        _ => None,
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    let n = f64::from(p.transactions);
    let mut metrics = vec![
        Metric::new(TX_PER_S, "tx/s", n / seconds.max(1e-9)),
        Metric::new(LAT_MEAN_MS, "ms", hist.mean() / 1e6),
        Metric::new(LAT_P50_MS, "ms", ms(hist.quantile(0.50))),
        Metric::new(LAT_P95_MS, "ms", ms(hist.quantile(0.95))),
        Metric::new(LAT_P99_MS, "ms", ms(hist.quantile(0.99))),
        Metric::new(SECONDS, "s", seconds),
        Metric::new(FSYNCS, "count", syncs.syncs as f64),
        Metric::new(FSYNCS_PER_TX, "count", syncs.syncs as f64 / n),
        Metric::new(DIR_FSYNCS, "count", syncs.dir_syncs as f64),
    ];
    let mut notes = vec![format!(
        "SQLite {} (system library), journal_mode={}, synchronous=FULL",
        library_version(),
        p.journal_mode.pragma()
    )];
    match dev {
        Some(d) => {
            metrics.push(Metric::new(
                DEVICE_WRITE_BYTES,
                "bytes",
                d.write_bytes as f64,
            ));
            metrics.push(Metric::new(DEVICE_FLUSHES, "count", d.flushes as f64));
        }
        None => notes.push(format!(
            "no block device counters for {}: device bytes are not reported",
            device.display()
        )),
    }
    Ok(WorkloadOutput {
        metrics,
        histograms: vec![("transaction".into(), hist)],
        notes,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricId;
    use crate::metrics::registry::{DIR_FSYNCS, FSYNCS, LAT_P50_MS, LAT_P99_MS, TX_PER_S};

    fn ctx(dir: &std::path::Path) -> WorkloadContext<'_> {
        WorkloadContext {
            dir,
            device: None,
            fs: "dir",
            round: 1,
            seed: 7,
            settle: None,
        }
    }

    /// Runs real SQLite in a temporary directory (no privileges needed).
    #[test]
    fn both_journal_modes_run_and_count_their_syncs() {
        let d = tempfile::tempdir().unwrap();
        let mut got = Vec::new();
        for mode in [JournalMode::Wal, JournalMode::Delete] {
            let p = SqliteParams {
                transactions: 20,
                rows: 2,
                preload: 50,
                ..SqliteParams::new(mode)
            };
            let out = run(&ctx(d.path()), "sqlite-test", &p).unwrap();
            let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
            assert!(get(TX_PER_S) > 0.0);
            assert!(get(LAT_P99_MS) >= get(LAT_P50_MS));
            assert_eq!(out.histograms[0].1.count(), 20);
            // synchronous=FULL: every commit syncs at least once.
            assert!(get(FSYNCS) >= 20.0, "{mode:?}: {}", get(FSYNCS));
            got.push((get(FSYNCS), get(DIR_FSYNCS)));
        }
        // DELETE creates (and syncs the directory of) a journal per transaction; WAL does not.
        assert!(got[1].1 >= 20.0, "delete dir syncs {:?}", got[1]);
        assert!(got[0].1 < 20.0, "wal dir syncs {:?}", got[0]);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "files removed"
        );
    }

    #[test]
    fn plan_keys_and_their_errors() {
        let mut p = SqliteParams::new(JournalMode::Wal);
        let mut t: toml::Table =
            toml::from_str("journal_mode='DELETE'\ntransactions=10\nrows=3\npreload=5").unwrap();
        p.take_from(&mut t).unwrap();
        assert!(t.is_empty());
        assert_eq!(
            (p.journal_mode, p.transactions, p.rows, p.preload),
            (JournalMode::Delete, 10, 3, 5)
        );
        for (text, needle) in [
            ("transactions=0", "transactions = 0"),
            ("journal_mode='memory'", "journal_mode"),
            ("rows='x'", "rows"),
        ] {
            let mut t: toml::Table = toml::from_str(text).unwrap();
            let e = p.take_from(&mut t).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
