//! The workload catalog: every workload id fsbench ships, in suite order, gathered from the
//! workload registry ([`crate::workload::registry::REGISTRY`]); the standard suite (seed 000)
//! is the part not marked optional.

pub use crate::workload::registry::{Kind, Writes};
pub use crate::workload::spec::{DATA_FILE, IoParams, JobDefaults, SweepPoint, WorkloadSpec};

/// Every workload fsbench knows by id, in suite order: the standard suite of seed 000 first,
/// then the opt-in ones (`smallfiles`, `fsmark`, `probe-*`…); each kind lists its own.
pub fn catalog() -> Vec<WorkloadSpec> {
    crate::workload::registry::shipped()
}

/// Ids of the standard suite (the default selection).
pub fn standard_ids() -> Vec<String> {
    catalog()
        .into_iter()
        .filter(|w| !w.optional)
        .map(|w| w.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;

    const M: u64 = 1 << 20;

    #[test]
    fn standard_suite_ids_are_exact() {
        assert_eq!(
            standard_ids(),
            [
                "mkfs",
                "usable-space",
                "layout",
                "seqread",
                "seqwrite",
                "randread",
                "randwrite",
                "randrw70",
                "fsync-write",
                "untar",
                "find-cold",
                "rm-tree"
            ]
        );
    }

    #[test]
    fn seq_jobs_split_the_file_in_quarters() {
        let c = catalog();
        let seq = c.iter().find(|w| w.id == "seqread").unwrap();
        let d = JobDefaults {
            file_size: 256 * M,
            runtime: Duration::from_secs(5),
            ramp: Duration::from_secs(1),
            seed: 7,
            device: None,
            steady: Some(crate::engine::SteadySpec::default()),
            precondition: false,
        };
        let j = seq.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!(j.size, Some(64 * M));
        assert_eq!(j.offset_increment, 64 * M);
        assert_eq!((j.numjobs, j.iodepth, j.bs), (4, 2, M));
        assert!(j.direct);
        assert_eq!(j.buffer_compress_percentage, 0);
        let rr = c.iter().find(|w| w.id == "randread").unwrap();
        let j = rr.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!((j.size, j.offset_increment), (Some(256 * M), 0));
        assert_eq!(j.filename, Path::new("/mnt/x").join(DATA_FILE));
        let lay = c.iter().find(|w| w.id == "layout").unwrap();
        let j = lay.job_spec(Path::new("/mnt/x"), &d).unwrap();
        assert_eq!(j.runtime, None, "layout is size-based");
        assert_eq!(j.steady, None, "and never run until steady");
        assert!(
            rr.job_spec(Path::new("/mnt/x"), &d)
                .unwrap()
                .steady
                .is_some()
        );
        let f = c.iter().find(|w| w.id == "fsync-write").unwrap();
        assert_eq!(f.io_job().unwrap().fsync, 1);
        assert_eq!(rr.requires(), ["layout"]);
    }

    /// Every registered kind's plan example parses and resolves into a workload of that kind,
    /// and the registry-driven ETA gives it a finite estimate.
    #[test]
    fn every_registered_kind_has_a_plan_example_that_resolves() {
        use crate::host::facts::HostFacts;
        use crate::plan::resolve::{Source, resolve};
        let host = HostFacts::fixed();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("job.fio"),
            "[global]\nsize=16m\nruntime=1s\n[probe]\nrw=randread\nbs=4k\n",
        )
        .unwrap();
        for k in crate::workload::registry::REGISTRY {
            let file = d.path().join(format!("{}.toml", k.name()));
            let text = format!(
                "name = \"example\"\nfs = [\"ext4\"]\n\n[[workload]]\n{}\n",
                k.example()
            );
            std::fs::write(&file, &text).unwrap();
            let o = crate::plan::Overrides {
                plan: Some(file.clone()),
                ..Default::default()
            };
            let inv = Source::read(&o)
                .and_then(|src| resolve(&src, &o, &host, vec![]))
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", k.name()));
            let w = inv
                .plan
                .workloads
                .iter()
                .find(|w| w.kind == k.kind() && w.record)
                .unwrap_or_else(|| panic!("{}: no workload of its kind in {text}", k.name()));
            let eta = crate::plan::eta::workload_seconds(&inv.plan, w, "ext4");
            assert!(eta.is_finite() && eta > 0.0, "{}: eta {eta}", k.name());
        }
    }
}
