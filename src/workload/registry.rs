//! The workload registry: lookups over the one list of kinds ([`REGISTRY`], in
//! `workload/mod.rs` beside each kind's `mod` line), one [`Workload`] entry each.
//!
//! Generic code (the runner's step, the ETA, `fsbench plan`, `fsbench meta`, the catalog,
//! `fsbench doctor`'s tool list, the plan file's keys) walks this table and asks each entry
//! what it needs, what it emits and how long it takes; nothing outside a kind's own module
//! matches on the kind. What a kind is (the trait and its types) lives in [`super::api`],
//! which imports no kind, so kinds depend on it and only the list names them.
//! docs/ARCHITECTURE.md ("How to add a workload") names the files a new kind touches.

pub use super::REGISTRY;
pub use super::api::*;
use super::spec::WorkloadSpec;

/// Every entry: [`REGISTRY`], and in unit tests the kinds a test added on its thread
/// ([`register_for_test`]), so a test can add a kind as the recipe does and plan and run it.
pub fn entries() -> Vec<&'static dyn Workload> {
    #[cfg(test)]
    let extra: Vec<&'static dyn Workload> = EXTRA.with(|e| e.borrow().clone());
    #[cfg(not(test))]
    let extra: Vec<&'static dyn Workload> = Vec::new();
    REGISTRY.iter().copied().chain(extra).collect()
}

/// Every `run`/`plan` flag a kind owns ([`super::api::KindFlag`]), in registry order.
pub fn flags() -> impl Iterator<Item = &'static super::api::KindFlag> {
    entries().into_iter().flat_map(|w| w.flags())
}

/// The registry entry of `kind`.
pub fn of(kind: Kind) -> &'static dyn Workload {
    entries()
        .into_iter()
        .find(|w| w.kind() == kind)
        .unwrap_or_else(|| panic!("workload kind {kind} has no registry entry"))
}

impl Kind {
    /// Parse a plan-file kind: a registered kind's name.
    pub fn parse(s: &str) -> Option<Kind> {
        entries()
            .into_iter()
            .find(|w| w.name() == s)
            .map(|w| w.kind())
    }

    /// Kinds whose results are `results.json` "io" jobs (they get a fio command line).
    pub fn is_io(self) -> bool {
        of(self).family() == Family::Io
    }

    /// Every registered kind's name, in registry order (the plan file's "unknown kind"
    /// message lists them).
    pub fn names() -> Vec<&'static str> {
        entries().into_iter().map(|w| w.name()).collect()
    }
}

/// A kind is read back by its registered name (an unknown name is an error naming the
/// known ones).
impl<'de> serde::Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Kind::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown workload kind {s:?} (known: {})",
                Kind::names().join(", ")
            ))
        })
    }
}

impl WorkloadSpec {
    /// Ids this workload needs to have run earlier in the same setup-round: what its
    /// registry entry says it needs (the data file, the extracted corpus).
    pub fn requires(&self) -> Vec<&'static str> {
        let needs = of(self.kind).needs(self);
        let mut ids = Vec::new();
        if needs.data_file {
            ids.push("layout");
        }
        if needs.corpus == CorpusUse::Tree {
            ids.push("untar");
        }
        ids
    }
}

/// The external programs workload `id` runs ([`Needs::tools`]): a catalog workload's from its
/// kind's `needs`, else (a plan file's own id) the kind whose name starts the id
/// (`pgbench-big`). `fsbench doctor` and `--install-missing` read this, so a kind that runs a
/// new program needs no edit outside its module (a program not seen before brings its
/// packages there too, [`declared_tool`]).
pub fn programs_of(id: &str) -> Vec<&'static str> {
    if let Some(w) = shipped().into_iter().find(|w| w.id == id) {
        return of(w.kind).needs(&w).tools();
    }
    entries()
        .into_iter()
        .find(|k| id.starts_with(k.name()))
        .map(|k| k.needs(&WorkloadSpec::simple(id, k.kind())).tools())
        .unwrap_or_default()
}

/// The `[[workload]]` tables the kinds add to shipped profile `profile`
/// ([`Workload::profile_entries`]), in registry order, as TOML to append to its text.
pub fn profile_tables(profile: &str) -> String {
    entries()
        .into_iter()
        .flat_map(|w| w.profile_entries())
        .filter(|e| e.profile == profile)
        .map(|e| format!("\n[[workload]]\n{}\n", e.table))
        .collect()
}

/// Every shipped profile a kind adds a table to (checked against the shipped profiles).
pub fn profiles_joined() -> Vec<&'static str> {
    entries()
        .into_iter()
        .flat_map(|w| w.profile_entries())
        .map(|e| e.profile)
        .collect()
}

/// The package row a kind declares for `program` ([`Workload::packages`]), the first kind's
/// in registry order; `None` when no kind declares one (then `host/packages.rs` has it).
pub fn declared_tool(program: &str) -> Option<&'static crate::host::packages::Tool> {
    entries()
        .into_iter()
        .flat_map(|w| w.packages())
        .find(|t| t.name == program)
}

/// For a plan-file error: `kind`'s own keys with their lines (`Workload::keys`), after a
/// `; ` — empty when the kind has none or is not known.
pub fn own_keys(kind: Option<Kind>) -> String {
    let Some(w) = kind.and_then(|k| entries().into_iter().find(|w| w.kind() == k)) else {
        return String::new();
    };
    if w.keys().is_empty() {
        return String::new();
    }
    let lines: Vec<String> = w
        .keys()
        .iter()
        .map(|(k, doc)| format!("{k} ({doc})"))
        .collect();
    format!("; kind {}'s own keys: {}", w.name(), lines.join(", "))
}

/// The registry entry a results file's recorded `kind` names, older files' names included
/// (`meta` was every metadata kind, `space` the statvfs step).
pub fn recorded(kind: &str) -> Option<&'static dyn Workload> {
    let kind = match kind {
        "meta" => Kind::Untar,
        "space" => Kind::UsableSpace,
        other => Kind::parse(other)?,
    };
    Some(of(kind))
}

#[cfg(test)]
thread_local! {
    static EXTRA: std::cell::RefCell<Vec<&'static dyn Workload>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Tests only: add a kind to the registry on this thread ([`entries`]), as the documented
/// recipe's line in [`REGISTRY`] would: it is then parsed, planned, run and reported.
#[cfg(test)]
pub fn register_for_test(w: &'static dyn Workload) {
    EXTRA.with(|e| e.borrow_mut().push(w));
}

/// Every kind's headline rows, in the seed's order ([`Headline::rank`]).
pub fn headlines() -> Vec<&'static Headline> {
    let mut rows: Vec<&'static Headline> = entries()
        .into_iter()
        .flat_map(|w| w.headlines().iter())
        .collect();
    rows.sort_by_key(|h| h.rank);
    rows
}

/// The label and short label of a recorded workload (its kind's [`Workload::named`] from its
/// recorded `params`, else [`Workload::names`]); a file that does not record its kind
/// (samples only), or an older kind that covered several (`meta`), is named by whichever
/// entry ships that id; any other workload is shown by its id.
pub fn names(kind: &str, id: &str, params: &serde_json::Value) -> (String, String) {
    if let Some(n) = recorded(kind).and_then(|w| w.named(params)) {
        return n;
    }
    let own = recorded(kind).and_then(|w| w.names(id));
    match own.or_else(|| entries().into_iter().find_map(|w| w.names(id))) {
        Some(n) => (n.label.to_string(), n.short.to_string()),
        None => (id.to_string(), id.to_string()),
    }
}

/// What a recorded workload is for: its question and its table. A recorded `class` (a plan
/// file's or a job file's own) wins over the kind's answer; an unknown kind answers nothing
/// and goes in the I/O table.
pub fn purpose(kind: &str, params: &serde_json::Value) -> (Option<Question>, Table) {
    let own = params
        .get("class")
        .and_then(|c| c.as_str())
        .and_then(Question::parse);
    match recorded(kind) {
        Some(w) => (own.or(Some(w.question(params))), w.table()),
        None => (own, Table::Io),
    }
}

/// For each of `ws`, the index of the first step of its chain: a step that must meet the
/// filesystem as its previous step left it ([`super::api::Workload::follows_previous`]:
/// `rm-tree` after `find-cold`) shares that step's chain, which a round by steps runs on one
/// setup before the next (`runner::by_step`, and `fsbench plan`'s table in the same order).
pub fn chain_heads(ws: &[WorkloadSpec]) -> Vec<usize> {
    let mut heads: Vec<usize> = Vec::with_capacity(ws.len());
    for (i, w) in ws.iter().enumerate() {
        let follows = i > 0 && of(w.kind).follows_previous(w);
        heads.push(if follows { heads[i - 1] } else { i });
    }
    heads
}

/// Whether `w` is a step of setup `setup`'s round `round`: timed workloads every round,
/// capability probes in the first round only, mkfs never (it is part of creating the setup),
/// and none on a setup the workload is not for ([`WorkloadSpec::setups`]).
pub fn step_in_round(w: &WorkloadSpec, setup: &str, round: u32) -> bool {
    if !w.setups.is_empty() && !w.setups.iter().any(|s| s == setup) {
        return false;
    }
    match of(w.kind).needs(w).phase {
        Phase::Setup => false,
        Phase::Timed => true,
        Phase::Capability => round == 1,
    }
}

/// The catalog: every kind's shipped workloads, in registry order.
pub fn shipped() -> Vec<WorkloadSpec> {
    entries().into_iter().flat_map(|w| w.shipped()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_rows_are_their_kinds_workloads_in_one_order() {
        let rows = headlines();
        let ranks: std::collections::BTreeSet<u8> = rows.iter().map(|h| h.rank).collect();
        assert_eq!(ranks.len(), rows.len(), "two rows share a rank");
        // Each row is a workload its kind ships or records (find-warm stands in for
        // find-cold without root), so the kind names it.
        for w in REGISTRY {
            for h in w.headlines() {
                assert!(
                    w.names(h.workload).is_some(),
                    "{}: headline row {} is not one of its workloads",
                    w.name(),
                    h.workload
                );
                assert!(!h.metrics.is_empty());
            }
        }
        assert_eq!(
            rows[0].workload, "randread",
            "seed 000 opens with 4K random reads"
        );
    }

    #[test]
    fn question_names_are_serdes() {
        for q in Question::ALL {
            assert_eq!(serde_json::to_value(q).unwrap(), q.name());
            assert_eq!(Question::parse(q.name()), Some(q));
        }
    }

    #[test]
    fn names_are_unique_and_match_the_serde_names() {
        let mut seen = std::collections::BTreeSet::new();
        for w in REGISTRY {
            assert!(seen.insert(w.name()), "duplicate kind {}", w.name());
            let json = serde_json::to_string(&w.kind()).unwrap();
            assert_eq!(json, format!("\"{}\"", w.name()));
            assert_eq!(Kind::parse(w.name()), Some(w.kind()));
            assert_eq!(of(w.kind()).name(), w.name(), "one entry per kind");
        }
    }

    #[test]
    fn shipped_ids_are_unique_and_of_their_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for k in REGISTRY {
            for w in k.shipped() {
                assert!(seen.insert(w.id.clone()), "duplicate workload id {}", w.id);
                assert_eq!(w.kind, k.kind(), "{}", w.id);
            }
        }
    }

    #[test]
    fn emitted_metric_ids_are_unique_per_kind() {
        for k in REGISTRY {
            let mut seen = std::collections::BTreeSet::new();
            for m in k.emits() {
                assert!(seen.insert(*m), "{} lists {m} twice", k.name());
            }
            let setup_only = k.needs(&WorkloadSpec::simple("x", k.kind())).phase == Phase::Setup;
            assert!(
                setup_only || !k.emits().is_empty(),
                "{} emits nothing",
                k.name()
            );
        }
    }

    #[test]
    fn the_keys_a_kind_takes_are_the_keys_it_declares() {
        for k in REGISTRY {
            let mut t: toml::Table = toml::from_str(k.example())
                .unwrap_or_else(|e| panic!("{}: example is not TOML: {e}", k.name()));
            let before: Vec<String> = t.keys().cloned().collect();
            let mut spec = WorkloadSpec::simple("x", k.kind());
            k.take_params(&mut t, None, &mut spec)
                .unwrap_or_else(|e| panic!("{}: example refused: {e}", k.name()));
            for key in before.iter().filter(|key| !t.contains_key(*key)) {
                assert!(
                    k.keys().iter().any(|(d, _)| *d == key.as_str()),
                    "{} takes `{key}` but does not declare it in keys()",
                    k.name()
                );
            }
            for (key, doc) in k.keys() {
                assert!(
                    !doc.is_empty() && !doc.contains('\n'),
                    "{}: {key}",
                    k.name()
                );
            }
        }
        assert!(own_keys(Some(Kind::Pgbench)).contains("scale (scale factor"));
        // An I/O job's keys are the io kind's own, read by it (`job_keys`).
        assert!(own_keys(Some(Kind::Io)).contains("rw (read, write"));
        assert_eq!(own_keys(Some(Kind::Mkfs)), "");
    }

    #[test]
    fn programs_come_from_the_kinds_needs() {
        assert_eq!(programs_of("pgbench-rw"), ["pg_ctl", "initdb", "pgbench"]);
        assert_eq!(programs_of("crash-pgbench"), ["pg_ctl", "initdb"]);
        assert!(programs_of("crash-fsync").is_empty());
        assert_eq!(programs_of("sqlite-wal"), ["sqlite3"]);
        // Their packages: host's table, or the kind's own row for sqlite3, git and postmark.
        let dnf = |p| crate::doctor::tools::package(p, crate::host::packages::Manager::Dnf, false);
        assert_eq!(dnf("sqlite3"), Some("sqlite"));
        assert_eq!(dnf("git"), Some("git"));
        assert_eq!(dnf("postmark"), None);
        assert_eq!(crate::doctor::tools::debian_package("postmark"), "postmark");
        assert_eq!(programs_of("git"), ["git"]);
        assert_eq!(programs_of("backup"), ["fstrim"]);
        assert_eq!(programs_of("randread"), Vec::<&str>::new());
        // A plan file's own id of a kind is known by the kind's name.
        assert_eq!(programs_of("pgbench-big"), ["pg_ctl", "initdb", "pgbench"]);
        for w in shipped().iter().filter(|w| w.id.starts_with("vm-")) {
            assert_eq!(
                programs_of(&w.id),
                ["qemu-img", "qemu-storage-daemon"],
                "{}",
                w.id
            );
        }
    }

    #[test]
    fn kind_parameters_read_from_older_and_newer_files_alike() {
        use crate::workload::pgbench::PgbenchParams;
        let rw = shipped()
            .into_iter()
            .find(|w| w.id == "pgbench-rw")
            .unwrap();
        let json = serde_json::to_value(&rw).unwrap();
        // The older kinds keep their own key, so files before and after compare alike.
        assert!(json.get("pgbench").is_some() && json.get("kind_params").is_none());
        let back: WorkloadSpec = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, rw);
        // A file written when the parameters were a field of their own (only the fields
        // that had no default) reads the same.
        let old = serde_json::json!({
            "id": "pgbench-rw",
            "kind": "pgbench",
            "optional": true,
            "pgbench": json["pgbench"].clone(),
        });
        let back: WorkloadSpec = serde_json::from_value(old).unwrap();
        assert_eq!(back, rw);
        assert_eq!(
            back.params_of::<PgbenchParams>(),
            rw.params_of::<PgbenchParams>()
        );
        // A kind added since records under `kind_params`, and a kind without parameters
        // under none.
        let git =
            serde_json::to_value(shipped().into_iter().find(|w| w.id == "git").unwrap()).unwrap();
        assert!(git.get("kind_params").is_some(), "{git}");
        let mkfs = serde_json::to_value(WorkloadSpec::simple("mkfs", Kind::Mkfs)).unwrap();
        let params = ["kind_params", "io", "memory_limit", "size"];
        assert!(params.iter().all(|k| mkfs.get(k).is_none()), "{mkfs}");
        let back: WorkloadSpec = serde_json::from_value(mkfs).unwrap();
        assert_eq!(back.kind_params, None);
        // The I/O job stays under `io`, memcap's cap under `memory_limit`, where they were as
        // fields of their own; a file of then (nulls for the unset ones) reads the same.
        let randread = shipped().into_iter().find(|w| w.id == "randread").unwrap();
        let rr = serde_json::to_value(&randread).unwrap();
        assert!(
            rr.get("kind_params").is_none() && rr["io"]["rw"] == "randread",
            "{rr}"
        );
        let mut old = rr.clone();
        for k in ["memory_limit", "size", "baseline"] {
            old[k] = serde_json::Value::Null;
        }
        let back: WorkloadSpec = serde_json::from_value(old).unwrap();
        assert_eq!(back, randread);
        assert_eq!(back.io_job().unwrap().iodepth, 8);
        let mut cap = WorkloadSpec::io("cap", randread.io_job().unwrap());
        cap.kind = Kind::Memcap;
        cap.set_param("memory_limit", &(512u64 << 20));
        let json = serde_json::to_value(&cap).unwrap();
        assert_eq!(json["memory_limit"], 512 << 20, "{json}");
        let back: WorkloadSpec = serde_json::from_value(json).unwrap();
        assert_eq!(back, cap);
        assert_eq!(back.param::<u64>("memory_limit"), Some(512 << 20));
        // `fsbench meta` gave every workload both sizes: each kind reads its own, and the
        // workload is written back as it was read.
        use crate::workload::meta::{FsmarkSpec, SmallFilesSpec};
        let fsmark = FsmarkSpec {
            threads: 2,
            ..Default::default()
        };
        let old = serde_json::json!({
            "id": "fsmark",
            "kind": "fsmark",
            "smallfiles": SmallFilesSpec::default(),
            "fsmark": fsmark,
        });
        let back: WorkloadSpec = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(back.params_of::<FsmarkSpec>(), Some(fsmark));
        let again = serde_json::to_value(&back).unwrap();
        assert_eq!(
            (&again["smallfiles"], &again["fsmark"]),
            (&old["smallfiles"], &old["fsmark"])
        );
        // An unknown kind is an error naming the known ones.
        let e = serde_json::from_value::<Kind>(serde_json::json!("nope")).unwrap_err();
        assert!(e.to_string().contains("pgbench"), "{e}");
    }

    /// The registry's list names the kinds; what the kinds build on names none of them, so no
    /// import circle runs through a kind (issue 39's `registry` ↔ `kind.rs` ↔ `spec` ↔ `step`).
    #[test]
    fn what_kinds_build_on_imports_no_kind_and_not_the_registry() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/workload");
        // A kind's module: a directory with a kind.rs, and the single-file kinds.
        let mut kinds: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                p.join("kind.rs")
                    .exists()
                    .then(|| p.file_name().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        kinds.extend(["builtin", "fake", "registry"].map(String::from));
        assert!(kinds.iter().any(|k| k == "pgbench"), "{kinds:?}");
        for file in ["api.rs", "spec.rs", "step.rs", "corpus.rs"] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            for line in code.lines().filter(|l| l.trim_start().starts_with("use ")) {
                for k in &kinds {
                    assert!(
                        !line.contains(&format!("super::{k}"))
                            && !line.contains(&format!("workload::{k}")),
                        "{file} imports {k}: {line}"
                    );
                }
            }
        }
    }
}
