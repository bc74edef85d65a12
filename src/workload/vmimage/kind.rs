//! Registry entry of `vm-image`: a VM disk image on the filesystem under test, driven through
//! QEMU's block layer.

use super::run::RunSpec;
use super::{Format, Job, Prealloc, VmParams};
use crate::metrics::MetricId;
use crate::workload::api::{
    Cost, Describe, Family, Headline, Kind, Names, Needs, Question, Workload, WorkloadOutput,
    Writes,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// A VM disk image through QEMU's block layer.
    pub const VmImage: Kind = Kind::named("vm-image");
}

/// VM disk images through qemu-storage-daemon.
pub struct VmImage;

/// Shipped workloads: (id, job, format, preallocation, label, short label).
const SHIPPED: &[(&str, Job, Format, Prealloc, &str, &str)] = &[
    (
        "vm-qcow2-randwrite",
        Job::Randwrite,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2), 4K random writes with flushes",
        "qcow2 random writes",
    ),
    (
        "vm-raw-randwrite",
        Job::Randwrite,
        Format::Raw,
        Prealloc::Off,
        "VM image (raw, sparse), 4K random writes with flushes",
        "raw random writes",
    ),
    (
        "vm-qcow2-randread",
        Job::Randread,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2), 4K random reads",
        "qcow2 random reads",
    ),
    (
        "vm-qcow2-mixed",
        Job::Mixed,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2), 64K 70/30 mix with flushes",
        "qcow2 64K mix",
    ),
    (
        "vm-qcow2-seqread",
        Job::Seqread,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2), 1M sequential reads",
        "qcow2 sequential reads",
    ),
    (
        "vm-qcow2-aging",
        Job::Aging,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2) aged by random overwrites",
        "qcow2 aging",
    ),
    (
        "vm-snapshot",
        Job::Snapshot,
        Format::Qcow2,
        Prealloc::Metadata,
        "VM image (qcow2): overlay and clone",
        "image clone",
    ),
];

/// The image's size: the workload's own, else the plan's data-file size.
fn image_size(p: &VmParams, d: &JobDefaults) -> u64 {
    p.image_size.unwrap_or(d.file_size)
}

impl Workload for VmImage {
    fn kind(&self) -> Kind {
        Kind::VmImage
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "job",
                "\"randwrite\" | \"randread\" | \"mixed\" | \"seqread\" | \"aging\" | \"snapshot\"",
            ),
            ("format", "\"raw\" | \"qcow2\""),
            (
                "prealloc",
                "\"off\" | \"metadata\" (qcow2) | \"falloc\" | \"full\"",
            ),
            (
                "image_size",
                "the image's size (else the plan's data-file size)",
            ),
            ("fsync_every", "a flush every N guest writes (0: none)"),
            (
                "age_passes",
                "aging: random 4K overwrites of the whole image",
            ),
            ("iodepth", "guest I/Os in flight"),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::VmImages
    }
    fn names(&self, id: &str) -> Option<Names> {
        SHIPPED.iter().find(|s| s.0 == id).map(|s| Names {
            label: s.4,
            short: s.5,
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        // Ranks after the seed's own rows (1–16) and the containers' block.
        // Throughput rows of the applications table are headline rows already (every
        // one is listed after the seed's); these are the costs a reader weighs beside them.
        const ROWS: &[Headline] = &[
            Headline {
                rank: 40,
                workload: "vm-qcow2-aging",
                metrics: &[VM_EXTENTS_AFTER],
                label: "VM image extents after random overwrites",
            },
            Headline {
                rank: 41,
                workload: "vm-snapshot",
                metrics: &[VM_CLONE_SECONDS],
                label: "VM image clone (reflink where there is one)",
            },
        ];
        ROWS
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base
            .and_then(|w| w.params_of::<VmParams>())
            .unwrap_or_else(|| VmParams::new(Job::Randwrite, Format::Qcow2, Prealloc::Metadata));
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            tool: Some("qemu-storage-daemon"),
            programs: &["qemu-img", "qemu-storage-daemon"],
            writes: Writes::Runner,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            IOPS,
            READ_IOPS,
            WRITE_IOPS,
            BW_MIB_S,
            READ_BW_MIB_S,
            WRITE_BW_MIB_S,
            LAT_P50_MS,
            LAT_P99_MS,
            LAT_P99_9_MS,
            CPU_UTIL,
            FSYNCS,
            STALLS,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
            VM_CREATE_SECONDS,
            VM_EXTENTS_BEFORE,
            VM_EXTENTS_AFTER,
            VM_SEQREAD_BEFORE_MIB_S,
            VM_SEQREAD_AFTER_MIB_S,
            VM_AGING_WRITE_IOPS,
            VM_OVERLAY_SECONDS,
            VM_OVERLAY_BYTES,
            VM_CLONE_SECONDS,
            VM_CLONE_BYTES,
            VM_CLONE_REFLINK,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        SHIPPED
            .iter()
            .map(|(id, job, format, prealloc, ..)| {
                WorkloadSpec::simple(id, Kind::VmImage)
                    .with_params(&VmParams::new(*job, *format, *prealloc))
                    .opt()
            })
            .collect()
    }
    fn example(&self) -> &'static str {
        "id = \"vm-raw-aging\"\nkind = \"vm-image\"\njob = \"aging\"\nformat = \"raw\"\nprealloc = \"falloc\"\nimage_size = \"128M\"\nage_passes = 1"
    }
    /// Loaded-machine rates through the FUSE export (docs/vm-images.md): about 100 MiB/s
    /// sequential, 2,000 4K writes/s with flushes; 2 s for qemu-img and the daemon.
    fn cost(&self, w: &WorkloadSpec, d: &JobDefaults) -> Cost {
        let Some(p) = w.params_of::<VmParams>() else {
            return Cost::Seconds(30.0);
        };
        // Calibrated on a quiet 2-core VM (2026-12-02, --profile vm, 256 MiB images): a timed
        // job took its window plus about 1.5 s, the aging pass's random 4K writes ran at
        // 4,500–16,000 IOPS, sequential passes at about 400 MiB/s.
        let mib = image_size(&p, d) as f64 / f64::from(1 << 20);
        let seq = mib / 400.0;
        let timed = (d.ramp + d.runtime).as_secs_f64();
        Cost::Seconds(
            1.0 + match p.job {
                Job::Randwrite => timed,
                Job::Randread | Job::Mixed | Job::Seqread => seq + timed,
                Job::Aging => 3.0 * seq + f64::from(p.age_passes) * mib * 256.0 / 8000.0,
                Job::Snapshot => 2.0 * seq,
            },
        )
    }
    fn describe(&self, w: &WorkloadSpec, d: &Describe<'_>) -> String {
        w.params_of::<VmParams>()
            .map(|p| p.describe(image_size(&p, d.defaults)))
            .unwrap_or_default()
    }
    fn refused_on_dir(&self, _: &WorkloadSpec) -> Option<&'static str> {
        (!rustix::process::geteuid().is_root())
            .then_some("it needs root (qemu-storage-daemon's FUSE export is a mount); run as root or --skip it")
    }
    fn available(&self, _: &WorkloadSpec) -> Result<(), String> {
        super::available()
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p = w
            .params_of::<VmParams>()
            .ok_or_else(|| crate::Error::workload(&w.id, "no vm-image parameters"))?;
        super::run::run(
            &cx.work,
            &p,
            &RunSpec {
                id: &w.id,
                image_size: image_size(&p, &cx.defaults),
                runtime: cx.defaults.runtime,
                ramp: cx.defaults.ramp,
                timeout: cx.tool_timeout,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_workloads_carry_their_parameters_and_answer_vm_images() {
        let all = VmImage.shipped();
        assert_eq!(all.len(), SHIPPED.len());
        for w in &all {
            let p = w.params_of::<VmParams>().expect("parameters");
            p.check().unwrap();
            assert!(VmImage.names(&w.id).is_some());
            assert!(w.optional, "{} would change the standard suite", w.id);
        }
        assert_eq!(
            VmImage.question(&serde_json::Value::Null),
            Question::VmImages
        );
    }
}
