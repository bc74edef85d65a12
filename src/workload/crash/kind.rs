//! Registry entry of the crash-consistency workloads (`crash-fsync`, `crash-append`,
//! `crash-rename`, PostgreSQL's `crash-pgbench`, and the quick path `crash-shutdown`): each works on a small image of its
//! own, so it runs once per setup, in its capability phase.

use super::{CrashParams, Method, Mode};
use crate::metrics::MetricId;
use crate::workload::api::{Cost, Describe, Family, Kind, Needs, Phase, Workload, WorkloadOutput};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Crash consistency on a recording image.
    pub const Crash: Kind = Kind::named("crash");
}

impl WorkloadSpec {
    /// A crash-consistency workload.
    pub fn crash(id: &str, params: CrashParams) -> Self {
        WorkloadSpec::simple(id, Kind::Crash).with_params(&params)
    }
}

/// The crash-consistency oracle.
pub struct Crash;

/// The shipped quick path's id.
pub const SHUTDOWN_ID: &str = "crash-shutdown";

fn params(w: &WorkloadSpec) -> CrashParams {
    w.params_of::<CrashParams>().unwrap_or_else(|| {
        if w.id == SHUTDOWN_ID {
            return CrashParams::shutdown();
        }
        let mode = Mode::ALL
            .into_iter()
            .find(|m| m.id() == w.id)
            .unwrap_or(Mode::Fsync);
        CrashParams::new(mode)
    })
}

impl Workload for Crash {
    fn kind(&self) -> Kind {
        Kind::Crash
    }
    fn claims(&self) -> &'static str {
        include_str!("claims.toml")
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "mode",
                "\"fsync\" | \"append\" | \"rename\" | \"pgbench\" (PostgreSQL commits)",
            ),
            (
                "ops",
                "acknowledged operations (pgbench: transactions) recorded",
            ),
            ("states", "crash states checked"),
            ("seed", "seed of the random subsets"),
            (
                "sync",
                "false skips the durability calls: the negative control",
            ),
            (
                "method",
                "\"replay\" (recorded states) | \"shutdown\" (FS_IOC_SHUTDOWN quick path)",
            ),
        ]
    }
    fn family(&self) -> Family {
        Family::Capability
    }
    fn question(&self, _: &serde_json::Value) -> crate::workload::api::Question {
        crate::workload::api::Question::Durability
    }
    fn table(&self) -> crate::workload::api::Table {
        crate::workload::api::Table::Crash
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        Needs {
            programs: if params(w).mode == Mode::Pgbench {
                &["pg_ctl", "initdb"]
            } else {
                &[]
            },
            own_image: true,
            root: true,
            phase: Phase::Capability,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            CRASH_STATES,
            LOST_ACKED_OPS,
            LOST_STATES,
            CORRUPT_FILES,
            FSCK_ERRORS,
            UNMOUNTABLE_STATES,
            SECONDS_PER_STATE,
            ACKED_OPS,
            LOG_BYTES,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        Mode::ALL
            .into_iter()
            .map(|m| WorkloadSpec::crash(m.id(), CrashParams::new(m)).opt())
            .chain([WorkloadSpec::crash(SHUTDOWN_ID, CrashParams::shutdown()).opt()])
            .collect()
    }
    fn example(&self) -> &'static str {
        "id = \"crash-nosync\"\nkind = \"crash\"\nmode = \"fsync\"\nops = 40\nstates = 12\nsync = false"
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        // Recording takes a few seconds; a state about half a second (mount, check, fsck), a
        // PostgreSQL one a few (the server's start and stop); a shutdown cycle mounts twice.
        let p = params(w);
        let (record, per_state) = p.mode.cost_seconds();
        match p.method {
            Method::Replay => Cost::Seconds(record + per_state * p.states as f64),
            Method::Shutdown => Cost::Seconds(2.0 + 1.2 * p.states as f64),
        }
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p = params(w);
        if p.method == Method::Shutdown {
            return format!(
                "{} shutdown(s) (FS_IOC_SHUTDOWN, log unflushed) after {} × {}{} each, on an \
                 image of its own, remounted and checked (quick path, no recorder)",
                p.states,
                p.ops,
                p.mode.calls(),
                if p.sync { "" } else { " without the syncs" },
            );
        }
        format!(
            "{} × {}{} on a recording image of its own, {} crash states checked",
            p.ops,
            p.mode.calls(),
            if p.sync {
                String::new()
            } else {
                format!(" ({})", p.mode.unsynced())
            },
            p.states
        )
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .map(params)
            .unwrap_or_else(|| CrashParams::new(Mode::Fsync));
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn refused_on_dir(&self, w: &WorkloadSpec) -> Option<&'static str> {
        Some(match params(w).method {
            Method::Replay => {
                "it records the block device under a filesystem it makes itself, and a --dir \
                 target has no device to record; run it on an image (the default) or --device"
            }
            Method::Shutdown => {
                "it makes a filesystem of its own on a loop image to shut down, and a --dir \
                 target may not make images; run it on an image (the default) or --device"
            }
        })
    }
    fn available(&self, w: &WorkloadSpec) -> Result<(), String> {
        let p = params(w);
        if p.method == Method::Replay && !std::path::Path::new("/dev/fuse").exists() {
            return Err("the crash recorder needs FUSE (/dev/fuse)".into());
        }
        if p.mode == Mode::Pgbench {
            crate::workload::pgbench::available()?;
        }
        Ok(())
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let setup = cx.setup;
        let caps = cx.driver.map_or(crate::fs::Caps::NONE, |d| *d.caps());
        if let crate::fs::caps::Crash::Unsupported(why) = caps.crash {
            let built: Vec<&str> = crate::fs::DRIVERS
                .iter()
                .filter(|r| matches!(r.driver.caps().crash, crate::fs::caps::Crash::Clones { .. }))
                .map(|r| r.name)
                .collect();
            return Err(crate::Error::workload(
                &w.id,
                format!(
                    "crash states are built for {}; {} is not comparable here{why}",
                    built.join(", "),
                    setup.fs,
                ),
            ));
        }
        let fs = cx.driver(&w.id)?;
        let p = params(w);
        let run = match p.method {
            Method::Replay => super::run,
            Method::Shutdown => super::shutdown::run,
        };
        run(&w.id, fs, setup, &p, cx.scratch, cx.tool_timeout)
    }
}
