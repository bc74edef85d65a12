//! Bring-your-own fio job files: every job section becomes a workload on every setup.
//!
//! [`load`] reads a file ([`parse`]), rebases each section into the filesystem under test
//! ([`rebase`]), caps sizes that cannot fit, applies `--runtime`/`--ramp`, splits the file into
//! *phases* and returns one [`FioJob`] per section. A phase is what fio runs at once: the
//! sections from one `stonewall` to the next. Each phase is run by one fio process, so
//! sections meant to run concurrently still do, phases run in file order, and caches are
//! dropped (and device counters read) around each phase. Every section is rendered with
//! `new_group` + `group_reporting`, so fio's JSON has exactly one entry per section with its
//! `numjobs` clones merged, which is what a per-section result needs.

pub mod native;
pub mod parse;
pub mod rebase;

use crate::Error;
use parse::{Job, Opt};
use rebase::Place;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One section of a job file as it will run (saved in `plan.json`, so `--resume` needs no
/// job file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FioJob {
    /// The job file as named.
    pub file: PathBuf,
    /// The section name.
    pub section: String,
    /// Line of the `[section]` header.
    pub line: usize,
    /// Index of the section's phase in the file (0-based).
    pub phase: usize,
    /// Position of the section in its file (0-based), to keep fio's order.
    pub index: usize,
    /// The options after `[global]` inheritance, rebasing, capping and overrides, one
    /// `key[=value]` per entry; `directory=` is added when the job runs.
    pub options: Vec<String>,
    /// What fsbench changed and why (rebasing, capping, overrides).
    pub notes: Vec<String>,
    /// Run with the native engine (`--engine native`) instead of fio.
    #[serde(default)]
    pub native: bool,
}

impl FioJob {
    /// The options as (canonical key, value) pairs.
    pub fn opts(&self) -> Vec<Opt> {
        self.options
            .iter()
            .map(|l| {
                let (k, v) = match l.split_once('=') {
                    Some((k, v)) => (k, Some(v.to_string())),
                    None => (l.as_str(), None),
                };
                Opt {
                    key: parse::canonical(k),
                    written: k.to_string(),
                    value: v,
                    at: parse::Loc {
                        file: self.file.clone(),
                        line: self.line,
                    },
                }
            })
            .collect()
    }

    /// The file the section was given by an absolute `filename=`, which only `fsbench io
    /// --fio-job --filename` gives ([`Place::File`]; a job file's own absolute names are
    /// refused): it then runs without `directory=`, which fio would put in front of the path,
    /// nothing of fsbench's is made beside the file, and its device is the one counted.
    pub fn own_file(&self) -> Option<PathBuf> {
        self.options
            .iter()
            .rev()
            .find_map(|o| o.strip_prefix("filename="))
            .filter(|v| v.starts_with('/'))
            .map(|v| PathBuf::from(v.replace("\\:", ":")))
    }

    /// Key identifying the phase across the plan (file and phase index).
    pub fn phase_key(&self) -> (PathBuf, usize) {
        (self.file.clone(), self.phase)
    }

    /// Estimated seconds (ramp + runtime when given; otherwise size at 200 MiB/s).
    pub fn estimate_seconds(&self) -> f64 {
        let o = self.opts();
        let get = |k: &str| {
            o.iter()
                .rev()
                .find(|x| x.key == k)
                .and_then(|x| x.value.clone())
        };
        let t = |k: &str| get(k).and_then(|v| parse::duration(&v)).unwrap_or_default();
        let timed = t("runtime") + t("ramp_time");
        if !timed.is_zero() {
            return timed.as_secs_f64();
        }
        rebase::footprint(&o, 1).unwrap_or(64 << 20) as f64 / (200.0 * 1048576.0)
    }
}

/// How a file is prepared.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Where files go.
    pub place: Place,
    /// Bytes the file's data may take in all; sizes are scaled down to fit (None: no cap).
    pub budget: Option<u64>,
    /// `--runtime`: replaces every section's `runtime=` (or adds one, which caps a size-based job).
    pub runtime: Option<Duration>,
    /// `--ramp`: replaces every section's `ramp_time=`.
    pub ramp: Option<Duration>,
    /// `--engine native`: every section must map onto the native engine.
    pub native: bool,
}

/// Read, rebase and cap `path`; exit-2 errors name the file and line.
pub fn load(path: &Path, o: &LoadOptions) -> crate::Result<Vec<FioJob>> {
    prepare(path, &read(path)?, o)
}

/// Read and parse `path` (its includes too), `${VAR}` from the environment; exit-2 errors.
pub fn read(path: &Path) -> crate::Result<parse::JobFile> {
    parse::read(path, &|k| std::env::var(k).ok())
        .map_err(|e| Error::invalid("--fio-job", e.to_string()))
}

/// Rebase and cap an already read job file (no I/O: the plan resolver's half of [`load`]).
pub fn prepare(path: &Path, file: &parse::JobFile, o: &LoadOptions) -> crate::Result<Vec<FioJob>> {
    let flag = "--fio-job";
    let jobs = file.jobs();
    if jobs.is_empty() {
        return Err(Error::invalid(
            flag,
            format!(
                "{}: no job section (only [global]); add e.g. [randread]",
                path.display()
            ),
        ));
    }
    let mut prepared: Vec<(Job, Vec<Opt>, Vec<String>)> = Vec::new();
    for job in jobs {
        let (opts, notes) = rebase::rebase(rebase::effective(&job), &o.place)
            .map_err(|(at, why)| Error::invalid(flag, format!("{at}: [{}] {why}", job.name)))?;
        prepared.push((job, opts, notes));
    }
    cap(&mut prepared, o.budget);
    let mut out = Vec::new();
    let mut phase = 0;
    for (index, (job, mut opts, mut notes)) in prepared.into_iter().enumerate() {
        if index > 0 && job.flag("stonewall") {
            phase += 1;
        }
        override_time(&mut opts, "runtime", o.runtime, "--runtime", &mut notes);
        override_time(&mut opts, "ramp_time", o.ramp, "--ramp", &mut notes);
        let has = |k: &str| opts.iter().any(|x| x.key == k);
        let time_based = opts
            .iter()
            .rev()
            .find(|x| x.key == "time_based")
            .is_some_and(|x| !matches!(x.value.as_deref(), Some("0")));
        if time_based && !has("runtime") {
            return Err(Error::invalid(
                flag,
                format!(
                    "{}: [{}] time_based without runtime= would run forever; add runtime= or pass --runtime",
                    job.at, job.name
                ),
            ));
        }
        if o.native {
            native::to_spec(&job.name, &opts, Path::new(".")).map_err(|why| {
                Error::invalid(
                    "--engine",
                    format!("native: {}: [{}] {why}", job.at, job.name),
                )
            })?;
        }
        out.push(FioJob {
            file: path.to_path_buf(),
            section: job.name.clone(),
            line: job.at.line,
            phase,
            index,
            options: opts.iter().map(Opt::render).collect(),
            notes,
            native: o.native,
        });
    }
    if o.native {
        for j in &out {
            let with: Vec<&str> = out
                .iter()
                .filter(|x| x.phase == j.phase && x.index != j.index)
                .map(|x| x.section.as_str())
                .collect();
            if !with.is_empty() {
                return Err(Error::invalid(
                    "--engine",
                    format!(
                        "native: {}:{}: [{}] runs concurrently with [{}] (no stonewall between them); the native engine runs one job at a time",
                        path.display(),
                        j.line,
                        j.section,
                        with.join("], [")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Cap the largest files when the file's data would not fit in `budget`: a limit L is found
/// such that every file (a job's own files, or a shared `filename=`) larger than L is cut to
/// L and the total fits; smaller files keep the size they were written with.
fn cap(prepared: &mut [(Job, Vec<Opt>, Vec<String>)], budget: Option<u64>) {
    let Some(budget) = budget else { return };
    // Each job's footprint and the file it is counted under (shared names count once).
    let mut items: std::collections::BTreeMap<String, u64> = Default::default();
    let mut keys: Vec<Option<(String, u64)>> = Vec::new();
    for (i, (job, opts, notes)) in prepared.iter_mut().enumerate() {
        let Some(bytes) = rebase::footprint(opts, job.numjobs()) else {
            if let Some(o) = opts
                .iter()
                .rev()
                .find(|o| o.key == "size" || o.key == "filesize")
                && parse::size_bytes(o.value.as_deref().unwrap_or("")).is_none()
            {
                notes.push(format!(
                    "{}: {}={} is not an absolute size fsbench can read; it is passed on uncapped",
                    o.at,
                    o.written,
                    o.value.as_deref().unwrap_or("")
                ));
            }
            keys.push(None);
            continue;
        };
        let key = match opts.iter().rev().find(|o| o.key == "filename") {
            Some(f) => format!("file:{}", f.value.clone().unwrap_or_default()),
            None => format!("job:{i}"),
        };
        let e = items.entry(key.clone()).or_default();
        *e = (*e).max(bytes);
        keys.push(Some((key, bytes)));
    }
    let total = items.values().fold(0u64, |a, b| a.saturating_add(*b));
    if total <= budget {
        return;
    }
    let limit = water_level(&items.values().copied().collect::<Vec<_>>(), budget);
    for ((_, opts, notes), key) in prepared.iter_mut().zip(keys) {
        let Some((_, bytes)) = key else { continue };
        if bytes > limit {
            notes.extend(rebase::scale_sizes(
                opts,
                limit as f64 / bytes as f64,
                total,
                budget,
            ));
        }
    }
}

/// The largest L with Σ min(x, L) ≤ budget.
fn water_level(sizes: &[u64], budget: u64) -> u64 {
    let mut v = sizes.to_vec();
    v.sort_unstable();
    let mut left = budget;
    let mut n = v.len() as u64;
    for x in v {
        if x.saturating_mul(n) <= left {
            left -= x;
            n -= 1;
        } else {
            return left / n.max(1);
        }
    }
    u64::MAX
}

fn override_time(
    opts: &mut Vec<Opt>,
    key: &str,
    with: Option<Duration>,
    flag: &str,
    notes: &mut Vec<String>,
) {
    let Some(d) = with else { return };
    let value = format!("{}ms", d.as_millis());
    let was = opts.iter().rev().find(|o| o.key == key).map(|o| o.render());
    opts.retain(|o| o.key != key);
    notes.push(match was {
        Some(w) => format!("{w} replaced by {flag}: {key}={value}"),
        None => format!("{key}={value} added by {flag}"),
    });
    opts.push(Opt {
        key: key.into(),
        written: key.into(),
        value: Some(value),
        at: parse::Loc {
            file: PathBuf::from(flag),
            line: 0,
        },
    });
}

/// The fio job file of one phase with its files in `dir` (or `--filename` already in the
/// options): each section self-contained (globals inlined), its own reporting group.
pub fn render_phase(jobs: &[&FioJob], dir: Option<&Path>) -> String {
    let mut s = String::new();
    for j in jobs {
        s.push_str(&format!("[{}]\n", j.section));
        for o in &j.options {
            s.push_str(o);
            s.push('\n');
        }
        if let Some(d) = dir {
            s.push_str(&format!(
                "directory={}\n",
                d.display().to_string().replace(':', "\\:")
            ));
        }
        let opts = j.opts();
        let has = |k: &str| opts.iter().any(|o| o.key == k);
        // One JSON entry per section, clones merged: what a per-section result needs.
        s.push_str("new_group\ngroup_reporting\n");
        if !has("lat_percentiles") && !has("clat_percentiles") {
            s.push_str("lat_percentiles=1\n");
        }
        s.push('\n');
    }
    s
}

/// A workload id from a section name: blanks and odd characters become `-`.
pub fn section_id(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_matches('-').to_string();
    if id.is_empty() { "job".into() } else { id }
}

/// Workload ids for `jobs` (in order) that collide neither with each other nor with `taken`:
/// the section name, prefixed with the file's stem when ambiguous, numbered if still so.
pub fn assign_ids(jobs: &[FioJob], taken: &[String]) -> Vec<String> {
    let base: Vec<String> = jobs.iter().map(|j| section_id(&j.section)).collect();
    let ambiguous = |i: usize| {
        taken.contains(&base[i])
            || base
                .iter()
                .enumerate()
                .any(|(k, b)| k != i && *b == base[i])
    };
    let mut ids: Vec<String> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let mut id = if ambiguous(i) {
            let stem = j
                .file
                .file_stem()
                .map(|s| section_id(&s.to_string_lossy()))
                .unwrap_or_else(|| "fio".into());
            format!("{stem}-{}", base[i])
        } else {
            base[i].clone()
        };
        let mut n = 2;
        let root = id.clone();
        while ids.contains(&id) || taken.contains(&id) {
            id = format!("{root}-{n}");
            n += 1;
        }
        ids.push(id);
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn opts() -> LoadOptions {
        LoadOptions {
            place: Place::DataDir,
            budget: Some(100 << 20),
            runtime: None,
            ramp: None,
            native: false,
        }
    }

    #[test]
    fn phases_follow_stonewalls_and_sizes_are_capped() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "mix.fio",
            "[global]\nsize=16m\ndirectory=/data\n[a]\nrw=write\n[b]\nrw=read\n[c]\nstonewall\nrw=randread\nsize=1g\nnumjobs=2\n",
        );
        let jobs = load(&p, &opts()).unwrap();
        let phases: Vec<usize> = jobs.iter().map(|j| j.phase).collect();
        assert_eq!(phases, [0, 0, 1]);
        let c = &jobs[2];
        assert!(c.options.iter().all(|o| !o.starts_with("directory")));
        let size = c.options.iter().find(|o| o.starts_with("size=")).unwrap();
        let bytes = parse::size_bytes(size.trim_start_matches("size=")).unwrap();
        assert!(32 * 1024 * 1024 + bytes * 2 <= 100 << 20, "{size}");
        assert_eq!(size, "size=34m");
        assert!(
            jobs[0].options.contains(&"size=16m".to_string()),
            "small files keep their size"
        );
        assert_eq!(water_level(&[10, 20, 100], 60), 30);
        assert_eq!(water_level(&[10, 20], 60), u64::MAX);
        assert!(
            c.notes.iter().any(|n| n.contains("size=1g capped")),
            "{:?}",
            c.notes
        );
        assert!(
            jobs[0]
                .notes
                .iter()
                .any(|n| n.contains("directory=/data replaced"))
        );
        let text = render_phase(&[&jobs[0], &jobs[1]], Some(Path::new("/m/fsbench")));
        assert!(text.starts_with("[a]\nsize="), "{text}");
        assert!(
            text.contains("directory=/m/fsbench\nnew_group\ngroup_reporting\nlat_percentiles=1\n")
        );
        assert_eq!(text.matches("new_group").count(), 2);
    }

    #[test]
    fn overrides_refusals_and_native_checks() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "t.fio", "[t]\nrw=read\nsize=1m\ntime_based\n");
        let e = load(&p, &opts()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("t.fio:1: [t] time_based without runtime"),
            "{e}"
        );
        let mut o = opts();
        o.runtime = Some(Duration::from_secs(2));
        o.ramp = Some(Duration::ZERO);
        let j = load(&p, &o).unwrap();
        assert!(j[0].options.contains(&"runtime=2000ms".to_string()));
        assert!(j[0].options.contains(&"ramp_time=0ms".to_string()));
        let p = write(
            d.path(),
            "dev.fio",
            "[global]\nbs=4k\n[x]\nrw=read\nfilename=/dev/sda\n",
        );
        let e = load(&p, &opts()).unwrap_err().to_string();
        assert!(
            e.starts_with("--fio-job: ")
                && e.contains("dev.fio:5: [x] filename=/dev/sda names a device"),
            "{e}"
        );
        let p = write(
            d.path(),
            "two.fio",
            "[a]\nrw=write\nsize=1m\n[b]\nrw=write\nsize=1m\n",
        );
        o.native = true;
        o.runtime = None;
        o.ramp = None;
        let e = load(&p, &o).unwrap_err().to_string();
        assert!(e.contains("runs concurrently with [b]"), "{e}");
        let p = write(d.path(), "lib.fio", "[a]\nioengine=libaio\nsize=1m\n");
        let e = load(&p, &o).unwrap_err().to_string();
        assert!(
            e.starts_with("--engine: native: ") && e.contains("ioengine"),
            "{e}"
        );
        let e = load(&d.path().join("absent.fio"), &opts()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn ids_come_from_sections_and_are_prefixed_when_ambiguous() {
        let mk = |file: &str, section: &str| FioJob {
            file: PathBuf::from(file),
            section: section.into(),
            line: 1,
            phase: 0,
            index: 0,
            options: vec![],
            notes: vec![],
            native: false,
        };
        let jobs = [
            mk("a/ssd.fio", "seq read"),
            mk("a/ssd.fio", "randread"),
            mk("b/other.fio", "job"),
            mk("b/other.fio", "job"),
        ];
        let ids = assign_ids(&jobs, &["randread".into(), "mkfs".into()]);
        assert_eq!(
            ids,
            ["seq-read", "ssd-randread", "other-job", "other-job-2"]
        );
    }
}
