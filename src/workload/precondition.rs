//! `--precondition`: wear the data file's blocks in before the I/O jobs, as SNIA's Performance
//! Test Specification does for SSDs (a fresh or freshly trimmed drive runs faster than it will
//! after its spare area is used up): after the layout has written the file once, write it
//! sequentially twice more (128 KiB, O_DIRECT) and then overwrite every 4 KiB block once in
//! random order.
//!
//! Why the data file and not the raw device: the runner discards the device and mkfs trims
//! it again at every setup-round, which returns the flash to its fresh state, so conditioning
//! the raw device before the round would be undone. The data file is what the I/O jobs touch,
//! and conditioning it after mkfs also gives copy-on-write filesystems (Btrfs, ZFS) the
//! fragmented layout they reach after random overwrites.

use crate::engine::{self, JobSpec, RwMode};
use std::time::Duration;

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
