//! `fsbench plan`: print what `fsbench run` would do with the same flags — the expanded steps,
//! the ETA and the equivalent fio command of every I/O job — without touching anything.

use crate::cli::run::RunArgs;
use crate::plan::{Invocation, Kind, WorkloadSpec, eta, resolve::resolve};
use crate::runner::adapters;
use crate::units::format_size;
use std::fmt::Write as _;
use std::path::Path;

/// Run `fsbench plan`; returns the exit code.
pub fn run(args: RunArgs) -> crate::Result<i32> {
    let inv = match &args.resume {
        Some(out) => Invocation::load(out)?,
        None => resolve(&args, std::env::args().collect())?,
    };
    if args.install_missing {
        // What `fsbench run --install-missing` would install; plan never changes the host.
        crate::doctor::in_run::install_missing(&inv, true)?;
    }
    if args.emit_fio {
        print!("{}", fio_script(&inv));
        return Ok(0);
    }
    let results = if args.out.is_some() || args.resume.is_some() {
        ResultsLine::PlannedIn
    } else {
        ResultsLine::PlannedDefault
    };
    print!("{}", summary(&inv, results));
    println!();
    print!("{}", steps_table(&inv));
    println!();
    print!("{}", fio_script(&inv));
    Ok(0)
}

/// What the summary says about the results file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsLine {
    /// `fsbench run`: the file this run writes.
    Run,
    /// `fsbench plan --out DIR` (or `--resume`): where a run would write.
    PlannedIn,
    /// `fsbench plan` without `--out`: a run picks its own timestamped directory.
    PlannedDefault,
}

/// The plan in a few lines: profile, target, setups (with skip notes and warnings), rounds,
/// sizes and the estimated duration.
pub fn summary(inv: &Invocation, results: ResultsLine) -> String {
    let p = &inv.plan;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Plan: {}{}",
        p.name,
        if p.description.is_empty() {
            String::new()
        } else {
            format!(" — {}", p.description)
        }
    );
    let _ = writeln!(s, "Target: {}", inv.options.target.describe());
    let setups: Vec<String> = p
        .setups
        .iter()
        .map(|st| match adapters::fs_available(&st.fs) {
            Ok(()) => st.name.clone(),
            Err(why) => format!("{} (skipped: {why})", st.name),
        })
        .collect();
    let _ = writeln!(s, "Setups: {}", setups.join(", "));
    for st in &p.setups {
        for w in &st.warnings {
            let _ = writeln!(s, "  warning: {w}");
        }
        if !st.host.is_empty() {
            let h: Vec<String> = st
                .host
                .iter()
                .map(|h| format!("{}={}", h.key, h.value))
                .collect();
            let _ = writeln!(
                s,
                "  host tunings of {}: {} (put back after each of its rounds)",
                st.name,
                h.join(", ")
            );
        }
    }
    let ids: Vec<String> = p
        .recorded()
        .map(|w| match adapters::workload_available(w) {
            Ok(()) => w.id.clone(),
            Err(why) => format!("{} (skipped: {why})", w.id),
        })
        .collect();
    let _ = writeln!(s, "Workloads: {}", ids.join(", "));
    let mut files: Vec<(&Path, usize, std::collections::BTreeSet<usize>, bool)> = Vec::new();
    for j in p.recorded().filter_map(|w| w.fio_job.as_ref()) {
        match files.iter_mut().find(|f| f.0 == j.file.as_path()) {
            Some(f) => {
                f.1 += 1;
                f.2.insert(j.phase);
            }
            None => files.push((&j.file, 1, [j.phase].into(), j.native)),
        }
    }
    for (file, sections, phases, native) in files {
        let _ = writeln!(
            s,
            "fio job file {}: {sections} section(s) in {} phase(s), run {}; runtime=/ramp_time= as written unless --runtime/--ramp",
            file.display(),
            phases.len(),
            if native {
                "by the native engine"
            } else {
                "by fio"
            }
        );
    }
    let _ = writeln!(
        s,
        "Rounds: {} (interleaved across setups); I/O jobs run {} after a {} ramp; data file {}",
        p.rounds,
        eta::format(p.runtime),
        eta::format(p.ramp),
        format_size(p.file_size)
    );
    for line in crate::plan::steady::describe(p) {
        let _ = writeln!(s, "{line}");
    }
    let file = inv.options.out.join("results.json");
    let _ = match results {
        ResultsLine::Run => writeln!(s, "Results: {}", file.display()),
        ResultsLine::PlannedIn => writeln!(s, "Results: a run would write {}", file.display()),
        ResultsLine::PlannedDefault => writeln!(
            s,
            "Results: a run would write fsbench-results/<UTC timestamp of the run>/results.json (or --out DIR)"
        ),
    };
    let _ = writeln!(
        s,
        "Estimated time: {}",
        eta::format(eta::total(p, inv.options.target.formats()))
    );
    s
}

/// One line per step: round, setup, workload, parameters.
pub fn steps_table(inv: &Invocation) -> String {
    let p = &inv.plan;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<6} {:<16} {:<20} parameters",
        "round", "setup", "workload"
    );
    for sr in p.setup_rounds() {
        let setup = &p.setups[sr.setup];
        for w in &p.workloads {
            if w.kind == Kind::Mkfs && !inv.options.target.formats() {
                continue;
            }
            let mut params = describe(inv, w, setup);
            if !w.record {
                params.push_str("  [prerequisite, not recorded]");
            }
            let _ = writeln!(
                s,
                "{:<6} {:<16} {:<20} {params}",
                sr.round, setup.name, w.id
            );
        }
    }
    s
}

fn describe(inv: &Invocation, w: &WorkloadSpec, setup: &crate::plan::SetupSpec) -> String {
    let p = &inv.plan;
    match w.kind {
        Kind::Mkfs => {
            let mut d = format!("create {}", setup.fs);
            if !setup.mkfs.is_empty() {
                d.push_str(&format!(" mkfs {}", setup.mkfs.join(" ")));
            }
            for (k, v) in &setup.props {
                d.push_str(&format!(" -O {k}={v}"));
            }
            if let Some(m) = setup.mount_option_string() {
                d.push_str(&format!(", mount -o {m}"));
            }
            if setup.nocow() {
                d.push_str(", chattr +C data dir");
            }
            d.push_str(", then wait for a quiet device");
            d
        }
        Kind::UsableSpace => "statvfs: size, available bytes, inodes".into(),
        Kind::Compress => format!(
            "write {} of text-like data (about 2.4:1), report MiB/s and the on-disk ratio",
            format_size(w.size.unwrap_or(256 << 20))
        ),
        Kind::Probe => "capability probe on a small image of its own".into(),
        Kind::Pgbench => match &w.pgbench {
            Some(pg) => crate::workload::pgbench::describe(pg, p.runtime),
            None => String::new(),
        },
        Kind::Sqlite => match &w.sqlite {
            Some(sq) => format!(
                "SQLite journal_mode={} synchronous=FULL: {} transactions of {} inserts + {} updates, indexed table of {} rows",
                sq.journal_mode.pragma(),
                sq.transactions,
                sq.rows,
                sq.rows,
                sq.preload
            ),
            None => String::new(),
        },
        Kind::FioJob => match &w.fio_job {
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
        },
        Kind::Untar | Kind::FindCold | Kind::RmTree => {
            let source = match (&p.corpus.from_dir, &p.corpus.file) {
                (Some(d), _) => format!("corpus packed from {}", d.display()),
                (None, Some(f)) => format!("corpus from {}", f.display()),
                (None, None) => format!(
                    "corpus {} cop{} at scale {}",
                    p.corpus.copies,
                    if p.corpus.copies == 1 { "y" } else { "ies" },
                    p.corpus.scale
                ),
            };
            format!("{source}, {} thread(s)", inv.options.threads)
        }
        _ => match &w.io {
            Some(io) => {
                let size = io.size.unwrap_or(p.file_size);
                let mut d = format!(
                    "{} bs={} jobs={} qd={} size={}",
                    io.rw.as_str(),
                    format_size(io.bs),
                    io.numjobs,
                    io.iodepth,
                    format_size(size)
                );
                if io.split {
                    d.push_str(" (each job its own part)");
                }
                if io.rw.reads() && io.rw.writes() {
                    d.push_str(&format!(" read%={}", io.rwmixread));
                }
                if io.fsync > 0 {
                    d.push_str(&format!(" fsync={}", io.fsync));
                }
                d.push_str(if io.direct { " direct" } else { " buffered" });
                if io.compress > 0 {
                    d.push_str(&format!(" compressible={}%", io.compress));
                }
                if let Some(m) = w.memory_limit {
                    d.push_str(&format!(" memory cap {}", format_size(m)));
                }
                if w.kind == Kind::Layout {
                    d.push_str(" (timed, size-based)");
                    if p.precondition {
                        d.push_str(
                            ", then preconditioned (2 sequential fills, 1 random overwrite)",
                        );
                    }
                } else if let Some(st) = &p.steady {
                    d.push_str(&format!(
                        " until steady (at most {}) + {} ramp",
                        eta::format(st.max),
                        eta::format(io.ramp.unwrap_or(p.ramp))
                    ));
                } else {
                    let rt = io.runtime.unwrap_or(p.runtime);
                    let ramp = io.ramp.unwrap_or(p.ramp);
                    d.push_str(&format!(
                        " {} + {} ramp",
                        eta::format(rt),
                        eta::format(ramp)
                    ));
                }
                d
            }
            None => String::new(),
        },
    }
}

/// The equivalent fio command of every I/O job; `$MNT` is the mountpoint of the setup.
pub fn fio_script(inv: &Invocation) -> String {
    let mut s = String::from(
        "# Equivalent fio commands; MNT is the mounted filesystem under test (drop caches before each).\n",
    );
    for w in crate::runner::workload_infos(inv, Path::new("$MNT/fsbench")) {
        if let Some(cmd) = w.fio_command {
            let _ = writeln!(s, "# {}\n{cmd}", w.id);
        }
    }
    s.push_str(&fio_job_phases(inv));
    s
}

/// Each phase of every `--fio-job` file as fio will read it (after rebasing and capping),
/// with the notes saying what fsbench changed.
pub fn fio_job_phases(inv: &Invocation) -> String {
    let mut s = String::new();
    let mut seen = Vec::new();
    for w in inv.plan.recorded() {
        let Some(j) = &w.fio_job else { continue };
        let key = j.phase_key();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let members: Vec<(&str, &crate::fio::jobfile::FioJob)> = inv
            .plan
            .recorded()
            .filter_map(|x| x.fio_job.as_ref().map(|f| (x.id.as_str(), f)))
            .filter(|(_, f)| f.phase_key() == key)
            .collect();
        let ids: Vec<&str> = members.iter().map(|(id, _)| *id).collect();
        let _ = writeln!(
            s,
            "\n# {} phase {} (workloads {}): fio --output-format=json PHASE.fio, after dropping caches",
            j.file.display(),
            j.phase + 1,
            ids.join(", ")
        );
        let mut notes: Vec<&String> = Vec::new();
        for (_, f) in &members {
            for n in &f.notes {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        for n in notes {
            let _ = writeln!(s, "#   note: {n}");
        }
        let stem = j
            .file
            .file_stem()
            .map(|x| crate::fio::jobfile::section_id(&x.to_string_lossy()))
            .unwrap_or_default();
        let jobs: Vec<&crate::fio::jobfile::FioJob> = members.iter().map(|(_, f)| *f).collect();
        s.push_str(&crate::fio::jobfile::render_phase(
            &jobs,
            Some(Path::new(&format!("$MNT/fsbench/fio-{stem}"))),
        ));
    }
    s
}
