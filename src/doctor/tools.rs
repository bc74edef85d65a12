//! Which programs a run needs (the needs of a plan's setups, engine and workloads) and which
//! package brings each ([`package`]): a filesystem's programs as its driver declares them
//! (`Caps::packages`, `fs::packages`), the rest from the host's table
//! ([`crate::host::packages::TOOLS`]). The package managers and the lookup on PATH live in
//! [`crate::host::packages`]; they are re-exported here for the doctor's callers.
//!
//! A workload's programs are its kind's (`Needs::programs` in its module, read through the
//! workload registry) and a filesystem's its driver's, and so are the packages of a program no
//! table in `host` lists (`Workload::packages`): [`package`], [`present`] and
//! [`debian_package`] read all three, so nothing here or in `host/packages.rs` changes when a
//! kind or a driver is added.

use serde::Serialize;

pub use crate::host::packages::{MANAGERS, Manager, detect_manager, locate};

/// The package that provides `tool` under `manager`; `None` when that distribution has none
/// or nothing declares the program: the drivers' (`kernel_zfs`: whether the kernel has the
/// ZFS module; a driver served from user space without it gets its programs from its
/// daemon's package), `host`'s table, else the row a workload kind declares for its program.
pub fn package(tool: &str, manager: Manager, kernel_zfs: bool) -> Option<&'static str> {
    match crate::fs::packages::of_any_driver(tool, kernel_zfs) {
        Some(p) => p.under(manager),
        None => crate::host::packages::package(tool, manager).or_else(|| {
            crate::workload::registry::declared_tool(tool)?
                .package
                .under(manager)
        }),
    }
}

/// Whether `tool` is installed: on PATH or in its row's directories, a kind's row included.
pub fn present(tool: &str) -> bool {
    crate::host::packages::present(tool)
        || crate::workload::registry::declared_tool(tool).is_some_and(|t| t.in_dirs().is_some())
}

/// The Debian package of `tool`, for messages on any system ("package xfsprogs").
pub fn debian_package(tool: &str) -> &'static str {
    package(tool, Manager::Apt, crate::host::zfs::kernel()).unwrap_or("unknown")
}

/// A program a run needs and what needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Need {
    /// Program name.
    pub tool: String,
    /// What needs it: a setup (`xfs`), `--engine fio`, a workload id.
    pub needed_by: String,
}

/// What a run asks for, as far as programs go.
#[derive(Debug, Clone, Default)]
pub struct Wants {
    /// (setup name, filesystem) pairs.
    pub setups: Vec<(String, String)>,
    /// `--engine fio`.
    pub fio: bool,
    /// Workload ids.
    pub workloads: Vec<String>,
    /// Whether the kernel has the ZFS module (then zfs-fuse is not needed).
    pub kernel_zfs: bool,
}

/// The programs `wants` needs, each once, with the first thing that needs it.
pub fn needs(wants: &Wants) -> Vec<Need> {
    let mut out: Vec<Need> = Vec::new();
    let mut add = |tool: &str, by: &str| {
        if !out.iter().any(|n| n.tool == tool) {
            out.push(Need {
                tool: tool.to_string(),
                needed_by: by.to_string(),
            });
        }
    };
    // `Wants` carries the filesystems by name (`fsbench doctor --fs`, a plan's setups): the
    // one look-up here, per setup.
    for (name, fs) in &wants.setups {
        let Some(d) = crate::fs::driver(fs) else {
            continue;
        };
        for t in d.required_tools() {
            add(t, name);
        }
        // A filesystem served from user space without its kernel module (zfs-fuse).
        if let Some(daemon) = d.caps().userspace_daemon
            && !wants.kernel_zfs
        {
            add(daemon, name);
        }
    }
    if wants.fio {
        add("fio", "--engine fio");
    }
    for id in &wants.workloads {
        for t in crate::workload::registry::programs_of(id) {
            add(t, id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wants(setups: &[&str]) -> Wants {
        Wants {
            setups: setups
                .iter()
                .map(|s| (s.to_string(), s.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn packages_come_from_the_drivers_and_the_host_table_per_manager() {
        assert_eq!(package("zpool", Manager::Apt, false), Some("zfs-fuse"));
        assert_eq!(package("zpool", Manager::Apt, true), Some("zfsutils-linux"));
        assert_eq!(package("zfs-fuse", Manager::Dnf, false), None);
        assert_eq!(
            package("mkfs.xfs", Manager::Zypper, false),
            Some("xfsprogs")
        );
        assert_eq!(package("mount", Manager::Apt, false), Some("mount"));
        assert_eq!(
            package("pg_ctl", Manager::Dnf, false),
            Some("postgresql-server")
        );
        assert_eq!(package("no-such-tool", Manager::Apt, false), None);
    }

    #[test]
    fn every_program_a_run_may_need_has_a_debian_package() {
        let all = Wants {
            setups: crate::fs::DRIVERS
                .iter()
                .map(|r| (r.name.to_string(), r.name.to_string()))
                .collect(),
            fio: true,
            workloads: crate::workload::registry::shipped()
                .into_iter()
                .map(|w| w.id)
                .collect(),
            kernel_zfs: false,
        };
        for n in needs(&all) {
            assert!(
                package(&n.tool, Manager::Apt, false).is_some(),
                "{} (for {}) has no Debian package: declare it in its driver's Caps::packages \
                 or in host::packages::TOOLS",
                n.tool,
                n.needed_by
            );
        }
    }

    #[test]
    fn needs_follow_setups_engine_and_workloads() {
        let mut w = wants(&["ext4", "zfs"]);
        let tools: Vec<String> = needs(&w).into_iter().map(|n| n.tool).collect();
        assert_eq!(tools, ["mkfs.ext4", "mount", "zpool", "zfs", "zfs-fuse"]);
        w.kernel_zfs = true;
        w.fio = true;
        w.workloads = vec!["pgbench-rw".into(), "randread".into()];
        let n = needs(&w);
        let tools: Vec<&str> = n.iter().map(|n| n.tool.as_str()).collect();
        assert_eq!(
            tools,
            [
                "mkfs.ext4",
                "mount",
                "zpool",
                "zfs",
                "fio",
                "pg_ctl",
                "initdb",
                "pgbench"
            ]
        );
        assert_eq!(n[5].needed_by, "pgbench-rw");
    }
}
