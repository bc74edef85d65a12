//! The table: every metric fsbench records, once. Add a metric here (one line) and emit its
//! constant; docs/ARCHITECTURE.md ("A metric") has the recipe.
//!
//! Each line reads `CONST: "json id", "unit", Class, "label"` followed by what differs from the
//! class's defaults: a throughput or capacity is better higher, a latency, time or cost lower,
//! a capability is yes/no and better yes, a fact is never ranked; everything but a fact is
//! judged by `compare` unless marked `.derived(why)`. `.reduce(how)` says how `run --mpi` sums
//! it over ranks, `.merged(side, quantile, per_round)` makes it a tail over all rounds'
//! histograms (computed by `stats::summarize`, tied on `per_round`'s spread).

use super::{Class, Direction, Format, MergedTail, MetricDef, MetricId, Reduce, Role};

/// Why bandwidth is not judged in a small-block job.
pub const BW_FROM_IOPS: &str = "IOPS × block size, which is judged instead";
/// Why IOPS is not judged in a large-block job.
pub const IOPS_FROM_BW: &str = "MiB/s / block size; at this block size MiB/s is judged instead";
/// Why a size-based step's time is not judged beside its bandwidth.
pub const SECONDS_FROM_BW: &str = "the size divided by the bandwidth, which is judged instead";
/// Why a crash state's time is not judged.
const CHECKER: &str =
    "the crash checker's own speed (mount, check, fsck), not the setup's durability";
/// Why a fixed count per second is not judged beside its time.
pub const RATE: &str = "a fixed count divided by the time, which is judged instead";
const AMOUNT: &str = "the amount the job wrote (less when a time-based job ran slower); \
                      write_amplification is judged instead";
const RUN: &str = "the job's rate × its runtime";
/// Why the space a filesystem's structures take is not judged: it follows from the size and
/// the free space mkfs leaves, which `avail_bytes` judges (less the root reserve).
const OVERHEAD: &str =
    "the device's size less the free space mkfs leaves; avail_bytes is judged instead";
const MIB: f64 = 1.0 / (1u64 << 20) as f64;
/// Why a send/receive rate is not judged: only setups with a send stream have one, and the
/// backup verdict is decided on what every setup with copies has (snapshot creation time).
const SEND_RATE: &str = "the stream's bytes over the send and receive seconds, on the setups \
                         that have a stream; the snapshot rows decide the backup verdict";

const fn m(id: MetricId, unit: &'static str, class: Class, label: &'static str) -> MetricDef {
    let direction = match class {
        Class::Throughput | Class::Capacity | Class::Capability => Direction::HigherIsBetter,
        Class::Latency | Class::Time | Class::Cost => Direction::LowerIsBetter,
        Class::Fact => Direction::Neutral,
    };
    let (role, format) = match class {
        Class::Fact => (Role::Fact, Format::Number),
        Class::Capability => (Role::Measured, Format::YesNo),
        _ => (Role::Measured, Format::Number),
    };
    MetricDef {
        id,
        unit,
        label,
        class,
        direction,
        role,
        headline: false,
        format,
        reduce: None,
        observed: false,
        merged: None,
        margin: match class {
            Class::Latency => LATENCY_MARGIN,
            _ => DEFAULT_MARGIN,
        },
    }
}

/// The equivalence margin of a throughput, time, size or cost: two setups within ±10 % of
/// each other are called equivalent (`=`) once the interval of their ratio lies inside it.
pub const DEFAULT_MARGIN: f64 = 0.10;
/// A p99 latency moves more from round to round than a throughput: ±25 %.
pub const LATENCY_MARGIN: f64 = 0.25;
/// A p99.9 latency rests on a thousandth of the I/Os: ±50 %.
pub const DEEP_TAIL_MARGIN: f64 = 0.50;
/// Usable space is what the filesystem hands back on the same device, the same every round:
/// ext4's 5 % root reserve is a difference a user plans for, so ±1 % is a tie, not ±10 %.
pub const SPACE_MARGIN: f64 = 0.01;

impl MetricDef {
    /// Equivalence margin other than its class's ([`MetricDef::margin`]).
    const fn margin(self, margin: f64) -> Self {
        Self { margin, ..self }
    }
    /// A row of its table (and a headline candidate), not of "More metrics".
    const fn headline(self) -> Self {
        Self {
            headline: true,
            ..self
        }
    }
    /// Follows from another metric of the job: shown, not judged.
    const fn derived(self, why: &'static str) -> Self {
        Self {
            role: Role::Derived(why),
            ..self
        }
    }
    /// Ranked across setups but fixed by mkfs: `compare` does not judge it.
    const fn fixed(self) -> Self {
        Self {
            role: Role::Fact,
            ..self
        }
    }
    /// Never ranked (a yes/no that is neither good nor bad).
    const fn neutral(self) -> Self {
        Self {
            direction: Direction::Neutral,
            role: Role::Fact,
            ..self
        }
    }
    const fn bytes(self) -> Self {
        Self {
            format: Format::Bytes,
            ..self
        }
    }
    /// How `run --mpi` reduces it over the ranks.
    const fn reduce(self, how: Reduce) -> Self {
        Self {
            reduce: Some(how),
            ..self
        }
    }
    /// A count of what a check found, not a noisy sample ([`MetricDef::observed`]).
    const fn observed(self) -> Self {
        Self {
            observed: true,
            ..self
        }
    }
    /// A tail over all rounds' histograms merged: quantile `quantile` of the histograms of
    /// `side` (`Some("read")` when a job has both directions), judged on `per_round`'s spread.
    const fn merged(self, side: Option<&'static str>, quantile: f64, per_round: MetricId) -> Self {
        Self {
            merged: Some(MergedTail {
                side,
                quantile,
                per_round,
            }),
            ..self
        }
    }
    const fn limit(self) -> Self {
        Self {
            format: Format::Limit,
            ..self
        }
    }
}

/// Declares each id constant and the registry from one list, so neither can miss the other.
macro_rules! metrics {
    ($($name:ident: $id:literal, $unit:literal, $class:ident, $label:literal $(. $modifier:ident ($($arg:expr),*))* ;)*) => {
        $(
            #[doc = concat!("`", $id, "`: ", $label, " (", $unit, ").")]
            pub const $name: MetricId = MetricId($id);
        )*
        /// Every registered metric, in display order (the order also breaks ties between
        /// metrics that could decide a workload).
        pub const REGISTRY: &[MetricDef] = &[
            $( m($name, $unit, Class::$class, $label) $(. $modifier($($arg),*))* , )*
        ];
    };
}

metrics! {
    // Throughput of I/O jobs (workload::io, the fio backend, job files).
    IOPS: "iops", "IOPS", Throughput, "IOPS" .headline();
    READ_IOPS: "read_iops", "IOPS", Throughput, "read IOPS" .headline();
    WRITE_IOPS: "write_iops", "IOPS", Throughput, "write IOPS" .headline();
    TRIM_IOPS: "trim_iops", "IOPS", Throughput, "trim IOPS";
    // The disk beside the image, read right before each I/O job (stats::adjusted): a fact.
    DISK_REF_IOPS: "disk_ref_iops", "IOPS", Fact, "the disk beside the image just before the job (4K random reads)";
    OPS_PER_S: "ops_per_s", "ops/s", Throughput, "ops/s" .headline() .derived(RATE) .reduce(Reduce::Rate { of: ENTRIES, over: SECONDS, scale: 1.0 });
    TPS: "tps", "tx/s", Throughput, "TPS" .headline();
    TX_PER_S: "tx_per_s", "tx/s", Throughput, "transactions/s" .headline();
    BW_MIB_S: "bw_mib_s", "MiB/s", Throughput, "bandwidth" .headline() .derived(BW_FROM_IOPS) .reduce(Reduce::Rate { of: BYTES, over: SECONDS, scale: MIB });
    READ_BW_MIB_S: "read_bw_mib_s", "MiB/s", Throughput, "read bandwidth" .headline() .derived(BW_FROM_IOPS);
    WRITE_BW_MIB_S: "write_bw_mib_s", "MiB/s", Throughput, "write bandwidth" .headline() .derived(BW_FROM_IOPS);
    TRIM_BW_MIB_S: "trim_bw_mib_s", "MiB/s", Throughput, "trim bandwidth" .derived(BW_FROM_IOPS);
    CREATE_FILES_PER_S: "create_files_per_s", "files/s", Throughput, "create files/s" .headline() .derived(RATE) .reduce(Reduce::Rate { of: ENTRIES, over: CREATE_SECONDS, scale: 1.0 });
    READ_FILES_PER_S: "read_files_per_s", "files/s", Throughput, "read-back files/s" .headline() .derived(RATE) .reduce(Reduce::Rate { of: ENTRIES, over: READ_SECONDS, scale: 1.0 });
    ENTRIES_PER_S: "entries_per_s", "entries/s", Throughput, "entries/s";
    SCALING_FACTOR: "scaling_factor", "x", Throughput, "factor over its baseline job" .headline();
    // Elapsed time of a step.
    SECONDS: "seconds", "s", Time, "time" .headline() .reduce(Reduce::Window { after: &[] });
    CREATE_SECONDS: "create_seconds", "s", Time, "create time" .reduce(Reduce::Window { after: &[] });
    SYNC_SECONDS: "sync_seconds", "s", Time, "sync time" .reduce(Reduce::Window { after: &[CREATE_SECONDS] });
    READ_SECONDS: "read_seconds", "s", Time, "read-back time" .reduce(Reduce::Window { after: &[CREATE_SECONDS, SYNC_SECONDS] });
    GROW_SECONDS: "grow_seconds", "s", Time, "grow time";
    SHRINK_SECONDS: "shrink_seconds", "s", Time, "shrink time";
    INIT_SECONDS: "init_seconds", "s", Time, "pgbench -i time";
    STEADY_AT_S: "steady_at_s", "s", Time, "seconds to steady state";
    // Latency: the median of each round's percentile, then all I/Os of all rounds merged.
    LAT_MEAN_MS: "lat_mean_ms", "ms", Latency, "mean latency";
    LAT_P50_MS: "lat_p50_ms", "ms", Latency, "p50 latency";
    LAT_P95_MS: "lat_p95_ms", "ms", Latency, "p95 latency";
    LAT_P99_MS: "lat_p99_ms", "ms", Latency, "p99 latency (median of rounds)" .headline();
    LAT_P99_9_MS: "lat_p99_9_ms", "ms", Latency, "p99.9 latency (median of rounds)" .margin(DEEP_TAIL_MARGIN);
    READ_LAT_P50_MS: "read_lat_p50_ms", "ms", Latency, "read p50 latency";
    READ_LAT_P99_MS: "read_lat_p99_ms", "ms", Latency, "read p99 latency (median of rounds)" .headline();
    READ_LAT_P99_9_MS: "read_lat_p99_9_ms", "ms", Latency, "read p99.9 latency (median of rounds)" .margin(DEEP_TAIL_MARGIN);
    WRITE_LAT_P50_MS: "write_lat_p50_ms", "ms", Latency, "write p50 latency";
    WRITE_LAT_P99_MS: "write_lat_p99_ms", "ms", Latency, "write p99 latency (median of rounds)" .headline();
    WRITE_LAT_P99_9_MS: "write_lat_p99_9_ms", "ms", Latency, "write p99.9 latency (median of rounds)" .margin(DEEP_TAIL_MARGIN);
    TRIM_LAT_P99_MS: "trim_lat_p99_ms", "ms", Latency, "trim p99 latency";
    LAT_P50_MS_MERGED: "lat_p50_ms_merged", "ms", Latency, "p50 latency (all I/Os of all rounds)" .merged(None, 0.5, LAT_P50_MS);
    LAT_P99_MS_MERGED: "lat_p99_ms_merged", "ms", Latency, "p99 latency (all I/Os of all rounds)" .headline() .merged(None, 0.99, LAT_P99_MS);
    LAT_P99_9_MS_MERGED: "lat_p99_9_ms_merged", "ms", Latency, "p99.9 latency (all I/Os of all rounds)" .merged(None, 0.999, LAT_P99_9_MS) .margin(DEEP_TAIL_MARGIN);
    READ_LAT_P50_MS_MERGED: "read_lat_p50_ms_merged", "ms", Latency, "read p50 latency (all I/Os of all rounds)" .merged(Some("read"), 0.5, READ_LAT_P50_MS);
    READ_LAT_P99_MS_MERGED: "read_lat_p99_ms_merged", "ms", Latency, "read p99 latency (all I/Os of all rounds)" .headline() .merged(Some("read"), 0.99, READ_LAT_P99_MS);
    READ_LAT_P99_9_MS_MERGED: "read_lat_p99_9_ms_merged", "ms", Latency, "read p99.9 latency (all I/Os of all rounds)" .merged(Some("read"), 0.999, READ_LAT_P99_9_MS) .margin(DEEP_TAIL_MARGIN);
    WRITE_LAT_P50_MS_MERGED: "write_lat_p50_ms_merged", "ms", Latency, "write p50 latency (all I/Os of all rounds)" .merged(Some("write"), 0.5, WRITE_LAT_P50_MS);
    WRITE_LAT_P99_MS_MERGED: "write_lat_p99_ms_merged", "ms", Latency, "write p99 latency (all I/Os of all rounds)" .headline() .merged(Some("write"), 0.99, WRITE_LAT_P99_MS);
    WRITE_LAT_P99_9_MS_MERGED: "write_lat_p99_9_ms_merged", "ms", Latency, "write p99.9 latency (all I/Os of all rounds)" .merged(Some("write"), 0.999, WRITE_LAT_P99_9_MS) .margin(DEEP_TAIL_MARGIN);
    // What the work cost.
    CPU_UTIL: "cpu_util", "%", Cost, "CPU";
    SYSTEM_CPU_UTIL: "system_cpu_util", "%", Cost, "system CPU";
    CPU_SERVER_S: "cpu_server_s", "s", Cost, "server CPU time" .derived(RUN);
    CPU_CLIENT_S: "cpu_client_s", "s", Cost, "client CPU time" .derived(RUN);
    WRITE_AMPLIFICATION: "write_amplification", "ratio", Cost, "write amplification";
    WRITE_AMPLIFICATION_TOTAL: "write_amplification_total", "ratio", Cost, "write amplification, until written back";
    DEVICE_WRITE_BYTES: "device_write_bytes", "bytes", Cost, "bytes written to device" .derived(AMOUNT) .bytes();
    DEVICE_WRITE_BYTES_TOTAL: "device_write_bytes_total", "bytes", Cost, "bytes written to device, until written back" .derived(AMOUNT) .bytes();
    PHASE_DEVICE_WRITE_BYTES: "phase_device_write_bytes", "bytes", Cost, "bytes written to device by the whole phase" .derived(AMOUNT) .bytes();
    DEVICE_BYTES_PER_FILE: "device_bytes_per_file", "bytes", Cost, "device bytes per file (in the job)" .bytes();
    DEVICE_BYTES_PER_FILE_TOTAL: "device_bytes_per_file_total", "bytes", Cost, "device bytes per file, until written back" .bytes();
    WAL_BYTES: "wal_bytes", "bytes", Cost, "WAL written" .derived(RUN) .bytes();
    DATA_BYTES: "data_bytes", "bytes", Cost, "data pages written" .derived(RUN) .bytes();
    FSYNCS: "fsyncs", "count", Cost, "fsyncs" .derived(RUN);
    FSYNCS_PER_TX: "fsyncs_per_tx", "count", Cost, "fsyncs per transaction";
    DIR_FSYNCS: "dir_fsyncs", "count", Cost, "directory fsyncs";
    DEVICE_FLUSHES: "device_flushes", "count", Cost, "device cache flushes";
    FAILED_TRANSACTIONS: "failed_transactions", "count", Cost, "failed transactions";
    STALLS: "stalls", "s", Cost, "stalls (seconds under 10 % of median IOPS)";
    PEAK_MEMORY_BYTES: "peak_memory_bytes", "bytes", Cost, "peak memory in the cgroup" .headline() .bytes();
    // Space.
    AVAIL_BYTES: "avail_bytes", "bytes", Capacity, "available" .headline() .fixed() .bytes() .reduce(Reduce::First) .margin(SPACE_MARGIN);
    COMPRESS_RATIO: "compress_ratio", "ratio", Capacity, "on-disk compression ratio" .headline();
    // Capabilities (probes).
    SUPPORTED: "supported", "bool", Capability, "supported" .headline();
    GROW_SUPPORTED: "grow_supported", "bool", Capability, "grow supported" .headline();
    GROW_ONLINE: "grow_online", "bool", Capability, "grow while mounted" .headline();
    SHRINK_SUPPORTED: "shrink_supported", "bool", Capability, "shrink supported" .headline();
    SHRINK_ONLINE: "shrink_online", "bool", Capability, "shrink while mounted" .headline();
    SHRINK_TAIL_SUPPORTED: "shrink_tail_supported", "bool", Capability, "shrink of the last group's free tail (XFS)" .headline();
    DETECTED: "detected", "bool", Capability, "corruption detected" .headline();
    CLEAN: "clean", "bool", Capability, "fsck found it clean" .headline();
    INTACT: "intact", "bool", Capability, "corrupted data read back intact" .neutral();
    // Capacity and maintenance probes (probe-inodes, probe-metadata, probe-fsck's rates).
    INODE_LIMIT_REACHED: "inode_limit_reached", "bool", Capability, "ran out of inodes with space left" .headline() .neutral();
    ENOSPC_WITH_FREE_SPACE: "enospc_with_free_space", "bool", Capability, "ENOSPC while df showed free space" .headline() .neutral();
    SECONDS_PER_GIB: "seconds_per_gib", "s/GiB", Time, "seconds per GiB of data (a check, scrub or rebuild)" .headline();
    SCRUB_SECONDS_PER_GIB: "scrub_seconds_per_gib", "s/GiB", Time, "scrub seconds per GiB of data" .headline();
    STEADY_REACHED: "steady_reached", "bool", Capability, "steady state reached (5 in a row within 20 %/10 %)" .neutral();
    // Crash consistency (workload::crash): counts over a run's crash states, lower is better.
    LOST_ACKED_OPS: "lost_acked_ops", "count", Cost, "lost acknowledged operations" .headline() .observed();
    LOST_STATES: "lost_states", "count", Cost, "crash states that lost acknowledged data" .headline() .observed();
    CORRUPT_FILES: "corrupt_files", "count", Cost, "corrupt files in crash states" .headline() .observed();
    FSCK_ERRORS: "fsck_errors", "count", Cost, "crash states fsck found errors in" .headline() .observed();
    UNMOUNTABLE_STATES: "unmountable_states", "count", Cost, "crash states that would not mount" .headline() .observed();
    SECONDS_PER_STATE: "seconds_per_state", "s", Time, "seconds per crash state" .derived(CHECKER);
    // Facts fixed by mkfs, the corpus or the plan: shown, never starred.
    SIZE_BYTES: "size_bytes", "bytes", Fact, "size" .headline() .bytes() .reduce(Reduce::First);
    INODES_TOTAL: "inodes_total", "count", Fact, "inodes total" .headline() .limit() .reduce(Reduce::First);
    INODES_FREE: "inodes_free", "count", Fact, "inodes free" .headline() .limit() .reduce(Reduce::First);
    // Results files from before inodes_total and inodes_free have this one.
    INODES: "inodes", "count", Fact, "inodes" .headline() .limit();
    FILES_CREATED: "files_created", "count", Fact, "files created until ENOSPC or the cap" .headline() .reduce(Reduce::Sum);
    FREE_BYTES_AT_STOP: "free_bytes_at_stop", "bytes", Fact, "free space (df) when it stopped" .headline() .bytes() .reduce(Reduce::First);
    CHECKED_BYTES: "checked_bytes", "bytes", Fact, "data on the filesystem checked" .headline() .bytes() .reduce(Reduce::First);
    ENTRIES: "entries", "entries", Fact, "entries" .reduce(Reduce::Sum);
    BYTES: "bytes", "bytes", Fact, "bytes" .bytes() .reduce(Reduce::Sum);
    TRANSACTIONS: "transactions", "count", Fact, "transactions" .derived(RUN);
    MEMORY_CAP_BYTES: "memory_cap_bytes", "bytes", Fact, "cgroup memory cap" .bytes();
    CRASH_STATES: "crash_states", "count", Fact, "crash states tested" .headline();
    ACKED_OPS: "acked_ops", "count", Fact, "acknowledged operations recorded";
    LOG_BYTES: "log_bytes", "bytes", Fact, "write log recorded" .bytes();
    // Containers and VM images (workload::container, workload::vmimage).
    //
    // VM images
    VM_CREATE_SECONDS: "vm_create_seconds", "s", Time, "qemu-img create time";
    VM_EXTENTS_BEFORE: "vm_extents_before", "extents", Cost, "image extents, written once";
    VM_EXTENTS_AFTER: "vm_extents_after", "extents", Cost, "image extents after random overwrites" .headline();
    VM_SEQREAD_BEFORE_MIB_S: "vm_seqread_before_mib_s", "MiB/s", Throughput, "sequential read, written once";
    VM_SEQREAD_AFTER_MIB_S: "vm_seqread_after_mib_s", "MiB/s", Throughput, "sequential read after random overwrites" .headline();
    VM_AGING_WRITE_IOPS: "vm_aging_write_iops", "IOPS", Throughput, "random overwrites (aging) IOPS";
    VM_OVERLAY_SECONDS: "vm_overlay_seconds", "s", Time, "qcow2 overlay (-b) create time";
    VM_OVERLAY_BYTES: "vm_overlay_bytes", "bytes", Cost, "qcow2 overlay space" .bytes();
    VM_CLONE_SECONDS: "vm_clone_seconds", "s", Time, "image clone time (reflink, else copy)" .headline();
    VM_CLONE_BYTES: "vm_clone_bytes", "bytes", Cost, "space the clone took" .headline() .bytes();
    VM_CLONE_REFLINK: "vm_clone_reflink", "bool", Capability, "clone by reflink";
    CONTAINER_FILES_PER_S: "container_files_per_s", "files/s", Throughput, "files/s (extracted, read, copied up or removed)" .headline() .derived(RATE);
    CONTAINER_MIB_S: "container_mib_s", "MiB/s", Throughput, "MiB/s (extracted, read or copied up)" .headline() .derived(RATE);
    CONTAINERS_PER_S: "containers_per_s", "containers/s", Throughput, "containers created, started and removed per second" .headline() .derived(RATE);
    WHITEOUT_SECONDS: "whiteout_seconds", "s", Time, "removal inside a container (whiteouts)" .headline();
    IMAGE_REMOVE_SECONDS: "image_remove_seconds", "s", Time, "containers and image removed" .headline();
    CONTAINER_INODES_USED: "container_inodes_used", "inodes", Fact, "inodes in use (statvfs, peak)" .headline();
    CONTAINER_PODMAN_LOAD_SECONDS: "container_podman_load_seconds", "s", Time, "podman: image loaded from its archive" .headline();
    CONTAINER_PODMAN_RUN_SECONDS: "container_podman_run_seconds", "s", Time, "podman: run --rm of a no-network container" .headline();
    CONTAINER_PODMAN_RMI_SECONDS: "container_podman_rmi_seconds", "s", Time, "podman: image removed";
    // (end of containers and VM images)
    // Source trees, mail, logs, snapshots and backups (workload::usecase).
    GIT_CLONE_SECONDS: "git_clone_seconds", "s", Time, "git clone --no-hardlinks time" .headline();
    GIT_CHECKOUT_SECONDS: "git_checkout_seconds", "s", Time, "git checkout across revisions, time" .headline();
    GIT_STATUS_COLD_SECONDS: "git_status_cold_seconds", "s", Time, "git status time, cold cache" .headline();
    GIT_STATUS_WARM_SECONDS: "git_status_warm_seconds", "s", Time, "git status time, warm cache" .headline();
    GIT_GC_SECONDS: "git_gc_seconds", "s", Time, "git gc time" .headline();
    BUILD_SECONDS: "build_seconds", "s", Time, "build-shaped I/O time (objects and an archive)" .headline();
    BUILD_FILES_PER_S: "build_files_per_s", "files/s", Throughput, "build objects written/s" .derived(RATE);
    DELIVERIES_PER_S: "deliveries_per_s", "deliveries/s", Throughput, "maildir deliveries/s" .headline();
    MAIL_READ_SECONDS: "mail_read_seconds", "s", Time, "time to read every new message into cur/";
    MAIL_FLAG_SECONDS: "mail_flag_seconds", "s", Time, "flag changes time (renames in cur/)";
    MAIL_EXPUNGE_SECONDS: "mail_expunge_seconds", "s", Time, "expunge time";
    POSTMARK_TX_PER_S: "postmark_tx_per_s", "tx/s", Throughput, "PostMark transactions/s (its own count, whole seconds)" .headline();
    RECORDS_PER_S: "records_per_s", "records/s", Throughput, "log records/s (fdatasync'd commits)" .headline();
    TAIL_RECORDS_PER_S: "tail_records_per_s", "records/s", Throughput, "log records/s read by tail followers";
    ROTATIONS: "rotations", "count", Fact, "log rotations";
    // snapshots and backups
    // snapshots and backups
    SNAPSHOT_SECONDS: "snapshot_seconds", "s", Time, "snapshot creation time" .headline();
    SNAPSHOT_SPACE_BYTES: "snapshot_space_bytes", "bytes", Cost, "space of a new snapshot" .headline() .bytes();
    SNAPSHOT_SPACE_SHARE: "snapshot_space_share", "ratio", Cost, "space of a new snapshot / its data" .headline();
    SNAPSHOT_SPACE_1PCT_BYTES: "snapshot_space_1pct_bytes", "bytes", Cost, "snapshot space after 1 % rewritten" .headline() .bytes();
    SNAPSHOT_SPACE_10PCT_BYTES: "snapshot_space_10pct_bytes", "bytes", Cost, "snapshot space after 10 % rewritten" .headline() .bytes();
    SNAPSHOT_SPACE_50PCT_BYTES: "snapshot_space_50pct_bytes", "bytes", Cost, "snapshot space after 50 % rewritten" .headline() .bytes();
    SEND_FULL_BYTES: "send_full_bytes", "bytes", Fact, "full send stream" .bytes();
    SEND_FULL_MIB_S: "send_full_mib_s", "MiB/s", Throughput, "full send + receive" .derived(SEND_RATE);
    CHANGED_BYTES: "changed_bytes", "bytes", Fact, "bytes changed before the incremental send" .bytes();
    SEND_INCR_BYTES: "send_incr_bytes", "bytes", Cost, "incremental send stream" .headline() .bytes();
    SEND_INCR_RATIO: "send_incr_ratio", "ratio", Cost, "incremental bytes sent / bytes changed" .headline();
    SEND_INCR_MIB_S: "send_incr_mib_s", "MiB/s", Throughput, "incremental send + receive" .derived(SEND_RATE);
    REFLINK_SECONDS: "reflink_seconds", "s", Time, "reflink copy (FICLONE) time" .headline();
    REFLINK_SAVED_BYTES: "reflink_saved_bytes", "bytes", Capacity, "space a reflink copy saves" .bytes();
    DEDUPE_SECONDS: "dedupe_seconds", "s", Time, "dedupe (FIDEDUPERANGE) time" .headline();
    DEDUPE_SAVED_BYTES: "dedupe_saved_bytes", "bytes", Capacity, "space dedupe saved" .headline() .bytes();
    FSTRIM_SECONDS: "fstrim_seconds", "s", Time, "fstrim of a used filesystem" .headline();
    BALANCE_SECONDS: "balance_seconds", "s", Time, "full balance of a used filesystem" .headline();
    // Your own workload: a recorded trace replayed (workload::replay).
    REPLAY_CALLS_PER_S: "replay_calls_per_s", "calls/s", Throughput, "replayed calls/s (as fast as possible)" .headline();
    REPLAY_READ_P50_MS: "replay_read_p50_ms", "ms", Latency, "replayed read p50 latency";
    REPLAY_READ_P99_MS: "replay_read_p99_ms", "ms", Latency, "replayed read p99 latency";
    REPLAY_WRITE_P50_MS: "replay_write_p50_ms", "ms", Latency, "replayed write p50 latency";
    REPLAY_WRITE_P99_MS: "replay_write_p99_ms", "ms", Latency, "replayed write p99 latency";
    REPLAY_FSYNC_P50_MS: "replay_fsync_p50_ms", "ms", Latency, "replayed fsync p50 latency";
    REPLAY_FSYNC_P99_MS: "replay_fsync_p99_ms", "ms", Latency, "replayed fsync p99 latency" .headline();
    REPLAY_OPEN_P50_MS: "replay_open_p50_ms", "ms", Latency, "replayed open/close p50 latency";
    REPLAY_OPEN_P99_MS: "replay_open_p99_ms", "ms", Latency, "replayed open/close p99 latency";
    REPLAY_NAMESPACE_P50_MS: "replay_namespace_p50_ms", "ms", Latency, "replayed namespace call p50 latency";
    REPLAY_NAMESPACE_P99_MS: "replay_namespace_p99_ms", "ms", Latency, "replayed namespace call p99 latency";
    REPLAY_WRITE_BYTES: "replay_write_bytes", "bytes", Fact, "bytes the replayed writes wrote" .bytes();
    REPLAY_DIVERGED: "replay_diverged", "count", Fact, "replayed calls whose outcome differed from the recording";
    REPLAY_END_MISMATCHES: "replay_end_mismatches", "count", Fact, "end-state entries unlike the recorded end state (names, types, sizes)";
    REPLAY_NOT_REPLAYABLE: "replay_not_replayable", "count", Fact, "recorded calls seen but not replayable (mmap I/O, io_uring, fd passing)";
    // (end of source trees, mail, logs, snapshots)
    // Aging: what the age of a filesystem is measured by (runner::age, workload::age).
    AGE_EXTENTS_PER_FILE: "age_extents_per_file", "extents", Fact, "extents per aged file (mean)" .headline();
    AGE_EXTENTS_P90: "age_extents_p90", "extents", Fact, "extents per aged file (90th percentile)";
    AGE_EXTENTS_MAX: "age_extents_max", "extents", Fact, "extents of the most fragmented aged file";
    AGE_LAYOUT_SCORE: "age_layout_score", "fraction", Fact, "layout score (blocks next to the previous one)" .headline();
    AGE_PROBE_EXTENTS: "age_probe_extents", "extents", Fact, "extents of a new sequential probe file";
    AGE_FREE_EXTENT_KIB: "age_free_extent_kib", "KiB", Fact, "free-space contiguity (probe's mean extent)" .headline();
    AGE_FULLNESS: "age_fullness_pct", "%", Fact, "fullness" .headline();
    AGE_FILES: "age_files", "count", Fact, "files aging left";
    AGE_WRITTEN_BYTES: "age_written_bytes", "bytes", Fact, "written by aging" .bytes();
    AGE_SECONDS: "age_seconds", "s", Fact, "aging time";
    AGE_MIB_S: "age_mib_s", "MiB/s", Fact, "aging throughput";
    AGE_STOPPED_ON_LAYOUT: "age_stopped_on_layout", "bool", Fact, "aging stopped on its layout score (1) before its amount (0)";
    AGE_FREED_FOR_ROOM: "age_freed_for_room_bytes", "bytes", Fact, "aged files deleted so the data file could be written" .bytes();
    AGE_KEEP_SECONDS: "age_keep_seconds", "s", Fact, "aged image kept (replicate=restore)";
    AGE_IMAGE_BYTES: "age_image_bytes", "bytes", Fact, "aged image's data (replicate=restore)" .bytes();
    AGE_RESTORE_SECONDS: "age_restore_seconds", "s", Fact, "aged image written back (replicate=restore)";
    AGE_RESTORE_BYTES: "age_restore_bytes", "bytes", Fact, "aged image's data written back" .bytes();
    // (end of aging)
    // What a filesystem's own structures take right after mkfs (usable-space; seed 000's "both
    // lose about 7 GiB to their own structures"): the device's size less the free space.
    OVERHEAD_BYTES: "overhead_bytes", "bytes", Cost, "own structures (device less free space)" .headline() .derived(OVERHEAD) .bytes() .reduce(Reduce::First);
}

/// Two ways one job states its throughput; at a fixed block size one follows from the other, so
/// only one of them is judged (see [`super::Shape::basis`]).
pub struct Pair {
    /// Operations per second.
    pub ops: MetricId,
    /// MiB/s.
    pub bandwidth: MetricId,
}

/// The IOPS/MiB/s pairs, per side.
pub const PAIRS: &[Pair] = &[
    Pair {
        ops: IOPS,
        bandwidth: BW_MIB_S,
    },
    Pair {
        ops: READ_IOPS,
        bandwidth: READ_BW_MIB_S,
    },
    Pair {
        ops: WRITE_IOPS,
        bandwidth: WRITE_BW_MIB_S,
    },
    Pair {
        ops: TRIM_IOPS,
        bandwidth: TRIM_BW_MIB_S,
    },
];
