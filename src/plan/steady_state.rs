//! `--steady-state` / `--precondition` (and the plan-file keys `steady_state`, `steady_max`,
//! `precondition`) resolved into the plan: flags win over the plan file; refusals name the flag.

use super::EngineChoice;
use crate::Error;
use crate::engine::SteadySpec;
use crate::engine::until_steady::Conditioning;
use crate::scratch::TargetKind;

/// Run-until-steady for the plan: the flags', else the plan file's; checked (every value, in
/// [`SteadySpec::check`]) and against the engine; told what the target's flash went through
/// (on a device, steady state is claimed only after `--precondition`).
pub fn resolve_steady(
    flag: Option<SteadySpec>,
    file: Option<SteadySpec>,
    engine: EngineChoice,
    target: &TargetKind,
    precondition: bool,
) -> crate::Result<Option<SteadySpec>> {
    let Some(s) = flag.or(file) else {
        return Ok(None);
    };
    s.check()?;
    if engine == EngineChoice::Fio {
        return Err(Error::invalid(
            "--steady-state",
            "stops a job once it is steady, which only fsbench's own engine can do; drop --engine fio",
        ));
    }
    let c = match (target, precondition) {
        (TargetKind::Device { .. }, true) => Conditioning::Preconditioned,
        (TargetKind::Device { .. }, false) => Conditioning::NotPreconditioned,
        _ => Conditioning::NotADevice,
    };
    Ok(Some(s.on(c)))
}

/// Whether to precondition: only on a real device (`--device`); an image on a loop device
/// has no flash whose state could be conditioned, and `--dir` is someone else's filesystem.
pub fn resolve_precondition(flag: bool, file: bool, target: &TargetKind) -> crate::Result<bool> {
    if !(flag || file) {
        return Ok(false);
    }
    match target {
        TargetKind::Device { .. } => Ok(true),
        TargetKind::Image { .. } => Err(Error::invalid(
            "--precondition",
            "conditions an SSD's flash and needs --device; the default loop image is a sparse \
             file in the page cache with nothing to wear in (drop --precondition or give --device)",
        )),
        _ => Err(Error::invalid(
            "--precondition",
            "needs --device (a scratch SSD); --dir benchmarks an existing filesystem as it is",
        )),
    }
}

/// What `fsbench plan` says about these two options (nothing when neither is on).
pub fn describe(plan: &super::Plan) -> Vec<String> {
    let mut out = Vec::new();
    let fmt = |s: f64| super::eta::format(std::time::Duration::from_secs_f64(s));
    if let Some(s) = &plan.steady {
        let limit = if s.quick {
            format!("at most {}", super::eta::format(s.limit()))
        } else {
            format!(
                "at most {} rounds ({})",
                s.round_limit(),
                super::eta::format(s.limit())
            )
        };
        let claim = match s.conditioning {
            Conditioning::Preconditioned => "claimed after the preconditioning below",
            Conditioning::NotPreconditioned => {
                "not claimed on this device without --precondition (reported as \"not \
                 preconditioned\")"
            }
            Conditioning::NotADevice => {
                "not claimed on an image or --dir: their caches make the rounds a stability check"
            }
        };
        out.push(format!(
            "Steady state: each I/O job runs until its IOPS hold steady ({}, {}), {limit}; \
             IOPS, MiB/s and latency are over those rounds; steady state {claim} (the estimate \
             counts the limit)",
            s.criteria_text(),
            s.rule_name(),
        ));
    }
    if let Some(cap) = plan.precondition_device {
        out.push(format!(
            "Preconditioning the device: once, before the first mkfs, {} × its {} in 128 KiB \
             sequential writes, about {} ({} × capacity ÷ {:.0} MiB/s; counted in the estimate)",
            crate::workload::precondition::DEVICE_PASSES,
            crate::units::format_size(cap),
            fmt(crate::workload::precondition::device_estimate_s(cap)),
            crate::workload::precondition::DEVICE_PASSES,
            crate::workload::precondition::SEQ_BPS / 1048576.0,
        ));
    }
    if plan.precondition {
        let est = crate::workload::precondition::estimate_s(plan.file_size);
        out.push(format!(
            "Preconditioning the data file: in every setup-round, after the layout, 2 sequential \
             fills and a random 4 KiB overwrite of the {} data file, about {} per setup-round \
             (2 × size ÷ {:.0} MiB/s + size ÷ {:.0} MiB/s; counted in the estimate)",
            crate::units::format_size(plan.file_size),
            fmt(est),
            crate::workload::precondition::SEQ_BPS / 1048576.0,
            crate::workload::precondition::RAND_BPS / 1048576.0,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn flags_win_fio_is_refused_and_the_target_decides_the_claim() {
        let dev = TargetKind::Device {
            path: PathBuf::from("/dev/nvme9n1"),
            force_wipe: false,
        };
        let img = TargetKind::Image {
            scratch_dir: PathBuf::from("/var/tmp"),
            size: 8 << 30,
            keep: false,
        };
        let a = SteadySpec::default();
        let b = SteadySpec {
            max: Duration::from_secs(600),
            ..a
        };
        let r = |f, p, e, t| resolve_steady(f, p, e, t, false);
        assert_eq!(
            r(Some(a), Some(b), EngineChoice::Fsbench, &img).unwrap(),
            Some(a)
        );
        assert_eq!(
            r(None, Some(b), EngineChoice::Fsbench, &img).unwrap(),
            Some(b)
        );
        assert_eq!(r(None, None, EngineChoice::Fio, &img).unwrap(), None);
        let e = r(Some(a), None, EngineChoice::Fio, &img).unwrap_err();
        assert!(e.to_string().contains("--engine fio"), "{e}");
        let short = SteadySpec {
            max: Duration::from_secs(2),
            ..a
        };
        assert!(r(Some(short), None, EngineChoice::Fsbench, &img).is_err());
        let on = |t, p| {
            resolve_steady(Some(a), None, EngineChoice::Fsbench, t, p)
                .unwrap()
                .unwrap()
                .conditioning
        };
        assert_eq!(on(&img, false), Conditioning::NotADevice);
        assert_eq!(on(&dev, false), Conditioning::NotPreconditioned);
        assert_eq!(on(&dev, true), Conditioning::Preconditioned);
    }

    #[test]
    fn precondition_needs_a_device() {
        let dev = TargetKind::Device {
            path: PathBuf::from("/dev/nvme9n1"),
            force_wipe: false,
        };
        let img = TargetKind::Image {
            scratch_dir: PathBuf::from("/var/tmp"),
            size: 8 << 30,
            keep: false,
        };
        assert!(resolve_precondition(true, false, &dev).unwrap());
        assert!(resolve_precondition(false, true, &dev).unwrap());
        assert!(!resolve_precondition(false, false, &img).unwrap());
        let e = resolve_precondition(true, false, &img).unwrap_err();
        assert!(e.to_string().contains("--device"), "{e}");
    }

    /// `fsbench plan` flags through the real resolver (no device needed for these).
    fn resolved(extra: &[&str]) -> crate::Result<crate::plan::Invocation> {
        use crate::cli::{Cli, Command};
        use clap::Parser;
        let mut v = vec!["fsbench", "plan", "--fs", "ext4"];
        v.extend_from_slice(extra);
        let Command::Plan(a) = Cli::try_parse_from(v).unwrap().command else {
            unreachable!()
        };
        let o = a.plan.overrides();
        let host = crate::host::facts::HostFacts::fixed();
        crate::plan::resolve::Source::read(&o)
            .and_then(|src| crate::plan::resolve::resolve(&src, &o, &host, vec![]))
    }

    #[test]
    fn flags_and_plan_file_keys_reach_the_plan_and_the_jobs() {
        let inv = resolved(&[
            "--steady-state",
            "--steady-round",
            "10s",
            "--steady-max",
            "90s",
        ])
        .unwrap();
        let s = inv.plan.steady.unwrap();
        assert_eq!(
            (s.criteria, s.max, s.round, s.round_limit()),
            (
                Default::default(),
                Duration::from_secs(90),
                Duration::from_secs(10),
                9
            )
        );
        let d = inv.plan.job_defaults(1, None);
        let rw = inv
            .plan
            .workloads
            .iter()
            .find(|w| w.id == "randwrite")
            .unwrap();
        let job = rw.job_spec(std::path::Path::new("/mnt"), &d).unwrap();
        assert_eq!(job.steady, Some(s));
        let text = describe(&inv.plan).join("\n");
        assert!(
            text.contains("5 rounds of 10 s within 20 % range / 10 % slope, SNIA PTS rule")
                && text.contains("at most 9 rounds (1 min 30 s)")
                && text.contains("not claimed on an image"),
            "{text}"
        );
        // The default: SNIA's rounds of 60 s, at most 25 of them.
        let s = resolved(&["--steady-state"]).unwrap().plan.steady.unwrap();
        assert_eq!((s.round_s(), s.round_limit()), (60, 25));
        // The quick mode is named as such and never called SNIA.
        let inv = resolved(&["--steady-state", "--steady-quick"]).unwrap();
        let text = describe(&inv.plan).join("\n");
        assert!(
            text.contains("quick mode, not SNIA") && !text.contains("SNIA PTS"),
            "{text}"
        );
        assert!(resolved(&[]).unwrap().plan.steady.is_none());
        // Every bad value is exit 2, naming its flag.
        for (bad, flag) in [
            (
                &["--steady-state", "--steady-round", "500ms"][..],
                "--steady-round",
            ),
            (
                &["--steady-state", "--steady-round", "2h"][..],
                "--steady-round",
            ),
            (
                &["--steady-state", "--steady-max", "4m"][..],
                "--steady-max",
            ),
            (&["--steady-state", "30,20,10"][..], "--steady-state"),
        ] {
            let e = resolved(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
            assert!(e.to_string().contains(flag), "{bad:?}: {e}");
        }

        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.toml");
        std::fs::write(
            &f,
            "suite = 'standard'\nsteady_state = '8,15,5'\nsteady_round = '5s'\nsteady_max = '2m'\n",
        )
        .unwrap();
        let inv = resolved(&["--plan", f.to_str().unwrap()]).unwrap();
        let s = inv.plan.steady.unwrap();
        assert_eq!(
            (s.criteria.windows, s.max, s.round_s()),
            (8, Duration::from_secs(120), 5)
        );
        // The flag wins over the file.
        let inv = resolved(&["--plan", f.to_str().unwrap(), "--steady-state", "3,50,50"]).unwrap();
        assert_eq!(inv.plan.steady.unwrap().criteria.windows, 3);
        for text in [
            "steady_max = '2m'",
            "steady_round = '5s'",
            "steady_quick = true",
        ] {
            std::fs::write(&f, format!("suite = 'standard'\n{text}\n")).unwrap();
            assert!(
                resolved(&["--plan", f.to_str().unwrap()]).is_err(),
                "{text} without steady_state"
            );
        }
        std::fs::write(&f, "suite = 'standard'\nprecondition = true\n").unwrap();
        let e = resolved(&["--plan", f.to_str().unwrap()]).unwrap_err();
        assert!(e.to_string().contains("--precondition"), "{e}");
        let e = resolved(&["--precondition"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = resolved(&["--steady-state", "--engine", "fio"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn the_device_preconditioning_is_planned_once_with_its_cost() {
        let mut p = resolved(&[]).unwrap().plan;
        assert!(describe(&p).is_empty());
        let before = crate::plan::eta::total(&p, true);
        // A 2 GiB device: twice at 100 MiB/s is 41 s (shown truncated).
        (p.precondition, p.precondition_device) = (true, Some(2 << 30));
        let text = describe(&p).join("\n");
        assert!(
            text.contains("2 × its 2 GiB in 128 KiB sequential writes, about 40 s"),
            "{text}"
        );
        let after = crate::plan::eta::total(&p, true);
        assert!(
            after > before + Duration::from_secs(40),
            "{before:?} → {after:?}"
        );
    }
}
