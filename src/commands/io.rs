//! `fsbench io`: one ad-hoc job, fio's vocabulary, the stable JSON report or a summary.

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
        print(&crate::report::io::json(&report)?);
    } else {
        print(&crate::report::io::summary(&spec, &report));
    }
    super::records::io(history.as_ref(), "io", &started, &spec, &report);
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
