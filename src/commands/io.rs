//! `fsbench io`: one ad-hoc job, fio's vocabulary, the stable JSON report or a summary.

use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, DirectionReport, IoReport, JobSpec};
use crate::units::format_size;

/// Turn the flags into a job.
pub fn spec_from_args(a: &IoArgs) -> JobSpec {
    JobSpec {
        filename: a.filename.clone().unwrap_or_default(),
        rw: a.rw,
        bs: a.bs,
        iodepth: a.iodepth,
        numjobs: a.numjobs,
        backend: a.ioengine,
        direct: a.direct,
        size: a.size,
        offset_increment: a.offset_increment,
        runtime: a.runtime,
        ramp: a.ramp,
        rwmixread: a.rwmixread,
        fsync: a.fsync,
        seed: a.seed,
        buffer_compress_percentage: a.buffer_compress_percentage,
        verify: a.verify,
        device: a.device.clone(),
        steady: a.steady.spec(),
    }
}

/// Run `fsbench io`; returns the exit code.
pub fn run(args: IoArgs) -> crate::Result<i32> {
    if args.mpi && args.steady.steady_state.is_some() {
        return Err(crate::Error::invalid(
            "--steady-state",
            "is for one process; under --mpi each rank would stop on its own figures at a \
             different time (use --runtime)",
        ));
    }
    if args.runtime.is_some() && args.steady.steady_state.is_some() {
        return Err(crate::Error::invalid(
            "--runtime",
            "with --steady-state the job runs until steady, up to --steady-max; drop --runtime",
        ));
    }
    if args.mpi {
        return run_mpi(args);
    }
    if args.stonewall {
        return Err(crate::Error::invalid(
            "--stonewall",
            "stops all MPI ranks when the first finishes; use it with --mpi under mpirun",
        ));
    }
    crate::cancel::install_handlers();
    let mut spec = spec_from_args(&args);
    if spec.steady.is_some() && (args.engine == Some(EngineChoice::Fio) || args.fio_job.is_some()) {
        return Err(crate::Error::invalid(
            "--steady-state",
            "runs one job on fsbench's own engine; drop --engine fio / --fio-job",
        ));
    }
    let precondition = args.precondition.precondition;
    if precondition && args.fio_job.is_some() {
        return Err(crate::Error::invalid(
            "--precondition",
            "conditions the block device named by --filename; it does not apply to --fio-job",
        ));
    }
    if let Some(file) = &args.fio_job {
        return super::io_fio_job::run(&args, file);
    }
    let device = is_block_device(&spec.filename);
    if precondition && !device {
        return Err(crate::Error::invalid(
            "--precondition",
            format!(
                "{} is not a block device; preconditioning writes a whole SSD twice (e.g. \
                 --filename /dev/nvme0n1), and a file has no flash of its own to condition",
                spec.filename.display()
            ),
        ));
    }
    if let Some(st) = spec.steady.as_mut() {
        use crate::engine::steady::Conditioning;
        *st = st.on(match (device, precondition) {
            (true, true) => Conditioning::Preconditioned,
            (true, false) => Conditioning::NotPreconditioned,
            (false, _) => Conditioning::NotADevice,
        });
    }
    // Validate before either engine touches anything, so bad input creates nothing.
    engine::validate(&spec)?;
    let history = args.history.settings().resolve()?;
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    if spec.steady.is_some()
        && let Some(what) = cached_target(&spec.filename, device)
    {
        let f = crate::doctor::checks::steady_caches_finding(
            &spec.filename.display().to_string(),
            &what,
        );
        eprintln!("fsbench: warning: {}", f.one_line());
    }
    if precondition {
        eprintln!(
            "fsbench: preconditioning {}: 2 × its capacity in 128 KiB sequential writes \
             (SNIA's workload-independent part) before the job",
            spec.filename.display()
        );
        let note = crate::workload::precondition::run_device(&spec.filename)?;
        eprintln!("fsbench: {note}");
    }
    let report = match args.engine.unwrap_or(EngineChoice::Fsbench) {
        EngineChoice::Fsbench => {
            let settle = (!args.no_settle).then(crate::measure::SettleRule::default);
            engine::run_with(&spec, settle)?
        }
        EngineChoice::Fio => crate::fio::run(&spec)?,
    };
    if args.json || args.output_format == OutputFormat::Json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| crate::Error::Other(format!("cannot encode the report: {e}")))?;
        emit(&format!("{}\n", collapse_pairs(&text)));
    } else {
        emit(&summary(&spec, &report));
    }
    record(history.as_ref(), &started, &spec, &report);
    Ok(crate::error::EXIT_OK)
}

/// Whether `path` is a block device (a missing path is not).
fn is_block_device(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// What sits on caches rather than flash, in words: a file, a loop device (a file
/// underneath), zram (compressed RAM); `None` for another block device.
fn cached_target(path: &std::path::Path, device: bool) -> Option<String> {
    if !device {
        return Some("a file, through its filesystem".into());
    }
    let real = std::fs::canonicalize(path).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    if std::path::Path::new("/sys/block")
        .join(&name)
        .join("loop")
        .exists()
    {
        Some(format!("the loop device {name}, a file underneath"))
    } else if name.starts_with("zram") {
        Some(format!("{name}, compressed RAM"))
    } else {
        None
    }
}

/// Record the job as a one-setup run (workload `io:<rw>:<bs>:qd<N>:j<N>`, its spec as params).
fn record(
    loc: Option<&crate::history::Location>,
    started: &str,
    spec: &JobSpec,
    report: &IoReport,
) {
    let id = format!(
        "io:{}:{}:qd{}:j{}",
        serde_json::to_value(spec.rw)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        format_size(spec.bs).replace(' ', ""),
        spec.iodepth,
        spec.numjobs
    );
    let info = crate::results::WorkloadInfo {
        id: id.clone(),
        kind: "io".into(),
        params: serde_json::to_value(spec).unwrap_or_default(),
        fio_command: None,
    };
    let out = crate::workload::io::to_output(report);
    let samples = out
        .metrics
        .into_iter()
        .map(|m| (id.clone(), m.metric, m.unit, m.value));
    let r = crate::history::record::one_setup("io", started, &spec.filename, vec![info], samples);
    crate::history::record::after_run(loc, &r, &spec.filename, "io");
}

#[cfg(feature = "mpi")]
fn run_mpi(args: IoArgs) -> crate::Result<i32> {
    super::io_mpi::run(args)
}

/// Without the feature, `--mpi` exists but refuses, so the flag is discoverable.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: IoArgs) -> crate::Result<i32> {
    Err(without_mpi())
}

/// The refusal of `--mpi` by a build without the `mpi` feature (exit 2).
#[cfg(not(feature = "mpi"))]
pub(crate) fn without_mpi() -> crate::Error {
    crate::Error::invalid(
        "--mpi",
        "this fsbench was built without MPI; rebuild with `cargo build --release --features mpi` \
         (needs libopenmpi-dev and libclang) and launch with mpirun",
    )
}

/// Put each `[value, count]` histogram pair on one line: pretty JSON would spend four lines
/// on each of hundreds of buckets.
pub(crate) fn collapse_pairs(pretty: &str) -> String {
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

/// Print to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn ms(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

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
    use crate::engine::steady::Conditioning;
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
