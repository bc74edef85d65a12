//! The runner without root: a directory target (no mkfs, no device) and the FAKE workload
//! (`workload::fake`, compiled into unit tests only) show the interleaving of setups across
//! rounds, the skip of a setup or workload this machine cannot run, that one failing step
//! stops nothing else, and that a resumed run redoes only the round an interrupt cut short.
//! The FAKE filesystem (`fs::drivers::fake`, registered by the test) on a plain file standing in for
//! the device runs the formatting branch too: discard, mkfs + mount, quiesce, workloads,
//! release, every round.

use super::execute;
use crate::fs::SetupSpec;
use crate::metrics::registry::SECONDS;
use crate::plan::{Invocation, Overrides, WorkloadSpec};
use crate::scratch::Target;
use crate::workload::fake::{self, Action};
use crate::workload::registry::Kind;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// A plan on a fresh directory target: `setups` as (name, filesystem), `workloads` fake ids.
fn invocation(
    root: &std::path::Path,
    setups: &[(&str, &str)],
    workloads: &[&str],
    rounds: u32,
) -> Invocation {
    let target = root.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let o = Overrides {
        dir: Some(target),
        out: Some(root.join("out")),
        values: crate::plan::PlanValues {
            rounds: Some(rounds),
            ..Default::default()
        },
        ..Default::default()
    };
    let src = crate::plan::resolve::Source::read(&o).unwrap();
    let mut inv =
        crate::plan::resolve::resolve(&src, &o, &crate::host::facts::HostFacts::fixed(), vec![])
            .unwrap();
    // A directory target has one setup; the runner itself takes any number of them.
    inv.plan.setups = setups
        .iter()
        .map(|(name, fs)| SetupSpec {
            name: name.to_string(),
            ..SetupSpec::plain(fs)
        })
        .collect();
    inv.plan.workloads = workloads
        .iter()
        .map(|id| WorkloadSpec::simple(id, Kind::TestFake))
        .collect();
    inv
}

/// `(setup, workload, round)` of every sample, sorted.
fn sampled(r: &crate::results::Results) -> Vec<(String, String, u32)> {
    let mut v: Vec<_> = r
        .samples
        .iter()
        .map(|s| (s.setup.clone(), s.workload.clone(), s.round))
        .collect();
    v.sort();
    v
}

#[test]
fn setups_interleave_by_round_and_a_failure_or_a_skip_stops_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let inv = invocation(
        d.path(),
        &[("a", "dir"), ("gone", "no-such-fs"), ("b", "dir")],
        &["fake-i-ok", "fake-i-fails", "fake-i-unavailable"],
        3,
    );
    fake::script("fake-i-fails", "b", 2, Action::Fail);
    let out = execute(&inv, false).unwrap();
    assert!(!out.interrupted);
    // Round by round, every runnable setup once, each workload of a setup-round in plan order;
    // the setup order rotates one place per round (a, gone, b; then gone, b, a; then b, a, gone).
    let want: Vec<String> = (1..=3)
        .flat_map(|r| {
            (if r == 1 { ["a", "b"] } else { ["b", "a"] })
                .into_iter()
                .flat_map(move |s| ["fake-i-ok", "fake-i-fails"].map(|w| format!("{w}@{s}#{r}")))
        })
        .collect();
    assert_eq!(fake::calls("fake-i-"), want);
    let order: Vec<(u32, Vec<String>)> = out
        .results
        .setup_order
        .iter()
        .map(|o| (o.round, o.setups.clone()))
        .collect();
    let names = |v: [&str; 2]| v.map(String::from).to_vec();
    assert_eq!(
        order,
        [
            (1, names(["a", "b"])),
            (2, names(["b", "a"])),
            (3, names(["b", "a"]))
        ],
        "recorded in results.json"
    );
    // The one scripted failure is recorded; the step after it and the later rounds ran.
    let failures: Vec<_> = out
        .results
        .failures
        .iter()
        .map(|f| (f.setup.as_str(), f.workload.as_str(), f.round))
        .collect();
    assert_eq!(failures, [("b", "fake-i-fails", 2)]);
    let s = sampled(&out.results);
    assert_eq!(s.len(), 11, "{s:?}");
    assert!(!s.contains(&("b".into(), "fake-i-fails".into(), 2)));
    // The setup without a driver and the workload that cannot run are skipped, and said so.
    let said = |what: &str| {
        out.results
            .warnings
            .iter()
            .any(|w| w.message.contains(what) && w.message.contains("skipped"))
    };
    assert!(said("setup gone"), "{:?}", out.results.warnings);
    assert!(said("workload fake-i-unavailable"));
    assert!(
        !s.iter()
            .any(|(setup, w, _)| setup == "gone" || w.ends_with("unavailable"))
    );
}

#[test]
fn a_warm_up_runs_the_first_setup_round_once_and_keeps_nothing_of_it() {
    let d = tempfile::tempdir().unwrap();
    let mut inv = invocation(
        d.path(),
        &[("a", "dir"), ("b", "dir")],
        &["fake-w-ok", "fake-w-fails"],
        2,
    );
    inv.plan.switches.warmup = true;
    // A failure in the warm-up is not the run's: round 1 meets it again if it is real.
    fake::script("fake-w-fails", "a", 0, Action::Fail);
    let out = execute(&inv, false).unwrap();
    assert_eq!(
        fake::calls("fake-w-"),
        [
            "fake-w-ok@a#0",
            "fake-w-fails@a#0",
            "fake-w-ok@a#1",
            "fake-w-fails@a#1",
            "fake-w-ok@b#1",
            "fake-w-fails@b#1",
            "fake-w-ok@b#2",
            "fake-w-fails@b#2",
            "fake-w-ok@a#2",
            "fake-w-fails@a#2"
        ]
    );
    assert!(sampled(&out.results).iter().all(|(_, _, r)| *r >= 1));
    assert_eq!(sampled(&out.results).len(), 8);
    assert!(
        out.results.failures.is_empty(),
        "{:?}",
        out.results.failures
    );
    let note = out
        .results
        .notes
        .iter()
        .find(|n| n.message.starts_with("warm-up:"))
        .expect("the warm-up is said");
    assert_eq!(note.setup, "a");
    assert!(
        note.message.contains("1 failed step(s)"),
        "{}",
        note.message
    );
}

#[test]
fn a_coordinated_run_kept_in_memory_keeps_every_ranks_measurement_and_writes_no_out() {
    let d = tempfile::tempdir().unwrap();
    let mut inv = invocation(d.path(), &[("a", "dir")], &["fake-c-ok", "fake-c-fails"], 2);
    inv.options.in_memory = true;
    fake::script("fake-c-fails", "a", 1, Action::Fail);
    // A process alone is a coordinator of one rank: every step goes through the coordinated
    // phases, as each MPI rank's does.
    let out = super::execute_with(&inv, false, Some(&crate::engine::Alone)).unwrap();
    assert!(
        !inv.options.out.exists(),
        "kept in memory: no OUT (plan.json, journal, results.json)"
    );
    let ranks: Vec<_> = out
        .results
        .ranks
        .iter()
        .map(|r| (r.setup.as_str(), r.workload.as_str(), r.round, r.rank))
        .collect();
    assert_eq!(
        ranks,
        [
            ("a", "fake-c-ok", 1, 0),
            ("a", "fake-c-ok", 2, 0),
            ("a", "fake-c-fails", 2, 0)
        ],
        "one record per rank and step that ran, none for the failed step"
    );
    for r in &out.results.ranks {
        // The rank's own value, which the step's all-ranks sample was reduced from (one
        // rank: the same, up to the reduction's arithmetic).
        let sample = out
            .results
            .samples
            .iter()
            .find(|s| s.workload == r.workload && s.round == r.round && s.metric == SECONDS)
            .map(|s| s.value);
        let own = r.get(SECONDS);
        assert!(
            matches!((own, sample), (Some(a), Some(b)) if (a - b).abs() < 1e-9),
            "{r:?} {sample:?}"
        );
        assert!(r.end_s >= r.start_s, "{r:?}");
    }
    assert_eq!(out.results.failures.len(), 1);
    // A process on its own (no coordinator) keeps no per-rank records.
    let d = tempfile::tempdir().unwrap();
    let alone = execute(
        &invocation(d.path(), &[("a", "dir")], &["fake-c-ok"], 1),
        false,
    );
    assert!(alone.unwrap().results.ranks.is_empty());
}

#[test]
fn a_resumed_run_redoes_only_the_round_an_interrupt_cut_short() {
    let d = tempfile::tempdir().unwrap();
    let inv = invocation(
        d.path(),
        &[("a", "dir"), ("b", "dir")],
        &["fake-r-first", "fake-r-second"],
        2,
    );
    fake::script("fake-r-second", "b", 1, Action::InterruptOnce);
    let first = execute(&inv, false).unwrap();
    assert!(first.interrupted);
    assert_eq!(
        fake::calls("fake-r-"),
        [
            "fake-r-first@a#1",
            "fake-r-second@a#1",
            "fake-r-first@b#1",
            "fake-r-second@b#1"
        ]
    );
    // A fresh run refuses the directory that holds the journal; a resume continues it.
    assert_eq!(execute(&inv, false).unwrap_err().exit_code(), 2);
    let second = execute(&inv, true).unwrap();
    assert!(!second.interrupted);
    // a#1 finished before the interrupt: not run again; b#1 from its start, then round 2
    // (rotated: b first).
    assert_eq!(
        fake::calls("fake-r-")[4..],
        [
            "fake-r-first@b#1",
            "fake-r-second@b#1",
            "fake-r-first@b#2",
            "fake-r-second@b#2",
            "fake-r-first@a#2",
            "fake-r-second@a#2"
        ]
    );
    // Every setup-round's steps once: the cut round's first step is not counted twice.
    let mut want = Vec::new();
    for s in ["a", "b"] {
        for w in ["fake-r-first", "fake-r-second"] {
            for r in 1..=2 {
                want.push((s.to_string(), w.to_string(), r));
            }
        }
    }
    want.sort();
    assert_eq!(sampled(&second.results), want);
}

thread_local! {
    /// The target the next run on this thread uses instead of acquiring one
    /// (`super::acquire_target`).
    pub(super) static TEST_TARGET: RefCell<Option<Box<dyn Target>>> = const { RefCell::new(None) };
}

/// A formatting target whose "block devices" are plain files: what the fake filesystem
/// formats. Discard empties them, so each round's mkfs starts on a blank device.
struct FileTarget {
    file: PathBuf,
    /// Every device, `file` first (one image per setup when a round runs by steps).
    files: Vec<PathBuf>,
}

impl FileTarget {
    fn new(files: &[PathBuf]) -> FileTarget {
        FileTarget {
            file: files[0].clone(),
            files: files.to_vec(),
        }
    }
}

impl Target for FileTarget {
    fn info(&self) -> crate::results::TargetInfo {
        crate::results::TargetInfo {
            kind: "image".into(),
            path: self.file.display().to_string(),
            ..Default::default()
        }
    }
    fn block_device(&self) -> Option<&Path> {
        Some(&self.file)
    }
    fn block_devices(&self) -> Vec<PathBuf> {
        self.files.clone()
    }
    fn directory(&self) -> Option<&Path> {
        None
    }
    fn check_identity(&self) -> crate::Result<()> {
        Ok(())
    }
    fn discard(&self) -> crate::Result<bool> {
        for f in &self.files {
            std::fs::write(f, b"").map_err(|e| crate::Error::io("cannot blank", f, e))?;
        }
        Ok(true)
    }
}

#[test]
fn a_fake_filesystem_runs_every_round_through_the_mkfs_branch_without_root() {
    use crate::fs::drivers::fake as fakefs;
    crate::fs::register_for_test(&fakefs::FakeFs);
    let d = tempfile::tempdir().unwrap();
    let mut inv = invocation(d.path(), &[("f", fakefs::NAME)], &["fake-m-ok"], 2);
    // A formatting target: the runner takes the mkfs branch, on a plain file.
    inv.options.target = crate::scratch::TargetKind::Image {
        scratch_dir: d.path().to_path_buf(),
        size: 1 << 20,
        keep: false,
    };
    inv.plan.quiet.window = std::time::Duration::from_millis(10);
    inv.plan.quiet.timeout = std::time::Duration::from_millis(50);
    inv.plan.quiet.threshold = u64::MAX;
    let device = d.path().join("device");
    std::fs::write(&device, b"old contents").unwrap();
    TEST_TARGET
        .with(|t| *t.borrow_mut() = Some(Box::new(FileTarget::new(std::slice::from_ref(&device)))));
    let out = execute(&inv, false).unwrap();
    assert!(!out.interrupted);
    assert!(
        out.results.failures.is_empty(),
        "{:?}",
        out.results.failures
    );
    // Each round: made (on the blank device), mounted, measured, released; the driver's
    // service hold taken before the first and let go after the last.
    assert_eq!(
        fakefs::log(),
        [
            "hold",
            "mkfs f",
            "mount f",
            "release f",
            "mkfs f",
            "mount f",
            "release f",
            "let go"
        ]
    );
    assert_eq!(fake::calls("fake-m-"), ["fake-m-ok@f#1", "fake-m-ok@f#2"]);
    let on_disk = std::fs::read_to_string(&device).unwrap();
    assert_eq!(on_disk, format!("{}f\n", fakefs::MARKER));
    // The mkfs step recorded the setup as the driver made and mounted it.
    let info = out.results.setups.iter().find(|s| s.name == "f").unwrap();
    assert_eq!(info.fs, fakefs::NAME);
    assert_eq!(
        info.mkfs_args,
        ["fake-mkfs".to_string(), device.display().to_string()]
    );
    assert_eq!(info.implementation, "fake (tests)");
    assert_eq!(info.mount_opts, "fake");
    assert_eq!(
        info.properties.get("fake.marker").map(String::as_str),
        Some("yes")
    );
    let s = sampled(&out.results);
    assert!(s.contains(&("f".into(), "fake-m-ok".into(), 1)), "{s:?}");
    assert!(s.contains(&("f".into(), "fake-m-ok".into(), 2)), "{s:?}");
    assert!(
        TEST_TARGET.with(|t| t.borrow().is_none()),
        "the run took the target"
    );
}

#[test]
fn by_steps_each_step_runs_on_every_setup_back_to_back_and_a_resume_redoes_the_cut_round() {
    use crate::fs::drivers::fake as fakefs;
    crate::fs::register_for_test(&fakefs::FakeFs);
    let d = tempfile::tempdir().unwrap();
    let mut inv = invocation(
        d.path(),
        &[("f", fakefs::NAME), ("g", fakefs::NAME)],
        &["fake-s-a", "fake-s-b"],
        2,
    );
    inv.options.target = crate::scratch::TargetKind::Image {
        scratch_dir: d.path().to_path_buf(),
        size: 1 << 20,
        keep: false,
    };
    inv.plan.by_step = true;
    inv.plan.quiet.window = std::time::Duration::from_millis(10);
    inv.plan.quiet.timeout = std::time::Duration::from_millis(50);
    inv.plan.quiet.threshold = u64::MAX;
    let devices = [d.path().join("image0"), d.path().join("image1")];
    let target = || {
        TEST_TARGET.with(|t| *t.borrow_mut() = Some(Box::new(FileTarget::new(&devices))));
    };
    // Round 2 (rotated: g first) is cut by an interrupt in f's second step.
    fake::script("fake-s-b", "f", 2, Action::InterruptOnce);
    target();
    let first = execute(&inv, false).unwrap();
    assert!(first.interrupted);
    assert_eq!(
        fake::calls("fake-s-"),
        [
            "fake-s-a@f#1",
            "fake-s-a@g#1",
            "fake-s-b@f#1",
            "fake-s-b@g#1",
            "fake-s-a@g#2",
            "fake-s-a@f#2",
            "fake-s-b@g#2",
            "fake-s-b@f#2"
        ]
    );
    // Both setups made before the first step, both released after the last or at the
    // interrupt: every mkfs has its release.
    let log = fakefs::log();
    assert_eq!(
        log[..5],
        ["hold", "mkfs f", "mount f", "mkfs g", "mount g"],
        "{log:?}"
    );
    let count = |p: &str| log.iter().filter(|l| l.starts_with(p)).count();
    assert_eq!(count("mkfs "), 4, "{log:?}");
    assert_eq!(count("release "), 4, "{log:?}");
    // Each setup on the image at its place in the round's order: round 2 put g first.
    let on = |i: usize| std::fs::read_to_string(&devices[i]).unwrap();
    assert_eq!(on(0), format!("{}g\n", fakefs::MARKER));
    assert_eq!(on(1), format!("{}f\n", fakefs::MARKER));
    // The resume redoes round 2 of both (neither had finished), by steps, and round 1 of
    // neither.
    target();
    let second = execute(&inv, true).unwrap();
    assert!(!second.interrupted);
    assert_eq!(
        fake::calls("fake-s-")[8..],
        [
            "fake-s-a@g#2",
            "fake-s-a@f#2",
            "fake-s-b@g#2",
            "fake-s-b@f#2"
        ]
    );
    let mut want = Vec::new();
    for s in ["f", "g"] {
        for w in ["fake-s-a", "fake-s-b"] {
            for r in 1..=2 {
                want.push((s.to_string(), w.to_string(), r));
            }
        }
    }
    want.sort();
    assert_eq!(sampled(&second.results), want);
}
