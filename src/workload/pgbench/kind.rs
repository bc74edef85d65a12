//! Registry entry of `pgbench`: PostgreSQL's benchmark on a private server in the data
//! directory.

use super::{Mode, PgbenchParams, RunSpec};
use crate::metrics::MetricId;
use crate::workload::api::{
    Cost, Describe, Family, Kind, Needs, ProfileEntry, Workload, WorkloadOutput, Writes,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// PostgreSQL's pgbench on a private server.
    pub const Pgbench: Kind = Kind::named("pgbench");
}

impl WorkloadSpec {
    /// A pgbench workload.
    pub fn pgbench(id: &str, params: PgbenchParams) -> Self {
        WorkloadSpec::simple(id, Kind::Pgbench).with_params(&params)
    }
}

/// pgbench on a private server.
pub struct Pgbench;

impl Workload for Pgbench {
    fn kind(&self) -> Kind {
        Kind::Pgbench
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "mode",
                "\"rw\" | \"ro\" (read-write TPC-B-like, or select-only)",
            ),
            ("scale", "scale factor (1 is about 15 MiB of tables)"),
            ("clients", "client connections"),
            ("threads", "worker threads (at most clients)"),
            (
                "duration",
                "measured time (\"60s\"; else the plan's runtime)",
            ),
            ("shared_buffers", "PostgreSQL's shared_buffers (\"32M\")"),
            (
                "settings",
                "further server settings ({ checkpoint_timeout = \"5min\" })",
            ),
        ]
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.params_of::<PgbenchParams>())
            .unwrap_or_else(|| PgbenchParams::new(Mode::ReadWrite));
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn check_host(&self, w: &WorkloadSpec) -> Result<(), String> {
        // Extra settings must be ones the installed server knows (`postgres
        // --describe-config`) and not the ones fsbench owns.
        match &w.params_of::<PgbenchParams>() {
            Some(p) => super::settings::check(p.settings.keys()),
            None => Ok(()),
        }
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            tool: Some("pgbench"),
            programs: &["pg_ctl", "initdb", "pgbench"],
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
    // Opt-in in quick (--only pgbench-rw,pgbench-ro), on scale 2 (≈30 MiB) for the plan's 2 s;
    // the db profile runs them at full size.
    fn profile_entries(&self) -> &'static [ProfileEntry] {
        &[
            ProfileEntry {
                profile: "quick",
                table: "id = \"pgbench-rw\"\noptional = true\nscale = 2",
            },
            ProfileEntry {
                profile: "quick",
                table: "id = \"pgbench-ro\"\noptional = true\nscale = 2",
            },
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
        Cost::Seconds(w.params_of::<PgbenchParams>().as_ref().map_or(30.0, |p| {
            // initdb, start and `pgbench -i` take about 4 s plus a quarter second per scale
            // unit here (a quiet run: 65 s per 60 s step at scale 10).
            4.0 + 0.25 * f64::from(p.scale) + p.duration.unwrap_or(d.runtime).as_secs_f64().ceil()
        }))
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        match &w.params_of::<PgbenchParams>() {
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
        let p = &w
            .params_of::<PgbenchParams>()
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
