//! Parsing fio's `--output-format=json` into the engine's [`IoReport`].
//!
//! fio prints notes ("queue depth will be capped at 1", engine warnings) on stdout before the
//! JSON, and sometimes text after it, so the parser starts at the first line that opens an
//! object and reads exactly one JSON value.

use crate::engine::{CpuReport, DirectionReport, IoReport, LatencyNs};
use serde_json::Value;

/// Parse fio's JSON output (possibly preceded or followed by text) into an [`IoReport`].
///
/// Expects one job (fio was run with `group_reporting`). `engine` is set to `fio`; the caller
/// fills in what fio does not print (seed, backend).
pub fn parse_output(text: &str) -> Result<IoReport, String> {
    let root = root(text)?;
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("fio's JSON has no \"jobs\" array")?;
    let job = match jobs.as_slice() {
        [job] => job,
        [] => return Err("fio's JSON lists no jobs".into()),
        more => {
            return Err(format!(
                "fio's JSON lists {} job groups; run it with --group_reporting",
                more.len()
            ));
        }
    };
    let error = num(job, &["error"]);
    if error != 0.0 {
        return Err(format!(
            "fio's job failed with error {error} ({})",
            os_error(error as i32)
        ));
    }
    Ok(job_report(job))
}

/// One entry of fio's `jobs` array (one reporting group): its name, fio's error code and
/// its report, with trims kept apart (the engine has no trim direction).
#[derive(Debug, Clone)]
pub struct JobEntry {
    /// `jobname` (the first job of the group).
    pub name: String,
    /// fio's `error` (0 = fine), with its OS meaning when not 0.
    pub error: Option<String>,
    /// Reads, writes, CPU, runtime, fsyncs.
    pub report: IoReport,
    /// Trims (`rw=trim`/`randtrim`).
    pub trim: DirectionReport,
}

/// Parse fio's JSON output into one entry per reporting group, in fio's order.
pub fn parse_jobs(text: &str) -> Result<Vec<JobEntry>, String> {
    let root = root(text)?;
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("fio's JSON has no \"jobs\" array")?;
    Ok(jobs
        .iter()
        .map(|job| {
            let error = num(job, &["error"]);
            JobEntry {
                name: job
                    .get("jobname")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                error: (error != 0.0)
                    .then(|| format!("error {error} ({})", os_error(error as i32))),
                report: job_report(job),
                trim: direction(job.get("trim")),
            }
        })
        .collect())
}

fn root(text: &str) -> Result<Value, String> {
    let start = json_start(text).ok_or_else(|| {
        format!(
            "no JSON object in fio's output (it printed: {})",
            first_line(text)
        )
    })?;
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()
        .ok_or("fio's JSON output is empty")?
        .map_err(|e| format!("fio's JSON output is malformed: {e}"))
}

/// A job entry in the engine's terms.
fn job_report(job: &Value) -> IoReport {
    let read = direction(job.get("read"));
    let write = direction(job.get("write"));
    // Per-direction runtime is the longest job's window; both directions share it.
    let runtime_ms = num(job, &["read", "runtime"])
        .max(num(job, &["write", "runtime"]))
        .max(num(job, &["trim", "runtime"]));
    // usr_cpu/sys_cpu are percentages of job_runtime, which group_reporting sums over jobs.
    let job_runtime_s = num(job, &["job_runtime"]) / 1e3;
    let cpu = CpuReport {
        user_s: num(job, &["usr_cpu"]) / 100.0 * job_runtime_s,
        sys_s: num(job, &["sys_cpu"]) / 100.0 * job_runtime_s,
        system_util: 0.0,
    };
    IoReport {
        read,
        write,
        cpu,
        runtime_s: runtime_ms / 1e3,
        fsyncs: num(job, &["sync", "total_ios"]) as u64,
        layout_s: 0.0,
        engine: "fio".into(),
        ..IoReport::default()
    }
}

/// Byte offset of the JSON: the first line starting with `{`, else the first `{` anywhere.
fn json_start(text: &str) -> Option<usize> {
    if text.starts_with('{') {
        return Some(0);
    }
    text.find("\n{").map(|i| i + 1).or_else(|| text.find('{'))
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if line.is_empty() {
        "nothing".into()
    } else {
        format!("'{}'", line.trim())
    }
}

fn os_error(code: i32) -> String {
    std::io::Error::from_raw_os_error(code).to_string()
}

/// Number at `path`, 0 when absent (fio omits blocks that do not apply).
fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return 0.0,
        }
    }
    cur.as_f64().unwrap_or(0.0)
}

fn direction(d: Option<&Value>) -> DirectionReport {
    let Some(d) = d else {
        return DirectionReport::default();
    };
    // total_ios (what fio's iops is based on); after a ramp, io_bytes may also include the
    // few I/Os that were in flight when statistics were reset, so bytes ≈ ios × bs, not exactly.
    let ios = num(d, &["total_ios"]) as u64;
    // lat_ns carries percentiles when fio ran with lat_percentiles=1; older runs only have clat.
    let lat = d.get("lat_ns").cloned().unwrap_or(Value::Null);
    let pct_source = if lat.get("percentile").is_some() {
        &lat
    } else {
        d.get("clat_ns").unwrap_or(&Value::Null)
    };
    let pct = |p: f64| percentile(pct_source, p);
    let mean = num(&lat, &["mean"]);
    DirectionReport {
        ios,
        bytes: num(d, &["io_bytes"]) as u64,
        iops: num(d, &["iops"]),
        bw_bytes: num(d, &["bw_bytes"]),
        lat_ns: LatencyNs {
            min: num(&lat, &["min"]).round() as u64,
            mean,
            max: num(&lat, &["max"]).round() as u64,
            p50: pct(50.0),
            p90: pct(90.0),
            p99: pct(99.0),
            p99_9: pct(99.9),
            p99_99: pct(99.99),
        },
        histogram: Vec::new(),
        lat_sum_ns: (mean * ios as f64).round() as u128,
    }
}

/// fio keys percentiles as `"99.900000"`; match numerically, 0 when absent.
fn percentile(stat: &Value, p: f64) -> u64 {
    stat.get("percentile")
        .and_then(Value::as_object)
        .and_then(|m| {
            m.iter().find_map(|(k, v)| {
                let key: f64 = k.parse().ok()?;
                ((key - p).abs() < 1e-6).then(|| v.as_f64().unwrap_or(0.0).round() as u64)
            })
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/fio/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn randrw_with_leading_notes() {
        let text = fixture("randrw-psync-2jobs-with-notes");
        assert!(
            text.starts_with("note:"),
            "fixture must keep fio's leading text"
        );
        let r = parse_output(&text).unwrap();
        assert_eq!(r.engine, "fio");
        assert_eq!(r.read.ios, 1407);
        assert_eq!(r.write.ios, 641);
        // 2 jobs × 4 MiB region, size-based: exactly 8 MiB moved, 4 KiB each.
        assert_eq!(r.read.bytes + r.write.bytes, 8 << 20);
        assert_eq!(r.read.bytes, r.read.ios * 4096);
        assert!((r.read.iops - 8579.268293).abs() < 1e-6);
        assert_eq!(r.read.bw_bytes, 35140682.0);
        // lat (not clat) percentiles: write p50 differs between the two in this capture.
        assert_eq!(r.write.lat_ns.p50, 6496);
        assert_eq!(r.write.lat_ns.p99_9, 132096);
        assert_eq!(r.read.lat_ns.min, 1052);
        assert_eq!(r.read.lat_ns.max, 2217605);
        assert!((r.read.lat_ns.mean - 114413.984364).abs() < 1e-6);
        assert_eq!(
            r.read.lat_sum_ns,
            (114413.984364f64 * 1407.0).round() as u128
        );
        assert_eq!(r.fsyncs, 455);
        assert!((r.runtime_s - 0.164).abs() < 1e-9);
        // job_runtime 323 ms summed over both jobs; usr 1.547988 %, sys 17.647059 %.
        assert!((r.cpu.user_s - 0.01547988 * 0.323).abs() < 1e-9);
        assert!((r.cpu.sys_s - 0.17647059 * 0.323).abs() < 1e-9);
        assert_eq!(r.layout_s, 0.0);
    }

    #[test]
    fn time_based_randread() {
        let r = parse_output(&fixture("randread-io_uring-qd8-timed")).unwrap();
        assert_eq!(r.read.ios, 34884);
        // fio counts the I/Os in flight when the ramp ended in io_bytes and the latency
        // samples (34891) but not in total_ios: kept as fio reports them.
        assert_eq!(r.read.bytes, 34891 * 4096);
        assert_eq!(
            r.write,
            DirectionReport::default(),
            "unused direction is all zero"
        );
        assert!((r.runtime_s - 1.001).abs() < 1e-9);
        assert!((r.cpu.user_s - 0.082).abs() < 1e-9);
        assert!((r.cpu.sys_s - 0.416).abs() < 1e-9);
        let l = &r.read.lat_ns;
        assert!(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99);
        assert!(l.p99 <= l.p99_9 && l.p99_9 <= l.p99_99 && l.p99_99 <= l.max.max(l.p99_99));
        assert!(l.p50 > 0);
        assert_eq!(r.fsyncs, 0);
    }

    #[test]
    fn sequential_write_with_fsync() {
        let r = parse_output(&fixture("write-psync-fsync1-compress50")).unwrap();
        assert_eq!(r.write.ios, 256);
        assert_eq!(r.write.bytes, 1 << 20);
        assert_eq!(r.read.ios, 0);
        // fio counts no fsync after the job's very last write.
        assert_eq!(r.fsyncs, 255);
    }

    #[test]
    fn clat_fallback_trailing_text_and_errors() {
        let text = r#"fio: some warning {not json}
{"jobs":[{"error":0,"job_runtime":1000,"usr_cpu":10.0,"sys_cpu":20.0,
 "read":{"total_ios":10,"io_bytes":40960,"iops":10.0,"bw_bytes":40960,"runtime":1000,
  "lat_ns":{"min":5,"max":50,"mean":20.0},
  "clat_ns":{"percentile":{"50.000000":19,"99.990000":49}}}}]}
fio: trailing note"#;
        let r = parse_output(text).unwrap();
        assert_eq!(r.read.lat_ns.p50, 19);
        assert_eq!(r.read.lat_ns.p99_99, 49);
        assert_eq!(r.read.lat_ns.p90, 0, "absent percentile reads as 0");
        assert!((r.cpu.user_s - 0.1).abs() < 1e-12);
        assert!((r.cpu.sys_s - 0.2).abs() < 1e-12);

        let e = parse_output("fio: engine io_uring not loadable\n").unwrap_err();
        assert!(e.contains("no JSON") && e.contains("not loadable"), "{e}");
        let e = parse_output(r#"{"jobs":[]}"#).unwrap_err();
        assert!(e.contains("no jobs"), "{e}");
        let e = parse_output(r#"{"jobs":[{"error":5}]}"#).unwrap_err();
        assert!(e.contains("error 5"), "{e}");
        let e = parse_output(r#"{"jobs":[{},{}]}"#).unwrap_err();
        assert!(e.contains("group_reporting"), "{e}");
        let e = parse_output("{\"jobs\": [").unwrap_err();
        assert!(e.contains("malformed"), "{e}");
    }

    #[test]
    fn one_entry_per_reporting_group_with_clones_merged() {
        // fio 3.33 (exit 1) on a job file with [a] numjobs=2 randread and [b] randtrim, each its own
        // group (new_group + group_reporting), as fsbench renders a phase.
        let e = parse_jobs(&fixture("jobfile-randread-2clones-and-trim")).unwrap();
        let names: Vec<&str> = e.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        // 2 clones x 4 MiB / 4 KiB.
        assert_eq!(e[0].report.read.ios, 2048);
        assert!(e[0].report.read.lat_ns.p99 > 0);
        assert_eq!(e[0].trim.ios, 0);
        assert_eq!(e[1].trim.ios, 1);
        assert_eq!(e[1].report.read.ios + e[1].report.write.ios, 0);
        // Trim on a regular file: fio marks that job failed (ENOTTY), the other is fine.
        assert!(e[0].error.is_none());
        assert!(
            e[1].error.as_deref().unwrap().starts_with("error 25"),
            "{:?}",
            e[1].error
        );
        let bad = parse_jobs(r#"{"jobs":[{"jobname":"x","error":5}]}"#).unwrap();
        assert!(bad[0].error.as_deref().unwrap().starts_with("error 5"));
    }
}
