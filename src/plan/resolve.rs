//! Turn a plan file or profile, the user's [`Overrides`] and the [`HostFacts`] into a
//! validated [`Invocation`] (plan + options). Pure: no file, device or clock is read here
//! (the caller reads the plan and job files into a [`Source`] and gathers the facts once), so
//! every refusal is decided from values and the tests pass fake hosts.
//!
//! Every refusal that can be decided without touching anything happens here, so bad input
//! exits with code 2 before an image, loop device or filesystem exists: `--rounds 0`, unknown
//! filesystems or variant keys, unknown workload ids in `--only`/`--skip`, a target too small for
//! a chosen filesystem, a data file that cannot fit. The checks that must ask the kernel or a
//! tool about the resolved plan (host tunings, PostgreSQL setting names) are the caller's
//! (`commands::run::prepare`).

use super::file::PlanDraft;
use super::options::{Invocation, RunOptions};
use super::overrides::Overrides;
use super::workload::{Kind, WorkloadSpec};
use super::{FileSize, Plan, QuietSpec, SetupSpec, params, profiles, variant};
use crate::Error;
use crate::fio::jobfile::parse::JobFile;
use crate::host::facts::HostFacts;
use crate::target::TargetKind;
use crate::target::multi::Multi;
use crate::units::format_size;
use crate::workload::meta::CorpusSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Filesystems tried when neither `--fs` nor the plan names any.
pub const DEFAULT_FS: &[&str] = &["ext4", "xfs", "btrfs", "zfs"];

/// Share of the target an explicit `--file-size` may take.
const EXPLICIT_MAX_SHARE: f64 = 0.9;

/// The inputs read from files: the plan (file or profile) and the fio job files it and
/// `--fio-job` name, already parsed.
#[derive(Debug, Clone)]
pub struct Source {
    /// The plan as parsed, job-file paths made relative to the plan file's directory.
    pub draft: PlanDraft,
    /// Whether it came from `--plan` (a plan file's own workloads stay beside `--fio-job`).
    pub from_file: bool,
    /// Every job file named, parsed.
    pub fio_jobs: BTreeMap<PathBuf, JobFile>,
}

impl Source {
    /// The plan from `--plan`'s text (read by the caller), `--profile` or the default profile.
    /// The job files it names are listed by [`Source::job_files`] for the caller to read.
    pub fn new(o: &Overrides, plan_text: Option<&str>) -> crate::Result<Source> {
        let (draft, from_file) = match (&o.plan, plan_text) {
            (Some(p), Some(text)) => {
                let mut d = super::file::parse(text, &format!("--plan {}", p.display()))?;
                // A plan's job files are named relative to the plan file.
                let base = p.parent().unwrap_or(Path::new("."));
                for f in &mut d.fio_jobs {
                    if f.is_relative() {
                        *f = base.join(&*f);
                    }
                }
                (d, true)
            }
            (Some(_), None) => {
                return Err(Error::invalid("--plan", "the plan file's text is missing"));
            }
            (None, _) => (
                profiles::load(o.profile.as_deref().unwrap_or(profiles::DEFAULT))?,
                false,
            ),
        };
        Ok(Source {
            draft,
            from_file,
            fio_jobs: BTreeMap::new(),
        })
    }

    /// Read `--plan` (if given) and every job file the plan and `--fio-job` name: the input
    /// files, the only reading this module does (outside [`resolve`]).
    pub fn read(o: &Overrides) -> crate::Result<Source> {
        let text = match &o.plan {
            Some(p) => Some(std::fs::read_to_string(p).map_err(|e| {
                Error::invalid("--plan", format!("cannot read {}: {e}", p.display()))
            })?),
            None => None,
        };
        let mut source = Source::new(o, text.as_deref())?;
        for f in source.job_files(o) {
            let file = crate::fio::jobfile::read(&f)?;
            source.fio_jobs.insert(f, file);
        }
        Ok(source)
    }

    /// Job files to read: the plan's, then `--fio-job`'s.
    pub fn job_files(&self, o: &Overrides) -> Vec<PathBuf> {
        let mut v = self.draft.fio_jobs.clone();
        v.extend(o.fio_job.iter().cloned());
        v
    }
}

/// `--until-settled` (or the plan file's `until_settled`) with its budget and round limit;
/// `--budget`/`--max-rounds` alone are refused (they only bound extra rounds).
fn resolve_settle(
    args: &Overrides,
    draft: &super::file::PlanDraft,
    rounds: u32,
) -> crate::Result<Option<super::Settle>> {
    if !(args.until_settled || draft.until_settled) {
        for (flag, given) in [
            ("--budget", args.budget.is_some()),
            ("--max-rounds", args.max_rounds.is_some()),
        ] {
            if given {
                return Err(Error::invalid(
                    flag,
                    format!(
                        "{flag} bounds the extra rounds of --until-settled; add --until-settled or drop {flag}"
                    ),
                ));
            }
        }
        return Ok(None);
    }
    let budget = args
        .budget
        .or(draft.budget)
        .unwrap_or(Duration::from_secs(30 * 60));
    let max_rounds = args.max_rounds.or(draft.max_rounds).unwrap_or(15);
    if max_rounds < rounds {
        return Err(Error::invalid(
            "--max-rounds",
            format!(
                "{max_rounds} is below --rounds {rounds}, the minimum: raise --max-rounds or lower --rounds"
            ),
        ));
    }
    Ok(Some(super::Settle { budget, max_rounds }))
}

/// Resolve a plan into an invocation. `argv` is recorded as given. No I/O.
pub fn resolve(
    source: &Source,
    args: &Overrides,
    host: &HostFacts,
    argv: Vec<String>,
) -> crate::Result<Invocation> {
    check_ranges(args)?;
    if args.engine == Some(super::EngineChoice::Fio) && !host.has_tool("fio") {
        return Err(Error::invalid(
            "--engine",
            "fio is not installed; install fio or use --engine fsbench",
        ));
    }
    let mut draft = source.draft.clone();
    let target = target_choice(args, host)?;
    let multi = multi_choice(args, &target)?;
    let capacity = target_capacity(&target, host);
    let mut setups = choose_setups(args, &draft, &target)?;
    add_aged_twins(draft.aged_twins.as_deref(), args, &mut setups)?;
    apply_age(args, &mut setups, &target, capacity)?;
    fio_job_workloads(args, source, &mut draft, capacity, target.formats(), host)?;
    // The driver has the last word on its keys (e.g. which ZFS properties it passes on).
    for s in &setups {
        if let Some(d) = crate::fs::driver(&s.fs) {
            d.validate(s)?;
        }
    }
    check_variant_args(&setups, &target)?;
    crate::fs::layout::check_setups(&setups, multi.count(&target), host.md)?;
    let mut workloads =
        select_workloads(&draft.workloads, &args.only, &args.skip, target.formats())?;
    // A workload meant for named setups only (claims' pgbench on ext4 and xfs) goes when --fs
    // leaves none of them: it would run nowhere.
    workloads.retain(|w| w.setups.is_empty() || setups.iter().any(|s| w.setups.contains(&s.name)));
    let file_size = size_data_file(args, &draft, capacity, &target, host.ram_bytes)?;
    check_aged_room(&setups, file_size, capacity)?;
    // A size written in the user's own plan file is what they asked for: one the target
    // cannot hold is refused, not quietly shrunk.
    if let Some(cap) = capacity
        && source.from_file
    {
        check_workload_sizes(&workloads, cap, &target, args)?;
    }
    // Per-workload files of a profile (vps: 1 GiB buffered and memory-capped files) never
    // exceed the data file: with an explicit --file-size the user asked for that scale;
    // otherwise the data file was already capped to fit the target.
    for w in &mut workloads {
        if let Some(io) = w.io.as_mut() {
            io.size = io.size.map(|s| s.min(file_size));
        }
        w.size = w.size.map(|s| s.min(file_size));
    }
    if let Some(cap) = capacity
        && target.formats()
    {
        check_min_sizes(&setups, cap, &target)?;
    }
    check_corpus_flags(args, host)?;
    let seed = args.seed.unwrap_or(host.random_seed);
    let engine = args.engine.unwrap_or(super::EngineChoice::Fsbench);
    let precondition =
        super::steady::resolve_precondition(args.precondition, draft.precondition, &target)?;
    let steady =
        super::steady::resolve_steady(args.steady, draft.steady, engine, &target, precondition)?;
    // SNIA's workload-independent part: the whole device, once per run (its size as known).
    let precondition_device = precondition
        .then_some(capacity)
        .flatten()
        .filter(|_| matches!(target, TargetKind::Device { .. }));
    let rounds = args.rounds.or(draft.rounds).unwrap_or(3);
    let settle = resolve_settle(args, &draft, rounds)?;
    let plan = Plan {
        settle,
        margin: args.margin.map(|pct| f64::from(pct) / 100.0),
        name: draft.name.clone(),
        description: draft.description.clone(),
        setups,
        workloads,
        rounds,
        runtime: args
            .runtime
            .or(draft.runtime)
            .unwrap_or(Duration::from_secs(5)),
        ramp: args.ramp.or(draft.ramp).unwrap_or(Duration::from_secs(1)),
        file_size,
        corpus: CorpusSpec {
            copies: args.corpus_copies.or(draft.corpus_copies).unwrap_or(1),
            // The tree itself stays the same across runs (unless --seed is given) so that
            // untar / find / rm of two runs can be compared; only I/O offsets vary per run.
            seed: args.seed.unwrap_or(CorpusSpec::default().seed),
            from_dir: args.corpus_from.clone(),
            file: args.corpus_file.clone(),
            scale: args.corpus_scale.or(draft.corpus_scale).unwrap_or(0.1),
        },
        quiet: QuietSpec {
            window: args
                .quiet_window
                .or(draft.quiet_window)
                .unwrap_or(Duration::from_secs(10)),
            threshold: args.quiet_threshold,
            timeout: args.quiet_timeout,
        },
        steady,
        precondition,
        precondition_device,
    };
    if plan.runtime.is_zero() {
        return Err(Error::invalid("--runtime", "must be longer than 0 s"));
    }
    check_expansion(&plan)?;
    if let Some(cap) = capacity {
        check_corpus_fits(&plan, cap, &target, host)?;
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(host.now));
    Ok(Invocation {
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        argv,
        started_at: humantime::format_rfc3339_seconds(host.now).to_string(),
        plan,
        options: RunOptions {
            target,
            multi,
            yes: args.yes,
            out,
            engine,
            seed,
            threads: args.threads,
            tool_timeout: args.tool_timeout,
            target_in_ram: host.target_in_ram.map(str::to_string),
        },
    })
}

/// Share of the target a job file's data may take before its sizes are capped (the
/// filesystem's own metadata and reserve need the rest).
const FIO_JOB_SHARE: f64 = 0.7;

/// Expand `--fio-job` files and plan `fio-job` entries into one workload per section. With
/// `--fio-job` and no plan file, the job files replace the profile's workloads.
fn fio_job_workloads(
    args: &Overrides,
    source: &Source,
    draft: &mut PlanDraft,
    capacity: Option<u64>,
    formats: bool,
    host: &HostFacts,
) -> crate::Result<()> {
    let files = source.job_files(args);
    if files.is_empty() {
        return Ok(());
    }
    let native = args.engine == Some(super::EngineChoice::Fsbench);
    if !native && !host.has_tool("fio") {
        return Err(Error::invalid(
            "--fio-job",
            "fio is not installed; job files run with fio (install it) or natively with --engine native",
        ));
    }
    if !source.from_file || !draft.workloads.iter().any(|w| w.kind == Kind::Mkfs) {
        let keep: Vec<WorkloadSpec> = if !source.from_file {
            Vec::new()
        } else {
            draft.workloads.clone()
        };
        draft.workloads = super::workload::catalog()
            .into_iter()
            .filter(|w| matches!(w.kind, Kind::Mkfs | Kind::UsableSpace))
            .chain(keep)
            .collect();
    }
    let budget = capacity.map(|c| {
        let share = if formats { FIO_JOB_SHARE } else { 0.5 };
        (c as f64 * share) as u64
    });
    let opts = crate::fio::jobfile::LoadOptions {
        place: crate::fio::jobfile::rebase::Place::DataDir,
        budget,
        runtime: args.runtime,
        ramp: args.ramp,
        native,
    };
    let mut jobs = Vec::new();
    for f in &files {
        let file = source.fio_jobs.get(f).ok_or_else(|| {
            Error::invalid(
                "--fio-job",
                format!("{}: the job file was not read", f.display()),
            )
        })?;
        params::jobfile::check(file)?;
        jobs.extend(crate::fio::jobfile::prepare(f, file, &opts)?);
    }
    let taken: Vec<String> = draft.workloads.iter().map(|w| w.id.clone()).collect();
    let ids = crate::fio::jobfile::assign_ids(&jobs, &taken);
    for (id, job) in ids.into_iter().zip(jobs) {
        draft.workloads.push(WorkloadSpec::fio_job(&id, job));
    }
    Ok(())
}

fn target_choice(args: &Overrides, host: &HostFacts) -> crate::Result<TargetKind> {
    Ok(match (&args.device, &args.dir) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "--device",
                "cannot be combined with --dir; choose one target",
            ));
        }
        (Some(dev), None) => {
            if let Some(Err(why)) = &host.device {
                return Err(Error::refused(dev, why.clone()));
            }
            TargetKind::Device {
                path: dev.clone(),
                force_wipe: args.force_wipe,
            }
        }
        (None, Some(dir)) => TargetKind::Dir { path: dir.clone() },
        (None, None) => {
            if args.image_size == 0 {
                return Err(Error::invalid("--image-size", "must be larger than 0"));
            }
            TargetKind::Image {
                scratch_dir: args.scratch_dir.clone(),
                size: args.image_size,
                keep: args.keep_image,
            }
        }
    })
}

/// The devices after the first: `--images N` (images only) or `--device` repeated.
fn multi_choice(args: &Overrides, target: &TargetKind) -> crate::Result<Multi> {
    match target {
        TargetKind::Image { .. } => Ok(Multi {
            images: args.images.max(1),
            devices: Vec::new(),
        }),
        _ if args.images > 1 => Err(Error::invalid(
            "--images",
            format!(
                "makes {} loop images and cannot be combined with --device or --dir; for \
                 several real devices repeat --device",
                args.images
            ),
        )),
        TargetKind::Device { .. } => Ok(Multi {
            images: 1,
            devices: args.more_devices.clone(),
        }),
        TargetKind::Dir { .. } => Ok(Multi::default()),
    }
}

/// Refuse variant `mkfs=`/`mount=` words that could reach a device other than the target
/// (positional arguments, external journals, other devices, paths outside the scratch area).
/// Also run on `--resume`, whose plan.json may have been edited.
pub fn check_variant_args(setups: &[SetupSpec], target: &TargetKind) -> crate::Result<()> {
    let scratch = crate::fs::variant_args::scratch_area(target);
    for s in setups {
        if let Some(d) = crate::fs::driver(&s.fs) {
            crate::fs::variant_args::check(s, d.arg_rules(), &scratch)?;
        }
    }
    Ok(())
}

/// Bytes available to the plan, when they can be known without touching the target.
pub fn target_capacity(t: &TargetKind, host: &HostFacts) -> Option<u64> {
    match t {
        TargetKind::Image { size, .. } => Some(*size),
        TargetKind::Device { .. } | TargetKind::Dir { .. } => host.target_bytes,
    }
}

/// A plan's `aged_twins`: beside every fresh setup its twin `NAME-aged` (same options, aged),
/// so fresh and aged run side by side whatever `--fs` chose. `--age` (every setup aged)
/// replaces it.
fn add_aged_twins(
    twins: Option<&str>,
    args: &Overrides,
    setups: &mut Vec<SetupSpec>,
) -> crate::Result<()> {
    let (Some(text), None) = (twins, &args.age) else {
        return Ok(());
    };
    let age = crate::fs::age::parse(text, "aged_twins")?;
    let fresh: Vec<SetupSpec> = setups.iter().filter(|s| s.age.is_none()).cloned().collect();
    for f in fresh {
        let mut t = f.clone();
        t.name = format!("{}-aged", f.name);
        t.age = Some(age);
        t.raw
            .insert(crate::fs::variant::AGE_KEY.to_string(), text.to_string());
        if !setups.iter().any(|s| s.name == t.name) {
            setups.push(t);
        }
    }
    params::SETUPS.check_u64(setups.len() as u64).map_err(|e| {
        Error::invalid(
            "--fs",
            format!("{e}: {} setups with their aged twins", setups.len()),
        )
    })?;
    Ok(())
}

/// `--age` on every setup without its own `age=`; aging refused on a `--dir` target (it
/// would fill and fragment a filesystem fsbench did not create).
fn apply_age(
    args: &Overrides,
    setups: &mut [SetupSpec],
    target: &TargetKind,
    capacity: Option<u64>,
) -> crate::Result<()> {
    if let Some(text) = &args.age {
        let age = crate::fs::age::parse(text, "--age")?;
        for s in setups.iter_mut().filter(|s| s.age.is_none()) {
            s.age = Some(age);
            s.raw
                .insert(crate::fs::variant::AGE_KEY.to_string(), text.clone());
        }
    }
    for a in setups.iter_mut().filter_map(|s| s.age.as_mut()) {
        a.capacity = capacity.unwrap_or(0);
    }
    if let TargetKind::Dir { .. } = target
        && setups.iter().any(|s| s.age.is_some())
    {
        return Err(Error::invalid(
            "--age",
            "cannot age a --dir target: aging fills and fragments the filesystem it runs on; use an image or --device",
        ));
    }
    Ok(())
}

/// An aged setup keeps only `100 − FULLNESS` % of the target free: refuse a data file that
/// would take more than half of it (the layout would hit ENOSPC in every round).
fn check_aged_room(
    setups: &[SetupSpec],
    file_size: u64,
    capacity: Option<u64>,
) -> crate::Result<()> {
    let Some(cap) = capacity else {
        return Ok(());
    };
    for s in setups {
        let Some(a) = &s.age else { continue };
        let free = (cap as f64 * (100.0 - a.fullness) / 100.0) as u64;
        if file_size > free / 2 {
            return Err(Error::invalid(
                "--age",
                format!(
                    "setup {:?}: aging to {}% full leaves about {} free on the {} target, too little for the {} data file (at most half of it); use a larger --image-size, a lower FULLNESS (age={}:{}:50%) or a smaller --file-size",
                    s.name,
                    a.fullness,
                    crate::units::format_size(free),
                    crate::units::format_size(cap),
                    crate::units::format_size(file_size),
                    a.profile.name(),
                    a.amount
                ),
            ));
        }
    }
    Ok(())
}

fn choose_setups(
    args: &Overrides,
    draft: &PlanDraft,
    target: &TargetKind,
) -> crate::Result<Vec<SetupSpec>> {
    if let TargetKind::Dir { .. } = target {
        if !args.fs.is_empty() {
            return Err(Error::invalid(
                "--fs",
                "cannot be used with --dir: the directory's own filesystem is measured as it is; \
                 drop --fs, or use an image/--device to compare filesystems",
            ));
        }
        return Ok(vec![SetupSpec::plain("dir")]);
    }
    if !args.fs.is_empty() {
        let setups = variant::parse_fs_list(&args.fs)?;
        params::SETUPS
            .check_u64(setups.len() as u64)
            .map_err(|e| Error::invalid("--fs", format!("{e}: {} setups", setups.len())))?;
        return Ok(setups);
    }
    if !draft.setups.is_empty() {
        return Ok(draft.setups.clone());
    }
    Ok(DEFAULT_FS.iter().map(|f| SetupSpec::plain(f)).collect())
}

/// Apply `--only` / `--skip` to every workload the plan knows, add prerequisites as
/// unrecorded steps, and keep the plan's order.
pub fn select_workloads(
    all: &[WorkloadSpec],
    only: &[String],
    skip: &[String],
    formats: bool,
) -> crate::Result<Vec<WorkloadSpec>> {
    let all: Vec<&WorkloadSpec> = all
        .iter()
        .filter(|w| formats || w.kind != Kind::Mkfs)
        .collect();
    let known = |flag: &str, ids: &[String]| -> crate::Result<()> {
        for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if !all.iter().any(|w| w.id == id) {
                let why = if id == "mkfs" && !formats {
                    " (--dir mode creates no filesystem)".to_string()
                } else {
                    String::new()
                };
                return Err(Error::invalid(
                    flag,
                    format!(
                        "unknown workload id '{id}'{why}; this plan has: {}",
                        all.iter()
                            .map(|w| w.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(())
    };
    known("--only", only)?;
    known("--skip", skip)?;
    let picked = |w: &WorkloadSpec| {
        let chosen = if only.iter().any(|s| !s.trim().is_empty()) {
            only.iter().any(|o| o.trim() == w.id)
        } else {
            !w.optional
        };
        chosen && !skip.iter().any(|s| s.trim() == w.id)
    };
    if !formats
        && let Some((w, why)) = all.iter().filter(|w| picked(w)).find_map(|w| {
            crate::workload::registry::of(w.kind)
                .refused_on_dir(w)
                .map(|why| (w, why))
        })
    {
        return Err(Error::invalid(
            "--dir",
            format!("workload {} cannot run on a --dir target: {why}", w.id),
        ));
    }
    let mut needed: Vec<&str> = Vec::new();
    for w in all.iter().filter(|w| picked(w)) {
        needed.extend(w.requires());
    }
    let out: Vec<WorkloadSpec> = all
        .iter()
        .filter(|w| picked(w) || needed.contains(&w.id.as_str()) || w.kind == Kind::Mkfs)
        .map(|w| {
            let mut w = (*w).clone();
            w.record = picked(&w);
            w
        })
        .collect();
    if !out.iter().any(|w| w.record) {
        return Err(Error::invalid(
            if only.is_empty() { "--skip" } else { "--only" },
            "no workload is left to run",
        ));
    }
    Ok(out)
}

fn size_data_file(
    args: &Overrides,
    draft: &PlanDraft,
    capacity: Option<u64>,
    target: &TargetKind,
    ram_bytes: u64,
) -> crate::Result<u64> {
    const MIB: u64 = 1 << 20;
    let cap_share = draft.file_size_cap.unwrap_or(0.5);
    let where_ = target.describe();
    if let Some(text) = &args.file_size {
        let fs = FileSize::parse(text).map_err(|e| Error::invalid("--file-size", e))?;
        let bytes = match fs {
            FileSize::Fixed(b) => {
                params::FILE_SIZE
                    .check_u64(b)
                    .map_err(|e| Error::invalid("--file-size", e))?;
                b
            }
            FileSize::RamMultiple(f) => {
                params::FILE_SIZE_RAM
                    .check(f)
                    .map_err(|e| Error::invalid("--file-size", e))?;
                (ram_bytes as f64 * f) as u64
            }
        };
        if bytes < MIB {
            return Err(Error::invalid("--file-size", "must be at least 1M"));
        }
        if let Some(cap) = capacity
            && bytes as f64 > cap as f64 * EXPLICIT_MAX_SHARE
        {
            return Err(Error::invalid(
                "--file-size",
                format!(
                    "{} does not fit on the {where_} ({} usable, and the filesystem needs room too); \
                     use a smaller --file-size or a larger target",
                    format_size(bytes),
                    format_size(cap)
                ),
            ));
        }
        return Ok(bytes / MIB * MIB);
    }
    let wanted = match draft.file_size.unwrap_or(FileSize::Fixed(256 * MIB)) {
        FileSize::Fixed(b) => b,
        FileSize::RamMultiple(f) => (ram_bytes as f64 * f) as u64,
    };
    let bytes = match capacity {
        Some(cap) => wanted.min((cap as f64 * cap_share) as u64),
        None => wanted,
    };
    Ok((bytes / MIB * MIB).max(MIB))
}

/// Refuse a plan file's workload whose own `size` does not fit on the target.
fn check_workload_sizes(
    workloads: &[WorkloadSpec],
    capacity: u64,
    target: &TargetKind,
    args: &Overrides,
) -> crate::Result<()> {
    let room = (capacity as f64 * EXPLICIT_MAX_SHARE) as u64;
    for w in workloads {
        let size = w.io.as_ref().and_then(|io| io.size).or(w.size);
        if let Some(b) = size.filter(|b| *b > room) {
            let plan = args.plan.as_ref().map_or_else(
                || "--plan".to_string(),
                |p| format!("--plan {}", p.display()),
            );
            return Err(Error::invalid(
                plan,
                format!(
                    "workload '{}': size = {} does not fit on the {} ({} usable, and the \
                     filesystem needs room too); give a smaller size or a larger target",
                    w.id,
                    format_size(b),
                    target.describe(),
                    format_size(capacity)
                ),
            ));
        }
    }
    Ok(())
}

fn check_min_sizes(setups: &[SetupSpec], capacity: u64, target: &TargetKind) -> crate::Result<()> {
    for s in setups {
        // A name without a driver was refused while parsing `--fs`.
        let min = crate::fs::driver(&s.fs).map_or(0, |d| d.min_device_size());
        if capacity < min {
            let (flag, fix) = match target {
                TargetKind::Image { .. } => (
                    "--image-size",
                    format!(
                        "use --image-size {} or more",
                        crate::units::fio_size(min.next_power_of_two()).to_uppercase()
                    ),
                ),
                _ => ("--device", "use a larger device".to_string()),
            };
            return Err(Error::invalid(
                flag,
                format!(
                    "{} is too small for {} (setup {}): it needs at least {}; {fix}",
                    format_size(capacity),
                    s.fs,
                    s.name,
                    format_size(min)
                ),
            ));
        }
    }
    Ok(())
}

/// The overrides' numbers against the parameter table. clap checks the flags already; this
/// covers library callers and an edited `plan.json` under `--resume`.
fn check_ranges(args: &Overrides) -> crate::Result<()> {
    let n = |row: &params::Param, flag: &str, v: Option<u64>| match v {
        Some(v) => row
            .check_u64(v)
            .map(|_| ())
            .map_err(|e| Error::invalid(flag, e)),
        None => Ok(()),
    };
    let d = |row: &params::Param, flag: &str, v: Option<Duration>| match v {
        Some(v) => row
            .check_duration(v)
            .map(|_| ())
            .map_err(|e| Error::invalid(flag, e)),
        None => Ok(()),
    };
    n(&params::ROUNDS, "--rounds", args.rounds.map(u64::from))?;
    n(&params::THREADS, "--threads", Some(args.threads as u64))?;
    n(
        &params::CORPUS_COPIES,
        "--corpus-copies",
        args.corpus_copies.map(u64::from),
    )?;
    n(&params::IMAGE_SIZE, "--image-size", Some(args.image_size))?;
    n(&params::IMAGES, "--images", Some(u64::from(args.images)))?;
    n(
        &params::QUIET_THRESHOLD,
        "--quiet-threshold",
        Some(args.quiet_threshold),
    )?;
    if let Some(x) = args.corpus_scale {
        params::CORPUS_SCALE
            .check(x)
            .map_err(|e| Error::invalid("--corpus-scale", e))?;
    }
    d(&params::RUNTIME, "--runtime", args.runtime)?;
    d(&params::RAMP, "--ramp", args.ramp)?;
    d(&params::QUIET_WINDOW, "--quiet-window", args.quiet_window)?;
    d(
        &params::QUIET_TIMEOUT,
        "--quiet-timeout",
        Some(args.quiet_timeout),
    )?;
    d(
        &params::TOOL_TIMEOUT,
        "--tool-timeout",
        Some(args.tool_timeout),
    )?;
    Ok(())
}

/// Bound what the plan expands to, so `fsbench plan` (which lists every step and sums the
/// ETA over them) finishes at once for anything accepted.
fn check_expansion(plan: &Plan) -> crate::Result<()> {
    params::WORKLOADS
        .check_u64(plan.workloads.len() as u64)
        .map_err(|e| {
            Error::invalid("--plan", format!("{} workloads: {e}", plan.workloads.len()))
        })?;
    let steps = u64::from(plan.rounds) * plan.setups.len() as u64 * plan.workloads.len() as u64;
    params::STEPS.check_u64(steps).map(|_| ()).map_err(|e| {
        Error::invalid(
            "--rounds",
            format!(
                "{} rounds x {} setups x {} workloads = {steps} steps: {e}; use fewer rounds, \
                 setups (--fs) or workloads (--only)",
                plan.rounds,
                plan.setups.len(),
                plan.workloads.len()
            ),
        )
    })
}

/// Bytes one synthetic corpus copy at scale 1 takes on a filesystem: its file data plus a
/// 4 KiB block per entry (a test measures the generator against it).
pub const CORPUS_UNIT_FOOTPRINT: u64 = 330 << 20;

/// Share of the target the corpus may take; the data file, the filesystem's metadata and its
/// reserve need the rest.
const CORPUS_MAX_SHARE: f64 = 0.5;

/// Refuse a corpus that cannot fit on the target: the synthetic one's copies x scale x a
/// copy's footprint, a `--corpus-from` tree's walked footprint x copies, or a
/// `--corpus-file` tar's length (extracted once).
fn check_corpus_fits(
    plan: &Plan,
    capacity: u64,
    target: &TargetKind,
    host: &HostFacts,
) -> crate::Result<()> {
    let uses_corpus = plan.workloads.iter().any(|w| {
        matches!(
            crate::workload::registry::of(w.kind).cost(w, &plan.job_defaults(0, None)),
            crate::workload::registry::Cost::Corpus(_)
        )
    });
    if !uses_corpus {
        return Ok(());
    }
    let c = &plan.corpus;
    let walked = |p: &PathBuf| host.footprints.get(p).copied();
    let (flag, what, need, fix) = if let Some(d) = &c.from_dir {
        let Some(b) = walked(d) else { return Ok(()) };
        (
            "--corpus-from",
            format!("{} copies of {}", c.copies, d.display()),
            u64::from(c.copies) as f64 * b as f64,
            "use fewer --corpus-copies, a smaller directory or a larger target",
        )
    } else if let Some(f) = &c.file {
        let Some(b) = walked(f) else { return Ok(()) };
        (
            "--corpus-file",
            f.display().to_string(),
            b as f64,
            "use a smaller tar or a larger target",
        )
    } else {
        (
            "--corpus-copies",
            format!("{} copies at scale {}", c.copies, c.scale),
            f64::from(c.copies) * c.scale * CORPUS_UNIT_FOOTPRINT as f64,
            "use fewer --corpus-copies, a smaller --corpus-scale or a larger target",
        )
    };
    let room = capacity as f64 * CORPUS_MAX_SHARE;
    if need > room {
        return Err(Error::invalid(
            flag,
            format!(
                "{what} take about {} on disk, more than half of the {} ({}); {fix}",
                format_size(need as u64),
                target.describe(),
                format_size(capacity)
            ),
        ));
    }
    Ok(())
}

/// `./fsbench-results/20261130T121500Z`.
fn default_out(t: std::time::SystemTime) -> PathBuf {
    let stamp: String = humantime::format_rfc3339_seconds(t)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    PathBuf::from("fsbench-results").join(stamp)
}

/// Refuse corpus flags that cannot work before anything is formatted (exit 2).
fn check_corpus_flags(args: &Overrides, host: &HostFacts) -> crate::Result<()> {
    if let Some(d) = &args.corpus_from
        && !host.dirs.contains(d)
    {
        return Err(Error::invalid(
            "--corpus-from",
            format!(
                "{} is not a directory; give a directory to pack, such as /usr/share",
                d.display()
            ),
        ));
    }
    if let Some(f) = &args.corpus_file
        && !host.files.contains(f)
    {
        return Err(Error::invalid(
            "--corpus-file",
            format!(
                "{} is not a file; write one with `fsbench corpus --out FILE.tar`",
                f.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::time::SystemTime;

    /// Overrides from flag-like pairs (a test-only stand-in for the command line, which the
    /// plan does not know).
    fn args(extra: &[&str]) -> Overrides {
        let mut o = Overrides::default();
        let size = |v: &str| crate::units::parse_size(v).unwrap();
        let time = |v: &str| humantime::parse_duration(v).unwrap();
        let list = |v: &str| v.split(',').map(str::to_string).collect::<Vec<_>>();
        for pair in extra.chunks(2) {
            let v = pair[1];
            match pair[0] {
                "--profile" => o.profile = Some(v.into()),
                "--plan" => o.plan = Some(v.into()),
                "--fs" => o.fs.push(v.into()),
                "--rounds" => o.rounds = Some(v.parse().unwrap()),
                "--runtime" => o.runtime = Some(time(v)),
                "--ramp" => o.ramp = Some(time(v)),
                "--file-size" => o.file_size = Some(v.into()),
                "--image-size" => o.image_size = size(v),
                "--scratch-dir" => o.scratch_dir = v.into(),
                "--dir" => o.dir = Some(v.into()),
                "--device" => o.device = Some(v.into()),
                "--only" => o.only = list(v),
                "--skip" => o.skip = list(v),
                "--fio-job" => o.fio_job.push(v.into()),
                "--engine" => {
                    o.engine = Some(match v {
                        "fio" => crate::plan::EngineChoice::Fio,
                        _ => crate::plan::EngineChoice::Fsbench,
                    })
                }
                "--corpus-from" => o.corpus_from = Some(v.into()),
                "--corpus-file" => o.corpus_file = Some(v.into()),
                "--seed" => o.seed = Some(v.parse().unwrap()),
                "--corpus-copies" => o.corpus_copies = Some(v.parse().unwrap()),
                "--corpus-scale" => o.corpus_scale = Some(v.parse().unwrap()),
                other => panic!("test helper: add {other}"),
            }
        }
        o
    }

    /// A fixed host: 4 GiB RAM, fio installed, a 20 GiB `--dir`, a fixed clock and seed.
    fn host() -> HostFacts {
        HostFacts {
            now: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            ..HostFacts::fixed()
        }
    }

    fn with(extra: &[&str], host: &HostFacts) -> crate::Result<Invocation> {
        let o = args(extra);
        resolve(&Source::read(&o)?, &o, host, vec![])
    }

    fn ok(extra: &[&str]) -> Invocation {
        with(extra, &host()).unwrap()
    }

    fn err(extra: &[&str]) -> String {
        err_on(extra, &host())
    }

    fn err_on(extra: &[&str], host: &HostFacts) -> String {
        let e = with(extra, host).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn numbers_out_of_the_table_are_refused_and_plans_stay_bounded() {
        let e = err(&["--rounds", "0"]);
        assert!(
            e.starts_with("--rounds: 0 is out of range; give a value from 1 to 1,000"),
            "{e}"
        );
        let e = err(&["--file-size", "1000xram"]);
        assert!(
            e.starts_with("--file-size:") && e.contains("up to 64"),
            "{e}"
        );
        let e = err(&["--file-size", "4k"]);
        assert!(e.contains("1 MiB"), "{e}");
        // 1,000 rounds of the nvme profile on four setups would be 100,000s of steps.
        let e = err(&["--profile", "nvme", "--rounds", "1000"]);
        assert!(e.contains("steps") && e.contains("100,000"), "{e}");
        assert_eq!(ok(&["--rounds", "1000"]).plan.rounds, 1000);
    }

    #[test]
    fn a_corpus_bigger_than_half_the_target_is_refused() {
        let e = err(&["--corpus-copies", "1000", "--corpus-scale", "1"]);
        assert!(
            e.starts_with("--corpus-copies: 1000 copies at scale 1 take about"),
            "{e}"
        );
        assert!(e.contains("8 GiB"), "{e}");
        ok(&["--corpus-copies", "3", "--corpus-scale", "1"]);
        // Without a corpus workload the corpus is not laid out, so its size does not count.
        ok(&[
            "--corpus-copies",
            "1000",
            "--corpus-scale",
            "1",
            "--only",
            "randread",
        ]);
    }

    #[test]
    fn a_plan_files_workload_size_beyond_the_target_is_refused_not_capped() {
        let text = |size: &str| {
            format!("[[workload]]\nid = \"big\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"{size}\"")
        };
        let mut o = args(&[]);
        o.plan = Some("mine.toml".into());
        let run = |size: &str| {
            resolve(
                &Source::new(&o, Some(&text(size))).unwrap(),
                &o,
                &host(),
                vec![],
            )
        };
        let e = run("20G").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = e.to_string();
        assert!(
            e.starts_with("--plan mine.toml: workload 'big': size = 20 GiB does not fit")
                && e.contains("8 GiB usable"),
            "{e}"
        );
        // One that fits keeps its size: smaller than the data file, it is not grown either.
        let inv = run("64M").unwrap();
        let big = inv.plan.workloads.iter().find(|w| w.id == "big").unwrap();
        assert_eq!(big.io.as_ref().unwrap().size, Some(64 << 20));
    }

    #[test]
    fn a_directory_or_tar_corpus_bigger_than_half_the_target_is_refused() {
        let mut h = host();
        h.dirs.insert("/srv/tree".into());
        h.files.insert("/srv/t.tar".into());
        h.footprints.insert("/srv/tree".into(), 2 << 30);
        h.footprints.insert("/srv/t.tar".into(), 5 << 30);
        // 2 GiB fits in half of the 8 GiB image once, not three times.
        let one = ["--corpus-from", "/srv/tree", "--corpus-copies", "1"];
        with(&one, &h).unwrap();
        let e = err_on(&["--corpus-from", "/srv/tree", "--corpus-copies", "3"], &h);
        assert!(
            e.starts_with("--corpus-from: 3 copies of /srv/tree take about 6 GiB"),
            "{e}"
        );
        let e = err_on(&["--corpus-file", "/srv/t.tar"], &h);
        assert!(
            e.starts_with("--corpus-file: /srv/t.tar take about 5 GiB")
                && e.contains("smaller tar"),
            "{e}"
        );
    }

    /// The footprint constant covers what the generator writes: file bytes plus a block per
    /// entry (so the refusal above is not too lenient), and not grossly more.
    #[test]
    fn corpus_footprint_matches_the_generator() {
        let spec = CorpusSpec {
            copies: 1,
            scale: 1.0,
            ..CorpusSpec::default()
        };
        let c = crate::workload::meta::Corpus::build(&spec).unwrap();
        let real = c.bytes() + c.entries() * 4096;
        assert!(real <= CORPUS_UNIT_FOOTPRINT, "{real}");
        assert!(real * 2 > CORPUS_UNIT_FOOTPRINT, "{real}");
    }

    #[test]
    fn claims_runs_pgbench_only_where_its_claims_compare_and_drops_it_when_fs_leaves_none() {
        let inv = ok(&["--profile", "claims"]);
        let pg = inv
            .plan
            .workloads
            .iter()
            .find(|w| w.id == "pgbench-rw")
            .unwrap();
        let compared = ["ext4", "xfs", "btrfs", "ext4-writeback", "btrfs-nocow"];
        assert_eq!(pg.setups, compared);
        let on: Vec<&str> = inv
            .plan
            .setups
            .iter()
            .filter(|s| crate::workload::registry::step_in_round(pg, &s.name, 1))
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(on, compared);
        let inv = ok(&["--profile", "claims", "--fs", "zfs"]);
        assert!(inv.plan.workloads.iter().all(|w| w.id != "pgbench-rw"));
    }

    #[test]
    fn host_facts_decide_sizes_seeds_and_refusals() {
        // The data file of `standard` is 4x RAM, capped to half the target: the fake RAM
        // decides it, not this machine's.
        let small = HostFacts {
            ram_bytes: 64 << 20,
            ..host()
        };
        let inv = with(&["--profile", "standard", "--image-size", "8G"], &small).unwrap();
        assert_eq!(inv.plan.file_size, 256 << 20);
        let inv = with(&["--profile", "standard", "--image-size", "8G"], &host()).unwrap();
        assert_eq!(inv.plan.file_size, 4 << 30);
        // Seed, start time and output directory come from the facts.
        assert_eq!(inv.options.seed, 42);
        assert_eq!(inv.started_at, "2027-01-15T08:00:00Z");
        assert_eq!(
            inv.options.out,
            PathBuf::from("fsbench-results/20270115T080000Z")
        );
        assert_eq!(ok(&["--seed", "7"]).options.seed, 7);
        // --dir sizes from the facts' free space.
        let tight = HostFacts {
            target_bytes: Some(100 << 20),
            ..host()
        };
        let e = err_on(&["--dir", "/x", "--file-size", "200M"], &tight);
        assert!(e.contains("does not fit") && e.contains("100 MiB"), "{e}");
        // fio missing: --engine fio is refused; a device that is not one is refused.
        let no_fio = HostFacts {
            tools: BTreeSet::new(),
            ..host()
        };
        assert!(err_on(&["--engine", "fio"], &no_fio).contains("fio is not installed"));
        let not_dev = HostFacts {
            device: Some(Err("it is not a block device".into())),
            ..host()
        };
        let e = with(&["--device", "/dev/nope"], &not_dev).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("not a block device"), "{e}");
        // A corpus directory the facts do not list as one is refused.
        let e = err(&["--corpus-from", "/srv/tree"]);
        assert!(e.contains("not a directory"), "{e}");
        let has_tree = HostFacts {
            dirs: BTreeSet::from([PathBuf::from("/srv/tree")]),
            ..host()
        };
        with(&["--corpus-from", "/srv/tree"], &has_tree).unwrap();
        // A target in RAM is the facts' word, not a statfs of this machine's /x.
        let in_ram = HostFacts {
            target_in_ram: Some("tmpfs"),
            ..host()
        };
        let inv = with(&["--dir", "/x"], &in_ram).unwrap();
        assert_eq!(inv.options.target_in_ram.as_deref(), Some("tmpfs"));
        assert_eq!(ok(&["--dir", "/x"]).options.target_in_ram, None);
    }

    #[test]
    fn defaults_are_quick_on_an_image() {
        let inv = ok(&[]);
        assert_eq!(inv.plan.name, "quick");
        assert_eq!(inv.plan.rounds, 3);
        assert_eq!(inv.plan.file_size, 256 << 20);
        let names: Vec<_> = inv.plan.setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, DEFAULT_FS);
        assert!(matches!(inv.options.target, TargetKind::Image { size, .. } if size == 8 << 30));
        assert!(inv.options.out.starts_with("fsbench-results"));
        // The quick profile must stay within ten minutes for three filesystems x three rounds.
        let mut p = inv.plan.clone();
        p.setups.truncate(3);
        let eta = super::super::eta::total(&p, true);
        assert!(eta.as_secs() <= 600, "quick ETA {eta:?}");
    }

    #[test]
    fn overrides_apply() {
        let inv = ok(&[
            "--profile",
            "standard",
            "--rounds",
            "2",
            "--runtime",
            "2s",
            "--ramp",
            "0s",
            "--file-size",
            "64M",
            "--image-size",
            "2G",
            "--fs",
            "ext4,xfs",
        ]);
        assert_eq!(inv.plan.rounds, 2);
        assert_eq!(inv.plan.runtime, Duration::from_secs(2));
        assert_eq!(inv.plan.ramp, Duration::ZERO);
        assert_eq!(inv.plan.file_size, 64 << 20);
        assert_eq!(inv.plan.setups.len(), 2);
        // Standard sizes its file from RAM but never beyond half the target.
        let s = ok(&["--profile", "standard", "--image-size", "2G"]);
        assert!(s.plan.file_size <= 1 << 30);
        // Per-workload sizes shrink with the data file.
        let v = ok(&[
            "--profile",
            "vps",
            "--image-size",
            "1G",
            "--file-size",
            "64M",
        ]);
        for w in &v.plan.workloads {
            assert!(
                w.io.as_ref().and_then(|p| p.size).unwrap_or(0) <= 64 << 20,
                "{}",
                w.id
            );
            assert!(w.size.unwrap_or(0) <= 64 << 20, "{}", w.id);
        }
    }

    #[test]
    fn only_and_skip_select_and_add_prerequisites() {
        let inv = ok(&["--only", "randread,find-cold"]);
        let got: Vec<(&str, bool)> = inv
            .plan
            .workloads
            .iter()
            .map(|w| (w.id.as_str(), w.record))
            .collect();
        assert_eq!(
            got,
            [
                ("mkfs", false),
                ("layout", false),
                ("randread", true),
                ("untar", false),
                ("find-cold", true)
            ]
        );
        let inv = ok(&["--skip", "untar,find-cold,rm-tree,mkfs"]);
        assert!(inv.plan.workloads.iter().all(|w| w.id != "untar"));
        assert!(
            !inv.plan
                .workloads
                .iter()
                .find(|w| w.id == "mkfs")
                .unwrap()
                .record
        );
        let inv = ok(&["--only", "probe-reflink"]);
        assert!(
            inv.plan
                .workloads
                .iter()
                .any(|w| w.id == "probe-reflink" && w.record)
        );
    }

    #[test]
    fn refusals_name_the_problem() {
        assert!(err(&["--rounds", "0"]).contains("--rounds"));
        assert!(err(&["--fs", "ext4,reiserfs"]).contains("unknown filesystem 'reiserfs'"));
        assert!(
            err(&["--fs", "x=btrfs:recordsize=1M"]).contains("does not understand \"recordsize\"")
        );
        let e = err(&["--only", "randred"]);
        assert!(e.contains("--only") && e.contains("'randred'"), "{e}");
        assert!(err(&["--skip", "nope"]).contains("--skip"));
        let e = err(&["--fs", "ext4,xfs", "--image-size", "100M"]);
        assert!(
            e.contains("--image-size") && e.contains("too small for xfs"),
            "{e}"
        );
        let e = err(&["--fs", "zfs", "--image-size", "32M", "--file-size", "8M"]);
        assert!(e.contains("too small for zfs"), "{e}");
        let e = err(&["--image-size", "1G", "--file-size", "4G"]);
        assert!(
            e.contains("--file-size") && e.contains("does not fit"),
            "{e}"
        );
        assert!(err(&["--dir", "/tmp", "--fs", "ext4"]).contains("--dir"));
        assert!(err(&["--dir", "/tmp", "--only", "mkfs"]).contains("no filesystem"));
        assert!(err(&["--profile", "nope"]).contains("quick, standard"));
        assert!(err(&["--skip", "mkfs,usable-space,layout,seqread,seqwrite,randread,randwrite,randrw70,fsync-write,untar,find-cold,rm-tree"]).contains("no workload"));
    }

    #[test]
    fn variant_arguments_naming_devices_are_refused_from_every_source() {
        let e = err(&["--fs", "b=btrfs:mkfs=-m raid1 -d raid1 /dev/sdc1 /dev/sdc2"]);
        assert!(
            e.contains("\"/dev/sdc1\"") && e.contains("multi-device setups"),
            "{e}"
        );
        let e = err(&["--fs", "e=ext4:mount=noatime,journal_path=/dev/sdz"]);
        assert!(e.contains("journal_path=/dev/sdz"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(
            &p,
            "suite = \"standard\"\n[[setup]]\nfs = \"ext4\"\nname = \"j\"\nmkfs = [\"-J\", \"device=/dev/sdz\"]\n",
        )
        .unwrap();
        let e = err(&["--plan", p.to_str().unwrap()]);
        assert!(e.contains("external journal device"), "{e}");
        // Paths inside the scratch directory are allowed; outside they are not.
        let inside = format!("e=ext4:mkfs=-d {}", dir.path().join("tree").display());
        ok(&[
            "--scratch-dir",
            dir.path().to_str().unwrap(),
            "--fs",
            &inside,
        ]);
        let e = err(&["--scratch-dir", "/var/tmp", "--fs", &inside]);
        assert!(e.contains("outside fsbench's scratch area"), "{e}");
        // Every shipped profile's variants pass.
        for name in profiles::names() {
            ok(&["--profile", name]);
        }
    }

    #[test]
    fn dir_mode_has_one_setup_and_no_mkfs() {
        let inv = ok(&["--dir", "/tmp", "--file-size", "8M"]);
        assert_eq!(inv.plan.file_size, 8 << 20);
        assert_eq!(inv.plan.setups.len(), 1);
        assert_eq!(inv.plan.setups[0].fs, "dir");
        assert!(inv.plan.workloads.iter().all(|w| w.kind != Kind::Mkfs));
    }

    #[test]
    fn plan_file_and_sweeps_reach_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(
            &p,
            "rounds = 1\n[[workload]]\nid='seqwrite'\nrw='write'\nbs='1M'\niodepth=2\nsweep={param='numjobs',values=[1,4]}\n",
        )
        .unwrap();
        let inv = ok(&["--plan", p.to_str().unwrap(), "--fs", "ext4"]);
        let ids: Vec<_> = inv.plan.workloads.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["seqwrite-j1", "seqwrite-j4"]);
        assert_eq!(inv.plan.rounds, 1);
    }

    #[test]
    fn fio_job_files_from_flags_and_plan_files_become_workloads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("j.fio"),
            "[global]\nsize=1m\n[randread]\nrw=randread\n[w r]\nstonewall\nrw=write\n",
        )
        .unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(
            &p,
            "rounds = 1\n[[workload]]\nkind = \"fio-job\"\npath = \"j.fio\"\n",
        )
        .unwrap();
        let inv = ok(&["--plan", p.to_str().unwrap(), "--fs", "ext4"]);
        let ids: Vec<_> = inv.plan.workloads.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["mkfs", "usable-space", "randread", "w-r"]);
        let j = inv.plan.workloads[3].fio_job.as_ref().unwrap();
        assert_eq!((j.section.as_str(), j.phase), ("w r", 1));
        // From the flag, the job file replaces the profile's suite (so `randread` is free).
        let f = dir.path().join("j.fio");
        let inv = ok(&[
            "--fio-job",
            f.to_str().unwrap(),
            "--only",
            "randread",
            "--runtime",
            "2s",
        ]);
        let rec: Vec<_> = inv.plan.recorded().map(|w| w.id.as_str()).collect();
        assert_eq!(rec, ["randread"]);
        let j = inv
            .plan
            .workloads
            .iter()
            .find(|w| w.id == "randread")
            .unwrap();
        assert!(
            j.fio_job
                .as_ref()
                .unwrap()
                .options
                .contains(&"runtime=2000ms".into())
        );
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[[workload]]\nkind = \"fio-job\"\n").unwrap();
        assert!(err(&["--plan", bad.to_str().unwrap()]).contains("needs path"));
    }
}
