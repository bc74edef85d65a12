//! `--steady-state` / `--precondition` (and the plan-file keys `steady_state`, `steady_max`,
//! `precondition`) resolved into the plan: flags win over the plan file; refusals name the flag.

use super::EngineChoice;
use crate::Error;
use crate::engine::SteadySpec;
use crate::target::TargetKind;

/// Run-until-steady for the plan: the flags', else the plan file's; checked against the engine.
pub fn resolve_steady(
    flag: Option<SteadySpec>,
    file: Option<SteadySpec>,
    engine: EngineChoice,
) -> crate::Result<Option<SteadySpec>> {
    let Some(s) = flag.or(file) else {
        return Ok(None);
    };
    let s = SteadySpec::new(s.criteria, s.max)?;
    if engine == EngineChoice::Fio {
        return Err(Error::invalid(
            "--steady-state",
            "stops a job once it is steady, which only fsbench's own engine can do; drop --engine fio",
        ));
    }
    Ok(Some(s))
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
    if let Some(s) = &plan.steady {
        out.push(format!(
            "Steady state: each I/O job runs until its IOPS hold steady ({}, SNIA's rule), at most {}; \
             IOPS, MiB/s and latency are over those seconds (the estimate counts the limit)",
            s.criteria,
            super::eta::format(s.max)
        ));
    }
    if plan.precondition {
        let est = crate::workload::precondition::estimate_s(plan.file_size);
        out.push(format!(
            "Preconditioning: in every setup-round, after the layout, 2 sequential fills and a \
             random 4 KiB overwrite of the {} data file, about {} per setup-round (2 × size ÷ \
             {:.0} MiB/s + size ÷ {:.0} MiB/s; counted in the estimate)",
            crate::units::format_size(plan.file_size),
            super::eta::format(std::time::Duration::from_secs_f64(est)),
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
    fn flags_win_and_fio_is_refused() {
        let a = SteadySpec::default();
        let b = SteadySpec {
            max: Duration::from_secs(60),
            ..a
        };
        let got = resolve_steady(Some(a), Some(b), EngineChoice::Fsbench).unwrap();
        assert_eq!(got, Some(a));
        assert_eq!(
            resolve_steady(None, Some(b), EngineChoice::Fsbench).unwrap(),
            Some(b)
        );
        assert_eq!(resolve_steady(None, None, EngineChoice::Fio).unwrap(), None);
        let e = resolve_steady(Some(a), None, EngineChoice::Fio).unwrap_err();
        assert!(e.to_string().contains("--engine fio"), "{e}");
        let short = SteadySpec {
            max: Duration::from_secs(2),
            ..a
        };
        assert!(resolve_steady(Some(short), None, EngineChoice::Fsbench).is_err());
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
        let inv = resolved(&["--steady-state", "--steady-max", "90s"]).unwrap();
        let s = inv.plan.steady.unwrap();
        assert_eq!(
            (s.criteria, s.max),
            (Default::default(), Duration::from_secs(90))
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
        assert!(
            describe(&inv.plan)[0].contains("at most 1 min 30 s"),
            "{:?}",
            describe(&inv.plan)
        );
        assert!(resolved(&[]).unwrap().plan.steady.is_none());

        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.toml");
        std::fs::write(
            &f,
            "suite = 'standard'\nsteady_state = '8,15,5'\nsteady_max = '2m'\n",
        )
        .unwrap();
        let inv = resolved(&["--plan", f.to_str().unwrap()]).unwrap();
        let s = inv.plan.steady.unwrap();
        assert_eq!((s.criteria.windows, s.max), (8, Duration::from_secs(120)));
        // The flag wins over the file.
        let inv = resolved(&["--plan", f.to_str().unwrap(), "--steady-state", "3,50,50"]).unwrap();
        assert_eq!(inv.plan.steady.unwrap().criteria.windows, 3);
        std::fs::write(&f, "suite = 'standard'\nsteady_max = '2m'\n").unwrap();
        assert!(
            resolved(&["--plan", f.to_str().unwrap()]).is_err(),
            "max without criteria"
        );
        std::fs::write(&f, "suite = 'standard'\nprecondition = true\n").unwrap();
        let e = resolved(&["--plan", f.to_str().unwrap()]).unwrap_err();
        assert!(e.to_string().contains("--precondition"), "{e}");
        let e = resolved(&["--precondition"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = resolved(&["--steady-state", "--engine", "fio"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
