//! Container image stores as Docker's and Podman's overlay2 driver lays them out, on the
//! filesystem under test: image layers as lower directories, an upper (diff) and a work
//! directory per container, the container's root a real overlayfs mount of them.
//!
//! Why overlayfs itself and not a proxy: what differs between backing filesystems is exactly
//! what overlay asks of them — whole-file copy-up on the first write to a lower file,
//! whiteouts (0/0 character devices) for deletions, `trusted.overlay.*` xattrs on every
//! copied-up directory, and many small directories created and removed per container.
//!
//! One kind, `container`, with six steps (shipped ids `container-pull`, `container-start`,
//! `container-copyup`, `container-churn`, `container-delete`, `container-podman`, in that
//! order in a round):
//! - *pull*: the image's layers extracted ([`layers`]), synced;
//! - *start*: K containers mounted, each reading its entry set of files, cold cache;
//! - *copy-up*: first writes to large and small lower files, appends, chmod and rename of
//!   lower directories (rename falls back to copy + delete on `EXDEV`, as `mv` does when the
//!   kernel's `redirect_dir` is off, Docker's default);
//! - *churn*: T workers creating, starting and removing containers in parallel; the peak of
//!   inodes in use is reported (statvfs);
//! - *delete*: whiteout-heavy removal inside a container, then the containers' and the image's
//!   directories removed;
//! - *podman* (`container-podman`): the cross-check with the real engine, Podman with its
//!   storage on the filesystem under test loading the image and running a container
//!   ([`podman`]); skipped with a note where podman is not installed.
//!
//! A step that needs the image extracts it first, untimed, when an earlier step of the round
//! did not (so `--only container-start` works alone). Every timed part ends with `syncfs`, so
//! what a filesystem defers is inside the time. Every overlay mount is a ledger entry
//! ([`overlay`]), released on error, Ctrl-C and, after a SIGKILL, by the next run.
//!
//! Not modelled: registry downloads and decompression (the layers are generated, not
//! fetched), the engine's own metadata (containerd's bolt database), cgroups and namespaces.

pub mod archive;
pub mod kind;
pub mod layers;
pub mod members;
pub mod oci;
pub mod overlay;
pub mod podman;
pub mod podman_image;
pub mod steps;

use serde::{Deserialize, Serialize};

/// The shipped profile of these workloads, which `--image-archive` alone runs.
pub const PROFILE: &str = "containers";

/// Which part of a container's life a workload measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Extract the image's layers.
    Pull,
    /// Mount K containers and read each one's entry set, cold cache.
    Start,
    /// First writes to lower files and directories (copy-up).
    Copyup,
    /// Create, start and remove containers in parallel.
    Churn,
    /// Whiteout-heavy removal inside a container, then containers and image removed.
    Delete,
    /// The cross-check with Podman itself: load the image from an archive into a storage
    /// root on this filesystem, run a no-network container, remove the image ([`podman`]).
    Podman,
}

impl Step {
    /// Every step, in the order a round runs them.
    pub const ALL: [Step; 6] = [
        Step::Pull,
        Step::Start,
        Step::Copyup,
        Step::Churn,
        Step::Delete,
        Step::Podman,
    ];

    /// Its plan-file `step =` value.
    pub fn key(self) -> &'static str {
        match self {
            Step::Pull => "pull",
            Step::Start => "start",
            Step::Copyup => "copyup",
            Step::Churn => "churn",
            Step::Delete => "delete",
            Step::Podman => "podman",
        }
    }

    /// The shipped workload id of this step.
    pub fn id(self) -> String {
        format!("container-{}", self.key())
    }
}

/// Parameters of a `container` workload (plan-file keys of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerParams {
    /// `step`: which part of a container's life.
    pub step: Step,
    /// `layers`: image layers (lower directories), 1 to 32.
    pub layers: u32,
    /// `files`: regular files over all layers.
    pub files: u32,
    /// `image_size`: bytes of file data over all layers.
    pub image_size: u64,
    /// `containers`: containers started (start), or started by each worker (churn).
    pub containers: u32,
    /// `entry_files`: files each container reads when it starts.
    pub entry_files: u32,
    /// `threads`: parallel workers of churn.
    pub threads: u32,
    /// `image_archive` (or `--image-archive`): a `docker save` / `podman save` archive or an
    /// OCI image layout whose layers are the image (then `layers`, `files` and `image_size`
    /// are its own, read from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<std::path::PathBuf>,
}

impl ContainerParams {
    /// The quick sizes for `step`: an image of 8 layers, 30 000 files, 320 MiB; start 4
    /// containers reading 200 entry files each, churn 4 workers × 10 containers, delete 6
    /// containers (each step a second or more on a small VM).
    pub fn new(step: Step) -> Self {
        ContainerParams {
            step,
            layers: 8,
            files: 30_000,
            image_size: 320 << 20,
            containers: match step {
                Step::Start => 4,
                Step::Churn => 10,
                _ => 6,
            },
            entry_files: 200,
            threads: 4,
            archive: None,
        }
    }

    /// Take this workload's keys out of a plan-file table; `Err` names the key and its range.
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        if let Some(v) = t.remove("step") {
            self.step = Step::ALL
                .into_iter()
                .find(|s| v.as_str() == Some(s.key()))
                .ok_or_else(|| {
                    format!(
                        "step = {v}: use one of {}",
                        Step::ALL.map(|s| format!("\"{}\"", s.key())).join(", ")
                    )
                })?;
        }
        for (key, slot, min, max) in [
            ("layers", &mut self.layers, 1, 32),
            ("files", &mut self.files, 10, 2_000_000),
            ("containers", &mut self.containers, 1, 10_000),
            ("entry_files", &mut self.entry_files, 1, 1_000_000),
            ("threads", &mut self.threads, 1, 256),
        ] {
            if let Some(v) = t.remove(key) {
                *slot = v
                    .as_integer()
                    .filter(|i| (min..=max).contains(i))
                    .ok_or_else(|| {
                        format!("{key} = {v}: give a whole number from {min} to {max}")
                    })? as u32;
            }
        }
        if let Some(v) = t.remove("image_size") {
            self.image_size = crate::units::toml_size(&v)
                .map_err(|e| format!("image_size = {v}: {e} (give a size such as \"320M\")"))?;
        }
        if let Some(v) = t.remove("image_archive") {
            let path = v
                .as_str()
                .map(std::path::PathBuf::from)
                .ok_or_else(|| format!("image_archive = {v}: give the archive's path"))?;
            // Read through now: a missing, compressed or foreign archive is refused with the
            // plan file's line, and its real shape replaces the generated image's sizes.
            return archive::adopt(self, &path).map_err(|e| e.to_string());
        }
        let per_file = self.image_size / u64::from(self.files.max(1));
        if per_file > 64 << 20 {
            return Err(format!(
                "image_size = {} over files = {} is {} a file; give more files or a smaller image",
                crate::units::format_size(self.image_size),
                self.files,
                crate::units::format_size(per_file)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_taken_and_checked() {
        let mut p = ContainerParams::new(Step::Pull);
        let mut t: toml::Table =
            toml::from_str("step = 'churn'\nlayers = 3\nimage_size = '8M'\nother = 1").unwrap();
        p.take_from(&mut t).unwrap();
        assert_eq!((p.step, p.layers, p.image_size), (Step::Churn, 3, 8 << 20));
        assert!(t.contains_key("other"), "only its own keys are taken");
        for bad in [
            "layers = 33",
            "step = 'run'",
            "image_size = 'x'",
            "threads = 0",
        ] {
            let mut t: toml::Table = toml::from_str(bad).unwrap();
            let e = ContainerParams::new(Step::Pull)
                .take_from(&mut t)
                .unwrap_err();
            assert!(e.contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
    }
}
