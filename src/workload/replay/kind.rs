//! Registry entry of `replay`: a recorded trace replayed on every setup; and `--replay`'s
//! workloads ([`apply_flag`]).

use super::ReplayParams;
use super::exec;
use super::trace::{Class, TraceReader};
use crate::Error;
use crate::metrics::MetricId;
use crate::metrics::registry as m;
use crate::workload::api::{
    Caches, Cost, Describe, Family, Kind, Metric, Needs, Phase, Question, Workload, WorkloadOutput,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;
use std::path::{Path, PathBuf};

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// A recorded trace replayed.
    pub const Replay: Kind = Kind::named("replay");
}

impl WorkloadSpec {
    /// A replay of `params.trace`.
    pub fn replay(id: &str, params: ReplayParams) -> Self {
        WorkloadSpec::simple(id, Kind::Replay).with_params(&params)
    }
}

/// Replays a trace `fsbench record` wrote.
pub struct Replay;

fn params(w: &WorkloadSpec) -> crate::Result<ReplayParams> {
    w.params_of::<ReplayParams>()
        .ok_or_else(|| Error::workload(&w.id, "no replay parameters"))
}

/// Where the replay's tree lives in the step's directory.
fn tree(cx: &StepContext<'_>, w: &WorkloadSpec) -> PathBuf {
    cx.work.dir.join(format!("replay-{}", w.id))
}

fn open(w: &WorkloadSpec, path: &Path) -> crate::Result<TraceReader> {
    TraceReader::open(path).map_err(|e| Error::workload(&w.id, format!("{}: {e}", path.display())))
}

impl Workload for Replay {
    fn kind(&self) -> Kind {
        Kind::Replay
    }
    fn flags(&self) -> &'static [crate::workload::api::KindFlag] {
        &[super::speed::FLAG, super::compressibility::FLAG]
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("trace", "the trace file fsbench record wrote"),
            (
                "name",
                "what reports call it (default: the trace's own name)",
            ),
            (
                "timing",
                "as-fast-as-possible (the default) or as-recorded (think times kept)",
            ),
            ("speed", "as-recorded at this speed (2: twice as fast)"),
            (
                "compress",
                "percentage of each 4 KiB block of the recreated files and the writes that compresses (default 0: incompressible)",
            ),
        ]
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.params_of::<ReplayParams>())
            .unwrap_or(ReplayParams {
                trace: PathBuf::new(),
                name: None,
                speed: None,
                compress: None,
            });
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn family(&self) -> Family {
        Family::Application
    }
    /// `NAME (replay)`, short `NAME`: the trace's name (the workload's `name` key, else the
    /// one `fsbench record` stored), so the verdict reads "Your workload (NAME)".
    fn named(&self, params: &serde_json::Value) -> Option<(String, String)> {
        let name = params
            .get("kind_params")
            .unwrap_or(params)
            .get("name")?
            .as_str()?;
        Some((format!("{name} (replay)"), name.to_string()))
    }
    /// Its own verdict line, first: the question the user came with.
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Yours
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            phase: Phase::Timed,
            ..Needs::WRITES
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        &[
            m::SECONDS,
            m::REPLAY_CALLS_PER_S,
            m::REPLAY_READ_P50_MS,
            m::REPLAY_READ_P99_MS,
            m::REPLAY_WRITE_P50_MS,
            m::REPLAY_WRITE_P99_MS,
            m::REPLAY_FSYNC_P50_MS,
            m::REPLAY_FSYNC_P99_MS,
            m::REPLAY_OPEN_P50_MS,
            m::REPLAY_OPEN_P99_MS,
            m::REPLAY_NAMESPACE_P50_MS,
            m::REPLAY_NAMESPACE_P99_MS,
            m::REPLAY_WRITE_BYTES,
            m::REPLAY_DIVERGED,
            m::REPLAY_END_MISMATCHES,
            m::REPLAY_NOT_REPLAYABLE,
            m::DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"replay-app\"\nkind = \"replay\"\ntrace = \"app.trace.gz\"\nname = \"my app\""
    }
    /// The recorded calls replayed: a few seconds for a short recording.
    /// The recorded span (divided by the speed when paced): the application's own time on
    /// the filesystem it was recorded on. As fast as possible, a replay took 0.4–1.4 times it
    /// on ext4, XFS and Btrfs (docs/replay.md's PostgreSQL run), so the span is the estimate
    /// with the least to assume; a flat 5 s had put that run's estimate at a third of its time.
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        let paced = w.params_of::<ReplayParams>().and_then(|p| {
            let span = super::summary_of(&p.trace).ok()?.span_us as f64 / 1e6;
            Some(span / p.speed.unwrap_or(1.0))
        });
        // Recreating the starting tree and dropping caches come on top.
        Cost::Seconds(paced.unwrap_or(5.0) + 2.0)
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        match w.params_of::<ReplayParams>() {
            Some(p) => format!(
                "{} (replay) of {}{} (starting tree recreated with {}, caches dropped, each recorded thread on its own thread in its recorded order, {})",
                p.name.as_deref().unwrap_or("trace"),
                p.trace.display(),
                // What the trace holds; an unreadable one is refused by the host check.
                super::summary_of(&p.trace)
                    .map(|s| format!(": {}", s.line()))
                    .unwrap_or_default(),
                p.fill(0).describe(),
                match p.speed {
                    None => "as fast as possible".to_string(),
                    Some(x) => format!("as recorded, think times kept, at {x}× speed"),
                }
            ),
            None => String::new(),
        }
    }
    fn check_host(&self, w: &WorkloadSpec) -> Result<(), String> {
        let p = w
            .params_of::<ReplayParams>()
            .ok_or("no replay parameters")?;
        super::check_trace(&p.trace)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn available(&self, w: &WorkloadSpec) -> Result<(), String> {
        match w.params_of::<ReplayParams>() {
            Some(p) if p.trace.is_file() => Ok(()),
            Some(p) => Err(format!("trace {} not found", p.trace.display())),
            None => Err("no replay parameters".into()),
        }
    }
    /// The starting tree is recreated before the step, untimed; then the caches are dropped.
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        let p = params(w)?;
        let r = open(w, &p.trace)?;
        exec::recreate(&tree(cx, w), &r.start, p.fill(cx.work.seed))?;
        Ok(Caches::Drop)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p = params(w)?;
        let dir = tree(cx, w);
        // The recorded threads, counted once per trace (one replays serially).
        let threads = super::threads_of(&p.trace)?;
        let mut r = open(w, &p.trace)?;
        let done = exec::replay(&dir, &mut r, p.fill(cx.work.seed), p.speed, threads)?;
        let summary = super::summary_of(&p.trace)?;
        let not_replayable: u64 = r
            .trailer
            .as_ref()
            .map_or(0, |t| t.not_replayable.values().sum());
        let _ = std::fs::remove_dir_all(&dir);
        let mut out = output(&done, not_replayable);
        out.notes
            .insert(0, format!("trace {}: {}", summary.name, summary.line()));
        Ok(out)
    }
}

/// The step's metrics and notes from one replay.
fn output(done: &exec::Replayed, not_replayable: u64) -> WorkloadOutput {
    let secs = done.elapsed.as_secs_f64();
    let mut metrics = vec![
        Metric::new(m::SECONDS, "s", secs),
        Metric::new(
            m::REPLAY_CALLS_PER_S,
            "calls/s",
            done.calls as f64 / secs.max(1e-9),
        ),
        Metric::new(m::REPLAY_WRITE_BYTES, "bytes", done.write_bytes as f64),
        Metric::new(m::REPLAY_DIVERGED, "count", done.diverged as f64),
        Metric::new(
            m::REPLAY_END_MISMATCHES,
            "count",
            done.end_mismatches.len() as f64,
        ),
        Metric::new(m::REPLAY_NOT_REPLAYABLE, "count", not_replayable as f64),
    ];
    for (class, ids) in [
        (Class::Read, [m::REPLAY_READ_P50_MS, m::REPLAY_READ_P99_MS]),
        (
            Class::Write,
            [m::REPLAY_WRITE_P50_MS, m::REPLAY_WRITE_P99_MS],
        ),
        (
            Class::Fsync,
            [m::REPLAY_FSYNC_P50_MS, m::REPLAY_FSYNC_P99_MS],
        ),
        (Class::Open, [m::REPLAY_OPEN_P50_MS, m::REPLAY_OPEN_P99_MS]),
        (
            Class::Namespace,
            [m::REPLAY_NAMESPACE_P50_MS, m::REPLAY_NAMESPACE_P99_MS],
        ),
    ] {
        if let Some(h) = done.hist.get(&class).filter(|h| h.count() > 0) {
            for (id, q) in ids.into_iter().zip([0.5, 0.99]) {
                metrics.push(Metric::new(id, "ms", h.quantile(q) as f64 / 1e6));
            }
        }
    }
    let mut notes = vec![if done.lanes > 1 {
        format!(
            "replayed {} calls on {} threads, each recorded thread's order kept and across threads the shared files' and names' order",
            done.calls, done.lanes
        )
    } else {
        format!("replayed {} calls serially in recorded order", done.calls)
    }];
    if done.diverged > 0 {
        notes.push(format!(
            "{} calls ended unlike the recording, e.g. {}",
            done.diverged,
            done.diverged_examples.join("; ")
        ));
    }
    if !done.end_mismatches.is_empty() {
        let shown: Vec<&str> = done
            .end_mismatches
            .iter()
            .take(5)
            .map(String::as_str)
            .collect();
        // Calls the replay could not issue change sizes the end state was scanned with: say
        // so with the difference, so it is not read as the filesystem's doing.
        let why = if not_replayable > 0 {
            format!(
                " (the trace holds {not_replayable} calls replay cannot issue — writes through \
                 mmap, io_uring, passed descriptors —, which can account for sizes)"
            )
        } else {
            String::new()
        };
        notes.push(format!(
            "end state differs from the recording in {} entries{why}: {}",
            done.end_mismatches.len(),
            shown.join("; ")
        ));
    }
    if not_replayable > 0 {
        notes.push(format!(
            "{not_replayable} recorded calls could not be replayed (mmap I/O, io_uring, fd passing)"
        ));
    }
    WorkloadOutput {
        metrics,
        notes,
        ..Default::default()
    }
}

/// `--replay FILE…`: one `replay` workload per trace, named `replay-<its name>`, added to
/// the plan's workloads (without a plan file or profile, `commands::prepare::prepare` keeps only
/// `usable-space` and `mkfs` of the catalog, so a run is the setups and the traces). Each trace is read to its
/// end first: a bad one is exit 2 naming its line, before anything is created. They are added
/// before the kinds' flags are applied, so `--replay-speed` paces them too (`super::speed`).
pub fn apply_flag(workloads: &mut Vec<WorkloadSpec>, files: &[PathBuf]) -> crate::Result<()> {
    for f in files {
        let path = std::fs::canonicalize(f)
            .map_err(|e| Error::invalid("--replay", format!("{}: {e}", f.display())))?;
        let (header, _) = super::check_trace(&path)?;
        let base: String = header
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let base = format!("replay-{}", base.trim_matches('-'));
        let mut id = base.clone();
        let mut n = 2;
        while workloads.iter().any(|w| w.id == id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        workloads.push(WorkloadSpec::replay(
            &id,
            ReplayParams {
                trace: path,
                name: Some(header.name),
                speed: None,
                compress: None,
            },
        ));
    }
    for w in workloads.iter_mut().filter(|w| w.kind == Kind::Replay) {
        let mut p = params(w)?;
        // A plan file's replay without `name` is called by its trace's (what the report
        // names it by); a trace that cannot be read is left to the host check's refusal.
        if p.name.is_none() {
            p.name = super::summary_of(&p.trace).ok().map(|s| s.name);
        }
        w.set_params(&p);
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A replay workload of a trace named pgbench (the kind's flags' tests use it too).
    pub(in crate::workload::replay) fn spec(id: &str) -> WorkloadSpec {
        WorkloadSpec::replay(
            id,
            ReplayParams {
                trace: PathBuf::from("app.trace.gz"),
                name: Some("pgbench".into()),
                speed: None,
                compress: None,
            },
        )
    }

    #[test]
    fn a_replay_is_named_after_its_trace() {
        let w = spec("replay-pgbench");
        let params = serde_json::to_value(&w).unwrap();
        assert_eq!(
            Replay.named(&params),
            Some(("pgbench (replay)".to_string(), "pgbench".to_string()))
        );
        assert_eq!(Replay.named(&serde_json::Value::Null), None);
    }
}
