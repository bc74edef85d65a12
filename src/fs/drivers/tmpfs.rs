//! tmpfs: the RAM ceiling reference. No device; its size comes from the setup (`size=…`)
//! or defaults to half of RAM, the kernel's own default, written out so it is recorded.

use crate::fs::SetupSpec;
use crate::fs::caps::{Caps, Crash, Shrink};
use crate::fs::mount::{self, KernelMount};
use crate::fs::setup::variant_args::ArgRules;
use crate::fs::setup::variant_keys::{self, Accepts};
use crate::fs::{Filesystem, MkfsRecord, Mounted};
use crate::measure::backing::Backing;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The tmpfs driver.
pub struct Tmpfs;

const ACCEPTS: Accepts = Accepts {
    mkfs: false,
    mount: true,
    props: &["size"],
    dir_attrs: &[],
    args: ArgRules::NONE,
    hints: &[],
};

/// The mount options for a setup: its own, plus `size=` (from `size` or half of RAM).
pub fn options(setup: &SetupSpec) -> Result<(String, u64)> {
    let mut opts: Vec<String> = setup.mount.clone();
    let given = opts
        .iter()
        .find_map(|o| o.strip_prefix("size="))
        .map(str::to_string)
        .or_else(|| setup.props.get("size").cloned());
    let size = match given {
        Some(s) if s.ends_with('%') => {
            let pct: u64 = s.trim_end_matches('%').parse().map_err(|_| {
                Error::invalid(
                    "--fs",
                    format!("setup {:?}: tmpfs size={s} is not a percentage", setup.name),
                )
            })?;
            crate::host::sys::ram_bytes() / 100 * pct
        }
        Some(s) => crate::units::parse_size(&s).map_err(|e| {
            Error::invalid(
                "--fs",
                format!("setup {:?}: tmpfs size={s}: {e}", setup.name),
            )
        })?,
        None => crate::host::sys::ram_bytes() / 2,
    };
    opts.retain(|o| !o.starts_with("size="));
    opts.push(format!("size={size}"));
    Ok((opts.join(","), size))
}

fn describe(_device: Option<&Path>, _mnt: &Path) -> BTreeMap<String, String> {
    BTreeMap::new()
}

/// No device, nothing to check, grow or snapshot; its data lives in RAM.
const CAPS: Caps = Caps {
    mount_types: &["tmpfs"],
    backing: Backing::None,
    shrink: Shrink::None("tmpfs has no device to shrink"),
    crash: Crash::Unsupported(" (tmpfs has no device to record)"),
    ..Caps::NONE
};

impl Filesystem for Tmpfs {
    fn name(&self) -> &'static str {
        "tmpfs"
    }

    fn caps(&self) -> &Caps {
        &CAPS
    }

    fn required_tools(&self) -> &'static [&'static str] {
        &["mount"]
    }

    fn min_device_size(&self) -> u64 {
        0
    }

    fn validate(&self, setup: &SetupSpec) -> Result<()> {
        variant_keys::check("tmpfs", setup, &ACCEPTS)?;
        options(setup).map(drop)
    }

    fn accepts(&self) -> &Accepts {
        &ACCEPTS
    }

    fn mount(
        &self,
        _device: &Path,
        setup: &SetupSpec,
        _mountpoint: &Path,
        _timeout: Duration,
    ) -> Result<Box<dyn Mounted>> {
        Err(Error::Other(format!(
            "setup {:?}: tmpfs keeps nothing once unmounted, so it cannot be mounted again",
            setup.name
        )))
    }

    fn create_and_mount(
        &self,
        _device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        let (opts, size) = options(setup)?;
        let dir_held = mount::ensure_mountpoint(mountpoint)?;
        let created = dir_held.is_some();
        let t0 = Instant::now();
        let held = match mount::mount("tmpfs", "fsbench-tmpfs", Some(&opts), mountpoint, timeout) {
            Ok(h) => h,
            Err(e) => {
                if created {
                    mount::remove_mountpoint(mountpoint);
                }
                return Err(e);
            }
        };
        let record = MkfsRecord {
            args: crate::host::command::argv(&[
                "mount",
                "-t",
                "tmpfs",
                "-o",
                &opts,
                "fsbench-tmpfs",
                &mountpoint.display().to_string(),
            ]),
            output: String::new(),
            seconds: t0.elapsed().as_secs_f64(),
        };
        let mut m = KernelMount::new(None, mountpoint.to_path_buf(), created, describe);
        m.held.push(held);
        m.held.extend(dir_held);
        m.extra.insert("tmpfs.size".into(), size.to_string());
        m.extra.insert(
            "note".into(),
            "tmpfs lives in RAM: a ceiling reference, not a disk filesystem".into(),
        );
        Ok((record, Box::new(m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_option() {
        let mut s = SetupSpec::plain("tmpfs");
        s.props.insert("size".into(), "1G".into());
        assert_eq!(options(&s).unwrap().0, format!("size={}", 1u64 << 30));
        let mut s = SetupSpec::plain("tmpfs");
        s.mount = vec!["size=64M".into(), "noatime".into()];
        assert_eq!(
            options(&s).unwrap().0,
            format!("noatime,size={}", 64u64 << 20)
        );
        let (_, half) = options(&SetupSpec::plain("tmpfs")).unwrap();
        assert!(half > 0);
        let mut s = SetupSpec::plain("tmpfs");
        s.mkfs = vec!["-x".into()];
        assert!(Tmpfs.validate(&s).is_err());
    }
}
