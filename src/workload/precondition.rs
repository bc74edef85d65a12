//! `--precondition`: wear an SSD in before it is measured, as SNIA's Solid State Storage
//! Performance Test Specification does (a fresh or freshly trimmed drive runs faster than it
//! will after its spare area is used up, and falls off its "write cliff" minutes into
//! sustained writes). Two parts:
//!
//! - workload-independent ([`device_phases`]): the whole block device written
//!   [`DEVICE_PASSES`] times in 128 KiB sequential writes (O_DIRECT), once per run, before
//!   the first mkfs (`fsbench run --device`) or before the job (`fsbench io --filename
//!   DEVICE`);
//! - workload-dependent ([`phases`], `fsbench run`): after the layout has written the data
//!   file once, write it sequentially twice more (128 KiB) and then overwrite every 4 KiB
//!   block once in random order. `fsbench io`'s own rounds are its workload-dependent part.
//!
//! Why the data file too: the runner discards the device and mkfs trims it at every
//! setup-round, which hands the unused blocks back to the drive; the data file is what the
//! I/O jobs touch, and conditioning it after mkfs also gives copy-on-write filesystems
//! (Btrfs, ZFS) the fragmented layout they reach after random overwrites. (With
//! `--precondition` the runner skips its own discard, so only mkfs's trim remains.)

use crate::engine::{self, JobSpec, RwMode};
use std::path::Path;
use std::time::Duration;

/// Passes over the whole device in the workload-independent part (SNIA: 2 × capacity).
pub const DEVICE_PASSES: u32 = 2;

/// Block size of the sequential writes (SNIA: 128 KiB).
pub const SEQ_BS: u64 = 128 << 10;

/// Sequential write speed assumed by the estimate (bytes/s): the plan's layout figure.
pub const SEQ_BPS: f64 = 100.0 * 1048576.0;
/// Random 4 KiB write speed assumed by the estimate (bytes/s): about 5,000 IOPS.
pub const RAND_BPS: f64 = 20.0 * 1048576.0;

/// One step of the preconditioning.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// What it does, for notes and `fsbench plan`.
    pub name: &'static str,
    /// The job that does it (size-based: each block once).
    pub spec: JobSpec,
}

/// The phases for the data file that `layout` wrote (its job spec: file, size, O_DIRECT).
pub fn phases(layout: &JobSpec) -> Vec<Phase> {
    let base = JobSpec {
        filename: layout.filename.clone(),
        size: layout.size,
        direct: layout.direct,
        device: layout.device.clone(),
        iodepth: 32,
        numjobs: 1,
        runtime: None,
        ramp: Duration::ZERO,
        seed: layout.seed,
        ..Default::default()
    };
    let fill = JobSpec {
        rw: RwMode::Write,
        bs: 128 << 10,
        ..base.clone()
    };
    vec![
        Phase {
            name: "sequential fill 1 of 2 (128 KiB)",
            spec: fill.clone(),
        },
        Phase {
            name: "sequential fill 2 of 2 (128 KiB)",
            spec: fill,
        },
        Phase {
            name: "random overwrite of every 4 KiB block",
            spec: JobSpec {
                rw: RwMode::Randwrite,
                bs: 4096,
                ..base
            },
        },
    ]
}

/// The workload-independent phases for the block device `dev` of `capacity` bytes: every
/// whole 128 KiB block written sequentially, [`DEVICE_PASSES`] times.
pub fn device_phases(dev: &Path, capacity: u64) -> Vec<Phase> {
    const NAMES: [&str; DEVICE_PASSES as usize] = [
        "sequential pass 1 of 2 (128 KiB)",
        "sequential pass 2 of 2 (128 KiB)",
    ];
    let spec = JobSpec {
        filename: dev.to_path_buf(),
        rw: RwMode::Write,
        bs: SEQ_BS,
        size: Some(capacity / SEQ_BS * SEQ_BS),
        direct: true,
        iodepth: 32,
        numjobs: 1,
        runtime: None,
        ramp: Duration::ZERO,
        ..Default::default()
    };
    NAMES
        .iter()
        .map(|name| Phase {
            name,
            spec: spec.clone(),
        })
        .collect()
}

/// Estimated seconds of the workload-independent part for a device of `capacity` bytes
/// (at [`SEQ_BPS`]).
pub fn device_estimate_s(capacity: u64) -> f64 {
    f64::from(DEVICE_PASSES) * capacity as f64 / SEQ_BPS
}

/// Precondition the whole block device `dev` (workload-independent part); returns a note with
/// what each pass took. Refuses anything but a block device (exit 2).
pub fn run_device(dev: &Path) -> crate::Result<String> {
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(dev).map_err(|e| crate::Error::io("cannot stat", dev, e))?;
    if !md.file_type().is_block_device() {
        return Err(crate::Error::invalid(
            "--precondition",
            format!(
                "{} is not a block device; preconditioning writes a whole SSD (e.g. --filename \
                 /dev/nvme0n1), a file has no flash of its own to condition",
                dev.display()
            ),
        ));
    }
    let capacity = crate::scratch::size_of(dev)?;
    let mut took = Vec::new();
    for p in device_phases(dev, capacity) {
        let r = engine::run(&p.spec)?;
        took.push(format!(
            "{} {:.1} s ({:.0} MiB/s)",
            p.name,
            r.runtime_s,
            r.write.bw_bytes / 1048576.0
        ));
    }
    Ok(format!(
        "preconditioned {} ({}): {DEVICE_PASSES} × its capacity in 128 KiB sequential writes: {}",
        dev.display(),
        crate::units::format_size(capacity),
        took.join(", ")
    ))
}

/// Estimated seconds for a data file of `size` bytes: 2 × size ÷ sequential speed + size ÷
/// random 4 KiB speed (at [`SEQ_BPS`] and [`RAND_BPS`]; a real SSD past its cache is slower).
pub fn estimate_s(size: u64) -> f64 {
    2.0 * size as f64 / SEQ_BPS + size as f64 / RAND_BPS
}

/// Run the phases on the laid-out data file; returns a note with what each took.
pub fn run(layout: &JobSpec) -> crate::Result<String> {
    let mut took = Vec::new();
    for p in phases(layout) {
        let r = engine::run(&p.spec)?;
        let mib_s = (r.write.bw_bytes) / 1048576.0;
        took.push(format!(
            "{} {:.1} s ({mib_s:.0} MiB/s)",
            p.name, r.runtime_s
        ));
    }
    Ok(format!(
        "preconditioned the {} data file before the I/O jobs: {}",
        crate::units::format_size(layout.size.unwrap_or(0)),
        took.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sequential_fills_then_one_random_overwrite_of_the_same_file() {
        let layout = JobSpec {
            filename: "/mnt/x/fsbench.dat".into(),
            rw: RwMode::Write,
            bs: 1 << 20,
            size: Some(1 << 30),
            direct: true,
            seed: Some(7),
            device: Some("/dev/sdz".into()),
            ..Default::default()
        };
        let p = phases(&layout);
        let kinds: Vec<(RwMode, u64)> = p.iter().map(|p| (p.spec.rw, p.spec.bs)).collect();
        assert_eq!(
            kinds,
            [
                (RwMode::Write, 128 << 10),
                (RwMode::Write, 128 << 10),
                (RwMode::Randwrite, 4096)
            ]
        );
        for ph in &p {
            let s = &ph.spec;
            assert_eq!(s.filename, layout.filename);
            assert_eq!(s.size, Some(1 << 30), "each phase covers the whole file");
            assert!(
                s.runtime.is_none() && s.steady.is_none(),
                "size-based: once"
            );
            assert!(s.direct && s.device == layout.device);
        }
        // 1 GiB: 2 × 10.24 s sequential + 51.2 s random.
        assert!((estimate_s(1 << 30) - (2.0 * 10.24 + 51.2)).abs() < 1e-9);
    }

    #[test]
    fn the_device_is_written_twice_in_whole_128k_blocks_and_files_are_refused() {
        let p = device_phases(Path::new("/dev/zram9"), (1 << 30) + 4096);
        assert_eq!(p.len(), 2);
        for ph in &p {
            let s = &ph.spec;
            assert_eq!(
                (s.rw, s.bs, s.size),
                (RwMode::Write, 128 << 10, Some(1 << 30))
            );
            assert!(s.direct && s.runtime.is_none() && s.steady.is_none());
        }
        // 1 GiB twice at 100 MiB/s.
        assert!((device_estimate_s(1 << 30) - 20.48).abs() < 1e-9);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = run_device(&f).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--precondition"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"x", "nothing written");
    }

    #[test]
    fn runs_on_a_small_file() {
        let dir = tempfile::tempdir().unwrap();
        let layout = JobSpec {
            filename: dir.path().join("data"),
            rw: RwMode::Write,
            size: Some(1 << 20),
            ..Default::default()
        };
        engine::layout(&layout.filename, 1 << 20, false).unwrap();
        let note = run(&layout).unwrap();
        assert!(
            note.contains("sequential fill 2 of 2") && note.contains("random overwrite"),
            "{note}"
        );
        assert_eq!(std::fs::metadata(&layout.filename).unwrap().len(), 1 << 20);
    }
}
