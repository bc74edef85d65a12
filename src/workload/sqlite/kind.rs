//! Registry entry of `sqlite`: small durable transactions on a real SQLite database.

use super::{JournalMode, SqliteParams};
use crate::host::packages::{Package, Tool};
use crate::metrics::MetricId;
use crate::workload::api::{
    Cost, Describe, Family, Kind, Needs, ProfileEntry, Workload, WorkloadOutput,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Small transactions on a real SQLite database.
    pub const Sqlite: Kind = Kind::named("sqlite");
}

impl WorkloadSpec {
    /// A SQLite workload.
    pub fn sqlite(id: &str, params: SqliteParams) -> Self {
        WorkloadSpec::simple(id, Kind::Sqlite).with_params(&params)
    }
}

/// SQLite transactions in the data directory.
pub struct Sqlite;

impl Workload for Sqlite {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("journal_mode", "\"wal\" | \"delete\""),
            ("transactions", "measured transactions"),
            ("rows", "inserts, and as many updates, per transaction"),
            ("preload", "rows written before the measurement"),
        ]
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.params_of::<SqliteParams>())
            .unwrap_or_else(|| SqliteParams::new(JournalMode::Wal));
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        // The engine is the linked library; the doctor offers the sqlite3 program with it.
        Needs {
            programs: &["sqlite3"],
            ..Needs::WRITES
        }
    }
    fn packages(&self) -> &'static [Tool] {
        const SQLITE3: &[Tool] = &[Tool::new(
            "sqlite3",
            Package {
                apt: "sqlite3",
                dnf: "sqlite",
                zypper: "sqlite3",
                pacman: "sqlite",
            },
        )];
        SQLITE3
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            TX_PER_S,
            LAT_MEAN_MS,
            LAT_P50_MS,
            LAT_P95_MS,
            LAT_P99_MS,
            SECONDS,
            FSYNCS,
            FSYNCS_PER_TX,
            DIR_FSYNCS,
            DEVICE_WRITE_BYTES,
            DEVICE_FLUSHES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    // Opt-in in quick (--only sqlite-wal,sqlite-delete), 500 transactions for its budget.
    fn profile_entries(&self) -> &'static [ProfileEntry] {
        &[
            ProfileEntry {
                profile: "quick",
                table: "id = \"sqlite-wal\"\noptional = true\ntransactions = 500",
            },
            ProfileEntry {
                profile: "quick",
                table: "id = \"sqlite-delete\"\noptional = true\ntransactions = 500",
            },
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::sqlite("sqlite-wal", SqliteParams::new(JournalMode::Wal)).opt(),
            WorkloadSpec::sqlite("sqlite-delete", SqliteParams::new(JournalMode::Delete)).opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"sqlite-small\"\nkind = \"sqlite\"\njournal_mode = \"delete\"\ntransactions = 200\nrows = 5"
    }
    /// About 200 durable transactions per second on a small VM's disk.
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Seconds(
            w.params_of::<SqliteParams>()
                .as_ref()
                .map_or(10.0, |p| 1.0 + f64::from(p.transactions) / 200.0),
        )
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        match &w.params_of::<SqliteParams>() {
            Some(sq) => format!(
                "SQLite journal_mode={} synchronous=FULL: {} transactions of {} inserts + {} updates, indexed table of {} rows",
                sq.journal_mode.pragma(),
                sq.transactions,
                sq.rows,
                sq.rows,
                sq.preload
            ),
            None => String::new(),
        }
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p = &w
            .params_of::<SqliteParams>()
            .ok_or_else(|| crate::Error::workload(&w.id, "no sqlite parameters"))?;
        super::run(&cx.work, &w.id, p)
    }
}
