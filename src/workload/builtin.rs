//! Registry entries of the kinds that live in single-file modules or in the runner's setup:
//! mkfs, usable-space, layout, I/O jobs, memory-capped jobs, compression, fio job files.

use super::registry::{
    Caches, Cost, Describe, Family, Headline, Kind, Names, Needs, Phase, Question, Table, Workload,
    Writes,
};
use super::spec::{IoParams, JobDefaults, WorkloadSpec};
use super::step::{FioPhase, StepContext};
use super::{Metric, WorkloadContext, WorkloadOutput};
use crate::Error;
use crate::engine::RwMode;
use crate::metrics::MetricId;
use crate::metrics::registry::*;
use crate::units::format_size;
use std::path::{Path, PathBuf};

const M: u64 = 1 << 20;
const K: u64 = 1 << 10;

/// Metrics of an I/O job (native engine or fio: `workload::io::to_output`), then `$extra`.
macro_rules! io_metrics {
    ($($extra:expr),*) => {
        &[
            IOPS,
            READ_IOPS,
            WRITE_IOPS,
            BW_MIB_S,
            READ_BW_MIB_S,
            WRITE_BW_MIB_S,
            LAT_P50_MS,
            LAT_P99_MS,
            LAT_P99_9_MS,
            READ_LAT_P50_MS,
            READ_LAT_P99_MS,
            READ_LAT_P99_9_MS,
            WRITE_LAT_P50_MS,
            WRITE_LAT_P99_MS,
            WRITE_LAT_P99_9_MS,
            CPU_UTIL,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
            FSYNCS,
            STALLS,
            STEADY_REACHED,
            STEADY_AT_S,
            $($extra),*
        ]
    };
}

/// An I/O job; `scaling_factor` is added by the runner when the workload names a baseline.
const IO_METRICS: &[MetricId] = io_metrics!(SCALING_FACTOR);
/// A memory-capped job: the cap and the peak besides the job's own.
const MEMCAP_METRICS: &[MetricId] = io_metrics!(MEMORY_CAP_BYTES, PEAK_MEMORY_BYTES);
/// A fio job-file section: trims, and the phase's device bytes when sections ran together.
const FIO_JOB_METRICS: &[MetricId] = io_metrics!(
    TRIM_IOPS,
    TRIM_BW_MIB_S,
    TRIM_LAT_P99_MS,
    PHASE_DEVICE_WRITE_BYTES
);

/// `mkfs`: timed by the runner when it creates the setup; not a step of its own.
pub struct Mkfs;

impl Workload for Mkfs {
    fn kind(&self) -> Kind {
        Kind::Mkfs
    }
    fn name(&self) -> &'static str {
        "mkfs"
    }
    fn family(&self) -> Family {
        Family::Setup
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "mkfs" => ("mkfs / zpool create", "mkfs"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 15,
            workload: "mkfs",
            metrics: &[SECONDS],
            label: "mkfs / zpool create",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            phase: Phase::Setup,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        &[SECONDS]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("mkfs", Kind::Mkfs)]
    }
    fn example(&self) -> &'static str {
        "id = \"mkfs\"\nkind = \"mkfs\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Nothing
    }
    fn describe(&self, _: &WorkloadSpec, d: &Describe<'_>) -> String {
        let setup = d.setup;
        let mut s = format!("create {}", setup.fs);
        if let Some(l) = crate::fs::layout::of_setup(setup) {
            s.push_str(&format!(" raid={}", l.name));
            if let Some(m) = &setup.mraid {
                s.push_str(&format!(" (metadata {m})"));
            }
            if setup.spare {
                s.push_str(" over the target's devices but the last, its spare");
            } else {
                s.push_str(" over all the target's devices");
            }
            if l.redundancy > 0 {
                let onto = if setup.spare { " onto the spare" } else { "" };
                s.push_str(&format!(" (round 1: scrub, degraded reads, rebuild{onto})"));
            }
        }
        if !setup.mkfs.is_empty() {
            s.push_str(&format!(" mkfs {}", setup.mkfs.join(" ")));
        }
        for (k, v) in &setup.props {
            s.push_str(&format!(" -O {k}={v}"));
        }
        if let Some(m) = setup.mount_option_string() {
            s.push_str(&format!(", mount -o {m}"));
        }
        if setup.nocow() {
            s.push_str(", chattr +C data dir");
        }
        s.push_str(", then wait for a quiet device");
        if let Some(a) = &setup.age {
            s.push_str(&format!(
                ", then age ({a}: {} written, ~{:.0} s)",
                crate::units::format_size(a.bytes()),
                a.estimate_seconds()
            ));
            if a.replicate == crate::fs::age::Replicate::Restore {
                s.push_str(&format!(
                    "; with later rounds, the aged image kept and written back in them (~{:.0} s)",
                    a.round_seconds(2, 2)
                ));
            }
        }
        s
    }
    fn run(&self, _: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        // The runner times mkfs while it creates the setup.
        Ok(WorkloadOutput::default())
    }
}

/// `usable-space`: what statvfs reports right after mkfs (df's Size/Avail, inodes).
pub struct UsableSpace;

impl Workload for UsableSpace {
    fn kind(&self) -> Kind {
        Kind::UsableSpace
    }
    fn name(&self) -> &'static str {
        "usable-space"
    }
    fn family(&self) -> Family {
        Family::Setup
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Space
    }
    fn table(&self) -> Table {
        Table::Capacity
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "usable-space" => ("Usable space (df)", "usable space"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 16,
            workload: "usable-space",
            metrics: &[AVAIL_BYTES],
            label: "Usable space (df)",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs::NOTHING
    }
    fn emits(&self) -> &'static [MetricId] {
        &[SIZE_BYTES, AVAIL_BYTES, INODES_TOTAL, INODES_FREE]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("usable-space", Kind::UsableSpace)]
    }
    fn example(&self) -> &'static str {
        "id = \"usable-space\"\nkind = \"usable-space\""
    }
    fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Nothing
    }
    fn describe(&self, _: &WorkloadSpec, _: &Describe<'_>) -> String {
        "statvfs: size, available bytes, inodes".into()
    }
    fn prepare(&self, _: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<Caches> {
        Ok(Caches::Keep)
    }
    fn run(&self, cx: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        usable_space(cx.root)
    }
}

/// `usable-space`: what statvfs reports right after mkfs (df's Size/Avail, inodes).
fn usable_space(root: &Path) -> crate::Result<WorkloadOutput> {
    let s = rustix::fs::statvfs(root).map_err(|e| Error::io("cannot statvfs", root, e.into()))?;
    let f = s.f_frsize as f64;
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SIZE_BYTES, "bytes", s.f_blocks as f64 * f),
            Metric::new(AVAIL_BYTES, "bytes", s.f_bavail as f64 * f),
            Metric::new(INODES_TOTAL, "count", s.f_files as f64),
            Metric::new(INODES_FREE, "count", s.f_ffree as f64),
        ],
        ..Default::default()
    })
}

/// `layout`: write the data file once, sequentially, timed (seed 000's "write a 16 GiB file").
pub struct Layout;

impl Workload for Layout {
    fn kind(&self) -> Kind {
        Kind::Layout
    }
    fn name(&self) -> &'static str {
        "layout"
    }
    fn family(&self) -> Family {
        Family::Io
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "layout" => ("Lay out the test file", "layout"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 10,
            workload: "layout",
            metrics: &[BW_MIB_S, SECONDS],
            label: "Write the test file",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs::WRITES
    }
    fn emits(&self) -> &'static [MetricId] {
        &[
            SECONDS,
            BYTES,
            BW_MIB_S,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        let mut layout = WorkloadSpec::io("layout", IoParams::new(RwMode::Write, M, 1, 8));
        layout.kind = Kind::Layout;
        vec![layout]
    }
    fn example(&self) -> &'static str {
        "id = \"layout\"\nkind = \"layout\"\nrw = \"write\"\nbs = \"1M\"\nnumjobs = 1\niodepth = 8"
    }
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        let bytes = w.io.as_ref().and_then(|p| p.size).unwrap_or(d.file_size);
        Cost::Write {
            bytes,
            share: 1.0,
            then_s: if d.precondition {
                super::precondition::estimate_s(bytes)
            } else {
                0.0
            },
        }
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_io(w, d)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let spec = w
            .job_spec(cx.work.dir, &cx.defaults)
            .expect("layout has io params");
        let size = spec.size.unwrap_or(cx.defaults.file_size);
        let mut notes = Vec::new();
        let secs = match crate::engine::layout(&spec.filename, size, spec.direct) {
            Err(e) if spec.direct && is_direct_refusal(&e) => {
                let _ = std::fs::remove_file(&spec.filename);
                notes.push(format!(
                    "{} refused O_DIRECT ({e}); the file was laid out buffered",
                    cx.work.fs
                ));
                crate::engine::layout(&spec.filename, size, false)?
            }
            other => other?,
        };
        if cx.defaults.precondition {
            // After the first sequential write, before any measured job (not timed in the
            // layout's figures); buffered, as the layout was, when the filesystem refused
            // O_DIRECT.
            let mut laid = spec.clone();
            laid.direct = notes.is_empty() && spec.direct;
            notes.push(super::precondition::run(&laid)?);
        }
        Ok(WorkloadOutput {
            metrics: vec![
                Metric::new(SECONDS, "s", secs),
                Metric::new(BYTES, "bytes", size as f64),
                Metric::new(BW_MIB_S, "MiB/s", size as f64 / 1048576.0 / secs.max(1e-9)),
            ],
            notes,
            ..Default::default()
        })
    }
}

/// An I/O job on the data file (or a file of its own).
pub struct Io;

impl Workload for Io {
    fn kind(&self) -> Kind {
        Kind::Io
    }
    fn name(&self) -> &'static str {
        "io"
    }
    fn family(&self) -> Family {
        Family::Io
    }
    fn question(&self, params: &serde_json::Value) -> Question {
        super::registry::io_question(params)
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "seqread" => ("Sequential read", "seqread"),
            "seqwrite" => ("Sequential write", "seqwrite"),
            "randread" => ("Random read", "randread"),
            "randwrite" => ("Random write", "randwrite"),
            "randrw70" => ("70/30 random mix", "70/30 mix"),
            "fsync-write" => ("Write + fsync", "write+fsync"),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 1,
                workload: "randread",
                metrics: &[IOPS],
                label: "4K random read",
            },
            Headline {
                rank: 2,
                workload: "randwrite",
                metrics: &[IOPS],
                label: "4K random write",
            },
            Headline {
                rank: 3,
                workload: "randrw70",
                metrics: &[READ_IOPS],
                label: "70/30 random mix, read {unit}",
            },
            Headline {
                rank: 4,
                workload: "randrw70",
                metrics: &[WRITE_IOPS],
                label: "70/30 random mix, write {unit}",
            },
            Headline {
                rank: 5,
                workload: "fsync-write",
                metrics: &[OPS_PER_S, IOPS],
                label: "4K write + fsync",
            },
            Headline {
                rank: 6,
                workload: "randread",
                metrics: &[LAT_P99_MS],
                label: "Random read p99",
            },
            Headline {
                rank: 7,
                workload: "randwrite",
                metrics: &[LAT_P99_MS],
                label: "Random write p99",
            },
            Headline {
                rank: 8,
                workload: "seqread",
                metrics: &[BW_MIB_S],
                label: "1M sequential read",
            },
            Headline {
                rank: 9,
                workload: "seqwrite",
                metrics: &[BW_MIB_S],
                label: "1M sequential write",
            },
        ];
        ROWS
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        let p = w.io.as_ref();
        Needs {
            data_file: p.is_some_and(|p| p.file.is_none()),
            writes: if p.is_some_and(|p| p.rw.writes()) {
                Writes::Engine
            } else {
                Writes::No
            },
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        IO_METRICS
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        let split = |mut p: IoParams| {
            p.split = true;
            p
        };
        let mut mix = IoParams::new(RwMode::Randrw, 4 * K, 4, 4);
        mix.rwmixread = 70;
        let mut fsync = IoParams::new(RwMode::Randwrite, 4 * K, 1, 1);
        fsync.fsync = 1;
        vec![
            WorkloadSpec::io("seqread", split(IoParams::new(RwMode::Read, M, 4, 2))),
            WorkloadSpec::io("seqwrite", split(IoParams::new(RwMode::Write, M, 4, 2))),
            WorkloadSpec::io("randread", IoParams::new(RwMode::Randread, 4 * K, 4, 8)),
            WorkloadSpec::io("randwrite", IoParams::new(RwMode::Randwrite, 4 * K, 4, 8)),
            WorkloadSpec::io("randrw70", mix),
            WorkloadSpec::io("fsync-write", fsync),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"randread-qd32\"\nrw = \"randread\"\nbs = \"4k\"\nnumjobs = 4\niodepth = 32"
    }
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        job_cost(w, d)
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_io(w, d)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let spec = w
            .job_spec(cx.work.dir, &cx.defaults)
            .expect("io has params");
        io_with_fallback(&cx.work, spec, cx.fio_engine)
    }
}

/// An I/O job inside a memory-capped cgroup (v1 or v2).
pub struct Memcap;

impl Workload for Memcap {
    fn kind(&self) -> Kind {
        Kind::Memcap
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        _base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let m = t
            .remove("memory_limit")
            .ok_or("memcap needs memory_limit = \"512M\"")?;
        let limit = crate::units::toml_size(&m).map_err(|e| format!("memory_limit: {e}"))?;
        spec.memory_limit = Some(limit);
        Ok(())
    }
    fn complete(&self, spec: &mut WorkloadSpec) -> Result<(), String> {
        // Its own file, so the capped job does not share the data file's cache.
        let own = format!("{}.dat", spec.id);
        if let Some(p) = spec.io.as_mut()
            && p.file.is_none()
        {
            p.file = Some(own);
        }
        Ok(())
    }
    fn name(&self) -> &'static str {
        "memcap"
    }
    fn family(&self) -> Family {
        Family::Io
    }
    fn question(&self, params: &serde_json::Value) -> Question {
        super::registry::io_question(params)
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        // Its child is `fsbench io`, which counts and waits after writing jobs itself.
        Needs {
            root: true,
            ..Io.needs(w)
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        MEMCAP_METRICS
    }
    fn example(&self) -> &'static str {
        "id = \"randread-512m\"\nkind = \"memcap\"\nrw = \"randread\"\nbs = \"4k\"\nnumjobs = 4\niodepth = 8\nmemory_limit = \"512M\""
    }
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        job_cost(w, d)
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        describe_io(w, d)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let spec = w
            .job_spec(cx.work.dir, &cx.defaults)
            .expect("memcap has params");
        super::memcap::run(&spec, w.memory_limit.unwrap_or(512 << 20))
    }
}

/// `compress`: text-like data, throughput and the on-disk ratio the filesystem reports.
pub struct Compress;

impl Workload for Compress {
    fn kind(&self) -> Kind {
        Kind::Compress
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        _base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        if let Some(v) = t.remove("size") {
            spec.size = Some(crate::units::toml_size(&v).map_err(|e| format!("size: {e}"))?);
        }
        Ok(())
    }
    fn name(&self) -> &'static str {
        "compress"
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Space
    }
    fn table(&self) -> Table {
        Table::Io
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs::WRITES
    }
    fn emits(&self) -> &'static [MetricId] {
        &[
            SECONDS,
            BYTES,
            BW_MIB_S,
            COMPRESS_RATIO,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![WorkloadSpec::simple("compress", Kind::Compress).opt()]
    }
    fn example(&self) -> &'static str {
        "id = \"compress-1g\"\nkind = \"compress\"\nsize = \"1G\""
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Write {
            bytes: w.size.unwrap_or(256 << 20),
            share: 0.8,
            then_s: 0.0,
        }
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        format!(
            "write {} of text-like data (about 2.4:1), report MiB/s and the on-disk ratio",
            format_size(w.size.unwrap_or(256 << 20))
        )
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        super::compress::run(
            cx.work.dir,
            cx.work.fs,
            &super::compress::CompressSpec {
                bytes: w.size.unwrap_or(256 << 20),
                seed: cx.work.seed,
                ..Default::default()
            },
        )
    }
}

/// One section of a user's fio job file; the sections of a phase run together.
pub struct FioJob;

impl FioJob {
    fn phase_key(
        w: &WorkloadSpec,
        setup: &str,
        round: u32,
    ) -> Option<(String, u32, PathBuf, usize)> {
        let (file, phase) = w.fio_job.as_ref()?.phase_key();
        Some((setup.to_string(), round, file, phase))
    }

    /// Whether `w`'s phase already ran in this setup-round (its output is waiting).
    fn phase_ran(cx: &StepContext<'_>, w: &WorkloadSpec) -> bool {
        let key = Self::phase_key(w, &cx.setup.name, cx.work.round);
        cx.shared
            .fio_phase
            .as_ref()
            .is_some_and(|p| Some(&p.key) == key.as_ref() && p.outputs.contains_key(&w.id))
    }
}

impl Workload for FioJob {
    fn kind(&self) -> Kind {
        Kind::FioJob
    }
    fn name(&self) -> &'static str {
        "fio-job"
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, params: &serde_json::Value) -> Question {
        super::registry::io_question(params)
    }
    fn table(&self) -> Table {
        Table::Io
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        Needs {
            tool: w.fio_job.as_ref().filter(|j| !j.native).map(|_| "fio"),
            // The runner counts around the step that runs the phase; a section alone in its
            // phase gets the totals, concurrent ones only the phase's in-job bytes.
            writes: Writes::Runner,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        FIO_JOB_METRICS
    }
    fn example(&self) -> &'static str {
        "kind = \"fio-job\"\npath = \"job.fio\""
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Seconds(w.fio_job.as_ref().map_or(0.0, |j| j.estimate_seconds()))
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        match &w.fio_job {
            Some(j) => format!(
                "{} [{}] phase {}{}: {}",
                j.file.display(),
                j.section,
                j.phase + 1,
                if j.native {
                    " (native engine)"
                } else {
                    " (fio)"
                },
                j.options.join(" ")
            ),
            None => String::new(),
        }
    }
    /// A fio phase drops caches once, before its first section runs.
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        Ok(if Self::phase_ran(cx, w) {
            Caches::Keep
        } else {
            Caches::Drop
        })
    }
    /// Run its phase (every selected section between the same stonewalls) unless that
    /// already happened in this setup-round, then take its output.
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let job = w
            .fio_job
            .as_ref()
            .ok_or_else(|| Error::workload(&w.id, "fio-job workload without a job section"))?;
        let (setup, round) = (cx.setup.name.as_str(), cx.work.round);
        let key = Self::phase_key(w, setup, round).expect("fio job");
        if !Self::phase_ran(cx, w) {
            let members: Vec<&WorkloadSpec> = cx
                .plan_workloads
                .iter()
                .filter(|x| Self::phase_key(x, setup, round).as_ref() == Some(&key))
                .collect();
            let jobs: Vec<&crate::fio::jobfile::FioJob> =
                members.iter().filter_map(|m| m.fio_job.as_ref()).collect();
            let stem = job
                .file
                .file_stem()
                .map(|s| crate::fio::jobfile::section_id(&s.to_string_lossy()))
                .unwrap_or_else(|| "fio".into());
            let dir = cx.work.dir.join(format!("fio-{stem}"));
            let outputs = match super::fiojob::run_phase(&jobs, &dir, cx.work.device) {
                Ok(per) => members.iter().map(|m| m.id.clone()).zip(per).collect(),
                Err(Error::Interrupted) => return Err(Error::Interrupted),
                // fio refused the phase: every section of it failed with fio's words.
                Err(e) => {
                    let msg = e.to_string();
                    members
                        .iter()
                        .map(|m| (m.id.clone(), Err(Error::Other(msg.clone()))))
                        .collect()
                }
            };
            cx.shared.fio_phase = Some(FioPhase { key, outputs });
        }
        let mut out = cx
            .shared
            .fio_phase
            .as_mut()
            .and_then(|p| p.outputs.remove(&w.id))
            .unwrap_or_else(|| Err(Error::workload(&w.id, "its fio phase produced no result")))?;
        // What fsbench changed in the section (rebasing, capping, overrides), said once.
        if round == 1 {
            out.notes.extend(job.notes.iter().cloned());
        }
        Ok(out)
    }
}

/// Ramp + runtime of an I/O job (its own or the plan's).
fn job_cost(w: &WorkloadSpec, d: &JobDefaults) -> Cost {
    let p = w.io.as_ref().expect("io workloads carry params");
    Cost::Job {
        // Run until steady: count the limit (an upper bound).
        runtime: d
            .steady
            .map(|s| s.limit())
            .or(p.runtime)
            .unwrap_or(d.runtime),
        ramp: p.ramp.unwrap_or(d.ramp),
        direct: p.direct,
    }
}

/// `randread bs=4 KiB jobs=4 qd=8 size=… direct 5 s + 1 s ramp`.
fn describe_io(w: &WorkloadSpec, d: &Describe<'_>) -> String {
    let Some(io) = &w.io else {
        return String::new();
    };
    let size = io.size.unwrap_or(d.defaults.file_size);
    let mut s = format!(
        "{} bs={} jobs={} qd={} size={}",
        io.rw.as_str(),
        format_size(io.bs),
        io.numjobs,
        io.iodepth,
        format_size(size)
    );
    if io.split {
        s.push_str(" (each job its own part)");
    }
    if io.rw.reads() && io.rw.writes() {
        s.push_str(&format!(" read%={}", io.rwmixread));
    }
    if io.fsync > 0 {
        s.push_str(&format!(" fsync={}", io.fsync));
    }
    s.push_str(if io.direct { " direct" } else { " buffered" });
    if io.compress > 0 {
        s.push_str(&format!(" compressible={}%", io.compress));
    }
    if let Some(m) = w.memory_limit {
        s.push_str(&format!(" memory cap {}", format_size(m)));
    }
    if w.kind == Kind::Layout {
        s.push_str(" (timed, size-based)");
        if d.defaults.precondition {
            s.push_str(", then preconditioned (2 sequential fills, 1 random overwrite)");
        }
    } else if let Some(st) = &d.defaults.steady {
        let fmt = crate::units::format_duration;
        let rounds = if st.quick {
            String::new()
        } else {
            format!("{} rounds of {} s, ", st.round_limit(), st.round_s())
        };
        s.push_str(&format!(
            " until steady (at most {rounds}{}) + {} ramp",
            fmt(st.limit()),
            fmt(io.ramp.unwrap_or(d.defaults.ramp))
        ));
    } else {
        let fmt = crate::units::format_duration;
        s.push_str(&format!(
            " {} + {} ramp",
            fmt(io.runtime.unwrap_or(d.defaults.runtime)),
            fmt(io.ramp.unwrap_or(d.defaults.ramp))
        ));
    }
    s
}

/// Run one I/O job with the chosen engine and turn its report into metrics.
fn io_run(
    ctx: &WorkloadContext<'_>,
    spec: &crate::engine::JobSpec,
    fio: bool,
) -> crate::Result<WorkloadOutput> {
    if fio {
        Ok(super::io::to_output(&crate::fio::run(spec)?))
    } else {
        super::io::run(ctx, spec)
    }
}

/// Run an I/O job; when the filesystem refuses O_DIRECT (EINVAL, e.g. zfs-fuse) run it
/// buffered and say so in the results rather than failing the step.
fn io_with_fallback(
    ctx: &WorkloadContext<'_>,
    spec: crate::engine::JobSpec,
    fio: bool,
) -> crate::Result<WorkloadOutput> {
    match io_run(ctx, &spec, fio) {
        Err(e) if spec.direct && is_direct_refusal(&e) => {
            let mut buffered = spec.clone();
            buffered.direct = false;
            let mut out = io_run(ctx, &buffered, fio)?;
            out.notes.push(format!(
                "{} refused O_DIRECT ({e}); this job ran buffered, so the page cache is part of its numbers",
                ctx.fs
            ));
            Ok(out)
        }
        other => other,
    }
}

/// Whether an I/O error means "this filesystem does not do O_DIRECT".
fn is_direct_refusal(e: &Error) -> bool {
    let s = e.to_string();
    s.contains("EINVAL") || s.contains("Invalid argument") || s.contains("os error 22")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricId;
    use crate::metrics::registry::{AVAIL_BYTES, SIZE_BYTES};

    #[test]
    fn usable_space_reads_statvfs() {
        let d = tempfile::tempdir().unwrap();
        let out = usable_space(d.path()).unwrap();
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert!(get(SIZE_BYTES) > 0.0);
        assert!(get(AVAIL_BYTES) <= get(SIZE_BYTES));
    }

    #[test]
    fn direct_refusal_is_recognised() {
        let e = Error::io(
            "cannot open with O_DIRECT",
            "/x",
            std::io::Error::from_raw_os_error(22),
        );
        assert!(is_direct_refusal(&e));
        assert!(!is_direct_refusal(&Error::Other("ENOSPC".into())));
    }
}
