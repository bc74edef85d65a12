//! `fsbench io`: one ad-hoc job, fio's vocabulary, the stable JSON report or a summary.
//!
//! The flags are checked here (bad input is exit 2 with nothing created), then the job runs
//! as `fsbench io`'s in-memory plan ([`super::io_plan`]) through the runner on the user's own
//! file or device (a [`crate::scratch::TargetKind::File`]: nothing of fsbench's is made
//! beside it), on fsbench's engine or fio, preconditioned first by the runner with
//! `--precondition`; the runner hands back the job's report whole (`Outcome::job_reports`),
//! which is printed (`report::io`) and recorded in the history store (`records`), as `io
//! --mpi` does with its ranks' reduced report. `--fio-job` runs a job file's sections as
//! the same kind of plan through the runner ([`super::io_fio_job`]).

use super::output::print;
use crate::cli::io::{EngineChoice, IoArgs, OutputFormat};
use crate::engine::{self, JobSpec};

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
    let device = crate::scratch::file::is_block_device(&spec.filename);
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
        use crate::engine::until_steady::Conditioning;
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
    let place = super::io_plan::Place {
        target: crate::scratch::TargetKind::File {
            path: spec.filename.clone(),
        },
        slice: None,
        settle: !args.no_settle,
    };
    let mut inv = super::io_plan::invocation(&spec, place);
    if let Some(engine) = args.engine {
        inv.options.engine = engine;
    }
    if precondition {
        // SNIA's workload-independent part, by the runner before its round (the job).
        inv.plan.precondition_device = Some(crate::scratch::size_of(&spec.filename)?);
    }
    let outcome = crate::runner::execute_with(&inv, false, None)?;
    if outcome.interrupted {
        return Err(crate::Error::Interrupted);
    }
    if !outcome.results.failures.is_empty() {
        // The runner said why as the step failed (`fsbench: dir round 1: io failed: …`).
        return Ok(super::ending::exit_code(&outcome));
    }
    let report = super::io_plan::the_report(outcome, "io")?.aggregate;
    if args.json || args.output_format == OutputFormat::Json {
        print(&crate::report::io::json(&report)?);
    } else {
        print(&crate::report::io::summary(&spec, &report));
    }
    super::records::io(history.as_ref(), "io", &started, &spec, &report);
    Ok(crate::error::EXIT_OK)
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

#[cfg(feature = "mpi")]
fn run_mpi(args: IoArgs) -> crate::Result<i32> {
    let spec = spec_from_args(&args);
    super::io_mpi::run(args, spec)
}

/// Without the feature, `--mpi` exists but refuses, so the flag is discoverable.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_: IoArgs) -> crate::Result<i32> {
    Err(super::output::without_mpi())
}
