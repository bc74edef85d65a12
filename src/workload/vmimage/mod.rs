//! VM disk images (`kind = "vm-image"`): raw and qcow2 images made by `qemu-img` on the
//! filesystem under test, written and read by fsbench's engine through QEMU's own block layer
//! (`qemu-storage-daemon`'s FUSE export, [`export`]), aged by random guest writes (extents by
//! FIEMAP and sequential reads before and after), and snapshotted (a qcow2 overlay, a reflink
//! copy). docs/vm-images.md says what this models and what it does not.

pub mod export;
pub mod kind;
pub mod run;

use serde::{Deserialize, Serialize};

/// What one step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Job {
    /// 4K random writes with a flush every `fsync_every` writes, on a fresh image (what
    /// preallocation is for).
    Randwrite,
    /// 4K random reads of a written image.
    Randread,
    /// 64K random 70/30 reads and writes with flushes, on a written image.
    Mixed,
    /// 1M sequential reads of a written image.
    Seqread,
    /// Fragmentation as the image ages: extents and sequential reads before and after
    /// `age_passes` random 4K overwrites of the whole image.
    Aging,
    /// A qcow2 overlay on the image and a clone of it (FICLONE, else a copy): time and space.
    Snapshot,
}

impl Job {
    const ALL: [(Job, &'static str); 6] = [
        (Job::Randwrite, "randwrite"),
        (Job::Randread, "randread"),
        (Job::Mixed, "mixed"),
        (Job::Seqread, "seqread"),
        (Job::Aging, "aging"),
        (Job::Snapshot, "snapshot"),
    ];
}

/// The image file's format (`qemu-img create -f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A plain file, block for block.
    Raw,
    /// QEMU's copy-on-write format (clusters allocated on first write, backing files).
    Qcow2,
}

impl Format {
    /// The QEMU block driver's name (`-f`, `driver=`).
    pub fn driver(self) -> &'static str {
        match self {
            Format::Raw => "raw",
            Format::Qcow2 => "qcow2",
        }
    }
}

/// `qemu-img create -o preallocation=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prealloc {
    /// Sparse: space is allocated as the guest writes.
    Off,
    /// qcow2 only: the format's metadata allocated, the data clusters not.
    Metadata,
    /// fallocate(2) the whole image.
    Falloc,
    /// Write zeros over the whole image.
    Full,
}

impl Prealloc {
    fn name(self) -> &'static str {
        match self {
            Prealloc::Off => "off",
            Prealloc::Metadata => "metadata",
            Prealloc::Falloc => "falloc",
            Prealloc::Full => "full",
        }
    }
}

/// A `vm-image` workload's parameters (in [`crate::workload::spec::WorkloadSpec::kind_params`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmParams {
    /// What the step measures.
    pub job: Job,
    /// Image format.
    pub format: Format,
    /// Preallocation at creation.
    pub prealloc: Prealloc,
    /// Virtual size of the image, bytes; `None`: the plan's data-file size.
    #[serde(default)]
    pub image_size: Option<u64>,
    /// A flush (fsync on the exported file, which QEMU passes down) every N writes; 0 = none.
    pub fsync_every: u32,
    /// Aging: random 4K overwrites of the whole image, in passes.
    pub age_passes: u32,
    /// Outstanding I/Os (a guest's queue depth).
    pub iodepth: u32,
}

impl VmParams {
    /// A job on a `format` image with `prealloc`, the other parameters at their defaults.
    pub fn new(job: Job, format: Format, prealloc: Prealloc) -> VmParams {
        VmParams {
            job,
            format,
            prealloc,
            image_size: None,
            fsync_every: 32,
            age_passes: 1,
            iodepth: 16,
        }
    }

    /// Take `job`, `format`, `prealloc`, `image_size`, `fsync_every`, `age_passes`, `iodepth`
    /// out of a `[[workload]]` table.
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        if let Some(v) = t.remove("job") {
            let s = v.as_str().unwrap_or("");
            self.job = Job::ALL
                .iter()
                .find(|(_, n)| *n == s)
                .map(|x| x.0)
                .ok_or_else(|| {
                    let names: Vec<&str> = Job::ALL.iter().map(|x| x.1).collect();
                    format!("job = {v}: use one of {}", names.join(", "))
                })?;
        }
        if let Some(v) = t.remove("format") {
            self.format = match v.as_str() {
                Some("raw") => Format::Raw,
                Some("qcow2") => Format::Qcow2,
                _ => return Err(format!("format = {v}: use \"raw\" or \"qcow2\"")),
            };
        }
        if let Some(v) = t.remove("prealloc") {
            self.prealloc = match v.as_str() {
                Some("off") => Prealloc::Off,
                Some("metadata") => Prealloc::Metadata,
                Some("falloc") => Prealloc::Falloc,
                Some("full") => Prealloc::Full,
                _ => {
                    return Err(format!(
                        "prealloc = {v}: use \"off\", \"metadata\", \"falloc\" or \"full\""
                    ));
                }
            };
        }
        if let Some(v) = t.remove("image_size") {
            let n = crate::units::toml_size(&v).map_err(|e| format!("image_size: {e}"))?;
            if n < 1 << 20 || n % (1 << 20) != 0 {
                return Err(format!(
                    "image_size = {v}: give whole MiB, at least 1M (such as \"256M\")"
                ));
            }
            self.image_size = Some(n);
        }
        for (key, slot, min, max) in [
            ("fsync_every", &mut self.fsync_every, 0, 1_000_000),
            ("age_passes", &mut self.age_passes, 1, 100),
            ("iodepth", &mut self.iodepth, 1, 1024),
        ] {
            if let Some(v) = t.remove(key) {
                *slot = v
                    .as_integer()
                    .and_then(|i| u32::try_from(i).ok())
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| {
                        format!("{key} = {v}: give a whole number from {min} to {max}")
                    })?;
            }
        }
        self.check()
    }

    /// Combinations `qemu-img` refuses, refused here first (exit 2, nothing created).
    pub fn check(&self) -> Result<(), String> {
        if self.format == Format::Raw && self.prealloc == Prealloc::Metadata {
            return Err(
                "prealloc = \"metadata\" is for qcow2 only (raw has no metadata): use \"off\", \"falloc\" or \"full\""
                    .into(),
            );
        }
        Ok(())
    }

    /// One line for `fsbench plan`.
    pub fn describe(&self, image_size: u64) -> String {
        let what = match self.job {
            Job::Randwrite => format!("4K random writes, flush every {}", self.fsync_every),
            Job::Randread => "4K random reads".into(),
            Job::Mixed => format!("64K random 70/30 mix, flush every {}", self.fsync_every),
            Job::Seqread => "1M sequential reads".into(),
            Job::Aging => format!(
                "extents and sequential reads before/after {} random 4K overwrite pass(es)",
                self.age_passes
            ),
            Job::Snapshot => "qcow2 overlay (-b) and a clone (reflink, else a copy)".into(),
        };
        format!(
            "{} {} (prealloc {}) via qemu-storage-daemon: {what}",
            crate::units::format_size(image_size),
            self.format.driver(),
            self.prealloc.name(),
        )
    }
}

/// The programs this kind runs.
pub const TOOLS: [&str; 2] = ["qemu-img", "qemu-storage-daemon"];

/// Whether this machine can run it: root (a FUSE mount), the QEMU tools and /dev/fuse.
pub fn available() -> Result<(), String> {
    if !rustix::process::geteuid().is_root() {
        return Err("needs root: qemu-storage-daemon's FUSE export is a mount".into());
    }
    for t in TOOLS {
        if !crate::host::packages::present(t) {
            return Err(format!(
                "{t} not found (package {}; `fsbench run --install-missing` installs it)",
                crate::host::packages::debian_package(t)
            ));
        }
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        return Err("/dev/fuse is missing (modprobe fuse)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<VmParams, String> {
        let mut t: toml::Table = toml::from_str(text).unwrap();
        let mut p = VmParams::new(Job::Randwrite, Format::Qcow2, Prealloc::Metadata);
        p.take_from(&mut t)?;
        assert!(t.is_empty(), "keys left: {t:?}");
        Ok(p)
    }

    #[test]
    fn keys_parse_and_bad_values_name_the_choices() {
        let p = parsed(
            "job = \"aging\"\nformat = \"raw\"\nprealloc = \"falloc\"\nimage_size = \"64M\"\nage_passes = 2",
        )
        .unwrap();
        assert_eq!(
            (p.job, p.format, p.prealloc, p.image_size, p.age_passes),
            (Job::Aging, Format::Raw, Prealloc::Falloc, Some(64 << 20), 2)
        );
        assert!(parsed("job = \"boot\"").unwrap_err().contains("aging"));
        assert!(parsed("format = \"vmdk\"").unwrap_err().contains("qcow2"));
        assert!(parsed("image_size = \"100k\"").is_err());
        assert!(parsed("iodepth = 0").is_err());
        let e = parsed("format = \"raw\"\nprealloc = \"metadata\"").unwrap_err();
        assert!(e.contains("qcow2 only"), "{e}");
    }
}
