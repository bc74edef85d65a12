//! Which package brings a filesystem's program: each driver declares its own
//! ([`super::Caps::packages`], read through [`super::Filesystem::package_of`]), so a driver
//! added with its programs is installable without a table elsewhere to update. The doctor,
//! `--install-missing` and `fsbench plan` ask [`of_any_driver`]; a "skipping setup" note asks
//! [`debian_package`].

use crate::host::packages::{Manager, Package};

/// The package of `tool` as the driver that declares it says; `kernel_module`: whether the
/// kernel has that filesystem's module (without it, zfs-fuse brings `zpool` and `zfs`).
/// `None` when no driver declares the program (`mount`, fio: the host's table has those).
pub fn of_any_driver(tool: &str, kernel_module: bool) -> Option<Package> {
    super::DRIVERS
        .iter()
        .find_map(|r| r.driver.package_of(tool, kernel_module))
}

/// The Debian package of `driver`'s program `tool`, for a note on any system (`package
/// xfsprogs`): its driver's declaration, else the host's table (`mount`), else `unknown`.
pub fn debian_package(driver: &dyn super::Filesystem, tool: &str) -> &'static str {
    match driver.package_of(tool, crate::host::zfs::kernel()) {
        Some(p) => p.under(Manager::Apt),
        None => crate::host::packages::package(tool, Manager::Apt),
    }
    .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_a_driver_needs_or_asks_has_a_debian_package() {
        for r in &super::super::DRIVERS {
            let d = r.driver;
            let versions = d.versions().iter().map(|v| v.tool);
            let daemon = d.caps().userspace_daemon;
            for t in d
                .required_tools()
                .iter()
                .copied()
                .chain(versions)
                .chain(daemon)
            {
                for kernel in [true, false] {
                    let p = d
                        .package_of(t, kernel)
                        .and_then(|p| p.under(Manager::Apt))
                        .or_else(|| crate::host::packages::package(t, Manager::Apt));
                    assert!(
                        p.is_some(),
                        "{}: {t} has no Debian package in its driver's Caps::packages \
                         (kernel module: {kernel})",
                        r.name
                    );
                }
            }
        }
    }

    #[test]
    fn a_userspace_daemon_brings_the_programs_without_the_kernel_module() {
        let zpool = |kernel| of_any_driver("zpool", kernel).and_then(|p| p.under(Manager::Apt));
        assert_eq!(zpool(false), Some("zfs-fuse"));
        assert_eq!(zpool(true), Some("zfsutils-linux"));
        let fuse = of_any_driver("zfs-fuse", false).unwrap();
        assert_eq!(fuse.under(Manager::Dnf), None);
        assert_eq!(
            of_any_driver("mkfs.xfs", false).and_then(|p| p.under(Manager::Pacman)),
            Some("xfsprogs")
        );
        assert_eq!(
            of_any_driver("mount", true),
            None,
            "the host's, not a driver's"
        );
        assert_eq!(of_any_driver("fio", true), None);
    }
}
