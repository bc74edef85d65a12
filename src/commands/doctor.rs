//! `fsbench doctor`: gather facts about the host and the target (read-only), run the checks,
//! print the findings; with `--install-missing`, first install what the setups need.

use crate::cli::doctor::DoctorArgs;
use crate::doctor::facts::{IoJobFact, Request};
use crate::doctor::tools::{self, Wants};
use crate::doctor::{self as doc, install, render};
use crate::error::{EXIT_FAILURE, EXIT_OK};
use crate::host::ledger::{self, Outcome};
use crate::plan::{EngineChoice, FileSize};
use crate::{Error, Result};
use std::os::unix::fs::FileTypeExt;

/// Run `fsbench doctor`; returns the exit code.
pub fn run(args: DoctorArgs) -> Result<i32> {
    let req = request(&args)?;
    let mut code = EXIT_OK;
    if args.cleanup || args.restore {
        code = recover(&args)?;
    }
    if args.install_missing {
        install::install(&install::plan_here(&tools::needs(&req.wants)), args.dry_run)?;
    }
    let diagnosis = doc::diagnose(crate::doctor::facts::gather(&req));
    if args.json {
        println!("{}", render::json(&diagnosis)?);
    } else {
        print!("{}", render::table(&diagnosis, render::terminal_width()));
    }
    Ok(code)
}

/// `--cleanup` / `--restore`: the ledger's recovery of dead runs, one line per item (on
/// stdout, or stderr when stdout carries `--json`). Exit 1 when an item could not be released.
fn recover(args: &DoctorArgs) -> Result<i32> {
    let flag = if args.restore {
        "--restore"
    } else {
        "--cleanup"
    };
    if !args.dry_run && !rustix::process::geteuid().is_root() {
        return Err(Error::invalid(
            flag,
            "putting settings back and releasing mounts and loop devices needs root; run it with              sudo, or add --dry-run to see what would be done",
        ));
    }
    // --restore puts back settings only; --cleanup releases everything dead runs hold.
    let lines = if args.cleanup {
        ledger::recover_stale(args.dry_run)
    } else {
        ledger::restore_settings(args.dry_run)
    };
    let say = |s: &str| {
        if args.json {
            eprintln!("{s}");
        } else {
            println!("{s}");
        }
    };
    let mine: Vec<_> = lines
        .iter()
        .filter(|l| l.outcome != Outcome::Live)
        .collect();
    if mine.is_empty() {
        say("fsbench: nothing to restore or release: no killed fsbench run left anything behind");
    }
    for l in &mine {
        say(&l.to_string());
    }
    for l in lines.iter().filter(|l| l.outcome == Outcome::Live) {
        say(&l.to_string());
    }
    Ok(if mine.iter().any(|l| l.outcome == Outcome::Failed) {
        EXIT_FAILURE
    } else {
        EXIT_OK
    })
}

/// Turn the flags into what to look at, refusing bad input before anything is read.
fn request(args: &DoctorArgs) -> Result<Request> {
    let mut req = Request {
        sample: args.sample,
        ..Default::default()
    };
    match (&args.device, &args.dir) {
        (Some(dev), _) => {
            let md = std::fs::metadata(dev).map_err(|e| {
                Error::invalid("--device", format!("cannot stat {}: {e}", dev.display()))
            })?;
            if !md.file_type().is_block_device() {
                return Err(Error::invalid(
                    "--device",
                    format!(
                        "{} is not a block device; for a directory use --dir",
                        dev.display()
                    ),
                ));
            }
            req.devices.push((dev.clone(), "target".into()));
        }
        (None, Some(dir)) => {
            if !dir.is_dir() {
                return Err(Error::invalid(
                    "--dir",
                    format!("{} is not a directory", dir.display()),
                ));
            }
            req.dirs.push((dir.clone(), "target".into()));
        }
        (None, None) => req.dirs.push((args.scratch_dir.clone(), "scratch".into())),
    }
    let setups = if args.dir.is_some() && args.fs.is_empty() {
        Vec::new()
    } else if args.fs.is_empty() {
        crate::plan::resolve::default_fs(crate::host::zfs::kernel())
            .into_iter()
            .map(|f| (f.to_string(), f.to_string()))
            .collect()
    } else {
        crate::plan::setup_syntax::parse_fs_list(&args.fs)?
            .into_iter()
            .map(|s| (s.name, s.fs))
            .collect()
    };
    req.wants = Wants {
        setups,
        fio: args.engine == EngineChoice::Fio,
        workloads: args.only.clone(),
        kernel_zfs: crate::host::zfs::kernel(),
    };
    if let Some(text) = &args.file_size {
        let bytes = match FileSize::parse(text).map_err(|e| Error::invalid("--file-size", e))? {
            FileSize::Fixed(b) => b,
            FileSize::RamMultiple(f) => (crate::host::sys::ram_bytes() as f64 * f) as u64,
        };
        req.file_size = Some(bytes);
        // Nothing says the user's workloads bypass the cache.
        req.buffered_io = true;
    }
    if let Some(engine) = &args.ioengine {
        req.io_jobs.push(IoJobFact {
            id: "fio job".into(),
            ioengine: engine.clone(),
            iodepth: args.iodepth,
            numjobs: args.numjobs,
        });
    }
    Ok(req)
}
