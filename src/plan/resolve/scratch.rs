//! The target (image, device, directory, several devices), what it holds and what may reach it.

use crate::Error;
use crate::host::facts::HostFacts;
use crate::plan::SetupSpec;
use crate::plan::overrides::Overrides;
use crate::scratch::TargetKind;
use crate::scratch::multi::Multi;
use crate::units::format_size;

pub(super) fn target_choice(args: &Overrides, host: &HostFacts) -> crate::Result<TargetKind> {
    Ok(match (&args.device, &args.dir) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "--device",
                "cannot be combined with --dir; choose one target",
            ));
        }
        (Some(dev), None) => {
            if let Some(Err(why)) = &host.device {
                return Err(Error::refused(dev, why.clone()));
            }
            TargetKind::Device {
                path: dev.clone(),
                force_wipe: args.force_wipe,
            }
        }
        (None, Some(dir)) => TargetKind::Dir { path: dir.clone() },
        (None, None) => {
            if args.image_size == 0 {
                return Err(Error::invalid("--image-size", "must be larger than 0"));
            }
            TargetKind::Image {
                scratch_dir: args.scratch_dir.clone(),
                size: args.image_size,
                keep: args.keep_image,
            }
        }
    })
}

/// The devices after the first: `--images N` (images only) or `--device` repeated.
pub(super) fn multi_choice(args: &Overrides, target: &TargetKind) -> crate::Result<Multi> {
    match target {
        TargetKind::Image { .. } => Ok(Multi {
            images: args.images.max(1),
            devices: Vec::new(),
        }),
        _ if args.images > 1 => Err(Error::invalid(
            "--images",
            format!(
                "makes {} loop images and cannot be combined with --device or --dir; for \
                 several real devices repeat --device",
                args.images
            ),
        )),
        TargetKind::Device { .. } => Ok(Multi {
            images: 1,
            devices: args.more_devices.clone(),
        }),
        TargetKind::Dir { .. } | TargetKind::File { .. } => Ok(Multi::default()),
    }
}

/// Refuse variant `mkfs=`/`mount=` words that could reach a device other than the target
/// (positional arguments, external journals, other devices, paths outside the scratch area).
/// Also run on `--resume`, whose plan.json may have been edited.
pub fn check_variant_args(setups: &[SetupSpec], target: &TargetKind) -> crate::Result<()> {
    let scratch = crate::fs::setup::variant_args::scratch_area(target);
    for s in setups {
        if let Ok(d) = s.driver() {
            crate::fs::setup::variant_args::check(s, d.arg_rules(), &scratch)?;
        }
    }
    Ok(())
}

/// Bytes available to the plan, when they can be known without touching the target.
pub fn target_capacity(t: &TargetKind, host: &HostFacts) -> Option<u64> {
    match t {
        TargetKind::Image { size, .. } => Some(*size),
        TargetKind::Device { .. } | TargetKind::Dir { .. } | TargetKind::File { .. } => {
            host.target_bytes
        }
    }
}

pub(super) fn check_min_sizes(
    setups: &[SetupSpec],
    capacity: u64,
    target: &TargetKind,
) -> crate::Result<()> {
    for s in setups {
        // A name without a driver was refused while parsing `--fs`.
        let min = s.driver().map_or(0, |d| d.min_device_size());
        if capacity < min {
            let (flag, fix) = match target {
                TargetKind::Image { .. } => (
                    "--image-size",
                    format!(
                        "use --image-size {} or more",
                        crate::units::fio_size(min.next_power_of_two()).to_uppercase()
                    ),
                ),
                _ => ("--device", "use a larger device".to_string()),
            };
            return Err(Error::invalid(
                flag,
                format!(
                    "{} is too small for {} (setup {}): it needs at least {}; {fix}",
                    format_size(capacity),
                    s.fs,
                    s.name,
                    format_size(min)
                ),
            ));
        }
    }
    Ok(())
}
