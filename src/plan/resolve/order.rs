//! The order of a round: every step of one setup, then the next setup (each setup-round on
//! the one image, made anew), or by steps (each setup on an image of its own, all made at the
//! round's start, and each step run on every setup back to back: `runner::by_step`).
//!
//! By steps a setup's ratio pairs two measurements seconds apart instead of a setup's slot
//! (a minute or more) apart, so the disk's own pace, which drifts over minutes on a shared
//! host, cancels in the ratio. It needs room for one sparse image per setup beside the first
//! and setups that touch nothing but their own device.

use crate::fs::SetupSpec;
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
}
