//! `--install-missing`: install the packages the requested setups need with the
//! distribution's own package manager, as the Phoronix Test Suite does for its tests.
//!
//! The plan is computed purely ([`plan`]) from what is needed and what is present, printed
//! ([`InstallPlan::describe`]) before anything happens, and only then executed, as root. The
//! package manager runs quietly: one progress line, and its errors (on stderr, so `--json`
//! output on stdout stays clean) only when it fails.

use super::tools::{self, Manager, Need};
use crate::Error;
use std::process::{Command, Stdio};

/// What would be installed, and what cannot be.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallPlan {
    /// The package manager found, if any.
    pub manager: Option<Manager>,
    /// Packages to install, each once, in the order first needed.
    pub packages: Vec<String>,
    /// For each package, the tools it brings and what needs them (`mkfs.xfs for xfs`).
    pub reasons: Vec<(String, Vec<String>)>,
    /// Missing tools this distribution has no package for: (tool, needed by).
    pub unpackaged: Vec<(String, String)>,
    /// The tools the packages are meant to bring (checked after installing).
    pub tools: Vec<String>,
}

impl InstallPlan {
    /// Whether nothing is missing at all.
    pub fn nothing_missing(&self) -> bool {
        self.packages.is_empty() && self.unpackaged.is_empty()
    }

    /// Human text: what will be installed with which command, and what cannot be.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if self.nothing_missing() {
            s.push_str(
                "fsbench: nothing to install: every program the requested setups need is present\n",
            );
            return s;
        }
        if let Some(m) = self.manager
            && !self.packages.is_empty()
        {
            s.push_str(&format!(
                "fsbench: will install {} package(s) with {}:\n",
                self.packages.len(),
                m.program()
            ));
            for (pkg, why) in &self.reasons {
                s.push_str(&format!("  {pkg:<20} {}\n", why.join(", ")));
            }
            let refs: Vec<&str> = self.packages.iter().map(String::as_str).collect();
            s.push_str(&format!(
                "  command: {}\n",
                crate::host::command::display(&m.install_argv(&refs))
            ));
        }
        for (tool, by) in &self.unpackaged {
            s.push_str(&format!(
                "fsbench: note: {tool} (for {by}) has no package on {}; {}\n",
                self.manager.map_or("this system", |m| m.program()),
                if tool == "zfs-fuse" || tool == "zpool" || tool == "zfs" {
                    "install OpenZFS from its own repository (openzfs.github.io), or skip zfs"
                } else {
                    "install it by hand, or skip what needs it"
                }
            ));
        }
        s
    }
}

/// Plan the installation of every tool in `needs` that `present` says is missing.
/// `manager` is `None` when no supported manager was found (then everything is unpackaged).
pub fn plan(
    needs: &[Need],
    present: &dyn Fn(&str) -> bool,
    manager: Option<Manager>,
    kernel_zfs: bool,
) -> InstallPlan {
    let mut p = InstallPlan {
        manager,
        packages: Vec::new(),
        reasons: Vec::new(),
        unpackaged: Vec::new(),
        tools: Vec::new(),
    };
    for n in needs.iter().filter(|n| !present(&n.tool)) {
        let Some(pkg) = manager.and_then(|m| tools::package(&n.tool, m, kernel_zfs)) else {
            p.unpackaged.push((n.tool.clone(), n.needed_by.clone()));
            continue;
        };
        p.tools.push(n.tool.clone());
        let why = format!("{} for {}", n.tool, n.needed_by);
        match p.reasons.iter_mut().find(|(k, _)| k == pkg) {
            Some((_, w)) => w.push(why),
            None => {
                p.packages.push(pkg.to_string());
                p.reasons.push((pkg.to_string(), vec![why]));
            }
        }
    }
    p
}

/// Plan for this machine: tools on PATH (and PostgreSQL's directories), the manager on PATH.
pub fn plan_here(needs: &[Need]) -> InstallPlan {
    plan(
        needs,
        &tools::present,
        tools::detect_manager(),
        crate::host::zfs::kernel(),
    )
}

/// Print the plan, then install it (unless `dry_run`). Refuses without root or without a
/// package manager, before anything is run.
pub fn install(p: &InstallPlan, dry_run: bool) -> crate::Result<()> {
    eprint!("{}", p.describe());
    let Some(m) = p.manager else {
        if p.nothing_missing() {
            return Ok(());
        }
        return Err(Error::invalid(
            "--install-missing",
            "no supported package manager (apt-get, dnf, zypper, pacman) was found; install the \
             programs above yourself",
        ));
    };
    if p.packages.is_empty() {
        return Ok(());
    }
    if dry_run {
        eprintln!("fsbench: dry run: nothing was installed");
        return Ok(());
    }
    if !rustix::process::geteuid().is_root() {
        return Err(Error::invalid(
            "--install-missing",
            format!(
                "installing packages needs root; run the same command with sudo, or install them \
                 yourself: {}",
                crate::host::command::display(
                    &m.install_argv(&p.packages.iter().map(String::as_str).collect::<Vec<_>>())
                )
            ),
        ));
    }
    let refs: Vec<&str> = p.packages.iter().map(String::as_str).collect();
    let argv = m.install_argv(&refs);
    let mut ok = run_quiet(&argv)?;
    // A fresh image often has empty package lists: refresh once and try again.
    if !ok && let Some(refresh) = m.refresh_argv() {
        ok = run_quiet(&refresh)? && run_quiet(&argv)?;
    }
    if !ok {
        return Err(Error::tool(
            crate::host::command::display(&argv),
            "the package manager failed (its errors are above)",
        ));
    }
    let still: Vec<&str> = p
        .tools
        .iter()
        .map(String::as_str)
        .filter(|t| !tools::present(t))
        .collect();
    if !still.is_empty() {
        return Err(Error::tool(
            crate::host::command::display(&argv),
            format!(
                "it succeeded, but {} is still not found on PATH",
                still.join(", ")
            ),
        ));
    }
    eprintln!("fsbench: installed {}", p.packages.join(" "));
    Ok(())
}

/// What a quiet package-manager run left to show.
#[derive(Debug)]
struct Ran {
    ok: bool,
    /// Its error output (stderr; the end of stdout when stderr was empty), for a failure.
    errors: String,
}

/// Lines of a failed run's output shown at most (apt's errors are its last lines).
const ERROR_LINES: usize = 40;

/// Run a package-manager command with one progress line instead of its progress dump
/// ("(Reading database ... 5%" and so on); its errors are printed only when it fails.
fn run_quiet(argv: &[String]) -> crate::Result<bool> {
    eprintln!(
        "fsbench: running {} (its output is shown only if it fails) ...",
        crate::host::command::display(argv)
    );
    let ran = run_captured(argv)?;
    if !ran.ok {
        eprintln!("fsbench: {} failed:", argv[0]);
        for line in ran.errors.lines() {
            eprintln!("  {line}");
        }
    }
    Ok(ran.ok)
}

fn run_captured(argv: &[String]) -> crate::Result<Ran> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::tool(&argv[0], e.to_string()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        stderr.into_owned()
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors = lines[lines.len().saturating_sub(ERROR_LINES)..].join("\n");
    Ok(Ran {
        ok: out.status.success(),
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh_debian(tool: &str) -> bool {
        // What a fresh Debian has: ext4's tools and mount, nothing else.
        ["mkfs.ext4", "mount", "tune2fs"].contains(&tool)
    }

    fn needs() -> Vec<Need> {
        let wants = tools::Wants {
            setups: ["ext4", "xfs", "btrfs", "zfs"]
                .iter()
                .map(|s| (s.to_string(), s.to_string()))
                .collect(),
            fio: true,
            ..Default::default()
        };
        tools::needs(&wants)
    }

    /// The progress dump is kept back; a failure's errors come through, a success's output not.
    #[test]
    fn a_quiet_run_keeps_only_the_errors() {
        let sh =
            |script: &str| run_captured(&["sh".to_string(), "-c".into(), script.into()]).unwrap();
        let r = sh(
            "echo '(Reading database ... 5%'; echo 'E: Unable to locate package x' >&2; exit 100",
        );
        assert!(!r.ok);
        assert_eq!(r.errors, "E: Unable to locate package x");
        let r = sh("for i in $(seq 1 100); do echo \"line $i\"; done; exit 1");
        assert!(!r.ok);
        assert!(
            r.errors.starts_with("line 61") && r.errors.ends_with("line 100"),
            "{}",
            r.errors
        );
        assert!(sh("echo '(Reading database ... 5%'").ok);
    }

    #[test]
    fn a_fresh_debian_gets_the_three_missing_filesystems_and_fio() {
        let p = plan(&needs(), &fresh_debian, Some(Manager::Apt), false);
        assert_eq!(p.packages, ["xfsprogs", "btrfs-progs", "zfs-fuse", "fio"]);
        assert!(p.unpackaged.is_empty());
        let text = p.describe();
        assert!(
            text.contains("will install 4 package(s) with apt-get"),
            "{text}"
        );
        assert!(
            text.contains("zpool for zfs, zfs for zfs, zfs-fuse for zfs"),
            "{text}"
        );
        assert!(text.contains(
            "command: apt-get install -y --no-install-recommends xfsprogs btrfs-progs zfs-fuse fio"
        ));
    }

    #[test]
    fn other_managers_use_their_names_and_say_what_they_lack() {
        let p = plan(&needs(), &fresh_debian, Some(Manager::Dnf), false);
        assert_eq!(p.packages, ["xfsprogs", "btrfs-progs", "fio"]);
        assert_eq!(
            p.unpackaged,
            [
                ("zpool".to_string(), "zfs".to_string()),
                ("zfs".into(), "zfs".into()),
                ("zfs-fuse".into(), "zfs".into())
            ]
        );
        assert!(
            p.describe()
                .contains("has no package on dnf; install OpenZFS")
        );
        // With the kernel module, dnf's zfs package brings zpool and zfs.
        let p = plan(&needs()[..6], &fresh_debian, Some(Manager::Dnf), true);
        assert_eq!(p.packages, ["xfsprogs", "btrfs-progs", "zfs"]);
    }

    #[test]
    fn nothing_missing_and_no_manager() {
        let all = |_: &str| true;
        let p = plan(&needs(), &all, Some(Manager::Apt), false);
        assert!(p.nothing_missing());
        assert!(p.describe().contains("nothing to install"));
        assert!(install(&p, false).is_ok(), "nothing to do needs no root");
        let p = plan(&needs(), &fresh_debian, None, false);
        assert!(p.packages.is_empty() && !p.unpackaged.is_empty());
        let e = install(&p, true).unwrap_err().to_string();
        assert!(e.contains("no supported package manager"), "{e}");
    }

    #[test]
    fn dry_run_prints_and_installs_nothing() {
        let p = plan(&needs(), &fresh_debian, Some(Manager::Pacman), false);
        assert_eq!(p.packages, ["xfsprogs", "btrfs-progs", "fio"]);
        // --dry-run returns before the root check and before running anything.
        assert!(install(&p, true).is_ok());
    }
}
