//! Which programs a run needs, where they are found, and which package brings each one on
//! every supported distribution: one table, used by the "missing tools" finding, by
//! `--install-missing`, and by the filesystem drivers' "skipping setup" notes.
//!
//! How to add a tool: one [`Tool`] line in [`TOOLS`] (its package per manager, `""` where the
//! distribution has none); a workload that needs it gets a line in [`WORKLOAD_TOOLS`].

use serde::Serialize;
use std::path::{Path, PathBuf};

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
    tool("sqlite3", ["sqlite3", "sqlite", "sqlite3", "sqlite"]),
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
];

/// `zpool` / `zfs` come from different packages depending on whether the kernel has ZFS.
const ZFS_KERNEL_PACKAGES: [&str; 4] = ["zfsutils-linux", "zfs", "zfs", ""];

/// Where distributions put PostgreSQL's server binaries (Debian, RHEL's PGDG packages).
const PG_DIRS: &[&str] = &["/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"];

const fn tool(name: &'static str, packages: [&'static str; 4]) -> Tool {
    Tool {
        name,
        packages,
        dirs: &[],
    }
}

/// Workloads that need programs besides the filesystem's tools: (id prefix, programs).
pub const WORKLOAD_TOOLS: &[(&str, &[&str])] = &[
    ("pgbench", &["pg_ctl", "initdb", "pgbench"]),
    ("sqlite", &["sqlite3"]),
];

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
    for (name, fs) in &wants.setups {
        if let Some(d) = crate::fs::driver(fs) {
            for t in d.required_tools() {
                add(t, name);
            }
        }
        if fs == "zfs" && !wants.kernel_zfs {
            add("zfs-fuse", name);
        }
    }
    if wants.fio {
        add("fio", "--engine fio");
    }
    for id in &wants.workloads {
        for (prefix, tools) in WORKLOAD_TOOLS {
            if id.starts_with(prefix) {
                for t in *tools {
                    add(t, id);
                }
            }
        }
    }
    out
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
    let dirs = TOOLS.iter().find(|t| t.name == tool)?.dirs;
    dirs.iter()
        .flat_map(|pattern| expand_star(pattern))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
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
        _ => TOOLS.iter().find(|t| t.name == tool)?.packages,
    };
    Some(row[manager.column()]).filter(|p| !p.is_empty())
}

/// The Debian package name, for messages on any system ("package xfsprogs").
pub fn debian_package(tool: &str) -> &'static str {
    package(tool, Manager::Apt, Path::new("/sys/module/zfs").exists()).unwrap_or("unknown")
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
    fn every_filesystem_tool_has_a_debian_package() {
        for fs in crate::fs::KNOWN {
            for t in crate::fs::driver(fs).unwrap().required_tools() {
                assert!(
                    package(t, Manager::Apt, false).is_some(),
                    "{fs}: {t} has no Debian package in TOOLS"
                );
            }
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

    #[test]
    fn packages_differ_per_manager_and_zfs_flavour() {
        assert_eq!(package("zpool", Manager::Apt, false), Some("zfs-fuse"));
        assert_eq!(package("zpool", Manager::Apt, true), Some("zfsutils-linux"));
        assert_eq!(package("zfs-fuse", Manager::Dnf, false), None);
        assert_eq!(
            package("pg_ctl", Manager::Dnf, false),
            Some("postgresql-server")
        );
        assert_eq!(package("sqlite3", Manager::Pacman, false), Some("sqlite"));
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
