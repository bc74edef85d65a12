//! Packages and programs: the shape every declaration of "program → package per
//! distribution" uses ([`Package`], [`Tool`]), the package managers, where a program is found,
//! and the table of the programs no filesystem driver declares ([`TOOLS`]: `mount`, fio, the
//! workloads'). It sits in `host` so the drivers (`fs`) and the workload kinds can declare
//! their own programs' packages with it without reaching up into `doctor`, which gathers them
//! all (`doctor::tools::package`).
//!
//! How to add a tool: a filesystem's program is a [`Tool`] in its driver's
//! `Caps::packages` (`fs/drivers/<fs>/`), nothing here; any other program new to fsbench is
//! one [`Tool`] line in [`TOOLS`] (its package per manager, `""` where the distribution has
//! none); a workload kind that runs it says so in its own `needs` (`Needs::programs`), which
//! the doctor reads.

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

/// The package that brings a program on each supported distribution; `""` where that
/// distribution has none. The one shape every declaration uses: a driver's programs
/// (`fs::caps::Caps::packages`), a workload kind's, and the general ones of [`TOOLS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Package {
    /// Debian, Ubuntu.
    pub apt: &'static str,
    /// Fedora, RHEL, Rocky, Alma.
    pub dnf: &'static str,
    /// openSUSE, SLES.
    pub zypper: &'static str,
    /// Arch.
    pub pacman: &'static str,
}

impl Package {
    /// The same package name on every distribution (`xfsprogs`).
    pub const fn everywhere(name: &'static str) -> Package {
        Package {
            apt: name,
            dnf: name,
            zypper: name,
            pacman: name,
        }
    }

    /// Its name under `manager`; `None` when that distribution has none.
    pub fn under(self, manager: Manager) -> Option<&'static str> {
        let name = match manager {
            Manager::Apt => self.apt,
            Manager::Dnf => self.dnf,
            Manager::Zypper => self.zypper,
            Manager::Pacman => self.pacman,
        };
        Some(name).filter(|n| !n.is_empty())
    }
}

/// One program and the package that provides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// Program name as run.
    pub name: &'static str,
    /// Its package per distribution.
    pub package: Package,
    /// Directories searched besides PATH (PostgreSQL keeps its server off PATH).
    pub dirs: &'static [&'static str],
}

impl Tool {
    /// Where it is outside PATH: the first of its [`Tool::dirs`] that holds it.
    pub fn in_dirs(&self) -> Option<PathBuf> {
        self.dirs
            .iter()
            .flat_map(|pattern| expand_star(pattern))
            .map(|d| d.join(self.name))
            .find(|p| p.is_file())
    }

    /// A program found on PATH.
    pub const fn new(name: &'static str, package: Package) -> Tool {
        Tool {
            name,
            package,
            dirs: &[],
        }
    }
}

/// The programs no filesystem driver declares (a driver's are in its `Caps::packages`) and
/// more than one workload kind or module runs: `mount`, which every kernel filesystem uses,
/// the engine's fio, PostgreSQL, qemu, podman, fstrim (a program only one kind runs is that
/// kind's to declare, `Workload::packages`: sqlite3, git, postmark).
pub const TOOLS: &[Tool] = &[
    Tool::new("mount", UTIL_LINUX_MOUNT),
    Tool::new("fio", Package::everywhere("fio")),
    Tool {
        name: "pgbench",
        package: Package {
            apt: "postgresql",
            dnf: "postgresql-contrib",
            zypper: "postgresql-contrib",
            pacman: "postgresql",
        },
        dirs: PG_DIRS,
    },
    Tool {
        name: "pg_ctl",
        package: PG_SERVER,
        dirs: PG_DIRS,
    },
    Tool {
        name: "initdb",
        package: PG_SERVER,
        dirs: PG_DIRS,
    },
    // Containers and VM images.
    Tool::new(
        "qemu-img",
        Package {
            apt: "qemu-utils",
            dnf: "qemu-img",
            zypper: "qemu-tools",
            pacman: "qemu-img",
        },
    ),
    Tool::new(
        "qemu-storage-daemon",
        Package {
            apt: "qemu-utils",
            dnf: "qemu-storage-daemon",
            zypper: "qemu-tools",
            pacman: "qemu-img",
        },
    ),
    Tool::new("podman", Package::everywhere("podman")),
    // Snapshots and aging.
    Tool::new("fstrim", Package::everywhere("util-linux")),
];

/// Debian splits `mount` out of util-linux.
const UTIL_LINUX_MOUNT: Package = Package {
    apt: "mount",
    ..Package::everywhere("util-linux")
};

/// PostgreSQL's server programs.
const PG_SERVER: Package = Package {
    apt: "postgresql",
    dnf: "postgresql-server",
    zypper: "postgresql-server",
    pacman: "postgresql",
};

/// Where distributions put PostgreSQL's server binaries (Debian, RHEL's PGDG packages).
const PG_DIRS: &[&str] = &["/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"];

/// The package of `tool` among `declared` under `manager`; `None` when it is not declared
/// there or that distribution has none.
pub fn package_in(declared: &[Tool], tool: &str, manager: Manager) -> Option<&'static str> {
    declared
        .iter()
        .find(|t| t.name == tool)
        .and_then(|t| t.package.under(manager))
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

/// The package of one of [`TOOLS`] under `manager` (a driver's programs are its driver's to
/// say: `fs::Filesystem::package_of`; the doctor asks both).
pub fn package(tool: &str, manager: Manager) -> Option<&'static str> {
    package_in(TOOLS, tool, manager)
}

/// The Debian package of one of [`TOOLS`], for messages on any system ("package qemu-utils").
pub fn debian_package(tool: &str) -> &'static str {
    package(tool, Manager::Apt).unwrap_or("unknown")
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
    fn packages_differ_per_manager() {
        assert_eq!(package("mount", Manager::Apt), Some("mount"));
        assert_eq!(package("mount", Manager::Dnf), Some("util-linux"));
        assert_eq!(package("qemu-img", Manager::Zypper), Some("qemu-tools"));
        assert_eq!(package("pg_ctl", Manager::Dnf), Some("postgresql-server"));
        // A program one kind runs is its kind's to declare (`Workload::packages`).
        assert_eq!(package("sqlite3", Manager::Pacman), None);
        assert_eq!(package("no-such-tool", Manager::Apt), None);
        // A driver's program is its driver's to declare, not this table's.
        assert_eq!(package("mkfs.xfs", Manager::Apt), None);
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
