//! `--device /dev/X`: a real scratch disk, wiped after the safety checks pass.

use super::consent;
use super::safety::{self, Checked};
use super::{DiscardState, Target};
use crate::host::sys as ioctl;
use crate::host::sysfs::{self, DevNum};
use crate::results::TargetInfo;
use crate::{Error, Result};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// An existing block device that passed [`safety::check_device`].
#[derive(Debug)]
pub struct BlockTarget {
    checked: Checked,
    discard: DiscardState,
}

impl BlockTarget {
    /// Check `path`, then get consent (`yes`, or the name typed on the terminal), and take it.
    ///
    /// Both the checks and the question only read the device; nothing is written here.
    pub fn acquire(path: &Path, force_wipe: bool, yes: bool) -> Result<Self> {
        let checked = safety::check_device(path, force_wipe)?;
        consent::confirm(
            &consent::Question {
                path: &checked.path,
                name: &checked.name,
                description: Self::description(&checked),
            },
            yes,
        )?;
        Ok(Self::from_checked(checked))
    }

    /// Size and model of a checked device, for the consent question.
    pub fn description(checked: &Checked) -> String {
        let facts = sysfs::queue_facts(checked.dev).unwrap_or_default();
        let mut description = crate::units::format_size(checked.size);
        if !facts.model.is_empty() {
            description.push_str(", ");
            description.push_str(&facts.model);
        }
        description
    }

    /// A device that passed the checks and whose wiping was consented to (by the caller:
    /// [`super::multi::acquire`] asks once for all devices).
    pub fn from_checked(checked: Checked) -> Self {
        BlockTarget {
            checked,
            discard: DiscardState::default(),
        }
    }
}

/// Re-stat `path` and compare its device number and size with what was checked.
pub(crate) fn verify_identity(path: &Path, dev: DevNum, size: u64) -> Result<()> {
    let md = std::fs::metadata(path).map_err(|e| Error::io("cannot re-check", path, e))?;
    if !md.file_type().is_block_device() || DevNum::from_dev(md.rdev()) != dev {
        return Err(Error::refused(
            path,
            format!(
                "it is no longer the device that was checked (was {dev}); stopping before \
                 anything is written"
            ),
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    let now = ioctl::device_size(f.as_fd()).map_err(|e| Error::io("cannot size", path, e))?;
    if now != size {
        return Err(Error::refused(
            path,
            format!(
                "its size changed from {size} to {now} bytes since it was checked; stopping \
                 before anything is written"
            ),
        ));
    }
    Ok(())
}

/// BLKDISCARD over the whole device; `Ok(false)` when the device does not support it.
///
/// Opened with O_EXCL so a device that got mounted or claimed since the checks is refused
/// rather than discarded under a live filesystem; zfs-fuse does not claim its vdevs, so
/// `zpool status` is asked too.
pub(crate) fn discard_whole(path: &Path, size: u64) -> Result<bool> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    safety::check_members(path, &name).map_err(|r| Error::refused(path, r))?;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EBUSY) {
                Error::refused(
                    path,
                    "it is in use (mounted or claimed) and cannot be discarded; release it first",
                )
            } else {
                Error::io("cannot open for discard", path, e)
            }
        })?;
    match ioctl::discard(f.as_fd(), 0, size) {
        Ok(()) => Ok(true),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::EINVAL)
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(Error::io("BLKDISCARD failed on", path, e)),
    }
}

/// Provenance common to devices and loop devices.
pub(crate) fn device_info(kind: &str, path: &Path, dev: DevNum, size: u64) -> TargetInfo {
    let facts = sysfs::queue_facts(dev).unwrap_or_default();
    let mut info = TargetInfo {
        kind: kind.to_string(),
        path: path.display().to_string(),
        size_bytes: size,
        model: facts.model,
        rotational: facts.rotational,
        scheduler: facts.scheduler,
        logical_block_size: facts.logical_block_size,
        discard_supported: facts.discard,
        ..Default::default()
    };
    info.extra.insert("device_number".into(), dev.to_string());
    info.extra.insert("kernel_name".into(), facts.name);
    info
}

impl Target for BlockTarget {
    fn info(&self) -> TargetInfo {
        let c = &self.checked;
        let mut info = device_info("device", &c.path, c.dev, c.size);
        if let Some(d) = self.discard.get() {
            info.discard_supported = Some(d);
        }
        info
    }

    fn block_device(&self) -> Option<&Path> {
        Some(&self.checked.path)
    }

    fn directory(&self) -> Option<&Path> {
        None
    }

    fn check_identity(&self) -> Result<()> {
        verify_identity(&self.checked.path, self.checked.dev, self.checked.size)
    }

    fn discard(&self) -> Result<bool> {
        self.check_identity()?;
        let ok = discard_whole(&self.checked.path, self.checked.size)?;
        self.discard.set(ok);
        Ok(ok)
    }
}
