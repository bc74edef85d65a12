//! The built-in kinds as data: mkfs, usable-space, layout, I/O jobs, memory-capped jobs and
//! compression. Each is one [`Builtin`] value — its name, family, names and headline rows,
//! metrics, catalog and the few functions where it differs — walked by one [`Workload`]
//! impl, so a new job-shaped kind is a value here, not another impl.

use super::api::{
    Caches, Cost, Describe, Family, Headline, Kind, Names, Needs, Phase, Question, Table, Workload,
    Writes, io_question,
};
use super::api::{Metric, WorkloadContext, WorkloadOutput};
use super::spec::{IoParams, JobDefaults, OWN_SIZE, WorkloadSpec};
use super::step::StepContext;
use crate::Error;
use crate::engine::RwMode;
use crate::metrics::MetricId;
use crate::metrics::registry::*;
use crate::units::format_size;
use std::path::Path;

const M: u64 = 1 << 20;
const K: u64 = 1 << 10;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// mkfs / zpool create, timed (happens once per setup-round whatever is selected).
    pub const Mkfs: Kind = Kind::named("mkfs");
    /// statvfs right after mount.
    pub const UsableSpace: Kind = Kind::named("usable-space");
    /// Write the data file once, timed.
    pub const Layout: Kind = Kind::named("layout");
    /// An I/O job on the data file.
    pub const Io: Kind = Kind::named("io");
    /// An I/O job inside a memory-capped cgroup.
    pub const Memcap: Kind = Kind::named("memcap");
    /// Write text-like (≈2.4:1) data and read the on-disk compression ratio back.
    pub const Compress: Kind = Kind::named("compress");
}

/// [`Workload::take_params`] of a built-in (it inherits nothing from a catalog workload).
pub type TakeParams = fn(&mut toml::Table, &mut WorkloadSpec) -> Result<(), String>;
/// [`Workload::complete`] of a built-in.
pub type Complete = fn(&mut WorkloadSpec) -> Result<(), String>;

/// A built-in kind as data: what [`Workload`] asks, as values and plain functions.
pub struct Builtin {
    /// Its kind.
    pub kind: Kind,
    /// Its family.
    pub family: Family,
    /// Its question from the recorded parameters (`None`: its family's).
    pub question: Option<fn(&serde_json::Value) -> Question>,
    /// Its report table (`None`: its family's).
    pub table: Option<Table>,
    /// The workloads it ships, named: (id, label, short label).
    pub names: &'static [(&'static str, &'static str, &'static str)],
    /// Its headline rows.
    pub headlines: &'static [Headline],
    /// What a workload of it needs.
    pub needs: fn(&WorkloadSpec) -> Needs,
    /// The metrics it may emit.
    pub emits: &'static [MetricId],
    /// Its catalog workloads.
    pub shipped: fn() -> Vec<WorkloadSpec>,
    /// A `[[workload]]` table using it.
    pub example: &'static str,
    /// Its own plan-file keys with a line each.
    pub keys: &'static [(&'static str, &'static str)],
    /// What a step costs.
    pub cost: fn(&WorkloadSpec, &JobDefaults) -> Cost,
    /// Its line in `fsbench plan`.
    pub describe: fn(&WorkloadSpec, &Describe<'_>) -> String,
    /// Takes its own keys out of a `[[workload]]` table (`None`: it has none).
    pub take_params: Option<TakeParams>,
    /// Defaults after the common keys (`None`: none).
    pub complete: Option<Complete>,
    /// Whether the caches are dropped before a step.
    pub caches: Caches,
    /// Runs a step.
    pub run: fn(&mut StepContext<'_>, &WorkloadSpec) -> crate::Result<WorkloadOutput>,
}

impl Workload for Builtin {
    fn kind(&self) -> Kind {
        self.kind
    }
    fn family(&self) -> Family {
        self.family
    }
    fn question(&self, params: &serde_json::Value) -> Question {
        match self.question {
            Some(q) => q(params),
            None => self.family.question(),
        }
    }
    fn table(&self) -> Table {
        self.table.unwrap_or(self.family.table())
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (_, label, short) = *self.names.iter().find(|(i, _, _)| *i == id)?;
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        self.headlines
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        (self.needs)(w)
    }
    fn emits(&self) -> &'static [MetricId] {
        self.emits
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        (self.shipped)()
    }
    fn example(&self) -> &'static str {
        self.example
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        self.keys
    }
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        (self.cost)(w, d)
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        (self.describe)(w, d)
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        // Every kind of the I/O family is an I/O job with its keys; its own come after.
        if self.family == Family::Io {
            super::job_keys::take_job(t, base, spec)?;
        }
        self.take_params.map_or(Ok(()), |f| f(t, spec))
    }
    fn complete(&self, spec: &mut WorkloadSpec) -> Result<(), String> {
        self.complete.map_or(Ok(()), |f| f(spec))
    }
    fn prepare(&self, _: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        // A job given exactly (`fsbench io`, each rank of `io --mpi`) runs as `fsbench io`
        // always did: on the caches as they are.
        if self.kind == Kind::Io && w.params_of::<super::io::GroupJob>().is_some() {
            return Ok(Caches::Keep);
        }
        Ok(self.caches)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        (self.run)(cx, w)
    }
}

/// An I/O job; `scaling_factor` is added by the runner when the workload names a baseline.
const IO_METRICS: &[MetricId] = super::io::io_metrics!(SCALING_FACTOR);
/// A memory-capped job: the cap and the peak besides the job's own.
const MEMCAP_METRICS: &[MetricId] = super::io::io_metrics!(MEMORY_CAP_BYTES, PEAK_MEMORY_BYTES);
/// What the layout and compress steps measure (the runner adds the device's figures).
const WRITE_METRICS: &[MetricId] = &[
    SECONDS,
    BYTES,
    BW_MIB_S,
    DEVICE_WRITE_BYTES,
    WRITE_AMPLIFICATION,
    DEVICE_WRITE_BYTES_TOTAL,
    WRITE_AMPLIFICATION_TOTAL,
];

/// Nothing to take from the plan: the one workload of its kind.
fn nothing(_: &WorkloadSpec, _: &JobDefaults) -> Cost {
    Cost::Nothing
}

/// `mkfs`: timed by the runner when it creates the setup; not a step of its own.
pub static MKFS: Builtin = Builtin {
    kind: Kind::Mkfs,
    family: Family::Setup,
    question: None,
    table: None,
    names: &[("mkfs", "mkfs / zpool create", "mkfs")],
    headlines: &[Headline {
        rank: 15,
        workload: "mkfs",
        metrics: &[SECONDS],
        label: "mkfs / zpool create",
    }],
    needs: |_| Needs {
        root: true,
        phase: Phase::Setup,
        ..Needs::NOTHING
    },
    emits: &[SECONDS],
    shipped: || vec![WorkloadSpec::simple("mkfs", Kind::Mkfs)],
    example: "id = \"mkfs\"\nkind = \"mkfs\"",
    keys: &[],
    cost: nothing,
    describe: describe_mkfs,
    take_params: None,
    complete: None,
    caches: Caches::Drop,
    // The runner times mkfs while it creates the setup.
    run: |_, _| Ok(WorkloadOutput::default()),
};

/// `usable-space`: what statvfs reports right after mkfs (df's Size/Avail, inodes).
pub static USABLE_SPACE: Builtin = Builtin {
    kind: Kind::UsableSpace,
    family: Family::Setup,
    question: Some(space),
    table: Some(Table::Capacity),
    names: &[("usable-space", "Usable space (df)", "usable space")],
    headlines: &[Headline {
        rank: 16,
        workload: "usable-space",
        metrics: &[AVAIL_BYTES],
        label: "Usable space (df)",
    }],
    needs: |_| Needs::NOTHING,
    emits: &[
        SIZE_BYTES,
        AVAIL_BYTES,
        INODES_TOTAL,
        INODES_FREE,
        OVERHEAD_BYTES,
    ],
    shipped: || vec![WorkloadSpec::simple("usable-space", Kind::UsableSpace)],
    example: "id = \"usable-space\"\nkind = \"usable-space\"",
    keys: &[],
    cost: nothing,
    describe: |_, _| "statvfs: size, available bytes, inodes".into(),
    take_params: None,
    complete: None,
    caches: Caches::Keep,
    run: |cx, _| {
        // One device under the filesystem: what it does not hand back as free space is its
        // own (a raid= layout spans several, so the first one's size would not be its size).
        let device = cx
            .work
            .device
            .filter(|_| crate::fs::layout::of_setup(cx.setup).is_none());
        let size = device
            .map(|d| {
                crate::host::sys::device_size_at(d)
                    .map_err(|e| Error::io("cannot read the size of", d, e))
            })
            .transpose()?;
        usable_space(cx.root, size)
    },
};

/// `layout`: write the data file once, sequentially, timed (seed 000's "write a 16 GiB file").
pub static LAYOUT: Builtin = Builtin {
    kind: Kind::Layout,
    family: Family::Io,
    question: None,
    table: None,
    names: &[("layout", "Lay out the test file", "layout")],
    headlines: &[Headline {
        rank: 10,
        workload: "layout",
        metrics: &[BW_MIB_S, SECONDS],
        label: "Write the test file",
    }],
    needs: |_| Needs::WRITES,
    emits: WRITE_METRICS,
    shipped: || {
        let mut layout = WorkloadSpec::io("layout", IoParams::new(RwMode::Write, M, 1, 8));
        layout.kind = Kind::Layout;
        vec![layout]
    },
    example: "id = \"layout\"\nkind = \"layout\"\nrw = \"write\"\nbs = \"1M\"\nnumjobs = 1\niodepth = 8",
    keys: super::job_keys::KEYS,
    cost: |w, d| {
        let bytes = w.io_job().and_then(|p| p.size).unwrap_or(d.file_size);
        Cost::Write {
            bytes,
            share: 1.0,
            then_s: if d.precondition {
                super::precondition::estimate_s(bytes)
            } else {
                0.0
            },
        }
    },
    describe: describe_io,
    take_params: None,
    complete: None,
    caches: Caches::Drop,
    run: run_layout,
};

/// An I/O job on the data file (or a file of its own).
pub static IO: Builtin = Builtin {
    kind: Kind::Io,
    family: Family::Io,
    question: Some(io_question),
    table: None,
    names: &[
        ("seqread", "Sequential read", "seqread"),
        ("seqwrite", "Sequential write", "seqwrite"),
        ("randread", "Random read", "randread"),
        ("randwrite", "Random write", "randwrite"),
        ("randrw70", "70/30 random mix", "70/30 mix"),
        ("fsync-write", "Write + fsync", "write+fsync"),
    ],
    headlines: &[
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
    ],
    needs: io_needs,
    emits: IO_METRICS,
    shipped: || {
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
    },
    example: "id = \"randread-qd32\"\nrw = \"randread\"\nbs = \"4k\"\nnumjobs = 4\niodepth = 32",
    keys: super::job_keys::KEYS,
    cost: job_cost,
    describe: describe_io,
    take_params: None,
    complete: None,
    caches: Caches::Drop,
    run: |cx, w| {
        // A job run exactly as given (`fsbench io`, one rank's of `io --mpi`), with its
        // coordinator.
        if let Some(g) = w.params_of::<super::io::GroupJob>() {
            let coord = cx.coordinator.unwrap_or(&crate::engine::Alone);
            return super::io::run_group(&g, coord, cx.work.settle, cx.fio_engine);
        }
        let spec = w
            .job_spec(cx.work.dir, &cx.defaults)
            .expect("io has params");
        io_with_fallback(&cx.work, spec, cx.fio_engine)
    },
};

/// An I/O job inside a memory-capped cgroup (v1 or v2).
pub static MEMCAP: Builtin = Builtin {
    kind: Kind::Memcap,
    family: Family::Io,
    question: Some(io_question),
    table: None,
    names: &[],
    headlines: &[],
    // Its child is `fsbench io`, which counts and waits after writing jobs itself.
    needs: |w| Needs {
        root: true,
        ..io_needs(w)
    },
    emits: MEMCAP_METRICS,
    shipped: Vec::new,
    example: "id = \"randread-512m\"\nkind = \"memcap\"\nrw = \"randread\"\nbs = \"4k\"\nnumjobs = 4\niodepth = 8\nmemory_limit = \"512M\"",
    keys: &MEMCAP_KEYS,
    cost: job_cost,
    describe: describe_io,
    take_params: Some(memcap_params),
    complete: Some(memcap_complete),
    caches: Caches::Drop,
    run: |cx, w| {
        let spec = w
            .job_spec(cx.work.dir, &cx.defaults)
            .expect("memcap has params");
        super::memcap::run(&spec, w.param(MEMORY_LIMIT).unwrap_or(512 << 20))
    },
};

/// `compress`: text-like data, throughput and the on-disk ratio the filesystem reports.
pub static COMPRESS: Builtin = Builtin {
    kind: Kind::Compress,
    family: Family::Application,
    question: Some(space),
    table: Some(Table::Io),
    names: &[],
    headlines: &[],
    needs: |_| Needs::WRITES,
    emits: COMPRESS_METRICS,
    shipped: || vec![WorkloadSpec::simple("compress", Kind::Compress).opt()],
    example: "id = \"compress-1g\"\nkind = \"compress\"\nsize = \"1G\"",
    keys: &[("size", "bytes of text-like data written (default 256M)")],
    cost: |w, _| Cost::Write {
        bytes: w.param(OWN_SIZE).unwrap_or(256 << 20),
        share: 0.8,
        then_s: 0.0,
    },
    describe: |w, _| {
        format!(
            "write {} of text-like data (about 2.4:1), report MiB/s and the on-disk ratio",
            format_size(w.param(OWN_SIZE).unwrap_or(256 << 20))
        )
    },
    take_params: Some(compress_params),
    complete: None,
    caches: Caches::Drop,
    run: |cx, w| {
        super::compress::run(
            cx.work.dir,
            cx.driver("compress")?,
            &super::compress::CompressSpec {
                bytes: w.param(OWN_SIZE).unwrap_or(256 << 20),
                seed: cx.work.seed,
                ..Default::default()
            },
        )
    },
};

/// What compress measures: the write's figures and the ratio.
const COMPRESS_METRICS: &[MetricId] = &[
    SECONDS,
    BYTES,
    BW_MIB_S,
    COMPRESS_RATIO,
    DEVICE_WRITE_BYTES,
    WRITE_AMPLIFICATION,
    DEVICE_WRITE_BYTES_TOTAL,
    WRITE_AMPLIFICATION_TOTAL,
];

/// memcap's keys: an I/O job's, then its cgroup's cap.
const MEMCAP_KEYS: [(&str, &str); super::job_keys::KEYS.len() + 1] = {
    let mut keys = [("", ""); super::job_keys::KEYS.len() + 1];
    let mut i = 0;
    while i < super::job_keys::KEYS.len() {
        keys[i] = super::job_keys::KEYS[i];
        i += 1;
    }
    keys[i] = (
        "memory_limit",
        "the cgroup's memory cap (\"512M\"; required)",
    );
    keys
};

/// The key memcap records its cgroup's cap under, bytes (in results.json too).
const MEMORY_LIMIT: &str = "memory_limit";

/// memcap's `memory_limit` key.
fn memcap_params(t: &mut toml::Table, spec: &mut WorkloadSpec) -> Result<(), String> {
    let m = t
        .remove("memory_limit")
        .ok_or("memcap needs memory_limit = \"512M\"")?;
    let limit = crate::units::toml_size(&m).map_err(|e| format!("memory_limit: {e}"))?;
    spec.set_param(MEMORY_LIMIT, &limit);
    Ok(())
}

/// A memory-capped job gets its own file, so it does not share the data file's cache.
fn memcap_complete(spec: &mut WorkloadSpec) -> Result<(), String> {
    let own = format!("{}.dat", spec.id);
    if let Some(mut p) = spec.io_job()
        && p.file.is_none()
    {
        p.file = Some(own);
        spec.set_io_job(&p);
    }
    Ok(())
}

/// compress's `size` key.
fn compress_params(t: &mut toml::Table, spec: &mut WorkloadSpec) -> Result<(), String> {
    if let Some(v) = t.remove("size") {
        let size = crate::units::toml_size(&v).map_err(|e| format!("size: {e}"))?;
        spec.set_param(OWN_SIZE, &size);
    }
    Ok(())
}

/// Space is what the setup steps and compression answer.
fn space(_: &serde_json::Value) -> Question {
    Question::Space
}

/// An I/O job needs the shared data file unless it has its own, and the engine counts what a
/// writing job writes.
fn io_needs(w: &WorkloadSpec) -> Needs {
    let p = w.io_job();
    Needs {
        data_file: p.as_ref().is_some_and(|p| p.file.is_none()),
        writes: if p.is_some_and(|p| p.rw.writes()) {
            Writes::Engine
        } else {
            Writes::No
        },
        ..Needs::NOTHING
    }
}

/// `create xfs raid=… mkfs … , mount -o …, then wait for a quiet device`.
fn describe_mkfs(_: &WorkloadSpec, d: &Describe<'_>) -> String {
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
        let reserve = d.defaults.file_size;
        s.push_str(&format!(
            ", then age ({a}: {} written, ~{:.0} s, then {} written to check the data file \
             still fits)",
            crate::units::format_size(a.bytes()),
            a.estimate_seconds(&setup.fs, reserve),
            crate::units::format_size(reserve)
        ));
        if a.replicate == crate::fs::setup::age::Replicate::Restore {
            s.push_str(&format!(
                "; with later rounds, the aged image kept and written back in them (~{:.0} s)",
                a.round_seconds(&setup.fs, reserve, 2, 2)
            ));
        }
    }
    s
}

/// Write the data file once (then precondition it when asked).
fn run_layout(cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
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

/// `usable-space`: what statvfs reports right after mkfs (df's Size/Avail, inodes), and with
/// the size of the one device under it, the space its own structures take: the device less the
/// free blocks. The free blocks include ext4's root reserve (df leaves it out of Avail), so the
/// reserve is not counted as structure; XFS shows its structures as Used, ext4 mostly as a
/// smaller Size, and this counts both.
fn usable_space(root: &Path, device_bytes: Option<u64>) -> crate::Result<WorkloadOutput> {
    let s = rustix::fs::statvfs(root).map_err(|e| Error::io("cannot statvfs", root, e.into()))?;
    let f = s.f_frsize as f64;
    let mut metrics = vec![
        Metric::new(SIZE_BYTES, "bytes", s.f_blocks as f64 * f),
        Metric::new(AVAIL_BYTES, "bytes", s.f_bavail as f64 * f),
        Metric::new(INODES_TOTAL, "count", s.f_files as f64),
        Metric::new(INODES_FREE, "count", s.f_ffree as f64),
    ];
    if let Some(device) = device_bytes {
        let free = s.f_bfree as f64 * f;
        metrics.push(Metric::new(
            OVERHEAD_BYTES,
            "bytes",
            (device as f64 - free).max(0.0),
        ));
    }
    Ok(WorkloadOutput {
        metrics,
        ..Default::default()
    })
}

/// Ramp + runtime of an I/O job (its own or the plan's).
fn job_cost(w: &WorkloadSpec, d: &JobDefaults) -> Cost {
    let p = w.io_job().expect("io workloads carry params");
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
    let Some(io) = w.io_job() else {
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
    if let Some(m) = w.param::<u64>(MEMORY_LIMIT) {
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
    use crate::metrics::registry::{AVAIL_BYTES, OVERHEAD_BYTES, SIZE_BYTES};

    #[test]
    fn usable_space_reads_statvfs() {
        let d = tempfile::tempdir().unwrap();
        let out = usable_space(d.path(), None).unwrap();
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).map(|m| m.value);
        assert!(get(SIZE_BYTES).unwrap() > 0.0);
        assert!(get(AVAIL_BYTES).unwrap() <= get(SIZE_BYTES).unwrap());
        // Without a device there is nothing to take the free space from.
        assert_eq!(get(OVERHEAD_BYTES), None);
        // With one, what is not free is the filesystem's: here the device is taken as twice
        // the filesystem's size, so its own structures are at least that half.
        let size = get(SIZE_BYTES).unwrap() as u64;
        let out = usable_space(d.path(), Some(2 * size)).unwrap();
        let get = |n: MetricId| out.metrics.iter().find(|m| m.metric == n).unwrap().value;
        assert!(get(OVERHEAD_BYTES) >= size as f64);
        assert!(get(OVERHEAD_BYTES) <= 2.0 * size as f64);
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
