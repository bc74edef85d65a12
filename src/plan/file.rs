//! TOML plan files (`--plan FILE`) and the profiles shipped inside the binary.
//!
//! ```toml
//! name = "mine"
//! rounds = 3
//! runtime = "30s"
//! ramp = "5s"
//! file_size = "4G"          # or "4xram" (times RAM, capped to fit the target)
//! suite = "standard"        # start from the standard suite (else only [[workload]]s)
//! fs = ["ext4", "xfs", "zfs-16k=zfs:recordsize=16K"]   # same syntax as --fs
//! steady_state = "5,20,10"  # run each I/O job in rounds until steady (as --steady-state N,RANGE,SLOPE)
//! steady_round = "60s"      # … rounds this long (as --steady-round; steady_quick = true: seconds)
//! steady_max = "25m"        # … for at most this long (as --steady-max; 25 rounds at most)
//! precondition = true       # with --device: condition device and data file (as --precondition)
//! aged_twins = "churn:1"    # every setup also aged: its twin NAME-aged with age=churn:1 (docs/aging.md)
//!                           # PROFILE[:AMOUNT[:FULLNESS%]][:layout=SCORE][:replicate=re-age|restore],
//!                           # as a [[setup]]'s age = "…": stop at a layout score, restore later rounds
//!
//! [[setup]]                 # or as tables
//! name = "btrfs-zstd"
//! fs = "btrfs"
//! mount = ["noatime", "compress=zstd:3"]
//!
//! [[workload]]
//! id = "randread"
//! rw = "randread"
//! bs = "4k"
//! numjobs = 4
//! sweep = { param = "iodepth", values = [1, 8, 32, 128] }   # → randread-qd1 … randread-qd128
//!
//! [[workload]]              # a kind's own keys (pgbench: mode, scale, clients…)
//! id = "pgbench-rw"         # a catalog id: its kind and parameters, then the keys over them
//! scale = 10
//! clients = 32
//! ```
//!
//! Each kind declares its own keys, with a line each, in its module (`Workload::keys`, read
//! through `workload::registry::own_keys`); a `[[workload]]` table with a key neither common
//! nor its kind's is refused with that list, and an unknown `kind` with the registry's kinds.

use super::knobs::{self, PlanValues};
use super::setup_syntax;
use super::workload::{Kind, SweepPoint, WorkloadSpec, catalog};
use super::{FileSize, SetupSpec};
use crate::Error;
use crate::workload::registry::Question;
use serde::Deserialize;

/// A plan as written in a file or profile, before CLI overrides and target-dependent sizing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanDraft {
    /// Profile or file name.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// The values the flags may override (rounds, times, corpus, steady state…), read by
    /// their rows' keys ([`super::knobs::PlanValues`]).
    pub values: PlanValues,
    /// Data file size.
    pub file_size: Option<FileSize>,
    /// Largest share of the target the data file may take when sized from RAM.
    pub file_size_cap: Option<f64>,
    /// Setups (empty = every filesystem whose tools are present).
    pub setups: Vec<SetupSpec>,
    /// Every workload the plan can run, optional ones included, in order.
    pub workloads: Vec<WorkloadSpec>,
    /// fio job files of `kind = "fio-job"` workloads, as written (relative to the plan file);
    /// each expands into one workload per section when the plan is resolved.
    pub fio_jobs: Vec<std::path::PathBuf>,
    /// `aged_twins = "PROFILE[:AMOUNT]"`: every setup also runs aged, as `NAME-aged`
    /// ([`crate::fs::setup::age`]); checked when the file is read.
    pub aged_twins: Option<String>,
}

/// The keys of a plan file other than [`PlanValues`]'. Which keys a plan file takes at all is
/// the knob and parameter tables' ([`knobs::unknown_key`]), checked before this is read.
#[derive(Debug, Deserialize)]
struct RawPlan {
    name: Option<String>,
    description: Option<String>,
    file_size: Option<String>,
    file_size_cap: Option<f64>,
    suite: Option<String>,
    #[serde(default)]
    fs: Vec<String>,
    #[serde(default)]
    setup: Vec<toml::Table>,
    #[serde(default)]
    workload: Vec<toml::Table>,
    aged_twins: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    id: String,
    kind: Option<String>,
    class: Option<String>,
    /// memcap takes its `memory_limit` out itself; on other kinds it stays accepted and unused.
    #[serde(rename = "memory_limit")]
    _memory_limit: Option<toml::Value>,
    baseline: Option<String>,
    optional: Option<bool>,
    setups: Option<Vec<String>>,
}

/// Largest plan file read: a hand-written plan is a few KiB.
pub const MAX_PLAN_BYTES: usize = 1 << 20;

fn bad(origin: &str, msg: impl Into<String>) -> Error {
    Error::invalid(origin.to_string(), msg.into())
}

/// Parse a plan file's text. `origin` names it in errors (`--plan my.toml`, `profile quick`).
pub fn parse(text: &str, origin: &str) -> crate::Result<PlanDraft> {
    if text.len() > MAX_PLAN_BYTES {
        return Err(bad(
            origin,
            format!(
                "{} bytes is not a plan file (at most {MAX_PLAN_BYTES}); give the TOML plan",
                text.len()
            ),
        ));
    }
    // Ranges first (parameter table), so `rounds = -1` or `copies = 0` is told as a range
    // with its line rather than as a type error or not at all.
    let table: toml::Table = toml::from_str(text).map_err(|e| bad(origin, e.to_string()))?;
    super::params::file::check(&table, text, origin)?;
    if let Some((key, msg)) = knobs::unknown_key(&table) {
        let at = match super::params::file::line_of_key(text, &key) {
            Some(l) => format!("{origin}:{l}"),
            None => origin.to_string(),
        };
        return Err(bad(
            &at,
            format!(
                "{msg}; a plan file takes {} (docs/parameters.md)",
                knobs::plan_keys().join(", ")
            ),
        ));
    }
    let values = PlanValues::from_plan(&knobs::Reader::new(&table, text, origin))?;
    let raw: RawPlan = toml::from_str(text).map_err(|e| bad(origin, e.to_string()))?;
    let mut d = PlanDraft {
        name: raw.name.clone().unwrap_or_else(|| origin.to_string()),
        description: raw.description.clone().unwrap_or_default(),
        values,
        file_size: raw
            .file_size
            .as_deref()
            .map(|s| FileSize::parse(s).map_err(|e| bad(origin, format!("file_size: {e}"))))
            .transpose()?,
        file_size_cap: raw.file_size_cap,
        aged_twins: match &raw.aged_twins {
            Some(t) => {
                crate::fs::setup::age::parse(t, "aged_twins")
                    .map_err(|e| bad(origin, e.to_string()))?;
                Some(t.clone())
            }
            None => None,
        },
        ..Default::default()
    };
    if let Some(cap) = d.file_size_cap
        && !(cap > 0.0 && cap <= 0.95)
    {
        return Err(bad(origin, "file_size_cap must be a fraction in (0, 0.95]"));
    }
    d.setups = setup_syntax::parse_fs_list(&raw.fs).map_err(|e| retag(e, origin))?;
    for t in &raw.setup {
        d.setups.push(setup_table(t, origin)?);
    }
    setup_syntax::check_unique(&d.setups).map_err(|e| retag(e, origin))?;
    if !d.setups.is_empty() {
        super::params::SETUPS
            .check_u64(d.setups.len() as u64)
            .map_err(|e| {
                bad(
                    origin,
                    format!("{} setups (fs and [[setup]]): {e}", d.setups.len()),
                )
            })?;
    }
    match raw.suite.as_deref() {
        None => {}
        Some("standard") => d.workloads = catalog(),
        Some(other) => {
            return Err(bad(
                origin,
                format!("suite = \"{other}\" is unknown; the only suite is \"standard\""),
            ));
        }
    }
    for t in &raw.workload {
        if t.get("kind").and_then(|k| k.as_str()) == Some("fio-job") {
            d.fio_jobs.push(fio_job_table(t, origin)?);
            continue;
        }
        let base_id = t.get("id").map(value_string).unwrap_or_default();
        for (w, point) in expand_sweep(t, origin)? {
            let mut spec = workload_table(w, &base_id, origin)?;
            spec.sweep = point;
            if let Some(slot) = d.workloads.iter_mut().find(|x| x.id == spec.id) {
                *slot = spec;
            } else {
                d.workloads.push(spec);
            }
        }
    }
    for w in &d.workloads {
        if let Some(name) = w
            .setups
            .iter()
            .find(|n| !d.setups.iter().any(|s| &s.name == *n))
        {
            let names: Vec<&str> = d.setups.iter().map(|s| s.name.as_str()).collect();
            return Err(bad(
                origin,
                format!(
                    "workload {}: setups names \"{name}\", which is not a setup of this plan (setups: {})",
                    w.id,
                    names.join(", ")
                ),
            ));
        }
    }
    if d.workloads.is_empty() && d.fio_jobs.is_empty() {
        return Err(bad(
            origin,
            "the plan has no workloads; add suite = \"standard\", [[workload]] tables or kind = \"fio-job\" with a path",
        ));
    }
    Ok(d)
}

/// `[[workload]] kind = "fio-job", path = "x.fio"`: the sections become workloads later.
fn fio_job_table(t: &toml::Table, origin: &str) -> crate::Result<std::path::PathBuf> {
    for k in t.keys() {
        if !matches!(k.as_str(), "kind" | "path") {
            return Err(bad(
                origin,
                format!(
                    "fio-job workload: unknown key '{k}'; it takes path = \"FILE.fio\" only (ids come from the sections)"
                ),
            ));
        }
    }
    t.get("path")
        .and_then(|p| p.as_str())
        .map(std::path::PathBuf::from)
        .ok_or_else(|| bad(origin, "fio-job workload needs path = \"FILE.fio\""))
}

fn retag(e: Error, origin: &str) -> Error {
    match e {
        Error::InvalidInput { message, .. } => bad(origin, message),
        other => other,
    }
}

fn value_string(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn setup_table(t: &toml::Table, origin: &str) -> crate::Result<SetupSpec> {
    let get = |k: &str| t.get(k).map(value_string);
    let fs = get("fs").ok_or_else(|| bad(origin, "[[setup]] needs fs = \"ext4\"|\"xfs\"|…"))?;
    let name = get("name").unwrap_or_else(|| fs.clone());
    let mut pairs = Vec::new();
    for (k, v) in t {
        if k == "fs" || k == "name" {
            continue;
        }
        match v {
            toml::Value::Array(items) => {
                let joined: Vec<String> = items.iter().map(value_string).collect();
                // mkfs words are re-split like a shell: each array item stays one literal word.
                let text = if k == "mkfs" {
                    joined
                        .iter()
                        .map(|w| super::words::quote(w))
                        .collect::<Vec<_>>()
                        .join(" ")
                } else {
                    joined.join(",")
                };
                pairs.push((k.clone(), text));
            }
            toml::Value::Boolean(b) => pairs.push((k.clone(), b.to_string())),
            other => pairs.push((k.clone(), value_string(other))),
        }
    }
    setup_syntax::build_setup(&name, &fs, &pairs, &format!("[[setup]] {name}"))
        .map_err(|e| retag(e, origin))
}

/// Short id suffix for a swept parameter (`numjobs` → `j4`, `iodepth` → `qd32`).
fn sweep_suffix(param: &str, value: &toml::Value) -> String {
    let v = value_string(value).to_ascii_lowercase();
    match param {
        "numjobs" => format!("j{v}"),
        "iodepth" => format!("qd{v}"),
        "bs" => format!("bs{v}"),
        "rwmixread" => format!("mix{v}"),
        "memory_limit" => format!("mem{v}"),
        other => format!("{other}{v}"),
    }
}

/// Expand `sweep = { param, values }` into one table per value with ids `ID-SUFFIX`, each
/// with the point of the sweep it is (numeric values only: a curve needs an axis).
fn expand_sweep(
    t: &toml::Table,
    origin: &str,
) -> crate::Result<Vec<(toml::Table, Option<SweepPoint>)>> {
    let Some(sweep) = t.get("sweep") else {
        return Ok(vec![(t.clone(), None)]);
    };
    let id = t.get("id").map(value_string).unwrap_or_default();
    let err = |m: &str| bad(origin, format!("workload '{id}': sweep {m}"));
    let sweep = sweep
        .as_table()
        .ok_or_else(|| err("must be a table { param = \"…\", values = [...] }"))?;
    let param = sweep
        .get("param")
        .and_then(|p| p.as_str())
        .ok_or_else(|| err("needs param = \"numjobs\" (or another job parameter)"))?;
    let values = sweep
        .get("values")
        .and_then(|v| v.as_array())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| err("needs a non-empty values = [...]"))?;
    if matches!(param, "id" | "kind" | "sweep") {
        return Err(err(&format!("cannot sweep '{param}'")));
    }
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        let mut one = t.clone();
        one.remove("sweep");
        one.insert(param.to_string(), v.clone());
        one.insert(
            "id".into(),
            toml::Value::String(format!("{id}-{}", sweep_suffix(param, v))),
        );
        let point = crate::units::toml_size(v).ok().map(|value| SweepPoint {
            family: id.clone(),
            param: param.to_string(),
            value,
        });
        out.push((one, point));
    }
    Ok(out)
}

/// Build one workload; `base_id` (the id before any sweep suffix) picks the standard job whose
/// parameters it inherits, so `id = "randread"` with a sweep keeps 4 jobs × 4K.
fn workload_table(mut t: toml::Table, base_id: &str, origin: &str) -> crate::Result<WorkloadSpec> {
    let id_hint = t.get("id").map(value_string).unwrap_or_default();
    // The kind takes its own keys out first (registry: `Workload::take_params`); what is left
    // must be known here.
    let own = take_own_params(&mut t, base_id, origin)?;
    let raw: RawWorkload = toml::Value::Table(t).try_into().map_err(|e| {
        let kind = own.as_ref().map(|w| w.kind);
        let hint = crate::workload::registry::own_keys(kind);
        bad(origin, format!("[[workload]] {id_hint}: {e}{hint}"))
    })?;
    let ctx = format!("workload '{}'", raw.id);
    let kind = match raw.kind.as_deref() {
        Some(k) => Kind::parse(k).ok_or_else(|| {
            bad(
                origin,
                format!(
                    "{ctx}: unknown kind '{k}'; use one of {}",
                    Kind::names().join(", ")
                ),
            )
        })?,
        // The kind its keys imply, else its catalog id's (`take_own_params` found it).
        None => own
            .as_ref()
            .map(|w| w.kind)
            .ok_or_else(|| bad(origin, format!("{ctx}: give kind = \"…\" or rw = \"…\"")))?,
    };
    let mut spec = match own {
        Some(o) if o.kind == kind => o,
        _ => WorkloadSpec::simple(&raw.id, kind),
    };
    spec.id = raw.id.clone();
    spec.optional = raw.optional.unwrap_or(false);
    spec.setups = raw.setups.clone().unwrap_or_default();
    spec.baseline = raw.baseline.clone();
    if let Some(c) = &raw.class {
        spec.class = Some(Question::parse(c).ok_or_else(|| {
            bad(
                origin,
                format!(
                    "{ctx}: class = \"{c}\" is unknown; use one of {}",
                    Question::class_names().join(", ")
                ),
            )
        })?);
    }
    crate::workload::registry::of(kind)
        .complete(&mut spec)
        .map_err(|m| bad(origin, format!("{ctx}: {m}")))?;
    Ok(spec)
}

/// The workload as far as its kind's own keys go ([`Workload::take_params`]), taken out of
/// its table. The kind is the table's `kind` or that of the catalog workload named `base_id`;
/// `None` when neither names one (the common keys then say what is wrong).
///
/// [`Workload::take_params`]: crate::workload::registry::Workload::take_params
fn take_own_params(
    t: &mut toml::Table,
    base_id: &str,
    origin: &str,
) -> crate::Result<Option<WorkloadSpec>> {
    let base = catalog().into_iter().find(|w| w.id == base_id);
    let kind = match t.get("kind").and_then(|k| k.as_str()) {
        Some(k) => Kind::parse(k),
        None => crate::workload::job_keys::implied_kind(t).or(base.as_ref().map(|w| w.kind)),
    };
    let Some(kind) = kind else {
        return Ok(None);
    };
    let id = t.get("id").map(value_string).unwrap_or_default();
    let mut spec = WorkloadSpec::simple(&id, kind);
    crate::workload::registry::of(kind)
        .take_params(t, base.as_ref(), &mut spec)
        .map_err(|m| bad(origin, format!("workload '{id}': {m}")))?;
    // An I/O job's keys on a workload of another kind are accepted unused, as they were.
    crate::workload::job_keys::drop_unused(t);
    Ok(Some(spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_plan_with_setups_and_sweeps() {
        let d = parse(
            r#"
            name = "mine"
            rounds = 2
            runtime = "3s"
            ramp = "1s"
            file_size = "4xram"
            file_size_cap = 0.5
            fs = ["ext4", "zfs-16k=zfs:recordsize=16K"]
            [[setup]]
            name = "btrfs-zstd"
            fs = "btrfs"
            mount = ["noatime", "compress=zstd:3"]
            [[setup]]
            name = "ext4-wb"
            fs = "ext4"
            mkfs = ["-m", "1"]
            mount = "data=writeback"
            [[workload]]
            id = "seqwrite"
            rw = "write"
            bs = "1M"
            iodepth = 4
            sweep = { param = "numjobs", values = [1, 2, 4, 8] }
            [[workload]]
            id = "randread"
            sweep = { param = "iodepth", values = [1, 32] }
            [[workload]]
            id = "capped"
            kind = "memcap"
            rw = "randwrite"
            direct = false
            memory_limit = "512M"
            "#,
            "--plan mine.toml",
        )
        .unwrap();
        assert_eq!(d.values.rounds, Some(2));
        assert_eq!(d.file_size, Some(FileSize::RamMultiple(4.0)));
        let names: Vec<_> = d.setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ext4", "zfs-16k", "btrfs-zstd", "ext4-wb"]);
        assert_eq!(d.setups[2].mount, ["noatime", "compress=zstd:3"]);
        assert_eq!(d.setups[3].mkfs, ["-m", "1"]);
        assert_eq!(d.setups[3].warnings.len(), 1);
        let ids: Vec<_> = d.workloads.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "seqwrite-j1",
                "seqwrite-j2",
                "seqwrite-j4",
                "seqwrite-j8",
                "randread-qd1",
                "randread-qd32",
                "capped"
            ]
        );
        let j8 = d.workloads[3].io_job().unwrap();
        assert_eq!((j8.numjobs, j8.iodepth, j8.bs), (8, 4, 1 << 20));
        // randread inherits the standard job's parameters; only iodepth is swept.
        let qd32 = d.workloads[5].io_job().unwrap();
        assert_eq!((qd32.numjobs, qd32.iodepth, qd32.bs), (4, 32, 4096));
        // Each point knows its sweep, so a report draws the family without parsing ids.
        assert_eq!(
            d.workloads[5].sweep,
            Some(SweepPoint {
                family: "randread".into(),
                param: "iodepth".into(),
                value: 32
            })
        );
        assert_eq!(d.workloads[6].sweep, None);
        let cap = &d.workloads[6];
        assert_eq!(cap.kind, Kind::Memcap);
        assert_eq!(cap.param::<u64>("memory_limit"), Some(512 << 20));
        assert!(!cap.io_job().unwrap().direct);
    }

    #[test]
    fn a_workload_may_name_the_question_it_answers() {
        let text = |class: &str| {
            format!("[[workload]]\nid = \"wal\"\nrw = \"write\"\nbs = \"8k\"\nclass = \"{class}\"")
        };
        let d = parse(&text("databases"), "t").unwrap();
        assert_eq!(d.workloads[0].class, Some(Question::Databases));
        // The report reads it back from the recorded parameters: the class wins over the
        // question its job would answer (sequential writes).
        let params = serde_json::to_value(&d.workloads[0]).unwrap();
        assert_eq!(
            crate::workload::registry::purpose("io", &params).0,
            Some(Question::Databases)
        );
        let e = parse(&text("db"), "--plan p.toml").unwrap_err().to_string();
        assert!(
            e.contains("class = \"db\" is unknown") && e.contains("databases, random-io"),
            "{e}"
        );
    }

    #[test]
    fn a_workload_limited_to_setups_names_only_setups_of_the_plan() {
        let text = |names: &str| {
            format!(
                "fs = [\"ext4\", \"x=xfs\"]\n[[workload]]\nid = \"pgbench-rw\"\nsetups = [{names}]"
            )
        };
        let d = parse(&text("\"x\""), "t").unwrap();
        assert_eq!(d.workloads[0].setups, ["x"]);
        let e = parse(&text("\"x\", \"xfs\""), "--plan p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"xfs\", which is not a setup") && e.contains("setups: ext4, x"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_file_and_key() {
        let e = parse("rounds = 2\nbogus = 1\nsuite=\"standard\"", "--plan p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--plan p.toml:") && e.contains("bogus"),
            "{e}"
        );
        let e = parse(
            "suite=\"standard\"\n[[setup]]\nfs=\"ext4\"\nname=\"x\"\nrecordsize=\"16K\"",
            "--plan p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("does not understand \"recordsize\""), "{e}");
        let e = parse("name='x'", "--plan p.toml").unwrap_err().to_string();
        assert!(e.contains("no workloads"), "{e}");
        let e = parse(
            "[[workload]]\nid='a'\nrw='read'\nsweep={param='numjobs', values=[]}",
            "p",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("non-empty values"), "{e}");
        let e = parse("[[workload]]\nid='a'\nrw='read'\nnumjob=3", "p")
            .unwrap_err()
            .to_string();
        assert!(e.contains("numjob"), "{e}");
    }
}
