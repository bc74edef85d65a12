//! Registry entry of `container`: an image store on overlayfs, one step of a container's life
//! per workload (`container-pull`, `-start`, `-copyup`, `-churn`, `-delete`).

use super::{ContainerParams, Step, steps};
use crate::metrics::MetricId;
use crate::workload::api::{
    Caches, Cost, Describe, Family, Headline, Kind, Names, Needs, Question, Workload,
    WorkloadOutput,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Container image layers on overlayfs.
    pub const Container: Kind = Kind::named("container");
}

/// Container image layers on overlayfs.
pub struct Container;

/// The parameters of `w`: its own, else its shipped id's, else pull's.
pub fn params(w: &WorkloadSpec) -> ContainerParams {
    w.params_of::<ContainerParams>().unwrap_or_else(|| {
        let step = Step::ALL
            .into_iter()
            .find(|s| s.id() == w.id)
            .unwrap_or(Step::Pull);
        ContainerParams::new(step)
    })
}

/// Seconds a step takes at `p`'s sizes on a small VM (2-core VM, loop image, quiet machine):
/// extraction about 250 MiB/s plus 20 000 files/s; entry files read cold at about 800 files/s;
/// copy-up about 20 000 and delete about 6 000 files of the image a second; a churn cycle
/// about 10 ms of one worker. Steps after pull assume the round's pull left the image (the
/// profile's order); alone they also extract it.
fn estimate(p: &ContainerParams) -> f64 {
    // Calibrated on --profile containers, ext4, XFS and Btrfs (2026-12-02): pull 3–3.5 s,
    // start 0.8–1.5 s, copy-up 0.8–2.5 s, churn under 0.5 s, delete 3.3–6.5 s.
    let extract = p.image_size as f64 / (250.0 * 1048576.0) + f64::from(p.files) / 20000.0;
    let files = f64::from(p.files);
    0.5 + match p.step {
        Step::Pull => extract,
        Step::Start => f64::from(p.containers * p.entry_files) / 800.0,
        Step::Copyup => files / 20000.0,
        Step::Churn => f64::from(p.containers) * 0.01 * f64::from(p.threads).min(2.0),
        Step::Delete => files / 6000.0 + f64::from(p.containers) * 0.05,
        // Podman's pull copies the archive's layers to temporary files, then extracts them;
        // run and rmi about a second each (first measured on the loaded VM).
        Step::Podman => 3.0 * extract + 2.0,
    }
}

/// The Podman cross-check on the user's archive, else on the generated image's (cached).
fn podman_step(cx: &StepContext<'_>, p: &ContainerParams) -> crate::Result<WorkloadOutput> {
    let archive = match &p.archive {
        Some(a) => a.clone(),
        None => super::podman_image::cached(cx.scratch, p, cx.tool_timeout)?,
    };
    let reference = super::archive::podman_reference(&archive)?;
    super::podman::run(cx.work.dir, &reference, cx.tool_timeout)
}

impl Workload for Container {
    fn kind(&self) -> Kind {
        Kind::Container
    }
    fn flags(&self) -> &'static [crate::workload::api::KindFlag] {
        // A user's own image alone asks for the containers profile (docs/containers.md).
        &[crate::workload::api::KindFlag {
            flags: &[super::archive::FLAG],
            value_name: "FILE|DIR",
            value: crate::workload::api::KindValue::Path,
            doc: "Your own container image as the layer set of every container workload: a `docker save` / `podman save` tar or an OCI image layout (directory or tar), uncompressed layers. Without --plan and --profile it runs the containers profile (docs/containers.md).",
            merge: "sets image_archive on every container workload of the plan; a plan without one is refused",
            lands: "plan.json plan.workloads[].params.kind_params.archive; results.json workloads",
            alone: Some(super::PROFILE),
            apply: |w, v| super::archive::apply_flag(w, std::path::Path::new(v)),
        }]
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("step", "which part of a container's life"),
            ("layers", "image layers (lower directories)"),
            ("files", "regular files over all layers"),
            (
                "containers",
                "containers started (start), or by each worker (churn)",
            ),
            ("entry_files", "files each container reads when it starts"),
            ("threads", "parallel workers of churn"),
            (
                "image_size",
                "bytes of file data over all layers (\"320M\")",
            ),
            (
                "image_archive",
                "a `docker save` / `podman save --format docker-archive` archive to use",
            ),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Containers
    }
    fn names(&self, id: &str) -> Option<Names> {
        let (label, short) = match id {
            "container-pull" => ("Container image pull (layers extracted)", "image pull"),
            "container-start" => (
                "Container start (overlay mount, entry files read cold)",
                "container start",
            ),
            "container-start-warm" => (
                "Container start, warm cache (caches could not be dropped)",
                "warm container start",
            ),
            "container-copyup" => ("Container copy-up (first writes to lower files)", "copy-up"),
            "container-churn" => (
                "Container churn (create, start, remove in parallel)",
                "container churn",
            ),
            "container-delete" => (
                "Container delete (whiteouts, containers and image removed)",
                "container delete",
            ),
            "container-podman" => (
                "Podman cross-check (image loaded, container run, image removed)",
                "podman cross-check",
            ),
            _ => return None,
        };
        Some(Names { label, short })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 20,
                workload: "container-pull",
                metrics: &[SECONDS],
                label: "Container image pull (overlay2 layers)",
            },
            Headline {
                rank: 21,
                workload: "container-start",
                metrics: &[SECONDS],
                label: "Container start, cold cache",
            },
            Headline {
                rank: 22,
                workload: "container-copyup",
                metrics: &[SECONDS],
                label: "Container copy-up",
            },
            Headline {
                rank: 23,
                workload: "container-churn",
                // The rate follows from the time (derived, never judged): the row shows the
                // time so that it carries a mark.
                metrics: &[SECONDS],
                label: "Container churn (create, start, remove)",
            },
            Headline {
                rank: 24,
                workload: "container-delete",
                metrics: &[SECONDS],
                label: "Container and image delete",
            },
            Headline {
                rank: 25,
                workload: "container-podman",
                metrics: &[SECONDS],
                label: "Podman load, run and remove (the real engine)",
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
        let mut p = base.map_or_else(|| params(spec), params);
        p.take_from(t)?;
        spec.set_params(&p);
        Ok(())
    }
    fn needs(&self, w: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            tool: (params(w).step == Step::Podman).then_some("podman"),
            ..Needs::WRITES
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            SECONDS,
            CONTAINER_FILES_PER_S,
            CONTAINER_MIB_S,
            CONTAINERS_PER_S,
            WHITEOUT_SECONDS,
            IMAGE_REMOVE_SECONDS,
            CONTAINER_INODES_USED,
            CONTAINER_PODMAN_LOAD_SECONDS,
            CONTAINER_PODMAN_RUN_SECONDS,
            CONTAINER_PODMAN_RMI_SECONDS,
            ENTRIES,
            BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        Step::ALL
            .into_iter()
            .map(|s| {
                WorkloadSpec::simple(&s.id(), Kind::Container)
                    .with_params(&ContainerParams::new(s))
                    .opt()
            })
            .collect()
    }
    fn example(&self) -> &'static str {
        "id = \"container-start-small\"\nkind = \"container\"\nstep = \"start\"\nlayers = 4\nfiles = 2000\nimage_size = \"32M\"\ncontainers = 4\nentry_files = 100"
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        Cost::Seconds(estimate(&params(w)))
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p = params(w);
        let shape = format!(
            "{} layers/{} files/{}",
            p.layers,
            p.files,
            crate::units::format_size(p.image_size)
        );
        let image = match &p.archive {
            Some(a) => format!("the image {} ({shape})", a.display()),
            None => format!("an image of {shape}"),
        };
        match p.step {
            Step::Pull => format!("extract {image} as overlay2 lower directories, synced"),
            Step::Start => format!(
                "mount {} overlay containers of {image}, each reading {} entry files cold",
                p.containers, p.entry_files
            ),
            Step::Copyup => {
                format!("first writes, appends, chmod and renames of lower files of {image}")
            }
            Step::Churn => format!(
                "{} workers × {} containers created, started, removed, of {image}",
                p.threads, p.containers
            ),
            Step::Delete => format!(
                "whiteout-heavy removal in a container, then {} containers and {image} removed",
                p.containers
            ),
            Step::Podman => format!(
                "podman (storage on this filesystem) loads {image}, runs a no-network \
                 container, removes the image"
            ),
        }
    }
    fn refused_on_dir(&self, _: &WorkloadSpec) -> Option<&'static str> {
        Some(
            "it mounts overlayfs over layers it extracts, and fsbench mounts only on a \
             filesystem it formats itself; run it on an image (the default) or --device",
        )
    }
    fn available(&self, w: &WorkloadSpec) -> Result<(), String> {
        if params(w).step == Step::Podman {
            return super::podman::available();
        }
        let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        if fs
            .lines()
            .any(|l| l.split_whitespace().last() == Some("overlay"))
        {
            Ok(())
        } else {
            Err("the kernel has no overlayfs (load it: modprobe overlay)".into())
        }
    }
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        let p = params(w);
        if p.step == Step::Podman {
            // Podman's store replaces the model's; the generated image's archive is built
            // (once, cached outside the filesystem under test) before the clock starts.
            steps::Store::under(cx.work.dir).remove()?;
            if p.archive.is_none() {
                super::podman_image::cached(cx.scratch, &p, cx.tool_timeout)?;
            }
            return Ok(Caches::Drop);
        }
        steps::Store::under(cx.work.dir).prepare(&p)?;
        // The start reads cold: journaled metadata checkpointed so the drop evicts it.
        if p.step == Step::Start {
            let _ = crate::host::cache::checkpoint(cx.work.dir);
        }
        Ok(Caches::Drop)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p = params(w);
        let out = if p.step == Step::Podman {
            podman_step(cx, &p)
        } else {
            steps::run(cx.work.dir, &p)
        };
        out.map_err(|e| match e {
            crate::Error::Interrupted => e,
            other => crate::Error::workload(&w.id, other.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_ids_carry_their_step() {
        for w in Container.shipped() {
            assert_eq!(params(&w).step.id(), w.id);
            assert!(w.optional);
        }
        let mut t: toml::Table = toml::from_str("files = 500\nimage_size = '4M'").unwrap();
        let base = &Container.shipped()[2];
        let mut spec = WorkloadSpec::simple("mine", Kind::Container);
        Container
            .take_params(&mut t, Some(base), &mut spec)
            .unwrap();
        let p = params(&spec);
        assert_eq!(
            (p.step, p.files, p.image_size),
            (Step::Copyup, 500, 4 << 20)
        );
    }
}
