//! The documented recipe for a workload kind (docs/ARCHITECTURE.md, "A workload kind"),
//! followed by a test: a kind written the way a new one is — a module with its `Kind`
//! constant, its `Workload` impl declaring its keys, needs, metrics, its program's package, a
//! profile entry and a flag, and one registration line (here `registry::register_for_test`,
//! the test build's stand-in for the line in `REGISTRY`) — is parsed from a plan file,
//! described by `fsbench plan`, found by the doctor, joins its profile, takes its flag, is run
//! by the real runner on a directory target and reported, with nothing else edited (the
//! flag's `plan/knobs.rs` row and clap field are the command line's, not exercised here).

#[cfg(test)]
mod tests {
    use crate::host::packages::{Manager, Package, Tool};
    use crate::metrics::MetricId;
    use crate::metrics::registry::{ENTRIES, OPS_PER_S};
    use crate::workload::api::ProfileEntry;
    use crate::workload::api::{
        Caches, Cost, Describe, Family, Kind, KindFlag, KindValue, Needs, Workload,
    };
    use crate::workload::api::{Metric, WorkloadOutput};
    use crate::workload::registry;
    use crate::workload::spec::{JobDefaults, WorkloadSpec};
    use crate::workload::step::StepContext;
    use serde::{Deserialize, Serialize};

    /// The kind's constant, declared in its own module as every kind's is.
    #[allow(non_upper_case_globals)]
    impl Kind {
        /// Creates files and counts them back (the recipe's test kind).
        pub const TestTally: Kind = Kind::named("test-tally");
    }

    /// Its parameters: one plan-file key of its own.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
    struct TallyParams {
        files: u32,
    }

    /// `--test-tally-files FILE`: the count written in FILE for every test-tally workload.
    fn tally_files(ws: &mut [WorkloadSpec], path: &std::ffi::OsStr) -> crate::Result<()> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| crate::Error::invalid("--test-tally-files", e.to_string()))?;
        let files: u32 = text
            .trim()
            .parse()
            .map_err(|_| crate::Error::invalid("--test-tally-files", "not a count"))?;
        for w in ws.iter_mut().filter(|w| w.kind == Kind::TestTally) {
            *w = w.clone().with_params(&TallyParams { files });
        }
        Ok(())
    }

    /// Creates `files` empty files in the data directory and counts what the directory then
    /// holds: real work on the target, a figure that is what it measured.
    struct Tally;

    impl Workload for Tally {
        fn kind(&self) -> Kind {
            Kind::TestTally
        }
        fn keys(&self) -> &'static [(&'static str, &'static str)] {
            &[("files", "files created and counted back")]
        }
        fn family(&self) -> Family {
            Family::Metadata
        }
        // A test's directory sits on the host's disk, whose write-back is not the kind's.
        // `true` stands for the program a real kind runs: declared here, read by the doctor.
        fn needs(&self, _: &WorkloadSpec) -> Needs {
            Needs {
                programs: &["true"],
                ..Needs::NOTHING
            }
        }
        // Its program's packages, which `host/packages.rs` does not list.
        fn packages(&self) -> &'static [Tool] {
            const TRUE: &[Tool] = &[Tool::new("true", Package::everywhere("coreutils"))];
            TRUE
        }
        // An opt-in entry in the default profile.
        fn profile_entries(&self) -> &'static [ProfileEntry] {
            &[ProfileEntry {
                profile: "quick",
                table: "id = \"tally-quick\"\nkind = \"test-tally\"\noptional = true\nfiles = 3",
            }]
        }
        fn flags(&self) -> &'static [KindFlag] {
            &[KindFlag {
                flags: &["--test-tally-files"],
                value_name: "FILE",
                value: KindValue::Path,
                doc: "The count every test-tally workload creates, read from FILE.",
                merge: "sets files on every test-tally workload",
                lands: "plan.json plan.workloads[].params.kind_params.files",
                alone: Some("quick"),
                apply: tally_files,
            }]
        }
        fn emits(&self) -> &'static [MetricId] {
            &[ENTRIES, OPS_PER_S]
        }
        fn example(&self) -> &'static str {
            "id = \"tally\"\nkind = \"test-tally\"\nfiles = 10"
        }
        fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
            Cost::Seconds(0.1)
        }
        fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
            let p: TallyParams = w.params_of().unwrap_or(TallyParams { files: 0 });
            format!("create {} files and count them", p.files)
        }
        // A count does not depend on the page cache: keep the machine's.
        fn prepare(&self, _: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<Caches> {
            Ok(Caches::Keep)
        }
        fn take_params(
            &self,
            t: &mut toml::Table,
            _: Option<&WorkloadSpec>,
            spec: &mut WorkloadSpec,
        ) -> Result<(), String> {
            let v = t.remove("files").ok_or("test-tally needs files = N")?;
            let files = v
                .as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("files = {v}: give a whole number from 1"))?;
            spec.set_params(&TallyParams { files });
            Ok(())
        }
        fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
            let p: TallyParams = w
                .params_of()
                .ok_or_else(|| crate::Error::workload(&w.id, "no test-tally parameters"))?;
            let dir = cx.work.dir.join(format!("tally-{}", cx.work.round));
            let io = |e| crate::Error::io("cannot create", &dir, e);
            std::fs::create_dir_all(&dir).map_err(io)?;
            let start = std::time::Instant::now();
            for i in 0..p.files {
                std::fs::File::create(dir.join(format!("f{i}"))).map_err(io)?;
            }
            let counted = std::fs::read_dir(&dir).map_err(io)?.count() as f64;
            let secs = start.elapsed().as_secs_f64().max(1e-9);
            Ok(WorkloadOutput {
                metrics: vec![
                    Metric::new(ENTRIES, "count", counted),
                    Metric::new(OPS_PER_S, "ops/s", counted / secs),
                ],
                ..Default::default()
            })
        }
    }

    #[test]
    fn a_kind_added_by_the_recipe_is_planned_run_and_reported() {
        registry::register_for_test(&Tally);
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::create_dir_all(&target).unwrap();
        let plan = d.path().join("plan.toml");
        std::fs::write(
            &plan,
            "rounds = 2\n[[workload]]\nid = \"tally-small\"\nkind = \"test-tally\"\nfiles = 7\n",
        )
        .unwrap();
        let o = crate::plan::Overrides {
            plan: Some(plan.clone()),
            dir: Some(target),
            out: Some(d.path().join("out")),
            ..Default::default()
        };
        let src = crate::plan::resolve::Source::read(&o).unwrap();
        let inv = crate::plan::resolve::resolve(
            &src,
            &o,
            &crate::host::facts::HostFacts::fixed(),
            vec![],
        )
        .unwrap();
        let w = inv
            .plan
            .workloads
            .iter()
            .find(|w| w.id == "tally-small")
            .expect("the plan file's workload is planned");
        assert_eq!(w.kind, Kind::TestTally);
        assert_eq!(w.params_of::<TallyParams>(), Some(TallyParams { files: 7 }));
        let steps = crate::report::plan::steps_table(&inv);
        assert!(
            steps.contains("tally-small") && steps.contains("create 7 files and count them"),
            "{steps}"
        );
        // Recorded under the one field's key, as every kind added since is.
        let json = serde_json::to_value(w).unwrap();
        assert_eq!(json["kind_params"]["files"], 7, "{json}");

        // Its program, as the doctor and --install-missing read it.
        assert_eq!(registry::programs_of("test-tally-x"), ["true"]);
        // Its package, declared by the kind, not a row of host/packages.rs.
        assert_eq!(crate::host::packages::package("true", Manager::Dnf), None);
        let doctor = |m| crate::doctor::tools::package("true", m, false);
        assert_eq!(doctor(Manager::Dnf), Some("coreutils"));
        assert_eq!(doctor(Manager::Apt), Some("coreutils"));
        // Its profile entry: the shipped profile, loaded, holds it, parsed by the kind.
        let quick = crate::plan::profiles::load("quick").unwrap();
        let entry = quick
            .workloads
            .iter()
            .find(|w| w.id == "tally-quick")
            .expect("the kind's profile entry joins quick");
        assert!(entry.optional);
        assert_eq!(
            entry.params_of::<TallyParams>(),
            Some(TallyParams { files: 3 })
        );
        // Its flag: alone it chooses its profile; with a plan it is applied to the plan.
        let count = d.path().join("count");
        std::fs::write(&count, "9\n").unwrap();
        let given = vec![("--test-tally-files".to_string(), count.into_os_string())];
        let alone = crate::plan::Overrides {
            kind_flags: given.clone(),
            ..Default::default()
        };
        assert_eq!(alone.kind_profile().profile.as_deref(), Some("quick"));
        let with_plan = crate::plan::Overrides {
            kind_flags: given,
            ..o.clone()
        };
        assert_eq!(with_plan.clone().kind_profile().profile, None);
        let mut flagged = inv.plan.workloads.clone();
        crate::plan::resolve::apply_kind_flags(&with_plan, &mut flagged).unwrap();
        let w = flagged.iter().find(|w| w.id == "tally-small").unwrap();
        assert_eq!(w.params_of::<TallyParams>(), Some(TallyParams { files: 9 }));

        let out = crate::runner::execute(&inv, false).unwrap();
        assert!(!out.interrupted);
        let entries: Vec<(u32, f64)> = out
            .results
            .samples
            .iter()
            .filter(|s| s.workload == "tally-small" && s.metric == ENTRIES)
            .map(|s| (s.round, s.value))
            .collect();
        assert_eq!(entries, [(1, 7.0), (2, 7.0)]);
        let info = out
            .results
            .workloads
            .iter()
            .find(|i| i.id == "tally-small")
            .expect("recorded");
        assert_eq!(info.kind, "test-tally");

        let report = crate::report::Report::new(&out.results);
        assert!(
            report
                .tables
                .iter()
                .flat_map(|t| t.rows.iter())
                .any(|r| r.workload == "tally-small" && r.metric == ENTRIES),
            "the report has its row"
        );

        // A key the kind does not declare is refused, naming the kind's own keys.
        std::fs::write(
            &plan,
            "[[workload]]\nid = \"t\"\nkind = \"test-tally\"\nfiles = 3\nfolders = 2\n",
        )
        .unwrap();
        let err = crate::plan::resolve::Source::read(&o)
            .and_then(|src| {
                crate::plan::resolve::resolve(
                    &src,
                    &o,
                    &crate::host::facts::HostFacts::fixed(),
                    vec![],
                )
            })
            .expect_err("an unknown key is refused")
            .to_string();
        assert!(err.contains("folders"), "{err}");
        assert!(
            err.contains("test-tally's own keys: files (files created and counted back)"),
            "{err}"
        );
    }
}
