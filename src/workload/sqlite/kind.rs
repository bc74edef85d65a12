//! Registry entry of `sqlite`: small durable transactions on a real SQLite database.

use super::{JournalMode, SqliteParams};
use crate::metrics::MetricId;
use crate::workload::WorkloadOutput;
use crate::workload::registry::{Cost, Describe, Family, Kind, Needs, Workload};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// SQLite transactions in the data directory.
pub struct Sqlite;

impl Workload for Sqlite {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.sqlite.clone())
            .unwrap_or_else(|| SqliteParams::new(JournalMode::Wal));
        p.take_from(t)?;
        spec.sqlite = Some(p);
        Ok(())
    }
    fn name(&self) -> &'static str {
        "sqlite"
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs::WRITES
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
            w.sqlite
                .as_ref()
                .map_or(10.0, |p| 1.0 + f64::from(p.transactions) / 200.0),
        )
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        match &w.sqlite {
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
        let p = w
            .sqlite
            .as_ref()
            .ok_or_else(|| crate::Error::workload(&w.id, "no sqlite parameters"))?;
        super::run(&cx.work, &w.id, p)
    }
}
