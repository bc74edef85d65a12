//! Workloads of a plan: their ids, kinds and parameters, and the standard suite (seed 000).

use crate::engine::{Backend, JobSpec, RwMode};
use crate::workload::pgbench::{Mode as PgMode, PgbenchParams};
use crate::workload::sqlite::{JournalMode, SqliteParams};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// What a workload does; decides which module runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// mkfs / zpool create, timed (happens once per setup-round whatever is selected).
    Mkfs,
    /// statvfs right after mount.
    UsableSpace,
    /// Write the data file once, timed.
    Layout,
    /// An I/O job on the data file.
    Io,
    /// An I/O job inside a memory-capped cgroup.
    Memcap,
    /// Extract the corpus.
    Untar,
    /// Walk the extracted tree with a cold cache.
    FindCold,
    /// Remove the extracted tree.
    RmTree,
    /// Many small files (create/read/delete).
    Smallfiles,
    /// fs_mark-style create + fsync.
    Fsmark,
    /// A capability probe (`probe-reflink`…).
    Probe,
    /// Write text-like (≈2.4:1) data and read the on-disk compression ratio back.
    Compress,
    /// PostgreSQL's pgbench on a private server ([`crate::workload::pgbench`]).
    Pgbench,
    /// Small transactions on a real SQLite database ([`crate::workload::sqlite`]).
    Sqlite,
    /// One section of a user's fio job file (`--fio-job`, plan kind `fio-job`).
    FioJob,
}

impl Kind {
    /// Name used in plan files and results (`WorkloadInfo.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Mkfs => "mkfs",
            Kind::UsableSpace => "usable-space",
            Kind::Layout => "layout",
            Kind::Io => "io",
            Kind::Memcap => "memcap",
            Kind::Untar => "untar",
            Kind::FindCold => "find-cold",
            Kind::RmTree => "rm-tree",
            Kind::Smallfiles => "smallfiles",
            Kind::Fsmark => "fsmark",
            Kind::Probe => "probe",
            Kind::Compress => "compress",
            Kind::Pgbench => "pgbench",
            Kind::Sqlite => "sqlite",
            Kind::FioJob => "fio-job",
        }
    }

    /// Parse a plan-file kind.
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "mkfs" => Kind::Mkfs,
            "usable-space" => Kind::UsableSpace,
            "layout" => Kind::Layout,
            "io" => Kind::Io,
            "memcap" => Kind::Memcap,
            "untar" => Kind::Untar,
            "find-cold" => Kind::FindCold,
            "rm-tree" => Kind::RmTree,
            "smallfiles" => Kind::Smallfiles,
            "fsmark" => Kind::Fsmark,
            "probe" => Kind::Probe,
            "compress" => Kind::Compress,
            "pgbench" => Kind::Pgbench,
            "sqlite" => Kind::Sqlite,
            "fio-job" => Kind::FioJob,
            _ => return None,
        })
    }

    /// Who counts the device writes of this kind, in the job's window and until the
    /// filesystem has written back what the job caused (`device_write_bytes_total`).
    pub fn write_accounting(self) -> WriteAccounting {
        match self {
            // memcap's child is `fsbench io`, which waits after writing jobs by default.
            Kind::Io | Kind::Memcap => WriteAccounting::Engine,
            Kind::Layout | Kind::Untar | Kind::Smallfiles | Kind::Fsmark | Kind::Compress => {
                WriteAccounting::Runner
            }
            // Reads, deletes, statvfs, and probes (which use an image of their own).
            _ => WriteAccounting::None,
        }
    }

    /// Kinds whose results are `results.json` "io" jobs (they get a fio command line).
    pub fn is_io(self) -> bool {
        matches!(self, Kind::Layout | Kind::Io | Kind::Memcap)
    }
}

/// Who counts a workload's device writes (see [`Kind::write_accounting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAccounting {
    /// Not a writing workload: no device totals.
    None,
    /// The I/O engine counts over its measured window and waits after it; with
    /// `--engine fio`, the runner does instead.
    Engine,
    /// The runner samples the counters around the workload and waits after it.
    Runner,
}

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
    /// I/O parameters for `layout`, `io` and `memcap`.
    #[serde(default)]
    pub io: Option<IoParams>,
    /// Memory cap for `memcap`, bytes.
    #[serde(default)]
    pub memory_limit: Option<u64>,
    /// Id of a workload in the same setup-round whose `bw_mib_s` this one is divided by
    /// (metric `scaling_factor`, seed 003's "factor over one job").
    #[serde(default)]
    pub baseline: Option<String>,
    /// Bytes written by a `compress` workload (default 256 MiB).
    #[serde(default)]
    pub size: Option<u64>,
    /// Recorded in results; false for prerequisites run only because a selected workload
    /// needs them (`layout` before `randread`, `untar` before `find-cold`).
    #[serde(default = "yes")]
    pub record: bool,
    /// Not part of the default selection; chosen with `--only`.
    #[serde(default)]
    pub optional: bool,
    /// Parameters of a `pgbench` workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbench: Option<PgbenchParams>,
    /// Parameters of a `sqlite` workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<SqliteParams>,
    /// The job-file section a `fio-job` workload runs (after rebasing and capping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_job: Option<crate::fio::jobfile::FioJob>,
}

impl WorkloadSpec {
    /// A workload without I/O parameters.
    pub fn simple(id: &str, kind: Kind) -> Self {
        WorkloadSpec {
            id: id.to_string(),
            kind,
            io: None,
            memory_limit: None,
            baseline: None,
            size: None,
            record: true,
            optional: false,
            pgbench: None,
            sqlite: None,
            fio_job: None,
        }
    }

    /// An I/O job.
    pub fn io(id: &str, params: IoParams) -> Self {
        WorkloadSpec {
            io: Some(params),
            ..WorkloadSpec::simple(id, Kind::Io)
        }
    }

    /// A pgbench workload.
    pub fn pgbench(id: &str, params: PgbenchParams) -> Self {
        WorkloadSpec {
            pgbench: Some(params),
            ..WorkloadSpec::simple(id, Kind::Pgbench)
        }
    }

    /// A SQLite workload.
    pub fn sqlite(id: &str, params: SqliteParams) -> Self {
        WorkloadSpec {
            sqlite: Some(params),
            ..WorkloadSpec::simple(id, Kind::Sqlite)
        }
    }

    /// A section of a fio job file.
    pub fn fio_job(id: &str, job: crate::fio::jobfile::FioJob) -> Self {
        WorkloadSpec {
            fio_job: Some(job),
            ..WorkloadSpec::simple(id, Kind::FioJob)
        }
    }

    fn opt(mut self) -> Self {
        self.optional = true;
        self
    }

    /// Ids this workload needs to have run earlier in the same setup-round.
    pub fn requires(&self) -> Vec<&'static str> {
        match self.kind {
            Kind::Io if self.io.as_ref().is_some_and(|p| p.file.is_none()) => {
                vec!["layout"]
            }
            Kind::FindCold | Kind::RmTree => vec!["untar"],
            _ => vec![],
        }
    }

    /// The engine job for this workload in `dir`, with the plan's defaults filled in.
    pub fn job_spec(&self, dir: &Path, defaults: &JobDefaults) -> Option<JobSpec> {
        let p = self.io.as_ref()?;
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
#[derive(Debug, Clone)]
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
}

const M: u64 = 1 << 20;
const K: u64 = 1 << 10;

/// Every workload fsbench knows by id, in suite order: the standard suite of seed 000 first,
/// then the opt-in ones (`smallfiles`, `fsmark`, `probe-*`).
pub fn catalog() -> Vec<WorkloadSpec> {
    let split = |mut p: IoParams| {
        p.split = true;
        p
    };
    let mut layout = WorkloadSpec::io("layout", IoParams::new(RwMode::Write, M, 1, 8));
    layout.kind = Kind::Layout;
    let mut mix = IoParams::new(RwMode::Randrw, 4 * K, 4, 4);
    mix.rwmixread = 70;
    let mut fsync = IoParams::new(RwMode::Randwrite, 4 * K, 1, 1);
    fsync.fsync = 1;
    vec![
        WorkloadSpec::simple("mkfs", Kind::Mkfs),
        WorkloadSpec::simple("usable-space", Kind::UsableSpace),
        layout,
        WorkloadSpec::io("seqread", split(IoParams::new(RwMode::Read, M, 4, 2))),
        WorkloadSpec::io("seqwrite", split(IoParams::new(RwMode::Write, M, 4, 2))),
        WorkloadSpec::io("randread", IoParams::new(RwMode::Randread, 4 * K, 4, 8)),
        WorkloadSpec::io("randwrite", IoParams::new(RwMode::Randwrite, 4 * K, 4, 8)),
        WorkloadSpec::io("randrw70", mix),
        WorkloadSpec::io("fsync-write", fsync),
        WorkloadSpec::simple("untar", Kind::Untar),
        WorkloadSpec::simple("find-cold", Kind::FindCold),
        WorkloadSpec::simple("rm-tree", Kind::RmTree),
        WorkloadSpec::simple("smallfiles", Kind::Smallfiles).opt(),
        WorkloadSpec::simple("fsmark", Kind::Fsmark).opt(),
        WorkloadSpec::simple("compress", Kind::Compress).opt(),
        WorkloadSpec::pgbench("pgbench-rw", PgbenchParams::new(PgMode::ReadWrite)).opt(),
        WorkloadSpec::pgbench("pgbench-ro", PgbenchParams::new(PgMode::ReadOnly)).opt(),
        WorkloadSpec::sqlite("sqlite-wal", SqliteParams::new(JournalMode::Wal)).opt(),
        WorkloadSpec::sqlite("sqlite-delete", SqliteParams::new(JournalMode::Delete)).opt(),
        WorkloadSpec::simple("probe-reflink", Kind::Probe).opt(),
        WorkloadSpec::simple("probe-snapshot", Kind::Probe).opt(),
        WorkloadSpec::simple("probe-resize", Kind::Probe).opt(),
        WorkloadSpec::simple("probe-corruption", Kind::Probe).opt(),
        WorkloadSpec::simple("probe-fsck", Kind::Probe).opt(),
    ]
}

/// Ids of the standard suite (the default selection).
pub fn standard_ids() -> Vec<String> {
    catalog()
        .into_iter()
        .filter(|w| !w.optional)
        .map(|w| w.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_suite_ids_are_exact() {
        assert_eq!(
            standard_ids(),
            [
                "mkfs",
                "usable-space",
                "layout",
                "seqread",
                "seqwrite",
                "randread",
                "randwrite",
                "randrw70",
                "fsync-write",
                "untar",
                "find-cold",
                "rm-tree"
            ]
        );
    }

    #[test]
    fn seq_jobs_split_the_file_in_quarters() {
        let c = catalog();
        let seq = c.iter().find(|w| w.id == "seqread").unwrap();
        let d = JobDefaults {
            file_size: 256 * M,
            runtime: Duration::from_secs(5),
            ramp: Duration::from_secs(1),
            seed: 7,
            device: None,
            steady: Some(crate::engine::SteadySpec::default()),
        };
        let j = seq.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!(j.size, Some(64 * M));
        assert_eq!(j.offset_increment, 64 * M);
        assert_eq!((j.numjobs, j.iodepth, j.bs), (4, 2, M));
        assert!(j.direct);
        assert_eq!(j.buffer_compress_percentage, 0);
        let rr = c.iter().find(|w| w.id == "randread").unwrap();
        let j = rr.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!((j.size, j.offset_increment), (Some(256 * M), 0));
        assert_eq!(j.filename, Path::new("/mnt/x").join(DATA_FILE));
        let lay = c.iter().find(|w| w.id == "layout").unwrap();
        let j = lay.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!(j.runtime, None, "layout is size-based");
        assert_eq!(j.steady, None, "and never run until steady");
        assert!(
            rr.job_spec(Path::new("/mnt/x"), &d)
                .unwrap()
                .steady
                .is_some()
        );
        let f = c.iter().find(|w| w.id == "fsync-write").unwrap();
        assert_eq!(f.io.as_ref().unwrap().fsync, 1);
        assert_eq!(rr.requires(), ["layout"]);
    }
}
