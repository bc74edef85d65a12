//! Registry entry of `pgbench`: PostgreSQL's benchmark on a private server in the data
//! directory.

use super::{Mode, PgbenchParams, RunSpec};
use crate::metrics::MetricId;
use crate::workload::WorkloadOutput;
use crate::workload::registry::{Cost, Describe, Family, Kind, Needs, Workload, Writes};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// pgbench on a private server.
pub struct Pgbench;

impl Workload for Pgbench {
    fn kind(&self) -> Kind {
        Kind::Pgbench
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.pgbench.clone())
            .unwrap_or_else(|| PgbenchParams::new(Mode::ReadWrite));
        p.take_from(t)?;
        spec.pgbench = Some(p);
        Ok(())
    }
    fn check_host(&self, w: &WorkloadSpec) -> Result<(), String> {
        // Extra settings must be ones the installed server knows (`postgres
        // --describe-config`) and not the ones fsbench owns.
        match &w.pgbench {
            Some(p) => super::settings::check(p.settings.keys()),
            None => Ok(()),
        }
    }
    fn name(&self) -> &'static str {
        "pgbench"
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            tool: Some("pgbench"),
            // Both modes write: the server's WAL, checkpoints and hint bits.
            writes: Writes::Runner,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            TPS,
            TRANSACTIONS,
            FAILED_TRANSACTIONS,
            LAT_MEAN_MS,
            LAT_P50_MS,
            LAT_P95_MS,
            LAT_P99_MS,
            INIT_SECONDS,
            WAL_BYTES,
            DATA_BYTES,
            CPU_SERVER_S,
            CPU_CLIENT_S,
            SYSTEM_CPU_UTIL,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::pgbench("pgbench-rw", PgbenchParams::new(Mode::ReadWrite)).opt(),
            WorkloadSpec::pgbench("pgbench-ro", PgbenchParams::new(Mode::ReadOnly)).opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"pgbench-small\"\nkind = \"pgbench\"\nmode = \"rw\"\nscale = 2\nclients = 4\nduration = \"10s\""
    }
    /// initdb, start, stop and two checkpoints ≈ 15 s; `pgbench -i` ≈ 3 s per scale unit.
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        Cost::Seconds(w.pgbench.as_ref().map_or(30.0, |p| {
            // initdb, start and `pgbench -i` take about 4 s plus a quarter second per scale
            // unit here (a quiet run: 65 s per 60 s step at scale 10).
            4.0 + 0.25 * f64::from(p.scale) + p.duration.unwrap_or(d.runtime).as_secs_f64().ceil()
        }))
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        match &w.pgbench {
            Some(pg) => super::describe(pg, d.defaults.runtime),
            None => String::new(),
        }
    }
    fn available(&self, _: &WorkloadSpec) -> Result<(), String> {
        super::available()
    }
    /// One pgbench step on a private server in the data directory; `-T` is the workload's
    /// duration or the plan's runtime.
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p = w
            .pgbench
            .as_ref()
            .ok_or_else(|| crate::Error::workload(&w.id, "no pgbench parameters"))?;
        super::run(
            &cx.work,
            &RunSpec {
                id: &w.id,
                params: p,
                duration: p.duration.unwrap_or(cx.defaults.runtime),
                timeout: cx.tool_timeout,
            },
        )
    }
}
