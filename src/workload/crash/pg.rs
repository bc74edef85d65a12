//! `crash-pgbench`'s oracle: PostgreSQL itself on the recording device (seed 004: ext4
//! `data=writeback` is safe for a database that keeps its own write-ahead log).
//!
//! Before recording, a cluster is made in `DIR/pgdata` (`initdb`, as the pgbench workload
//! makes one) and the oracle's tables are created (start, `CREATE TABLE`, a fast shutdown's
//! checkpoint), so every crash state holds a cluster that must recover. While recording, the
//! server is started again and one client runs short transactions — `UPDATE` of a committed
//! counter and `INSERT` of the oracle's checksummed record ([`super::oracle::record`]), then
//! `COMMIT` — and each one is acknowledged when its COMMIT returned, marked with the
//! recorder's log position read then (the mark mechanism of the file oracles, no clock).
//! The server is stopped before the filesystem is unmounted.
//!
//! In each crash state the server is started on the state (its crash recovery replays the
//! WAL); a state where it does not start is unrecoverable. Every transaction acknowledged at
//! or before the crash point must be there with its record intact, no row may be torn, and
//! the counter must equal the rows (a transaction is atomic); then the server is stopped.
//!
//! The client is the `postgres` crate over the server's private socket, not the pgbench
//! program: pgbench says when each transaction ended only by the clock (`--log`), and an
//! acknowledgement must be tied to the write log. `sync = false` is the negative control:
//! the server runs with `fsync=off` while recording, so a COMMIT is acknowledged before its
//! WAL is on the device.

use super::oracle::{Ack, Checked, decode, record};
use crate::Result;
use crate::workload::pgbench::server::{
    self, Binaries, PgServer, ServerConfig, ServerUser, client_error,
};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// The data directory, inside the oracle's directory.
const DATA: &str = "pgdata";
/// Small buffers: the database is a few rows, and a state's server starts quickly.
const SHARED_BUFFERS: u64 = 16 << 20;
/// The oracle's tables: one committed counter, one row per acknowledged transaction.
const SCHEMA: &str = "CREATE TABLE fsbench_counter (n bigint NOT NULL);\
                      INSERT INTO fsbench_counter VALUES (0);\
                      CREATE TABLE fsbench_acked (seq bigint PRIMARY KEY, record bytea NOT NULL);";

/// The installed server and the account it runs as.
fn installed() -> Result<(Binaries, Option<ServerUser>)> {
    let bins = Binaries::find().map_err(crate::Error::Other)?;
    let user = server::server_user().map_err(crate::Error::Other)?;
    Ok((bins, user))
}

/// Start the server on `dir`'s cluster; `fsync` false only for the negative control.
fn start(dir: &Path, fsync: bool, timeout: Duration) -> Result<PgServer> {
    let (bins, user) = installed()?;
    let config = ServerConfig {
        shared_buffers: SHARED_BUFFERS,
        // After fsbench's own `fsync=on`: the later `-c` wins.
        extra: if fsync {
            Vec::new()
        } else {
            vec![("fsync".into(), "off".into())]
        },
        timeout,
    };
    PgServer::start(&bins, user, &dir.join(DATA), &config)
}

fn sql_err(what: &str) -> impl FnOnce(postgres::Error) -> crate::Error + '_ {
    move |e| crate::Error::tool(what, client_error(&e))
}

/// Make the cluster and the oracle's tables in `dir` (before recording: the base image).
pub fn prepare(dir: &Path, timeout: Duration) -> Result<()> {
    std::fs::create_dir(dir).map_err(|e| crate::Error::io("cannot create", dir, e))?;
    let (bins, user) = installed()?;
    server::init_cluster(&bins, user, &dir.join(DATA), timeout)?;
    let s = start(dir, true, timeout)?;
    let made = s
        .connect()
        .and_then(|mut c| c.batch_execute(SCHEMA).map_err(sql_err("CREATE TABLE")));
    let stopped = s.stop();
    made?;
    stopped
}

/// Run `ops` transactions on `dir`'s cluster; after each COMMIT returned, `mark()` is its
/// acknowledgement's log position.
pub fn run(
    dir: &Path,
    ops: u64,
    sync: bool,
    mark: &dyn Fn() -> usize,
    timeout: Duration,
) -> Result<Vec<Ack>> {
    let s = start(dir, sync, timeout)?;
    let ran = (|| -> Result<Vec<Ack>> {
        let mut c = s.connect()?;
        let mut acks = Vec::with_capacity(ops as usize);
        for seq in 1..=ops {
            crate::cancel::check()?;
            let mut tx = c.transaction().map_err(sql_err("BEGIN"))?;
            tx.execute("UPDATE fsbench_counter SET n = n + 1", &[])
                .map_err(sql_err("UPDATE"))?;
            tx.execute(
                "INSERT INTO fsbench_acked VALUES ($1, $2)",
                &[&(seq as i64), &record(seq)],
            )
            .map_err(sql_err("INSERT"))?;
            tx.commit().map_err(sql_err("COMMIT"))?;
            acks.push(Ack { seq, mark: mark() });
        }
        Ok(acks)
    })();
    let stopped = s.stop();
    let acks = ran?;
    stopped?;
    Ok(acks)
}

/// What a recovered database holds of transactions `1..=acked`: `rows` its `(seq, record)`
/// rows, `counter` the counter's rows. Pure, for the unit test.
pub fn judge(rows: &[(i64, Vec<u8>)], counter: &[i64], acked: u64) -> Checked {
    let mut c = Checked::default();
    let mut intact = BTreeSet::new();
    for (seq, rec) in rows {
        match decode(rec) {
            Some((s, len)) if s as i64 == *seq && len == rec.len() => {
                intact.insert(s);
            }
            _ => c.corrupt += 1,
        }
    }
    c.lost = (1..=acked).filter(|s| !intact.contains(s)).count() as u64;
    // The counter and the row commit together: any other count is half a transaction.
    if counter != [rows.len() as i64] {
        c.corrupt += 1;
    }
    c
}

/// Start PostgreSQL on a crash state's `dir` (crash recovery), check it, stop it. `Err`: it
/// did not start, or could not read its tables, or did not stop.
pub fn check(dir: &Path, acked: u64, timeout: Duration) -> std::result::Result<Checked, String> {
    let short = |e: crate::Error| super::replay::last_lines(&e.to_string(), 3);
    let s = start(dir, true, timeout)
        .map_err(|e| format!("PostgreSQL did not start (crash recovery): {}", short(e)))?;
    let read = (|| -> Result<Checked> {
        let mut c = s.connect()?;
        let rows: Vec<(i64, Vec<u8>)> = c
            .query("SELECT seq, record FROM fsbench_acked", &[])
            .map_err(sql_err("SELECT"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let counter: Vec<i64> = c
            .query("SELECT n FROM fsbench_counter", &[])
            .map_err(sql_err("SELECT"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        Ok(judge(&rows, &counter, acked))
    })();
    let stopped = s.stop();
    let checked =
        read.map_err(|e| format!("PostgreSQL could not read its tables: {}", short(e)))?;
    stopped.map_err(|e| format!("PostgreSQL did not stop after the check: {}", short(e)))?;
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledged_rows_must_be_intact_and_the_counter_must_match() {
        let rows: Vec<(i64, Vec<u8>)> = (1..=4).map(|s| (s, record(s as u64))).collect();
        assert_eq!(
            judge(&rows, &[4], 3),
            Checked::default(),
            "row 4: in flight"
        );
        assert_eq!(judge(&rows[..2], &[2], 3).lost, 1);
        let mut torn = rows.clone();
        torn[1].1.truncate(100);
        assert_eq!(
            judge(&torn, &[4], 4),
            Checked {
                lost: 1,
                corrupt: 1
            }
        );
        let mut misplaced = rows.clone();
        misplaced[0].0 = 9;
        assert_eq!(judge(&misplaced, &[4], 1).lost, 1);
        assert_eq!(judge(&rows, &[3], 4).corrupt, 1, "counter behind the rows");
        assert_eq!(judge(&rows, &[], 0).corrupt, 1, "counter row gone");
        assert_eq!(judge(&[], &[0], 0), Checked::default());
    }
}
