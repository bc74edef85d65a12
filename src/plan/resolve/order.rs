//! The order of a round: every step of one setup, then the next setup (each setup-round on
//! the one image, made anew), or by steps (each setup on an image of its own, all made at the
//! round's start, and each step run on every setup back to back: `runner::by_step`).
//!
//! By steps a setup's ratio pairs two measurements seconds apart instead of a setup's slot
//! (a minute or more) apart, so the disk's own pace, which drifts over minutes on a shared
//! host, cancels in the ratio. It needs room for one sparse image per setup beside the first
//! and setups that touch nothing but their own device.

use crate::fs::SetupSpec;
use crate::host::facts::HostFacts;
use crate::plan::{Kind, WorkloadSpec};
use crate::scratch::TargetKind;
use crate::scratch::multi::Multi;

/// Whether a round runs by steps: an image target of one image per setup on a disk (not in
/// RAM, where every setup's data held at once would cost memory), with two setups or more
/// (an `--until-settled` run's extra rounds too: by steps they run only the setups and steps
/// of the questions still open, `runner::more_rounds`), none of which changes host settings (some are host-wide),
/// ages or restores an image, or spans several devices, and no fio job file (its phases hold
/// one setup's outputs between steps).
pub(super) fn by_step(
    target: &TargetKind,
    multi: &Multi,
    in_ram: bool,
    setups: &[SetupSpec],
    workloads: &[WorkloadSpec],
) -> bool {
    matches!(target, TargetKind::Image { .. })
        && multi.is_single()
        && !in_ram
        && setups.len() >= 2
        && setups
            .iter()
            .all(|s| s.host.is_empty() && s.age.is_none() && s.raid.is_none() && s.mraid.is_none())
        && workloads.iter().all(|w| w.kind != Kind::FioJob)
}

/// Whether a round runs by steps (unless `--by-setup` asked otherwise, [`by_step`]), and why
/// not when it could but the images would not fit ([`no_room`]).
pub(super) fn choose(
    by_setup: bool,
    target: &TargetKind,
    multi: &Multi,
    host: &HostFacts,
    setups: &[SetupSpec],
    workloads: &[WorkloadSpec],
) -> (bool, Option<String>) {
    let in_ram = host.target_in_ram.is_some();
    let could = !by_setup && by_step(target, multi, in_ram, setups, workloads);
    let why = could
        .then(|| no_room(target, setups.len(), host.scratch_free))
        .flatten();
    (could && why.is_none(), why)
}

/// Why a round that could run by steps runs by setup: the sparse images, one per setup and
/// each of the target's size, might not all fit in the scratch directory's `free` bytes
/// (`None`: they fit, or the free space is unknown). A sparse image takes only what is
/// written, but a workload may fill it, and a full scratch disk fails mid-run.
pub(super) fn no_room(target: &TargetKind, setups: usize, free: Option<u64>) -> Option<String> {
    let (
        TargetKind::Image {
            scratch_dir, size, ..
        },
        Some(free),
    ) = (target, free)
    else {
        return None;
    };
    (!crate::scratch::multi::images_fit(*size, setups as u64, free)).then(|| {
        format!(
            "{setups} images of {} (one per setup) would not fit in {} ({} free); a smaller \
             --image-size or another --scratch-dir runs by steps",
            crate::units::format_size(*size),
            scratch_dir.display(),
            crate::units::format_size(free)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn image() -> TargetKind {
        TargetKind::Image {
            scratch_dir: PathBuf::from("/var/tmp"),
            size: 8 << 30,
            keep: false,
        }
    }

    fn setups(names: &[&str]) -> Vec<SetupSpec> {
        names.iter().map(|n| SetupSpec::plain(n)).collect()
    }

    #[test]
    fn by_step_only_where_every_setup_keeps_to_its_own_image() {
        let ws = crate::plan::workload::catalog();
        let two = setups(&["ext4", "xfs"]);
        let one = Multi::default();
        assert!(by_step(&image(), &one, false, &two, &ws));
        // One setup, RAM, several images, a device or directory: not.
        assert!(!by_step(&image(), &one, false, &two[..1], &ws));
        assert!(!by_step(&image(), &one, true, &two, &ws));
        let three = Multi {
            images: 3,
            ..Default::default()
        };
        assert!(!by_step(&image(), &three, false, &two, &ws));
        let dev = TargetKind::Device {
            path: PathBuf::from("/dev/loop9"),
            force_wipe: false,
        };
        assert!(!by_step(&dev, &one, false, &two, &ws));
        // A setup that ages, spans devices or sets host settings: not.
        let mut aged = two.clone();
        aged[1].age = Some(crate::fs::setup::age::parse("churn", "--age").expect("an age spec"));
        assert!(!by_step(&image(), &one, false, &aged, &ws));
        let mut raid = two.clone();
        raid[0].raid = Some("raid1".into());
        assert!(!by_step(&image(), &one, false, &raid, &ws));
    }

    #[test]
    fn no_room_when_the_images_would_not_all_fit() {
        // 3 × 8 GiB in 20 GiB: not; in 30 GiB, or free space unknown: room.
        let why = no_room(&image(), 3, Some(20 << 30)).expect("no room");
        assert!(
            why.contains("3 images of 8 GiB") && why.contains("20 GiB free"),
            "{why}"
        );
        assert_eq!(no_room(&image(), 3, Some(30 << 30)), None);
        assert_eq!(no_room(&image(), 3, None), None);
    }
}
