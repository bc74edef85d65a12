//! Which way is better for each metric, and how to name metrics and workloads for people.
//!
//! Metric names follow docs/design-notes.md (`iops`, `lat_p99_ms`, `seconds`…); workloads may add their own
//! (`avail_bytes`, `files_per_s`, `supported`), so the table matches on name patterns and falls
//! back to [`Direction::Neutral`] (no winner is marked) for anything it does not know.

/// Whether a larger or a smaller value of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// More is better (throughput, free space, supported features).
    HigherIsBetter,
    /// Less is better (time, latency, CPU, bytes written to the device).
    LowerIsBetter,
    /// Informational only (e.g. total size); never ranked.
    Neutral,
}

impl Direction {
    /// Arrow shown next to the unit: ↑ higher is better, ↓ lower is better.
    pub fn arrow(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "↑",
            Direction::LowerIsBetter => "↓",
            Direction::Neutral => "",
        }
    }
    /// Whether `a` is better than `b` under this direction.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Direction::HigherIsBetter => a > b,
            Direction::LowerIsBetter => a < b,
            Direction::Neutral => false,
        }
    }
}

/// The direction of a metric, by name.
pub fn direction(metric: &str) -> Direction {
    let m = metric.to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    if has("lat")
        || has("seconds")
        || m == "s"
        || m.ends_with("_s") && !has("per_s") && !has("mib_s")
        || has("cpu")
        || has("write_amplification")
        || has("device_")
        || has("used")
        || has("overhead")
        || has("failed")
        || has("stalls")
    {
        Direction::LowerIsBetter
    } else if has("iops")
        || m == "tps"
        || has("bw")
        || has("mib_s")
        || has("per_s")
        || has("avail")
        || has("usable")
        || has("inodes")
        || has("supported")
        || has("detected")
        || has("saved")
        || has("ratio")
        || has("scaling_factor")
    {
        Direction::HigherIsBetter
    } else {
        Direction::Neutral
    }
}

/// Short human label of a metric (`lat_p99_ms` → `p99 latency (per-round median)`).
pub fn metric_label(metric: &str) -> String {
    let known = match metric {
        "iops" => "IOPS",
        "read_iops" => "read IOPS",
        "write_iops" => "write IOPS",
        "bw_mib_s" => "bandwidth",
        "lat_p50_ms" => "p50 latency",
        "lat_p99_ms" => "p99 latency (median of rounds)",
        "lat_p99_9_ms" => "p99.9 latency (median of rounds)",
        "seconds" => "time",
        "ops_per_s" => "ops/s",
        "cpu_util" => "CPU",
        "device_write_bytes" => "bytes written to device",
        "write_amplification" => "write amplification",
        "device_write_bytes_total" => "bytes written to device, until written back",
        "write_amplification_total" => "write amplification, until written back",
        "device_bytes_per_file" => "device bytes per file (in the job)",
        "device_bytes_per_file_total" => "device bytes per file, until written back",
        "stalls" => "stalls (seconds under 10 % of median IOPS)",
        "steady_reached" => "steady state reached (SNIA: 5 s within 20 %/10 %)",
        "steady_at_s" => "seconds to steady state",
        "bytes" => "bytes",
        "size_bytes" => "size",
        "avail_bytes" => "available",
        "used_bytes" => "used",
        "inodes" => "inodes",
        "files_per_s" => "files/s",
        "compress_ratio" => "on-disk compression ratio",
        "scaling_factor" => "factor over its baseline job",
        "peak_memory_bytes" => "peak memory in the cgroup",
        "memory_cap_bytes" => "cgroup memory cap",
        "create_files_per_s" => "create files/s",
        "read_files_per_s" => "read-back files/s",
        "inodes_total" => "inodes total",
        "inodes_free" => "inodes free",
        "tps" => "TPS",
        "tx_per_s" => "transactions/s",
        "lat_mean_ms" => "mean latency",
        "lat_p95_ms" => "p95 latency",
        "init_seconds" => "pgbench -i time",
        "wal_bytes" => "WAL written",
        "data_bytes" => "data pages written",
        "failed_transactions" => "failed transactions",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    // Per-side metrics of a mixed job (randrw70): "read p99 latency (median of rounds)".
    for side in ["read_", "write_"] {
        if let Some(rest) = metric
            .strip_prefix(side)
            .filter(|r| !r.ends_with("_merged"))
        {
            let base = metric_label(rest);
            if base != rest.replace('_', " ") {
                return format!("{} {base}", side.trim_end_matches('_'));
            }
        }
    }
    if let Some(rest) = metric.strip_suffix("_merged") {
        // e.g. lat_p99_ms_merged, read_lat_p99_9_ms_merged
        let (dir, rest) = match rest.split_once("_lat_") {
            Some((d, r)) => (format!("{d} "), format!("lat_{r}")),
            None => (String::new(), rest.to_string()),
        };
        let p = rest
            .trim_start_matches("lat_")
            .trim_end_matches("_ms")
            .replace('_', ".");
        return format!("{dir}{p} latency (all I/Os of all rounds)");
    }
    metric.replace('_', " ")
}

/// Human name of a standard workload; unknown ids are shown as they are.
pub fn workload_label(id: &str) -> String {
    let known = match id {
        "layout" => "Lay out the test file",
        "seqread" => "Sequential read",
        "seqwrite" => "Sequential write",
        "randread" => "Random read",
        "randwrite" => "Random write",
        "randrw70" => "70/30 random mix",
        "fsync-write" => "Write + fsync",
        "untar" => "Untar the corpus",
        "find-cold" => "find over the tree, cold cache",
        "find-warm" => "find over the tree, warm cache (caches could not be dropped)",
        "rm-tree" => "rm -rf the tree",
        "mkfs" => "mkfs / zpool create",
        "usable-space" => "Usable space (df)",
        _ => "",
    };
    if known.is_empty() {
        id.to_string()
    } else {
        known.to_string()
    }
}

/// Short verb-ish name used in recommendations (`rm -rf`, `untar`).
pub fn workload_short(id: &str) -> String {
    match id {
        "rm-tree" => "rm -rf".into(),
        "find-cold" => "cold find".into(),
        "find-warm" => "warm find".into(),
        "fsync-write" => "write+fsync".into(),
        "randrw70" => "70/30 mix".into(),
        "usable-space" => "usable space".into(),
        other => other.into(),
    }
}

/// Format a value for its unit the way the seed tables do: thousands separators for counts,
/// three significant digits for small quantities, binary units for bytes.
pub fn format_value(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "–".into();
    }
    match unit {
        "bytes" | "B" => format_bytes(value),
        "bool" => {
            if value >= 0.5 {
                "yes".into()
            } else {
                "no".into()
            }
        }
        _ => format_number(value),
    }
}

/// Bytes as GiB/MiB/KiB with one decimal (`372.6 GiB`).
pub fn format_bytes(value: f64) -> String {
    crate::units::format_binary(value, false)
}

/// A plain number: integers with separators from 1,000 up, three significant digits below.
pub fn format_number(value: f64) -> String {
    let a = value.abs();
    if a >= 1000.0 {
        thousands(value.round() as i64)
    } else if a >= 100.0 {
        format!("{value:.0}")
    } else if a >= 10.0 {
        format!("{value:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{value:.2}")
    } else if a >= 0.01 {
        format!("{value:.3}")
    } else {
        format!("{value:.2e}")
    }
}

fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        use Direction::*;
        for m in [
            "iops",
            "read_iops",
            "bw_mib_s",
            "ops_per_s",
            "files_per_s",
            "avail_bytes",
        ] {
            assert_eq!(direction(m), HigherIsBetter, "{m}");
        }
        for m in [
            "seconds",
            "lat_p99_ms",
            "lat_p99_ms_merged",
            "cpu_util",
            "write_amplification",
            "device_write_bytes",
            "write_amplification_total",
            "device_write_bytes_total",
            "device_bytes_per_file_total",
            "stalls",
        ] {
            assert_eq!(direction(m), LowerIsBetter, "{m}");
        }
        assert_eq!(direction("size_bytes"), Neutral);
        assert_eq!(direction("supported"), HigherIsBetter);
    }

    #[test]
    fn formats() {
        assert_eq!(format_value(81449.4, "IOPS"), "81,449");
        assert_eq!(format_value(0.614, "ms"), "0.614");
        assert_eq!(format_value(4.6, "s"), "4.60");
        assert_eq!(
            format_value(372.6 * 1024.0 * 1024.0 * 1024.0, "bytes"),
            "372.6 GiB"
        );
        assert_eq!(format_value(1.0, "bool"), "yes");
        assert_eq!(
            metric_label("lat_p99_ms_merged"),
            "p99 latency (all I/Os of all rounds)"
        );
        assert_eq!(
            metric_label("read_lat_p99_9_ms_merged"),
            "read p99.9 latency (all I/Os of all rounds)"
        );
    }
}

#[cfg(test)]
mod side_label_tests {
    use super::metric_label;

    #[test]
    fn per_side_metrics_of_a_mix_read_as_words() {
        assert_eq!(
            metric_label("read_lat_p99_ms"),
            "read p99 latency (median of rounds)"
        );
        assert_eq!(metric_label("write_bw_mib_s"), "write bandwidth");
        assert_eq!(metric_label("read_iops"), "read IOPS");
        assert_eq!(
            metric_label("read_lat_p99_ms_merged"),
            "read p99 latency (all I/Os of all rounds)"
        );
        assert_eq!(metric_label("read_something_new"), "read something new");
    }
}
