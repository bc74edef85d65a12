//! The parameter table: every numeric flag and plan-file key, declared once with its range,
//! unit and doc. `--help` (each flag's `help = ROW.help()`), the flag's clap value parser
//! (`ROW.count_arg()`, `size_arg()`, `duration_arg()`, `real_arg()`), the plan-file check
//! ([`file::check`], which names `file:line`) and `docs/parameters.md` (generated from
//! [`markdown`], a test keeps it current) all read these rows, so a range is stated in one
//! place. Adding a parameter is one row in [`table!`] below; a test fails when a flag that
//! takes a number (value name `N`, `SIZE`, `TIME`, …) has no row.
//!
//! Ranges are what makes sense to measure, not what the types hold: a plan that asks for
//! 100,000,000 rounds or a corpus scaled by 10⁹ is a typo, and is refused before anything is
//! created instead of spinning in `fsbench plan`.

pub mod file;
pub mod jobfile;
mod param;

pub use param::{Param, Unit};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;
const PIB: u64 = 1 << 50;
const DAY: f64 = 86_400.0;
const HOUR: f64 = 3_600.0;

/// Declares the rows as statics and [`ALL`] in declaration order.
macro_rules! table {
    ($($id:ident = $row:expr;)*) => {
        $(
            #[doc = concat!("Row `", stringify!($id), "` of the parameter table.")]
            pub static $id: Param = $row;
        )*
        /// Every row, in the order declared (docs/parameters.md lists them so).
        pub static ALL: &[&Param] = &[$(&$id),*];
    };
}

table! {
    // The plan: how many rounds, how long, how big.
    ROUNDS = Param::count("rounds", 1, 1_000, "Rounds per setup, interleaved across setups").flags(&["--rounds"]).key("rounds");
    BUDGET = Param::secs("budget", 1.0, 7.0 * DAY, "With until_settled: the wall time the whole run may take [default: 30m]").flags(&["--budget"]).key("budget");
    MARGIN = Param::count("margin", 1, 100, "Equivalence margin in percent for every metric: two setups within ±N % of each other are called equivalent (=) [default: the metric registry's, 10 % for throughput and time, 25 % for p99 latency, 50 % for p99.9]").flags(&["--margin"]);
    MAX_ROUNDS = Param::count("max_rounds", 2, 1_000, "With until_settled: rounds at most [default: 15]").flags(&["--max-rounds"]).key("max_rounds");
    RUNTIME = Param::secs("runtime", 0.1, DAY, "Measured time of each I/O job").flags(&["--runtime"]).key("runtime");
    RAMP = Param::secs("ramp", 0.0, HOUR, "Warm-up before each I/O job's measurement").flags(&["--ramp"]).key("ramp");
    FILE_SIZE = Param::bytes("file_size", MIB, PIB, "Data file size (also NxRAM); at most 90 % of the target").flags(&["--file-size"]).key("file_size");
    FILE_SIZE_RAM = Param::above("file_size (xram)", 0.0, 64.0, "Data file size as a multiple of RAM (4xram)");
    FILE_SIZE_CAP = Param::above("file_size_cap", 0.0, 0.95, "Largest share of the target a data file sized from RAM takes").key("file_size_cap");
    IMAGE_SIZE = Param::bytes("image_size", MIB, PIB, "Size of the sparse image used when neither --device nor --dir is given").flags(&["--image-size"]);
    IMAGES = Param::count("images", 1, 16, "Loop images of --image-size each, for setups over several devices (raid=)").flags(&["--images"]);
    QUIET_WINDOW = Param::secs("quiet_window", 0.1, 600.0, "After mkfs, wait until the device wrote less than --quiet-threshold over this window [default: 10s; quick: 5s]").flags(&["--quiet-window"]).key("quiet_window");
    QUIET_THRESHOLD = Param::bytes("quiet_threshold", 0, TIB, "Bytes written per window under which the device counts as quiet").flags(&["--quiet-threshold"]);
    QUIET_TIMEOUT = Param::secs("quiet_timeout", 1.0, DAY, "Give up waiting for quiet after this long (a warning goes into the results)").flags(&["--quiet-timeout"]);
    TOOL_TIMEOUT = Param::secs("tool_timeout", 1.0, DAY, "Timeout for each mkfs, mount, zpool and other tool invocation").flags(&["--tool-timeout"]);
    STEADY_ROUND = Param::secs("steady_round", 0.0, DAY, "With --steady-state: the length of one steady-state round, whole seconds from 1 s to 1 h [default: 60s, SNIA's]; not `run --rounds`, which repeats the whole plan").flags(&["--steady-round"]).key("steady_round");
    STEADY_MAX = Param::secs("steady_max", 1.0, DAY, "With --steady-state: the longest a job may run looking for steady state; whole rounds only, at most 25 of them, and room for at least N [default: 25 rounds; quick mode 5m]").flags(&["--steady-max"]).key("steady_max");
    SEED = Param::count("seed", 0, u64::MAX, "Seed for offsets and data (default: random, recorded in the results)").flags(&["--seed", "--corpus-seed"]);
    THREADS = Param::count("threads", 1, 1_024, "Threads for metadata workloads (untar, find-cold, rm-tree)").flags(&["--threads"]);
    // The corpus of the metadata workloads.
    CORPUS_COPIES = Param::count("corpus copies", 1, 1_000, "Copies of the synthetic corpus (about 35,000 entries each at scale 1)").flags(&["--corpus-copies", "--copies"]).key("corpus.copies");
    CORPUS_SCALE = Param::above("corpus scale", 0.0, 100.0, "Size of each corpus copy relative to the full tree").flags(&["--corpus-scale", "--scale"]).key("corpus.scale");
    // An I/O job (a [[workload]] table, or `fsbench io`'s and `fsbench doctor`'s flags).
    BS = Param::bytes("bs", 512, 256 * MIB, "Block size of each I/O").multiple_of(512).flags(&["--bs"]).key("workload.bs");
    IODEPTH = Param::count("iodepth", 1, 32_768, "I/Os in flight per job (32,768 is io_uring's queue limit)").flags(&["--iodepth"]).key("workload.iodepth");
    NUMJOBS = Param::count("numjobs", 1, 4_096, "Parallel jobs (threads) of an I/O workload").flags(&["--numjobs"]).key("workload.numjobs");
    RWMIXREAD = Param::percent("rwmixread", "Share of reads in a randrw job").flags(&["--rwmixread"]).key("workload.rwmixread");
    FSYNC = Param::count("fsync", 0, 1_000_000, "fsync after every N writes (0: never)").flags(&["--fsync"]).key("workload.fsync");
    COMPRESS = Param::percent("compress", "How compressible the written data is").flags(&["--buffer-compress-percentage"]).key("workload.compress");
    REPLAY_COMPRESS = Param::percent("replay compressibility", "Replay: how compressible the recreated tree and the replayed writes are (a replay workload's compress key)").flags(&["--replay-compressibility"]);
    JOB_RUNTIME = Param::secs("runtime", 0.1, DAY, "Measured time of this job (else the plan's)").key("workload.runtime");
    JOB_RAMP = Param::secs("ramp", 0.0, HOUR, "Warm-up of this job (else the plan's)").key("workload.ramp");
    JOB_SIZE = Param::bytes("size", 4 * KIB, PIB, "Bytes of this job's file: a plan file's own beyond 90 % of the target is refused, a profile's is capped to the data file").flags(&["--size"]).key("workload.size");
    OFFSET_INCREMENT = Param::bytes("offset_increment", 0, PIB, "Offset between the jobs' regions of the file").flags(&["--offset-increment"]);
    MEMORY_LIMIT = Param::bytes("memory_limit", 16 * MIB, TIB, "memcap: the cgroup's memory limit").key("workload.memory_limit");
    // Application workloads.
    PG_SCALE = Param::count("scale", 1, 10_000, "pgbench: scale factor (1 is about 15 MiB of tables)").key("workload.scale");
    PG_CLIENTS = Param::count("clients", 1, 1_000, "pgbench: client connections").key("workload.clients");
    PG_THREADS = Param::count("threads", 1, 1_000, "pgbench: worker threads (at most clients)").key("workload.threads");
    PG_DURATION = Param::secs("duration", 1.0, DAY, "pgbench: measured time (else the plan's runtime)").key("workload.duration");
    PG_SHARED_BUFFERS = Param::bytes("shared_buffers", 128 * KIB, TIB, "pgbench: PostgreSQL's shared_buffers").key("workload.shared_buffers");
    SQLITE_TRANSACTIONS = Param::count("transactions", 1, 10_000_000, "sqlite: measured transactions").key("workload.transactions");
    SQLITE_ROWS = Param::count("rows", 1, 100_000, "sqlite: inserts, and as many updates, per transaction").key("workload.rows");
    SQLITE_PRELOAD = Param::count("preload", 1, 100_000_000, "sqlite: rows written before the measurement").key("workload.preload");
    // `fsbench meta` and `fsbench doctor`.
    SMALLFILES = Param::count("smallfiles", 1, 10_000_000, "Files the smallfiles workload creates").flags(&["--smallfiles"]);
    SMALLFILES_DIRS = Param::count("smallfiles_dirs", 1, 100_000, "Directories the smallfiles workload spreads them over").flags(&["--smallfiles-dirs"]);
    FSMARK_THREADS = Param::count("fsmark_threads", 1, 1_024, "Threads of the fsmark workload").flags(&["--fsmark-threads"]);
    FSMARK_FILES = Param::count("fsmark_files", 1, 10_000_000, "Files per fsmark thread").flags(&["--fsmark-files"]);
    SAMPLE = Param::secs("sample", 0.1, 600.0, "How long the doctor samples the device and the load").flags(&["--sample"]);
    // `fsbench history`.
    HISTORY_LIMIT = Param::count("limit", 1, 1_000_000, "fsbench history list: at most this many runs [default: 50]").flags(&["--limit"]);
    // What one plan may expand to: bounds the work `fsbench plan` does before printing.
    SETUPS = Param::count("setups", 1, 64, "Setups in one plan (--fs entries and [[setup]] tables)");
    WORKLOADS = Param::count("workloads", 1, 1_000, "Workloads in one plan, sweeps expanded");
    SWEEP_VALUES = Param::count("sweep values", 1, 256, "Values of one sweep").key("workload.sweep.values");
    STEPS = Param::count("steps", 1, 100_000, "Steps of a whole run: rounds x setups x workloads");
}

/// The row whose flags include `flag` (`--rounds`).
pub fn by_flag(flag: &str) -> Option<&'static Param> {
    ALL.iter().copied().find(|p| p.flags.contains(&flag))
}

/// The row of plan-file key `key` (`corpus.scale`).
pub fn by_key(key: &str) -> Option<&'static Param> {
    ALL.iter().copied().find(|p| p.key == Some(key))
}

/// `docs/parameters.md`: this table as Markdown, then the flag and plan-key table's
/// ([`super::knobs::markdown`]).
pub fn markdown() -> String {
    let mut s = String::from(
        "# Parameters and their ranges\n\n\
         Generated from `src/plan/params/mod.rs` (`FSBENCH_BLESS=1 cargo test --lib params` \
         rewrites it). A value outside its range is refused with exit code 2 before anything \
         is created; for a plan file the message names `file:line`. A fio job file's \
         `iodepth=`, `numjobs=`, `bs=` and `rwmixread=` (`--fio-job`) get the same ranges, \
         named by `file:line` and section.\n\n\
         | parameter | flags | plan-file key | range | what it is |\n|---|---|---|---|---|\n",
    );
    for p in ALL {
        let flags: Vec<String> = p.flags.iter().map(|f| format!("`{f}`")).collect();
        let key = p.key.map(|k| format!("`{k}`")).unwrap_or_default();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            p.name,
            flags.join(", "),
            key,
            p.range_text(),
            p.doc.replace('|', "\\|")
        ));
    }
    s.push_str(&super::knobs::markdown());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_reachable_and_its_range_is_sane() {
        for p in ALL {
            assert!(p.min <= p.max, "{}", p.name);
            assert!(!p.doc.is_empty(), "{}", p.name);
            for f in p.flags {
                assert_eq!(
                    by_flag(f).map(|r| r.name),
                    Some(p.name),
                    "{f} is in two rows"
                );
            }
            if let Some(k) = p.key {
                assert_eq!(
                    by_key(k).map(|r| r.name),
                    Some(p.name),
                    "{k} is in two rows"
                );
            }
        }
    }

    /// `docs/parameters.md` is this table; `FSBENCH_BLESS=1` rewrites it.
    #[test]
    fn docs_parameters_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/parameters.md");
        let want = markdown();
        if std::env::var_os("FSBENCH_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/parameters.md is stale: run FSBENCH_BLESS=1 cargo test --lib params"
        );
    }
}
