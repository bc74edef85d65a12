//! Several devices under one filesystem: `--images N` or `--device` given more than once.
//!
//! A multi-device target is a list of ordinary targets (each image with its own loop device
//! and ledger entries, each device through every check of [`super::safety`]), held and
//! released together. The first is the one single-device setups use; layouts (`raid=`,
//! `fs::layout`) use them all.

use super::block::BlockTarget;
use super::consent;
use super::image::ImageTarget;
use super::{Target, TargetKind};
use crate::results::TargetInfo;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The devices besides the first, as the user asked for them. Part of `RunOptions` (so
/// `--resume` keeps them); absent in older plan.json files, which meant one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Multi {
    /// `--images N`: how many images of `--image-size` each (0 and 1 both mean one).
    #[serde(default, skip_serializing_if = "is_one")]
    pub images: u32,
    /// `--device` after the first, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<PathBuf>,
}

fn is_one(n: &u32) -> bool {
    *n <= 1
}

impl Multi {
    /// One device (nothing to record in plan.json).
    pub fn is_single(&self) -> bool {
        self.images <= 1 && self.devices.is_empty()
    }

    /// How many devices the target has (a directory has none).
    pub fn count(&self, kind: &TargetKind) -> usize {
        match kind {
            TargetKind::Image { .. } => self.images.max(1) as usize,
            TargetKind::Device { .. } => 1 + self.devices.len(),
            TargetKind::Dir { .. } | TargetKind::File { .. } => 0,
        }
    }

    /// Whether the target has more than one device.
    pub fn is_multi(&self, kind: &TargetKind) -> bool {
        self.count(kind) > 1
    }

    /// The plan printout's line, extending [`TargetKind::describe`].
    pub fn describe(&self, kind: &TargetKind) -> String {
        let one = kind.describe();
        match kind {
            TargetKind::Image { .. } if self.images > 1 => format!("{} × {one}", self.images),
            TargetKind::Device { path, .. } if !self.devices.is_empty() => {
                let all: Vec<String> = std::iter::once(path)
                    .chain(&self.devices)
                    .map(|p| p.display().to_string())
                    .collect();
                format!("{} block devices {} (all wiped)", all.len(), all.join(", "))
            }
            _ => one,
        }
    }
}

/// Whether `n` sparse images of `size` bytes fit in `free` bytes: each may be written full, so
/// the whole of each counts (the rule of `acquire`, of a plan's rounds by steps and of tune's
/// image size).
pub fn images_fit(size: u64, n: u64, free: u64) -> bool {
    size.saturating_mul(n) <= free
}

/// Acquire the target `kind` with `multi`'s extra devices: one target when there are none.
///
/// Devices: every device passes every safety check first (and no two name the same
/// device), then one question lists them all; nothing is written before that.
pub fn acquire(kind: &TargetKind, multi: &Multi, yes: bool) -> Result<Box<dyn Target>> {
    if !multi.is_multi(kind) {
        return super::acquire(kind, yes);
    }
    let parts: Vec<Box<dyn Target>> = match kind {
        TargetKind::Image {
            scratch_dir,
            size,
            keep,
        } => {
            let n = multi.images as u64;
            let free = crate::host::sys::available_bytes(scratch_dir).unwrap_or(u64::MAX);
            if !images_fit(*size, n, free) {
                return Err(Error::invalid(
                    "--images",
                    format!(
                        "{n} images of {} do not fit in --scratch-dir {} ({} free); use fewer \
                         --images, a smaller --image-size or another --scratch-dir",
                        crate::units::format_size(*size),
                        scratch_dir.display(),
                        crate::units::format_size(free)
                    ),
                ));
            }
            let mut v: Vec<Box<dyn Target>> = Vec::new();
            for _ in 0..n {
                // A failure drops the images made so far (their guards detach and delete).
                v.push(Box::new(ImageTarget::acquire(scratch_dir, *size, *keep)?));
            }
            v
        }
        TargetKind::Device { path, force_wipe } => {
            let paths: Vec<&Path> = std::iter::once(path.as_path())
                .chain(multi.devices.iter().map(PathBuf::as_path))
                .collect();
            let mut checked = Vec::with_capacity(paths.len());
            for p in &paths {
                let c = super::safety::check_device(p, *force_wipe)?;
                if let Some(first) = checked
                    .iter()
                    .find(|o: &&super::safety::Checked| o.dev == c.dev)
                {
                    return Err(Error::invalid(
                        "--device",
                        format!(
                            "{} and {} are the same device ({}); name each device once",
                            first.path.display(),
                            c.path.display(),
                            c.dev
                        ),
                    ));
                }
                checked.push(c);
            }
            let questions: Vec<consent::Question<'_>> = checked
                .iter()
                .map(|c| consent::Question {
                    path: &c.path,
                    name: &c.name,
                    description: BlockTarget::description(c),
                })
                .collect();
            consent::confirm_all(&questions, yes)?;
            checked
                .into_iter()
                .map(|c| Box::new(BlockTarget::from_checked(c)) as Box<dyn Target>)
                .collect()
        }
        TargetKind::Dir { .. } | TargetKind::File { .. } => {
            unreachable!("a directory or a job's own file has no devices (count 0)")
        }
    };
    Ok(Box::new(MultiTarget { parts }))
}

/// Several targets used together. Dropping it releases each (images detached and deleted).
pub struct MultiTarget {
    parts: Vec<Box<dyn Target>>,
}

impl Target for MultiTarget {
    fn info(&self) -> TargetInfo {
        let mut info = self.parts[0].info();
        let devs: Vec<String> = self
            .block_devices()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        info.extra
            .insert("device_count".into(), self.parts.len().to_string());
        info.extra.insert("devices".into(), devs.join(","));
        let paths: Vec<String> = self.parts.iter().map(|t| t.info().path).collect();
        info.extra.insert("paths".into(), paths.join(","));
        info
    }

    fn block_device(&self) -> Option<&Path> {
        self.parts[0].block_device()
    }

    fn block_devices(&self) -> Vec<PathBuf> {
        self.parts
            .iter()
            .filter_map(|t| t.block_device().map(Path::to_path_buf))
            .collect()
    }

    fn directory(&self) -> Option<&Path> {
        None
    }

    fn check_identity(&self) -> Result<()> {
        self.parts.iter().try_for_each(|t| t.check_identity())
    }

    fn discard(&self) -> Result<bool> {
        let mut all = true;
        for t in &self.parts {
            all &= t.discard()?;
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_descriptions() {
        let img = TargetKind::Image {
            scratch_dir: "/var/tmp".into(),
            size: 1 << 30,
            keep: false,
        };
        let one = Multi::default();
        assert_eq!(one.count(&img), 1);
        assert!(!one.is_multi(&img));
        let three = Multi {
            images: 3,
            devices: vec![],
        };
        assert_eq!(three.count(&img), 3);
        assert!(
            three.describe(&img).starts_with("3 × 1 GiB sparse image"),
            "{}",
            three.describe(&img)
        );
        let dev = TargetKind::Device {
            path: "/dev/sdb".into(),
            force_wipe: false,
        };
        let two = Multi {
            images: 0,
            devices: vec!["/dev/sdc".into()],
        };
        assert_eq!(two.count(&dev), 2);
        assert_eq!(
            two.describe(&dev),
            "2 block devices /dev/sdb, /dev/sdc (all wiped)"
        );
        assert_eq!(
            Multi::default().count(&TargetKind::Dir { path: "/x".into() }),
            0
        );
        // plan.json of older runs has no `multi`, and one device serializes to nothing.
        assert_eq!(serde_json::to_string(&Multi::default()).unwrap(), "{}");
    }
}
