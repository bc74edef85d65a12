//! The one trait both backends implement: run statements with typed parameters inside a
//! transaction. Everything above it ([`super::runs`]) is written once, in SQL both dialects
//! accept (`$1` placeholders, `INSERT … RETURNING id`).

use crate::Result;

/// A parameter or a column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (BIGINT / INTEGER).
    Int(i64),
    /// A floating-point number (DOUBLE PRECISION / REAL).
    Real(f64),
    /// Text.
    Text(String),
    /// SQL NULL.
    Null,
}

impl Value {
    /// The integer, or 0.
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            Value::Real(f) => *f as i64,
            _ => 0,
        }
    }

    /// The number, or NaN.
    pub fn real(&self) -> f64 {
        match self {
            Value::Real(f) => *f,
            Value::Int(i) => *i as f64,
            _ => f64::NAN,
        }
    }

    /// The text, or empty.
    pub fn text(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Real(f) => f.to_string(),
            Value::Null => String::new(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Real(f)
    }
}

/// Which SQL dialect a store speaks (only the DDL of an id column differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite 3.35 or later.
    Sqlite,
    /// PostgreSQL 10 or later.
    Postgres,
}

/// A connection to a history database.
pub trait Store {
    /// The dialect, for the few statements that differ.
    fn dialect(&self) -> Dialect;
    /// Run several statements without parameters (DDL).
    fn batch(&mut self, sql: &str) -> Result<()>;
    /// Run one statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    /// Run one query; every column as a [`Value`].
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>>;
    /// Start a transaction that writes (SQLite: `BEGIN IMMEDIATE`, so two writers queue on
    /// the lock instead of one failing at commit; PostgreSQL: `BEGIN` plus an advisory lock
    /// when `exclusive`, which migrations take).
    fn begin(&mut self, exclusive: bool) -> Result<()>;
    /// Commit the open transaction.
    fn commit(&mut self) -> Result<()>;
    /// Roll back the open transaction (best effort).
    fn rollback(&mut self);
    /// Where the store is, for messages: never with a password.
    fn shown(&self) -> &str;
}

/// Run `f` in a write transaction: committed when it returns `Ok`, rolled back otherwise.
pub fn in_transaction<T>(
    store: &mut dyn Store,
    exclusive: bool,
    f: impl FnOnce(&mut dyn Store) -> Result<T>,
) -> Result<T> {
    store.begin(exclusive)?;
    match f(store) {
        Ok(v) => {
            store.commit()?;
            Ok(v)
        }
        Err(e) => {
            store.rollback();
            Err(e)
        }
    }
}
