//! The cross-check with a real engine (`container-podman`): Podman with its storage root,
//! run root and temporary files on the filesystem under test loads the image from an archive
//! (`podman pull docker-archive:…`, what `podman load` does), runs a no-network container
//! (`podman run --rm --network none IMAGE true`) and removes the image, each part timed to a
//! `syncfs` (`container_podman_load_seconds`, `_run_seconds`, `_rmi_seconds`). The overlay
//! steps model what an engine does; this is an engine doing it, so a ranking of the setups
//! that the two disagree on is worth a look.
//!
//! The run root (runtime state: locks, the container's state) is on tmpfs in fsbench's runtime
//! directory, as Podman's default `/run/containers/storage` is: Podman refuses a run root
//! path over 50 characters, which the data directory's always is.
//!
//! Podman reads only what this step gives it: configuration files of its own
//! (`CONTAINERS_CONF`, `CONTAINERS_STORAGE_CONF`, `CONTAINERS_REGISTRIES_CONF`), so the host's
//! Podman configuration, images and containers are neither read nor touched: the kernel's
//! overlay driver (no fuse-overlayfs), cgroupfs with the container's cgroups off (no cgroup
//! directory to leave behind), no events log, container logs to a file. The container's
//! open-file and process limits are this process's own: Podman's default as root raises
//! RLIMIT_NOFILE to 1 048 576, which a root without CAP_SYS_RESOURCE (a container, a sandbox,
//! this development VM) may not do, and crun then fails with "setrlimit `RLIMIT_NOFILE`:
//! Operation not permitted".
//!
//! Cleanup: Podman's overlay driver bind-mounts its graph root's `overlay` directory onto
//! itself (private) and leaves that mount when it exits; a running container adds its root
//! and its /dev/shm below. A ledger `MountsUnder` entry for the step's directory is recorded
//! before Podman first runs, so everything mounted below it is unmounted, deepest first, on
//! success, on error, on Ctrl-C and, after a SIGKILL, by the next run or `doctor --cleanup`;
//! the run root is a ledger `StateDir` (fsbench's own directory under `/run/fsbench`, holding
//! only Podman's state), which that recovery removes with its contents after unmounting what
//! is below it, so a killed run leaves no `podman-<pid>-<n>` behind; each podman command is a ledger process of its own (`host::command::run_child`), which
//! that recovery stops first if it outlived a killed fsbench.

use super::steps::syncfs;
use crate::host::command::{OnCancel, run_child};
use crate::host::ledger::{self, Held, Item};
use crate::metrics::registry::{
    CONTAINER_PODMAN_LOAD_SECONDS, CONTAINER_PODMAN_RMI_SECONDS, CONTAINER_PODMAN_RUN_SECONDS,
    SECONDS,
};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The program the container runs (on PATH in the generated image and in most others).
const COMMAND: &str = "true";

/// A Podman whose storage lives under one directory of the filesystem under test and whose
/// run root in fsbench's runtime directory.
pub struct Engine {
    home: PathBuf,
    run: PathBuf,
    held: Vec<Held>,
}

/// A TOML string (quoted and escaped).
fn quoted(p: &Path) -> String {
    toml::Value::String(p.display().to_string()).to_string()
}

/// Run roots handed out by this process.
static RUN_ROOTS: AtomicU32 = AtomicU32::new(0);

/// The run root's directory: Podman refuses one longer than 50 characters (its sockets live
/// there), so it cannot be below the data directory; it is runtime state, which Podman keeps
/// on tmpfs by default (`/run/containers/storage`), and so does this:
/// `/run/fsbench/podman-<pid>-<n>`.
fn run_root() -> PathBuf {
    let n = RUN_ROOTS.fetch_add(1, Ordering::Relaxed);
    crate::host::run_dir().join(format!("podman-{}-{n}", std::process::id()))
}

/// Run roots of processes that are gone, removed with what is mounted below them: the ledger's
/// `StateDir` removes a killed run's own, and this catches one no ledger names any more (a
/// test's ledger directory deleted with the test).
fn remove_dead_run_roots() {
    let Ok(entries) = std::fs::read_dir(crate::host::run_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("podman-")
            .and_then(|r| r.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = release(&e.path());
        }
    }
}

impl Engine {
    /// Podman's directories and configuration under `dir/podman` and its run root (what an
    /// earlier failed step left is released first), recorded in the ledger before anything
    /// mounts.
    pub fn new(dir: &Path) -> Result<Engine> {
        let home = dir.join("podman");
        release(&home)?;
        remove_dead_run_roots();
        let run = run_root();
        release(&run)?;
        let mut engine = Engine {
            home,
            run,
            held: Vec::new(),
        };
        engine.held.push(ledger::hold(Item::MountsUnder {
            root: engine.home.clone(),
        })?);
        engine.held.push(ledger::hold(Item::StateDir {
            path: engine.run.clone(),
        })?);
        for d in ["root", "tmp", "libpod", "etc"] {
            let p = engine.home.join(d);
            std::fs::create_dir_all(&p).map_err(|e| Error::io("cannot create", &p, e))?;
        }
        std::fs::create_dir_all(&engine.run)
            .map_err(|e| Error::io("cannot create", &engine.run, e))?;
        let files = [
            (
                "storage.conf",
                format!(
                    "[storage]\ndriver = \"overlay\"\ngraphroot = {}\nrunroot = {}\n",
                    quoted(&engine.home.join("root")),
                    quoted(&engine.run)
                ),
            ),
            (
                "containers.conf",
                format!(
                    "[containers]\nlog_driver = \"k8s-file\"\n\n[engine]\n\
                     cgroup_manager = \"cgroupfs\"\nevents_logger = \"none\"\n\
                     tmp_dir = {}\nimage_copy_tmp_dir = {}\n",
                    quoted(&engine.home.join("libpod")),
                    quoted(&engine.home.join("tmp"))
                ),
            ),
            ("registries.conf", String::new()),
        ];
        for (name, text) in files {
            let p = engine.home.join("etc").join(name);
            std::fs::write(&p, text).map_err(|e| Error::io("cannot write", &p, e))?;
        }
        Ok(engine)
    }

    fn command(&self, args: &[&str]) -> Command {
        let etc = self.home.join("etc");
        let mut c = Command::new("podman");
        c.env("CONTAINERS_CONF", etc.join("containers.conf"))
            .env("CONTAINERS_STORAGE_CONF", etc.join("storage.conf"))
            .env("CONTAINERS_REGISTRIES_CONF", etc.join("registries.conf"))
            .env("TMPDIR", self.home.join("tmp"))
            .arg("--root")
            .arg(self.home.join("root"))
            .arg("--runroot")
            .arg(&self.run)
            .args(["--storage-driver", "overlay"])
            .args(args);
        c
    }

    /// Run `podman ARGS`; its stdout, or an error quoting what it said. `hide`: a mount
    /// the command must not see, unmounted in a mount namespace of its own ([`hybrid_cgroup2`]).
    pub fn run(&self, args: &[&str], hide: Option<&Path>, timeout: Duration) -> Result<String> {
        let shown = format!("podman {}", args.join(" "));
        let mut cmd = self.command(args);
        if let Some(path) = hide {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            crate::host::sys::spawn::private_mounts_without(&mut cmd, c);
        }
        let out = run_child(&mut cmd, &shown, timeout, OnCancel::Kill)?;
        if out.status != Some(0) {
            return Err(Error::tool(shown, out.combined().trim().to_string()));
        }
        Ok(out.stdout)
    }

    /// Unmount what Podman left mounted below its directory and remove the directory.
    pub fn release(mut self) -> Result<()> {
        self.take_down()
    }

    fn take_down(&mut self) -> Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        // The containers' run state first, then the storage it points into.
        match release(&self.run).and_then(|()| release(&self.home)) {
            Ok(()) => Ok(()),
            Err(e) => {
                held.into_iter().for_each(Held::keep);
                Err(e)
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.take_down() {
            crate::host::stdio::note(&format!("fsbench: warning: {e}"));
        }
    }
}

/// Every mount below `home` unmounted, then `home` removed.
fn release(home: &Path) -> Result<()> {
    crate::host::mountinfo::unmount_under(home)?;
    match std::fs::remove_dir_all(home) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io("cannot remove Podman's directory", home, e))
        }
        _ => Ok(()),
    }
}

/// Podman 4 lowers its own `RLIMIT_NPROC` to this (its `/proc/PID/limits` shows 32768 for
/// both), and crun, its grandchild, cannot raise the container's above it.
const PODMAN_NPROC: u64 = 32_768;

/// `--ulimit` values no higher than this process's own limit (and `cap`), so crun never has
/// to raise one: `-1` is unlimited.
fn ulimit(name: &str, r: rustix::process::Resource, cap: Option<u64>) -> String {
    let l = rustix::process::getrlimit(r);
    let v = |x: Option<u64>| match (x, cap) {
        (Some(n), Some(c)) => n.min(c).to_string(),
        (None, Some(c)) => c.to_string(),
        (Some(n), None) => n.to_string(),
        (None, None) => "-1".to_string(),
    };
    format!("{name}={}:{}", v(l.current), v(l.maximum))
}

/// The cgroup2 mount crun must not see on this host, if any: a hybrid host (cgroup v1
/// controllers, cgroup2 at /sys/fs/cgroup/unified) whose cgroup2 has controllers enabled,
/// which crun refuses ("cgroups in hybrid mode not supported, drop all controllers from
/// cgroupv2"). The step's container then runs in a mount namespace without it; with its
/// cgroups off nothing of the container needs it.
pub fn hybrid_cgroup2() -> Option<PathBuf> {
    let unified = Path::new("/sys/fs/cgroup/unified");
    std::fs::read_to_string(unified.join("cgroup.controllers"))
        .ok()
        .filter(|c| !c.trim().is_empty())
        .map(|_| unified.to_path_buf())
}

fn secs_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64().max(1e-9)
}

/// The step: load `reference` (`docker-archive:PATH`, `oci:DIR`…) into a Podman store under
/// `dir`, run a container of it, remove it; each part timed to a `syncfs` of `dir`.
pub fn run(dir: &Path, reference: &str, timeout: Duration) -> Result<WorkloadOutput> {
    let engine = Engine::new(dir)?;
    let t0 = Instant::now();
    let out = engine.run(&["pull", "--quiet", reference], None, timeout)?;
    syncfs(dir)?;
    let load = secs_since(t0);
    let id = out
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .ok_or_else(|| Error::tool("podman pull", "printed no image id"))?
        .to_string();
    let nofile = ulimit("nofile", rustix::process::Resource::Nofile, None);
    let nproc = ulimit(
        "nproc",
        rustix::process::Resource::Nproc,
        Some(PODMAN_NPROC),
    );
    let hide = hybrid_cgroup2();
    let t1 = Instant::now();
    engine.run(
        &[
            "run",
            "--rm",
            "--network",
            "none",
            "--pull",
            "never",
            "--cgroups",
            "disabled",
            "--ulimit",
            &nofile,
            "--ulimit",
            &nproc,
            &id,
            COMMAND,
        ],
        hide.as_deref(),
        timeout,
    )?;
    syncfs(dir)?;
    let start = secs_since(t1);
    let t2 = Instant::now();
    engine.run(&["rmi", "--force", &id], None, timeout)?;
    syncfs(dir)?;
    let rmi = secs_since(t2);
    engine.release()?;
    let mut notes = Vec::new();
    if let Some(h) = hide {
        notes.push(format!(
            "podman run in a mount namespace without {}: crun refuses a hybrid cgroup host \
             whose cgroup2 has controllers (the container's cgroups are off)",
            h.display()
        ));
    }
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", load + start + rmi),
            Metric::new(CONTAINER_PODMAN_LOAD_SECONDS, "s", load),
            Metric::new(CONTAINER_PODMAN_RUN_SECONDS, "s", start),
            Metric::new(CONTAINER_PODMAN_RMI_SECONDS, "s", rmi),
        ],
        notes,
        ..Default::default()
    })
}

/// Whether this machine can run the cross-check: root (the overlay driver mounts) and podman.
pub fn available() -> std::result::Result<(), String> {
    if !rustix::process::geteuid().is_root() {
        return Err("needs root: Podman's overlay storage mounts".into());
    }
    if !crate::host::packages::present("podman") {
        return Err(format!(
            "podman not found (package {}; `fsbench run --install-missing` installs it)",
            crate::host::packages::debian_package("podman")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_passed_as_they_are() {
        let s = ulimit("nofile", rustix::process::Resource::Nofile, None);
        let capped = ulimit("nproc", rustix::process::Resource::Nproc, Some(7));
        assert_eq!(capped, "nproc=7:7");
        let (name, v) = s.split_once('=').unwrap();
        assert_eq!(name, "nofile");
        let (soft, hard) = v.split_once(':').unwrap();
        assert!(
            soft.parse::<i64>().is_ok() && hard.parse::<i64>().is_ok(),
            "{s}"
        );
        let t: toml::Table =
            toml::from_str(&format!("k = {}", quoted(Path::new("/a\"b'c")))).unwrap();
        assert_eq!(
            t["k"].as_str(),
            Some("/a\"b'c"),
            "a path reads back from the TOML"
        );
    }
}
