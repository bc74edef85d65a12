//! What `fsbench plan` prints, and the summary `fsbench run` starts with: the plan in a few
//! lines (profile, target, setups, workloads, sizes, estimated time), one line per step, and
//! the equivalent fio command of every I/O job. `commands::plan` resolves the flags and emits
//! these.

use crate::plan::{Invocation, WorkloadSpec, eta};
use crate::runner::{fs_available, workload_available};
use crate::workload::registry::{self, Describe, Phase};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
    let mut s = String::new();
    head_lines(&mut s, inv);
    setup_lines(&mut s, inv);
    workload_lines(&mut s, inv);
    size_lines(&mut s, inv);
    results_line(&mut s, inv, results);
    estimate_lines(&mut s, inv);
    error_line(&mut s, inv);
    // What the history store tells about this plan goes under the estimate: `fsbench plan`
    // appends it (commands/plan.rs), since the store sits above the renderer.
    s
}

/// `Plan:` and `Target:` (and when the target is RAM, that the numbers measure memory).
fn head_lines(s: &mut String, inv: &Invocation) {
    let p = &inv.plan;
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
    let in_ram = match &inv.options.target_in_ram {
        Some(fs) => format!(" — on {fs}, in RAM: the numbers measure memory, not a disk"),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "Target: {}{in_ram}",
        inv.options.multi.describe(&inv.options.target)
    );
    if p.by_step {
        let _ = writeln!(
            s,
            "  by steps: one image per setup ({}), all made at each round's start; each step then \
             runs on every setup back to back, so a ratio compares runs seconds apart",
            p.setups.len()
        );
    }
    if let Some(why) = &inv.options.by_setup_note {
        let _ = writeln!(s, "  by setup, not by steps: {why}");
    }
}

/// `Setups:` (each skipped one with why), then per setup its layout, warnings and host tunings.
fn setup_lines(s: &mut String, inv: &Invocation) {
    let p = &inv.plan;
    let setups: Vec<String> = p
        .setups
        .iter()
        .map(|st| match fs_available(&st.fs) {
            Ok(()) => st.name.clone(),
            Err(why) => format!("{} (skipped: {why})", st.name),
        })
        .collect();
    let _ = writeln!(s, "Setups: {}", setups.join(", "));
    if let Some(note) = &inv.options.default_note {
        let _ = writeln!(s, "  {note}");
    }
    for note in &inv.options.left_out {
        let _ = writeln!(s, "  {note}");
    }
    let count = inv.options.multi.count(&inv.options.target);
    for st in &p.setups {
        if let Some(line) = crate::fs::layout::describe(st, count) {
            let _ = writeln!(s, "  {line}");
        }
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
}

/// `Workloads:` (each skipped one with why), what they need, and each fio job file's sections.
fn workload_lines(s: &mut String, inv: &Invocation) {
    let p = &inv.plan;
    let ids: Vec<String> = p
        .recorded()
        .map(|w| match workload_available(w) {
            Ok(()) => w.id.clone(),
            Err(why) => format!("{} (skipped: {why})", w.id),
        })
        .collect();
    let _ = writeln!(s, "Workloads: {}", ids.join(", "));
    if let Some(line) = needs_line(inv) {
        let _ = writeln!(s, "{line}");
    }
    if p.disk_ref && p.recorded().any(|w| w.kind == crate::plan::Kind::Io) {
        let _ = writeln!(
            s,
            "  before each I/O job: 0.5 s of 4K random reads of a file beside the image, so the \
             disk's own pace can be taken out of the ratios (docs/reports.md)"
        );
    }
    let mut files: Vec<(PathBuf, usize, std::collections::BTreeSet<usize>, bool)> = Vec::new();
    for j in p.recorded().filter_map(crate::workload::fiojob::job_of) {
        match files.iter_mut().find(|f| f.0 == j.file.as_path()) {
            Some(f) => {
                f.1 += 1;
                f.2.insert(j.phase);
            }
            None => files.push((j.file.clone(), 1, [j.phase].into(), j.native)),
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
}

/// `Rounds:` with the jobs' times and the data file, then `--steady-state`'s lines.
fn size_lines(s: &mut String, inv: &Invocation) {
    let p = &inv.plan;
    let order = p
        .order_balance()
        .map(|b| format!(", setup order a Williams design: {}", b.words()))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "Rounds: {} (interleaved across setups{}{order}); I/O jobs run {} after a {} ramp; data \
         file {}",
        p.rounds,
        if p.switches.warmup {
            ", after a discarded warm-up of the first setup-round"
        } else {
            ""
        },
        eta::format(p.runtime),
        eta::format(p.ramp),
        crate::units::format_size(p.file_size)
    );
    for line in crate::plan::steady_state::describe(p) {
        let _ = writeln!(s, "{line}");
    }
}

/// `Results:`: the file this run writes, or where a run would.
fn results_line(s: &mut String, inv: &Invocation, results: ResultsLine) {
    let file = inv.options.out.join("results.json");
    let _ = match results {
        ResultsLine::Run => writeln!(s, "Results: {}", file.display()),
        ResultsLine::PlannedIn => writeln!(s, "Results: a run would write {}", file.display()),
        ResultsLine::PlannedDefault => writeln!(
            s,
            "Results: a run would write fsbench-results/<UTC timestamp of the run>/results.json (or --out DIR)"
        ),
    };
}

/// `Estimated time:`, and with `--until-settled` how far the extra rounds may go.
fn estimate_lines(s: &mut String, inv: &Invocation) {
    let p = &inv.plan;
    let minimum = eta::total(p, inv.options.target.formats());
    match p.settle {
        Some(settle) => {
            let _ = writeln!(
                s,
                "Until settled: after the {} rounds above, more rounds of the claims and \
                 headline rows still open, up to {} rounds and {} in all",
                p.rounds,
                settle.max_rounds,
                eta::format(settle.budget)
            );
            let _ = if minimum >= settle.budget {
                writeln!(
                    s,
                    "Estimated time: {} for the minimum rounds, which spend the budget: no \
                     extra round will start (raise --budget)",
                    eta::format(minimum)
                )
            } else {
                writeln!(
                    s,
                    "Estimated time: {} for the minimum rounds, {} at most (the budget)",
                    eta::format(minimum),
                    eta::format(settle.budget)
                )
            };
        }
        None => {
            let _ = writeln!(s, "Estimated time: {}", eta::format(minimum));
        }
    }
}

/// The paired noise per round `fsbench plan` prices the error controls at (log scale): a
/// stated assumption, not a measurement (by steps this VM's pairs mostly show 5–15 %).
const PRICED_NOISE: f64 = 0.10;

/// `Error:` the run's error control and what the other one would cost in rounds: the
/// headline questions the plan asks (each other setup against each timed workload's leader;
/// the claims add more), and the rounds a true 10 % difference takes at [`PRICED_NOISE`] under
/// each control ([`crate::stats::family::rounds_for_10pct`]).
fn error_line(s: &mut String, inv: &Invocation) {
    use crate::stats::family::rounds_for_10pct;
    let p = &inv.plan;
    let timed = p
        .recorded()
        .filter(|w| registry::of(w.kind).needs(w).phase == Phase::Timed)
        .count();
    let m = p.setups.len().saturating_sub(1) * timed;
    if m == 0 {
        return;
    }
    let alpha = crate::stats::sequential::DEFAULT_ALPHA;
    let (q, run) = rounds_for_10pct(PRICED_NOISE, alpha, m);
    let n = |r: Option<usize>| r.map_or("over 100".to_string(), |r| r.to_string());
    let _ = writeln!(
        s,
        "Error: {} (--error per-question|per-run): per question each decision is wrong at most \
         {:.0} %; per run ({}) the chance of any wrong decision is at most {:.0} %, each of \
         about {m} headline questions (more with claims) judged at {:.2} %. A true 10 % \
         difference at {:.0} % paired noise takes {} rounds per question, {} per run",
        p.error.word(),
        alpha * 100.0,
        crate::results::ERROR_METHOD,
        alpha * 100.0,
        alpha / m as f64 * 100.0,
        PRICED_NOISE * 100.0,
        n(q),
        n(run)
    );
}

/// What the recorded workloads need beyond a filesystem, from their registry entries: root,
/// external programs, images of their own. `None` when nothing.
fn needs_line(inv: &Invocation) -> Option<String> {
    let (mut root, mut images) = (Vec::new(), Vec::new());
    // A program several workloads need is named once, with its workloads.
    let mut tools: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    let mut recorded = 0;
    for w in inv.plan.recorded() {
        recorded += 1;
        let n = registry::of(w.kind).needs(w);
        if n.root {
            root.push(w.id.as_str());
        }
        if let Some(t) = n.tool {
            tools.entry(t).or_default().push(w.id.as_str());
        }
        if n.own_image {
            images.push(w.id.as_str());
        }
    }
    let mut parts = Vec::new();
    if !root.is_empty() && root.len() == recorded && recorded > 1 {
        parts.push("root for every workload".to_string());
    } else if !root.is_empty() {
        parts.push(format!("root for {}", root.join(", ")));
    }
    if !tools.is_empty() {
        let named: Vec<String> = tools
            .iter()
            .map(|(t, ids)| format!("{t} ({})", ids.join(", ")))
            .collect();
        parts.push(format!("programs {}", named.join(", ")));
    }
    if !images.is_empty() {
        parts.push(format!(
            "small images of their own (once per setup, first round) for {}",
            images.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| format!("Needs: {}", parts.join("; ")))
}

/// Where a step falls in its round: (a capability probe, then three places by which the
/// runner orders it).
type OrderKey = (bool, usize, usize, usize);

/// One line per step: round, setup, workload, parameters.
pub fn steps_table(inv: &Invocation) -> String {
    let p = &inv.plan;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<6} {:<16} {:<20} parameters",
        "round", "setup", "workload"
    );
    // (round, order key, setup, workload): by setup-round, or by steps (each timed step on
    // every setup of the round, a step that follows its previous one with it; then each
    // setup's probes), as the runner runs them.
    let head = registry::chain_heads(&p.workloads);
    let mut rows: Vec<(u32, OrderKey, usize, usize)> = Vec::new();
    for (place, sr) in p.setup_rounds().into_iter().enumerate() {
        let setup = &p.setups[sr.setup];
        // mkfs when the target is formatted, then the steps of this round (probes: once).
        let formats = inv.options.target.formats();
        for (i, w) in p.workloads.iter().enumerate() {
            let phase = registry::of(w.kind).needs(w).phase;
            if !(phase == Phase::Setup && formats
                || registry::step_in_round(w, &setup.name, sr.round))
            {
                continue;
            }
            let probe = phase == Phase::Capability;
            let key = match (p.by_step, probe) {
                (false, _) => (false, place, i, 0),
                (true, false) => (false, head[i], place, i),
                (true, true) => (true, place, i, 0),
            };
            rows.push((sr.round, key, sr.setup, i));
        }
    }
    rows.sort();
    for (round, _, setup, i) in rows {
        let (setup, w) = (&p.setups[setup], &p.workloads[i]);
        let mut params = describe(inv, w, setup);
        if !w.record {
            params.push_str("  [prerequisite, not recorded]");
        }
        let _ = writeln!(s, "{:<6} {:<16} {:<20} {params}", round, setup.name, w.id);
    }
    s
}

/// The step's line from its registry entry.
fn describe(inv: &Invocation, w: &WorkloadSpec, setup: &crate::plan::SetupSpec) -> String {
    let p = &inv.plan;
    let d = Describe {
        defaults: &p.job_defaults(inv.options.seed, None),
        corpus: &p.corpus,
        threads: inv.options.threads,
        setup,
    };
    registry::of(w.kind).describe(w, &d)
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
        let Some(j) = crate::workload::fiojob::job_of(w) else {
            continue;
        };
        let key = j.phase_key();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let members: Vec<(&str, crate::fio::jobfile::FioJob)> = inv
            .plan
            .recorded()
            .filter_map(|x| crate::workload::fiojob::job_of(x).map(|f| (x.id.as_str(), f)))
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
        let jobs: Vec<&crate::fio::jobfile::FioJob> = members.iter().map(|(_, f)| f).collect();
        s.push_str(&crate::fio::jobfile::render_phase(
            &jobs,
            Some(Path::new(&format!("$MNT/fsbench/fio-{stem}"))),
        ));
    }
    s
}
