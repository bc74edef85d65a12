//! The PostgreSQL backend (the `postgres` crate, synchronous): a database a team shares.
//! Migrations take an advisory lock so two first runs do not create the schema twice.
//! No TLS connector is built in: connect over a local socket, a trusted network or a tunnel.

use super::location::PgTarget;
use super::store::{Dialect, Store, Value};
use crate::{Error, Result};
use postgres::types::{ToSql, Type};

/// A key for `pg_advisory_xact_lock`: "fsbench" in ASCII.
const LOCK_KEY: i64 = 0x0066_7362_656e_6368;

/// An open PostgreSQL history database.
pub struct Postgres {
    client: postgres::Client,
    shown: String,
}

impl Postgres {
    /// Connect. The error names the store without its password.
    pub fn connect(target: &PgTarget) -> Result<Postgres> {
        let client = target.config.connect(postgres::NoTls).map_err(|e| {
            Error::Other(format!("history store {}: {}", target.shown, describe(&e)))
        })?;
        Ok(Postgres {
            client,
            shown: target.shown.clone(),
        })
    }

    fn err(&self, e: postgres::Error) -> Error {
        Error::Other(format!("history store {}: {}", self.shown, describe(&e)))
    }
}

/// The server's message when there is one (the crate's Display says only "db error").
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s += &format!(": {inner}");
                src = inner.source();
            }
            s
        }
    }
}

fn params(values: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Value::Int(i) => Box::new(*i),
                Value::Real(f) => Box::new(*f),
                Value::Text(s) => Box::new(s.clone()),
                Value::Null => Box::new(Option::<String>::None),
            }
        })
        .collect()
}

fn column(row: &postgres::Row, i: usize) -> Value {
    let ty = row.columns()[i].type_().clone();
    let v = if ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)
            .ok()
            .flatten()
            .map(Value::Int)
    } else if ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)
            .ok()
            .flatten()
            .map(|x| Value::Int(x.into()))
    } else if ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)
            .ok()
            .flatten()
            .map(Value::Real)
    } else {
        row.try_get::<_, Option<String>>(i)
            .ok()
            .flatten()
            .map(Value::Text)
    };
    v.unwrap_or(Value::Null)
}

impl Store for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(|e| self.err(e))
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        let p = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
        self.client.execute(sql, &refs).map_err(|e| self.err(e))
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>> {
        let p = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.query(sql, &refs).map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| (0..r.len()).map(|i| column(r, i)).collect())
            .collect())
    }

    fn begin(&mut self, exclusive: bool) -> Result<()> {
        self.batch("BEGIN")?;
        if exclusive {
            self.batch(&format!("SELECT pg_advisory_xact_lock({LOCK_KEY})"))?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn shown(&self) -> &str {
        &self.shown
    }
}
