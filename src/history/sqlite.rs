//! The SQLite backend: one file, created readable by its owner only (0600), writers queued on
//! SQLite's lock (`BEGIN IMMEDIATE` with a busy timeout) so two runs finishing together both
//! land.

use super::store::{Dialect, Store, Value};
use crate::{Error, Result};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// An open SQLite history file.
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    shown: String,
}

impl Sqlite {
    /// Open `path`, creating it (and its directory) when `create`; a new file is mode 0600.
    pub fn open(path: &Path, create: bool) -> Result<Sqlite> {
        if create && !path.exists() {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Error::io("cannot create the history directory", dir, e))?;
            }
            use std::os::unix::fs::OpenOptionsExt;
            // Created empty with the final mode, so the file is never readable by others,
            // not even between create and chmod; SQLite gives its journal the same mode.
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io("cannot create the history store", path, e)),
            }
        } else if !path.exists() {
            return Err(Error::invalid(
                "--store",
                format!(
                    "{} does not exist (a run creates it; or name another with --store / \
                     FSBENCH_STORE)",
                    path.display()
                ),
            ));
        }
        let conn = Connection::open(path).map_err(|e| sql_error(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_error(path, e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| sql_error(path, e))?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
            shown: path.display().to_string(),
        })
    }
}

fn sql_error(path: &Path, e: rusqlite::Error) -> Error {
    Error::Other(format!("history store {}: {e}", path.display()))
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Int(i) => V::Integer(*i),
        Value::Real(f) => V::Real(*f),
        Value::Text(s) => V::Text(s.clone()),
        Value::Null => V::Null,
    }
}

fn from_sql(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Integer(i) => Value::Int(i),
        V::Real(f) => Value::Real(f),
        V::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        V::Blob(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
        V::Null => Value::Null,
    }
}

impl Store for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn
            .execute_batch(sql)
            .map_err(|e| sql_error(&self.path, e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let p: Vec<rusqlite::types::Value> = params.iter().map(to_sql).collect();
        let mut st = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| sql_error(&self.path, e))?;
        st.execute(rusqlite::params_from_iter(p))
            .map(|n| n as u64)
            .map_err(|e| sql_error(&self.path, e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let p: Vec<rusqlite::types::Value> = params.iter().map(to_sql).collect();
        let mut st = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| sql_error(&self.path, e))?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(p))
            .map_err(|e| sql_error(&self.path, e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| sql_error(&self.path, e))? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(from_sql(
                    row.get_ref(i).map_err(|e| sql_error(&self.path, e))?,
                ));
            }
            out.push(r);
        }
        Ok(out)
    }

    fn begin(&mut self, _exclusive: bool) -> Result<()> {
        // IMMEDIATE takes the write lock now: a second writer waits (busy timeout) here
        // rather than failing with SQLITE_BUSY when it upgrades a read lock at commit.
        self.batch("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn shown(&self) -> &str {
        &self.shown
    }
}
