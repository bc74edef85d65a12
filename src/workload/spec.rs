//! A workload of a plan as data: its id, kind and parameters ([`WorkloadSpec`]), and the I/O
//! job parameters in fio's vocabulary. `plan` re-exports these; the kinds and what each needs
//! are in [`super::registry`]. A kind's own parameters are one typed field ([`KindParams`])
//! that the kind reads and writes with its own type; the one shape this module knows is the
//! I/O job ([`WorkloadSpec::io_job`]), which layout, io and memcap run and the plan's size
//! checks, the ETA and the runner read (`job_spec` knows layout's is size-based).

use super::api::{Kind, Question};
use crate::engine::{Backend, JobSpec, RwMode};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Parameters of an I/O job, in fio's vocabulary; sizes and times not given here come from the
/// plan (`file_size`, `runtime`, `ramp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoParams {
    /// Access pattern.
    pub rw: RwMode,
    /// Block size, bytes.
    pub bs: u64,
    /// Queue depth per job.
    pub iodepth: u32,
    /// Parallel jobs.
    pub numjobs: u32,
    /// Each job works on its own 1/numjobs of the file (fio `offset_increment`).
    #[serde(default)]
    pub split: bool,
    /// Read percentage for `randrw`.
    #[serde(default = "default_mix")]
    pub rwmixread: u8,
    /// fsync after every N writes.
    #[serde(default)]
    pub fsync: u32,
    /// O_DIRECT.
    #[serde(default = "yes")]
    pub direct: bool,
    /// Backend.
    #[serde(default = "default_backend")]
    pub backend: Backend,
    /// Compressible share of each block (0 = incompressible, as seed 000 requires).
    #[serde(default)]
    pub compress: u8,
    /// Runtime override (else the plan's).
    #[serde(default)]
    pub runtime: Option<Duration>,
    /// Ramp override (else the plan's).
    #[serde(default)]
    pub ramp: Option<Duration>,
    /// File size override (else the plan's file size).
    #[serde(default)]
    pub size: Option<u64>,
    /// File name inside the data directory (default: the shared data file).
    #[serde(default)]
    pub file: Option<String>,
    /// Verify block headers when reading back.
    #[serde(default)]
    pub verify: bool,
}

fn default_mix() -> u8 {
    50
}
fn yes() -> bool {
    true
}
fn default_backend() -> Backend {
    Backend::IoUring
}

impl IoParams {
    /// A job with seed 000's defaults: direct, io_uring, incompressible.
    pub fn new(rw: RwMode, bs: u64, numjobs: u32, iodepth: u32) -> Self {
        IoParams {
            rw,
            bs,
            iodepth,
            numjobs,
            split: false,
            rwmixread: 50,
            fsync: 0,
            direct: true,
            backend: Backend::IoUring,
            compress: 0,
            runtime: None,
            ramp: None,
            size: None,
            file: None,
            verify: false,
        }
    }
}

/// The name of the shared data file inside fsbench's data directory.
pub const DATA_FILE: &str = "fsbench.dat";

/// One workload of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// Id as it appears in results (`randread`, `seqwrite-j4`).
    pub id: String,
    /// What it does.
    pub kind: Kind,
    /// Id of a workload in the same setup-round whose `bw_mib_s` this one is divided by
    /// (metric `scaling_factor`, seed 003's "factor over one job").
    #[serde(default)]
    pub baseline: Option<String>,
    /// Recorded in results; false for prerequisites run only because a selected workload
    /// needs them (`layout` before `randread`, `untar` before `find-cold`).
    #[serde(default = "yes")]
    pub record: bool,
    /// Not part of the default selection; chosen with `--only`.
    #[serde(default)]
    pub optional: bool,
    /// Run only on the setups with these names (empty: every setup). A claim about two
    /// setups needs its costly workload there only (`pgbench-rw` on ext4 and xfs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setups: Vec<String>,
    /// The question it answers in the verdict, when the plan file names one (`class =
    /// "databases"`); otherwise its kind's answer ([`Workload::question`]).
    ///
    /// [`Workload::question`]: super::api::Workload::question
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Question>,
    /// The point of a plan file's `sweep` this workload is (`randread-qd32`: iodepth 32 of
    /// `randread`), so reports draw the family as a curve without parsing ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPoint>,
    /// The kind's own parameters, in one field for every kind: the kind's serde struct,
    /// read back typed with [`WorkloadSpec::params_of`] and set with
    /// [`WorkloadSpec::with_params`] (its `take_params` fills it), so a new kind adds no field
    /// here. results.json records them under `kind_params`, or an older kind's own key
    /// ([`KindParams`]); the I/O job of `layout`, `io` and `memcap` under `io`
    /// ([`WorkloadSpec::io_job`]), memcap's cap under `memory_limit` and compress's bytes
    /// under `size` ([`WorkloadSpec::param`]), where they were when they were fields here.
    #[serde(flatten)]
    pub kind_params: Option<KindParams>,
}

/// The keys results.json recorded kinds' parameters under before they were one field, by
/// kind name: these kinds keep them (as `params.pgbench`), so files written before and after
/// read and compare alike. Frozen: every other kind records under `kind_params`.
const RECORDED_KEYS: &[(&str, &str)] = &[
    ("pgbench", "pgbench"),
    ("sqlite", "sqlite"),
    ("fio-job", "fio_job"),
    ("smallfiles", "smallfiles"),
    ("fsmark", "fsmark"),
    ("crash", "crash"),
];

/// The key a new kind's parameters are recorded under.
const KIND_PARAMS: &str = "kind_params";

/// The key of the I/O job of the kinds that run one (`layout`, `io`, `memcap`): a field of
/// its own before, so results.json keeps it at the workload's top level.
const IO_JOB: &str = "io";

/// The key of the bytes a kind without an I/O job writes of its own (compress's `size`).
pub const OWN_SIZE: &str = "size";

/// A kind's own parameters as JSON, by the keys results.json records them under (flattened
/// into the workload's `params`: `{"id": …, "pgbench": {…}}`, `{"id": …, "kind_params": {…}}`,
/// `{"id": …, "io": {…}, "memory_limit": …}`). Every key of a workload that is not a common
/// field is one entry, sorted by key, so this type lists no kind's key: an older file read
/// back keeps every key it had (`fsbench meta` gave each of its workloads both `smallfiles`
/// and `fsmark`), is written back as it was, and the kind reads its own.
#[derive(Debug, Clone, PartialEq)]
pub struct KindParams {
    entries: Vec<(String, serde_json::Value)>,
}

impl Serialize for KindParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.entries.len()))?;
        for (key, value) in &self.entries {
            m.serialize_entry(key, value)?;
        }
        m.end()
    }
}

/// Reads what is left of a workload's fields after the common ones (`kind_params`, an older
/// kind's own key, `io`…), nulls left out (files before this type wrote `"io": null`), so an
/// older file's parameters fold into the one field.
impl<'de> Deserialize<'de> for KindParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<KindParams, D::Error> {
        let rest = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let mut entries: Vec<_> = rest.into_iter().filter(|(_, v)| !v.is_null()).collect();
        if entries.is_empty() {
            return Err(serde::de::Error::custom("no kind parameters"));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(KindParams { entries })
    }
}

/// The key `kind`'s parameters are recorded under.
fn key_of(kind: Kind) -> &'static str {
    RECORDED_KEYS
        .iter()
        .find(|(k, _)| *k == kind.as_str())
        .map_or(KIND_PARAMS, |(_, key)| *key)
}

/// One value of a swept job parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The id of the swept workload before its suffix (`randread`).
    pub family: String,
    /// The parameter swept (`iodepth`, `numjobs`).
    pub param: String,
    /// Its value here.
    pub value: u64,
}

impl WorkloadSpec {
    /// A workload without I/O parameters.
    pub fn simple(id: &str, kind: Kind) -> Self {
        WorkloadSpec {
            id: id.to_string(),
            kind,
            baseline: None,
            record: true,
            optional: false,
            setups: Vec::new(),
            class: None,
            sweep: None,
            kind_params: None,
        }
    }

    /// This workload's own parameters as its kind's type `T` (see
    /// [`WorkloadSpec::kind_params`]); `None` when none are set or they are not a `T`.
    pub fn params_of<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        let entries = &self.kind_params.as_ref()?.entries;
        let key = key_of(self.kind);
        let (_, value) = entries
            .iter()
            .find(|(k, _)| k == key)
            .or_else(|| entries.iter().find(|(k, _)| k != IO_JOB))?;
        serde_json::from_value(value.clone()).ok()
    }

    /// Set this workload's own parameters (its kind's serde struct), recorded under its
    /// kind's key ([`KindParams`]).
    pub fn set_params<T: Serialize>(&mut self, params: &T) {
        self.set_param(key_of(self.kind), params);
    }

    /// This workload with its own parameters set ([`WorkloadSpec::set_params`]).
    pub fn with_params<T: Serialize>(mut self, params: &T) -> Self {
        self.set_params(params);
        self
    }

    /// One parameter a kind records under a key of its own beside its struct (memcap's
    /// `memory_limit`, compress's `size`: fields of this type once, so files keep them at the
    /// workload's top level); `None` when unset or not a `T`.
    pub fn param<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let entries = &self.kind_params.as_ref()?.entries;
        let (_, value) = entries.iter().find(|(k, _)| k == key)?;
        serde_json::from_value(value.clone()).ok()
    }

    /// Set the parameter recorded under `key` ([`WorkloadSpec::param`]), keeping the others.
    pub fn set_param<T: Serialize>(&mut self, key: &str, value: &T) {
        let value = serde_json::to_value(value).expect("a parameter serializes");
        let entries = &mut self
            .kind_params
            .get_or_insert(KindParams {
                entries: Vec::new(),
            })
            .entries;
        match entries.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(i) => entries[i].1 = value,
            Err(i) => entries.insert(i, (key.to_string(), value)),
        }
    }

    /// The I/O job of a workload whose kind runs one (`layout`, `io`, `memcap`), recorded
    /// under `io`; `None` for every other kind.
    pub fn io_job(&self) -> Option<IoParams> {
        self.param(IO_JOB)
    }

    /// Set the I/O job ([`WorkloadSpec::io_job`]).
    pub fn set_io_job(&mut self, job: &IoParams) {
        self.set_param(IO_JOB, job);
    }

    /// Bytes this workload writes of its own, when it says (its I/O job's `size`, or the
    /// `size` a kind such as compress records): checked against the target and capped to the
    /// data file by the plan.
    pub fn own_size(&self) -> Option<u64> {
        match self.io_job() {
            Some(job) => job.size,
            None => self.param(OWN_SIZE),
        }
    }

    /// Cap [`WorkloadSpec::own_size`] to `max` bytes.
    pub fn cap_own_size(&mut self, max: u64) {
        if let Some(mut job) = self.io_job() {
            job.size = job.size.map(|s| s.min(max));
            self.set_io_job(&job);
        } else if let Some(s) = self.param::<u64>(OWN_SIZE) {
            self.set_param(OWN_SIZE, &s.min(max));
        }
    }

    /// An I/O job.
    pub fn io(id: &str, params: IoParams) -> Self {
        let mut w = WorkloadSpec::simple(id, Kind::Io);
        w.set_io_job(&params);
        w
    }

    /// Mark as opt-in (not in the default selection; chosen with `--only`).
    pub fn opt(mut self) -> Self {
        self.optional = true;
        self
    }

    /// The engine job for this workload in `dir`, with the plan's defaults filled in.
    pub fn job_spec(&self, dir: &Path, defaults: &JobDefaults) -> Option<JobSpec> {
        let p = self.io_job()?;
        let file_size = p.size.unwrap_or(defaults.file_size);
        let region = if p.split && p.numjobs > 1 {
            file_size / u64::from(p.numjobs) / p.bs.max(1) * p.bs.max(1)
        } else {
            0
        };
        let time_based = self.kind != Kind::Layout;
        Some(JobSpec {
            filename: dir.join(p.file.as_deref().unwrap_or(DATA_FILE)),
            rw: p.rw,
            bs: p.bs,
            iodepth: p.iodepth,
            numjobs: p.numjobs,
            backend: p.backend,
            direct: p.direct,
            size: Some(if region > 0 { region } else { file_size }),
            offset_increment: region,
            runtime: time_based.then(|| p.runtime.unwrap_or(defaults.runtime)),
            ramp: if time_based {
                p.ramp.unwrap_or(defaults.ramp)
            } else {
                Duration::ZERO
            },
            rwmixread: p.rwmixread,
            fsync: p.fsync,
            seed: Some(defaults.seed),
            buffer_compress_percentage: p.compress,
            verify: p.verify,
            device: defaults.device.clone(),
            // Run-until-steady applies to the measured jobs, not to the layout pass.
            steady: defaults.steady.filter(|_| time_based),
        })
    }
}

/// Plan-wide values a job spec falls back to.
#[derive(Debug, Clone, Default)]
pub struct JobDefaults {
    /// Data file size, bytes.
    pub file_size: u64,
    /// Measured time per job.
    pub runtime: Duration,
    /// Warm-up per job.
    pub ramp: Duration,
    /// Seed for offsets and data.
    pub seed: u64,
    /// Block device for device counters.
    pub device: Option<std::path::PathBuf>,
    /// Run the measured jobs until steady (`--steady-state`).
    pub steady: Option<crate::engine::SteadySpec>,
    /// Condition the data file right after the layout (`--precondition`).
    pub precondition: bool,
}
