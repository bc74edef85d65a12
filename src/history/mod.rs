//! The history store: every run remembered (docs/history.md).
//!
//! A run's results are recorded after its results files are written: one row per run (host,
//! device identity, kernel, versions, profile, plan hash, the results.json itself), one per
//! setup (its live settings) and one per sample. Two backends speak the same small SQL
//! through [`store::Store`]: one SQLite file (the default, [`location::default_sqlite`]) and
//! a PostgreSQL database a team shares (`postgresql://…`, the `postgres` crate). The schema
//! is versioned ([`schema`]); there is no ORM, the queries are in [`runs`].
//!
//! A store that cannot be written never costs a run its results ([`record::after_run`]: a
//! warning, the exit code unchanged). A password never reaches argv, a row or a log: it comes
//! from `PGPASSWORD`, `~/.pgpass`, `PGSERVICE` or a password file ([`location`]).

pub mod check;
pub mod identity;
pub mod location;
pub mod lookup;
pub mod postgres;
pub mod record;
pub mod runs;
pub mod schema;
pub mod sqlite;
pub mod store;
pub mod trend;

pub use location::Location;
pub use runs::{Filter, History, RunRow, SampleRow};
