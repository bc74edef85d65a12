//! `fsbench io`'s output: the readable summary of one job (its directions, latency, CPU,
//! device totals and `--steady-state` outcome), its JSON with histogram pairs on one line,
//! and a `--fio-job` file's sections. `commands::io` runs the job and prints these.

use crate::engine::{DirectionReport, IoReport, JobSpec};
use crate::fio::jobfile::FioJob;
use crate::runner::reduce::aggregate::{MpiIoReport, Row};
use crate::units::format_size;
use crate::workload::WorkloadOutput;
use std::fmt::Write as _;

/// A report as `fsbench io --json` prints it (one job's [`IoReport`], or `--mpi`'s reduction):
/// pretty JSON, each histogram pair on one line, ending in a newline.
pub fn json<T: serde::Serialize>(report: &T) -> crate::Result<String> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| crate::Error::Other(format!("cannot encode the report: {e}")))?;
    Ok(format!("{}\n", collapse_pairs(&text)))
}

/// Put each `[value, count]` histogram pair on one line: pretty JSON would spend four lines
/// on each of hundreds of buckets.
pub fn collapse_pairs(pretty: &str) -> String {
    let lines: Vec<&str> = pretty.lines().collect();
    let mut out = String::with_capacity(pretty.len());
    let mut i = 0;
    let is_num = |l: &str| {
        let t = l.trim().trim_end_matches(',');
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
    };
    while i < lines.len() {
        let l = lines[i];
        if l.trim() == "["
            && i + 3 < lines.len()
            && is_num(lines[i + 1])
            && is_num(lines[i + 2])
            && lines[i + 3].trim().starts_with(']')
        {
            let indent = &l[..l.len() - l.trim_start().len()];
            out += &format!(
                "{indent}[{} {}]{}\n",
                lines[i + 1].trim(),
                lines[i + 2].trim(),
                &lines[i + 3].trim()[1..]
            );
            i += 4;
        } else {
            out += l;
            out.push('\n');
            i += 1;
        }
    }
    out.pop();
    out
}

/// Nanoseconds as people read a latency: `850.0 µs`, `1.25 ms`.
fn ms(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

/// One direction's figures (IOPS, MiB/s, I/Os, bytes; its latency quantiles); nothing when it
/// did no I/O.
fn direction_lines(name: &str, d: &DirectionReport) -> String {
    if d.ios == 0 {
        return String::new();
    }
    let l = &d.lat_ns;
    format!(
        "  {name:<5} {:>10.0} IOPS  {:>9.1} MiB/s  {} I/Os, {}\n        lat min {}  avg {}  \
         p50 {}  p99 {}  p99.9 {}  max {}\n",
        d.iops,
        d.bw_bytes / (1 << 20) as f64,
        d.ios,
        format_size(d.bytes),
        ms(l.min as f64),
        ms(l.mean),
        ms(l.p50 as f64),
        ms(l.p99 as f64),
        ms(l.p99_9 as f64),
        ms(l.max as f64),
    )
}

/// The readable summary.
pub fn summary(spec: &JobSpec, r: &IoReport) -> String {
    let mut s = format!(
        "{} {} bs={} iodepth={} numjobs={}{} on {} ({} engine, backend {})\n",
        spec.rw.as_str(),
        if spec.steady.is_some() {
            "until steady"
        } else if spec.runtime.is_some() {
            "time-based"
        } else {
            "size-based"
        },
        crate::units::fio_size(spec.bs),
        spec.iodepth,
        spec.numjobs,
        if spec.direct { " direct" } else { "" },
        spec.filename.display(),
        r.engine,
        r.backend,
    );
    if let Some(note) = &r.backend_note {
        s += &format!("  note: {note}\n");
    }
    s += &direction_lines("read", &r.read);
    s += &direction_lines("write", &r.write);
    if let Some(st) = &r.steady {
        s += &steady_lines(st, r.runtime_s);
    }
    s += &format!(
        "  cpu   user {:.2} s  sys {:.2} s  ({:.0} % of one CPU; system {:.0} % busy)\n",
        r.cpu.user_s,
        r.cpu.sys_s,
        if r.runtime_s > 0.0 {
            100.0 * (r.cpu.user_s + r.cpu.sys_s) / r.runtime_s
        } else {
            0.0
        },
        100.0 * r.cpu.system_util,
    );
    if let Some(d) = &r.device {
        s += &format!(
            "  device {}: read {}, wrote {}{} in the job\n",
            d.name,
            format_size(d.read_bytes),
            format_size(d.write_bytes),
            d.write_amplification
                .map(|w| format!(" (write amplification {w:.2})"))
                .unwrap_or_default()
        );
        if let Some(t) = d.write_bytes_total {
            s += &format!(
                "         wrote {}{} until written back (syncfs + {:.1} s wait{})\n",
                format_size(t),
                d.write_amplification_total
                    .map(|w| format!(" (write amplification {w:.2})"))
                    .unwrap_or_default(),
                d.settle_s.unwrap_or(0.0),
                if d.settle_quiet == Some(false) {
                    ", still writing at the cap"
                } else {
                    ""
                }
            );
        }
        if let Some(n) = &d.settle_note {
            s += &format!("  note: {n}\n");
        }
    } else if let Some(n) = &r.device_note {
        s += &format!("  device: {n}\n");
    }
    if r.fsyncs > 0 {
        s += &format!("  fsyncs {}\n", r.fsyncs);
    }
    s += &format!("  runtime {:.2} s", r.runtime_s);
    if r.layout_s > 0.0 {
        s += &format!("  layout {:.2} s", r.layout_s);
    }
    s += &format!("  seed {}\n", r.seed);
    s
}

/// The outcome of `--steady-state`: each round's IOPS, which rounds formed the window, the
/// verdict, and the window's figures when it counts.
pub fn steady_lines(st: &crate::engine::SteadyReport, runtime_s: f64) -> String {
    use crate::engine::until_steady::Conditioning;
    let c = &st.criteria;
    let how = match (st.range_pct, st.slope_pct) {
        (Some(r), Some(sl)) => format!("range {r:.1} %, slope {sl:.1} %"),
        _ => "fewer rounds than the window".into(),
    };
    let mut s = String::new();
    let (unit, rule) = if st.quick {
        (
            "second",
            format!(
                "{} one-second windows within {} % range / {} % slope; quick mode, not SNIA",
                c.windows, c.range_pct, c.slope_pct
            ),
        )
    } else {
        (
            "round",
            format!(
                "{} rounds of {} s within {} % range / {} % slope, at most {} rounds; SNIA PTS",
                c.windows, st.round_s, c.range_pct, c.slope_pct, st.round_limit
            ),
        )
    };
    s += &format!("  steady state: {rule}\n");
    if !st.quick {
        s += &round_table(st);
    }
    let judged = crate::workload::io::rounds_text(st);
    // The verdict, then (indented, on its own line so the lines fit 100 columns) what it means.
    let (verdict, then) = match (&st.window, st.conditioning) {
        (None, _) => (
            format!(
                "NOT STEADY within {} ({judged}, last window: {how})",
                crate::units::format_duration(std::time::Duration::from_secs_f64(st.max_s))
            ),
            "the figures above are the whole run's",
        ),
        (Some(_), Conditioning::NotPreconditioned) => (
            format!("NOT PRECONDITIONED: {judged} met the criteria ({how})"),
            "the device was not preconditioned (--precondition): steady state is not claimed, \
             the figures above are the whole run's",
        ),
        (Some(_), Conditioning::Preconditioned) => (
            format!("STEADY over {judged} ({how})"),
            "after preconditioning",
        ),
        (Some(_), Conditioning::NotADevice) => (
            format!("stable over {judged} ({how})"),
            "a file: the caches underneath make this no steady state",
        ),
    };
    s += &format!("  window: {verdict}\n          {then}\n");
    if let Some(w) = st
        .window
        .as_ref()
        .filter(|_| st.conditioning != Conditioning::NotPreconditioned)
    {
        let l = &w.lat_ns;
        s += &format!(
            "  window {:>9.0} IOPS  {:>9.1} MiB/s  {unit}s {}–{} (seconds {}–{} of {runtime_s:.1} s)\n        \
             lat p50 {}  p99 {}  p99.9 {}\n",
            w.iops,
            w.bw_bytes / (1 << 20) as f64,
            st.window_rounds.map_or(0, |r| r[0]),
            st.window_rounds.map_or(0, |r| r[1]),
            w.start_s,
            w.end_s,
            ms(l.p50 as f64),
            ms(l.p99 as f64),
            ms(l.p99_9 as f64),
        );
    }
    s
}

/// Each round's IOPS, eight to a line, the window's marked `[…]`.
fn round_table(st: &crate::engine::SteadyReport) -> String {
    let in_window = |k: u32| st.window_rounds.is_some_and(|[a, b]| (a..=b).contains(&k));
    let cells: Vec<String> = st
        .rounds
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let k = i as u32 + 1;
            let v = crate::metrics::format_number(*v);
            if in_window(k) {
                format!("{k:>2}:[{v}]")
            } else {
                format!("{k:>2}: {v} ")
            }
        })
        .collect();
    let mut s = String::new();
    for (i, line) in cells.chunks(5).enumerate() {
        s += if i == 0 {
            "  rounds (IOPS)"
        } else {
            "              "
        };
        for c in line {
            s += &format!(" {c:<14}");
        }
        s = s.trim_end().to_string();
        s.push('\n');
    }
    if let (Some(m), Some(sl)) = (st.window_mean, st.window_slope) {
        // The band the range criterion allows around the mean (±10 % for SNIA's 20 %).
        let half = st.criteria.range_pct / 2.0;
        s += if st.reached {
            "  window"
        } else {
            "  last window"
        };
        s += &format!(
            " mean {} IOPS, ±{} % band {}–{}, least-squares slope {:+.0} IOPS per round\n",
            crate::metrics::format_number(m),
            half,
            crate::metrics::format_number((1.0 - half / 100.0) * m),
            crate::metrics::format_number((1.0 + half / 100.0) * m),
            sl
        );
    }
    s
}

/// `fsbench io --mpi`'s summary: the aggregate as `fsbench io` prints it, then the ranks
/// and hosts.
pub fn mpi_summary(spec: &JobSpec, r: &MpiIoReport) -> String {
    let m = &r.mpi;
    let mut s = format!(
        "MPI: {} ranks on {} host{} ({}){}\n",
        m.ranks,
        m.hosts.len(),
        if m.hosts.len() == 1 { "" } else { "s" },
        m.library,
        if m.stonewall { ", stonewall" } else { "" },
    );
    s += "aggregate (all ranks, total ÷ common window):\n";
    s += &summary(spec, &r.aggregate);
    let mib = |b: f64| b / (1 << 20) as f64;
    s += &match (m.first_done_iops, m.first_done_bw_bytes) {
        (Some(iops), Some(bw)) => format!(
            "  first done {:.3} s: {iops:.0} IOPS {:.1} MiB/s   last done {:.3} s: {:.0} IOPS \
             {:.1} MiB/s\n",
            m.first_done_s,
            mib(bw),
            m.last_done_s,
            m.last_done_iops,
            mib(m.last_done_bw_bytes),
        ),
        _ => format!(
            "  first rank done {:.3} s, last {:.3} s (--stonewall stops all at the first)\n",
            m.first_done_s, m.last_done_s
        ),
    };
    let mut t = comfy_table::Table::new();
    t.set_header([
        "rank", "host", "I/Os", "IOPS", "MiB/s", "p50", "p99", "start s", "end s",
    ]);
    let add = |t: &mut comfy_table::Table, label: String, row: &Row| {
        t.add_row([
            label,
            row.host.clone(),
            row.ios.to_string(),
            format!("{:.0}", row.iops),
            format!("{:.1}", row.bw_bytes / (1 << 20) as f64),
            format!("{:.1} µs", row.lat_p50_ns as f64 / 1e3),
            format!("{:.1} µs", row.lat_p99_ns as f64 / 1e3),
            format!("{:.3}", row.start_s),
            format!("{:.3}", row.end_s),
        ]);
    };
    for row in &r.ranks {
        add(&mut t, row.rank.unwrap_or(0).to_string(), row);
    }
    for row in &r.hosts {
        add(&mut t, format!("{} ranks", row.ranks.unwrap_or(0)), row);
    }
    s += &format!("{t}\n");
    s
}

/// A `--fio-job` file's sections as `fsbench io --fio-job --json` prints them: one object per
/// section (its place, engine and notes; its metrics or its error), ending in a newline.
pub fn fio_job_json(results: &[(FioJob, crate::Result<WorkloadOutput>)]) -> crate::Result<String> {
    let v: Vec<serde_json::Value> = results.iter().map(|(j, r)| fio_job_value(j, r)).collect();
    let text = serde_json::to_string_pretty(&v)
        .map_err(|e| crate::Error::Other(format!("cannot encode the report: {e}")))?;
    Ok(format!("{text}\n"))
}

/// One section's JSON object.
fn fio_job_value(j: &FioJob, r: &crate::Result<WorkloadOutput>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "section": j.section,
        "file": j.file,
        "line": j.line,
        "phase": j.phase + 1,
        "engine": if j.native { "fsbench" } else { "fio" },
        "notes": j.notes,
    });
    match r {
        Ok(o) => {
            let metrics: serde_json::Map<String, serde_json::Value> = o
                .metrics
                .iter()
                .filter(|m| m.value.is_finite())
                .map(|m| {
                    (
                        m.metric.to_string(),
                        serde_json::json!({"value": m.value, "unit": m.unit}),
                    )
                })
                .collect();
            v["metrics"] = metrics.into();
            v["notes"] = j
                .notes
                .iter()
                .chain(&o.notes)
                .cloned()
                .collect::<Vec<_>>()
                .into();
        }
        Err(e) => v["error"] = e.to_string().into(),
    }
    v
}

/// A `--fio-job` file's sections, one block each: the section and its place, its notes (each
/// once), its metrics or `FAILED` with the error.
pub fn fio_job_summary(results: &[(FioJob, crate::Result<WorkloadOutput>)]) -> String {
    let mut s = String::new();
    let mut noted: Vec<&String> = Vec::new();
    for (j, r) in results {
        let _ = writeln!(
            s,
            "[{}] phase {} ({}:{})",
            j.section,
            j.phase + 1,
            j.file.display(),
            j.line
        );
        for n in &j.notes {
            if !noted.contains(&n) {
                noted.push(n);
                let _ = writeln!(s, "  note: {n}");
            }
        }
        match r {
            Ok(o) => {
                for m in o.metrics.iter().filter(|m| m.value.is_finite()) {
                    let _ = writeln!(s, "  {:<24} {:>14.3} {}", m.metric, m.value, m.unit);
                }
                for n in &o.notes {
                    let _ = writeln!(s, "  note: {n}");
                }
            }
            Err(e) => {
                let _ = writeln!(s, "  FAILED: {e}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_collapse_and_stay_valid_json() {
        let v = serde_json::json!({"h": [[1, 2], [30, 4]], "x": [5], "y": 1});
        let text = collapse_pairs(&serde_json::to_string_pretty(&v).unwrap());
        assert!(
            text.contains("[1, 2],") && text.contains("[30, 4]\n"),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
