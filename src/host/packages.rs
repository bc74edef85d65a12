//! Which package brings each program fsbench may run, on every supported distribution, and
//! where a program is found: one table, read by the filesystem drivers' "skipping setup"
//! notes and by the doctor (the "missing tools" finding, `--install-missing`). It sits in
//! `host` so the drivers (`fs`) need not reach up into `doctor`.
//!
//! How to add a tool: one [`Tool`] line in [`TOOLS`] (its package per manager, `""` where the
//! distribution has none), keyed by program, only when the program is new and not a workload
//! kind's; a workload kind that runs it says so in its own `needs` (`Needs::programs`), and
//! declares a new program's [`Tool`] beside it (`Workload::packages`), which the doctor reads
//! through [`Tool::package`] and [`Tool::in_dirs`] without a row here.

use serde::Serialize;
use std::path::PathBuf;

/// A distribution package manager fsbench can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Manager {
    /// Debian, Ubuntu.
    Apt,
    /// Fedora, RHEL, Rocky, Alma.
    Dnf,
    /// openSUSE, SLES.
    Zypper,
    /// Arch.
    Pacman,
}

/// Every manager, in the order they are looked for on PATH.
pub const MANAGERS: &[Manager] = &[Manager::Apt, Manager::Dnf, Manager::Zypper, Manager::Pacman];

impl Manager {
    /// The program on PATH.
    pub fn program(self) -> &'static str {
        match self {
            Manager::Apt => "apt-get",
            Manager::Dnf => "dnf",
            Manager::Zypper => "zypper",
            Manager::Pacman => "pacman",
        }
    }

    fn column(self) -> usize {
        self as usize
    }

    /// The command that installs `packages` without asking.
    pub fn install_argv(self, packages: &[&str]) -> Vec<String> {
        let head: &[&str] = match self {
            Manager::Apt => &["apt-get", "install", "-y", "--no-install-recommends"],
            Manager::Dnf => &["dnf", "install", "-y"],
            Manager::Zypper => &["zypper", "--non-interactive", "install"],
            Manager::Pacman => &["pacman", "-S", "--noconfirm", "--needed"],
        };
        head.iter()
            .chain(packages.iter())
            .map(|s| s.to_string())
            .collect()
    }

    /// The command that refreshes the package lists (apt's are empty on a fresh image).
    pub fn refresh_argv(self) -> Option<Vec<String>> {
        match self {
            Manager::Apt => Some(vec!["apt-get".into(), "update".into()]),
            Manager::Pacman => Some(vec!["pacman".into(), "-Sy".into()]),
            Manager::Dnf | Manager::Zypper => None,
        }
    }
}

/// One program and the package that provides it, per manager.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Program name as run.
    pub name: &'static str,
    /// Package per manager, in [`MANAGERS`] order; `""` when that distribution has none.
    pub packages: [&'static str; 4],
    /// Directories searched besides PATH (PostgreSQL keeps its server off PATH).
    pub dirs: &'static [&'static str],
}

/// Every program fsbench may need.
pub const TOOLS: &[Tool] = &[
    tool("mount", ["mount", "util-linux", "util-linux", "util-linux"]),
    tool("mkfs.ext4", ["e2fsprogs"; 4]),
    tool("tune2fs", ["e2fsprogs"; 4]),
    tool("e2fsck", ["e2fsprogs"; 4]),
    tool("mkfs.xfs", ["xfsprogs"; 4]),
    tool("xfs_info", ["xfsprogs"; 4]),
    tool("xfs_repair", ["xfsprogs"; 4]),
    tool("mkfs.btrfs", ["btrfs-progs"; 4]),
    tool("btrfs", ["btrfs-progs"; 4]),
    // zfs-fuse is packaged by Debian only; elsewhere ZFS means OpenZFS's own repositories.
    tool("zfs-fuse", ["zfs-fuse", "", "", ""]),
    tool("fio", ["fio"; 4]),
    Tool {
        name: "pgbench",
        packages: [
            "postgresql",
            "postgresql-contrib",
            "postgresql-contrib",
            "postgresql",
        ],
        dirs: PG_DIRS,
    },
    Tool {
        name: "pg_ctl",
        packages: [
            "postgresql",
            "postgresql-server",
            "postgresql-server",
            "postgresql",
        ],
        dirs: PG_DIRS,
    },
    Tool {
        name: "initdb",
        packages: [
            "postgresql",
            "postgresql-server",
            "postgresql-server",
            "postgresql",
        ],
        dirs: PG_DIRS,
    },
    // Containers and VM images.
    tool(
        "qemu-img",
        ["qemu-utils", "qemu-img", "qemu-tools", "qemu-img"],
    ),
    tool(
        "qemu-storage-daemon",
        [
            "qemu-utils",
            "qemu-storage-daemon",
            "qemu-tools",
            "qemu-img",
        ],
    ),
    tool("podman", ["podman"; 4]),
    // Source trees, mail, logs, snapshots and backups.
    tool(
        "fstrim",
        ["util-linux", "util-linux", "util-linux", "util-linux"],
    ),
    // Aging.
];

/// `zpool` / `zfs` come from different packages depending on whether the kernel has ZFS.
const ZFS_KERNEL_PACKAGES: [&str; 4] = ["zfsutils-linux", "zfs", "zfs", ""];

/// Where distributions put PostgreSQL's server binaries (Debian, RHEL's PGDG packages).
const PG_DIRS: &[&str] = &["/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"];

/// A [`Tool`] found on PATH only.
pub const fn tool(name: &'static str, packages: [&'static str; 4]) -> Tool {
    Tool {
        name,
        packages,
        dirs: &[],
    }
}

/// Whether a program is installed: on PATH, or in one of its table's extra directories.
pub fn present(tool: &str) -> bool {
    locate(tool).is_some()
}

/// Where a program is: PATH first, then its [`Tool::dirs`] (globs with one `*`).
pub fn locate(tool: &str) -> Option<PathBuf> {
    if let Some(paths) = std::env::var_os("PATH")
        && let Some(p) = std::env::split_paths(&paths)
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
    {
        return Some(p);
    }
    TOOLS.iter().find(|t| t.name == tool)?.in_dirs()
}

impl Tool {
    /// Its package under `manager`; `None` when that distribution has none.
    pub fn package(&self, manager: Manager) -> Option<&'static str> {
        Some(self.packages[manager.column()]).filter(|p| !p.is_empty())
    }

    /// Where it is outside PATH: the first of its [`Tool::dirs`] that holds it.
    pub fn in_dirs(&self) -> Option<PathBuf> {
        self.dirs
            .iter()
            .flat_map(|pattern| expand_star(pattern))
            .map(|d| d.join(self.name))
            .find(|p| p.is_file())
    }
}

/// Expand a directory pattern with at most one `*` component (no glob crate for two paths).
fn expand_star(pattern: &str) -> Vec<PathBuf> {
    let comps: Vec<&str> = pattern.split('/').collect();
    let Some(i) = comps.iter().position(|c| c.contains('*')) else {
        return vec![PathBuf::from(pattern)];
    };
    let parent = comps[..i].join("/");
    let rest = comps[i + 1..].join("/");
    let (pre, post) = comps[i].split_once('*').unwrap_or((comps[i], ""));
    let mut v: Vec<PathBuf> = std::fs::read_dir(&parent)
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with(pre) && n.ends_with(post) && n.len() >= pre.len() + post.len()
                })
                .map(|e| e.path().join(&rest))
                .collect()
        })
        .unwrap_or_default();
    // Newest version last (…/15/bin after …/13/bin), and that is the one to prefer.
    v.sort();
    v.reverse();
    v
}

/// The package that provides `tool` under `manager`; `None` when the distribution has none.
/// `kernel_zfs` picks the OpenZFS utilities over zfs-fuse for `zpool` and `zfs`.
pub fn package(tool: &str, manager: Manager, kernel_zfs: bool) -> Option<&'static str> {
    let row = match tool {
        "zpool" | "zfs" if kernel_zfs => ZFS_KERNEL_PACKAGES,
        "zpool" | "zfs" => TOOLS.iter().find(|t| t.name == "zfs-fuse")?.packages,
        _ => return TOOLS.iter().find(|t| t.name == tool)?.package(manager),
    };
    Some(row[manager.column()]).filter(|p| !p.is_empty())
}

/// The Debian package name, for messages on any system ("package xfsprogs").
pub fn debian_package(tool: &str) -> &'static str {
    package(tool, Manager::Apt, super::zfs::kernel()).unwrap_or("unknown")
}

/// The first manager found on PATH.
pub fn detect_manager() -> Option<Manager> {
    MANAGERS
        .iter()
        .copied()
        .find(|m| crate::host::command::available(m.program()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_differ_per_manager_and_zfs_flavour() {
        assert_eq!(package("zpool", Manager::Apt, false), Some("zfs-fuse"));
        assert_eq!(package("zpool", Manager::Apt, true), Some("zfsutils-linux"));
        assert_eq!(package("zfs-fuse", Manager::Dnf, false), None);
        assert_eq!(
            package("pg_ctl", Manager::Dnf, false),
            Some("postgresql-server")
        );
        assert_eq!(package("no-such-tool", Manager::Apt, false), None);
    }

    #[test]
    fn star_patterns_expand_newest_first() {
        let d = tempfile::tempdir().unwrap();
        for v in ["13", "15", "x"] {
            std::fs::create_dir_all(d.path().join(format!("pg{v}/bin"))).unwrap();
        }
        let pat = format!("{}/pg1*/bin", d.path().display());
        let got = expand_star(&pat);
        assert_eq!(
            got,
            [d.path().join("pg15/bin"), d.path().join("pg13/bin")],
            "{pat}"
        );
    }
}
