//! A memory-capped cgroup for one child process (seed 003's "constrain memory to 512 MB").
//!
//! Works with cgroup v1 (memory controller mounted on its own, as on hybrid hosts) and v2.
//! The group is created BELOW the cgroup fsbench itself runs in when possible, so limits an
//! operator put on fsbench still apply to the child and nothing escapes its accounting; only
//! if that is not writable does it fall back to the hierarchy's root. A child joins the group
//! between fork and exec ([`MemoryCgroup::configure`]), so not one page it touches is charged
//! elsewhere. Dropping the guard waits for the group to empty and removes it.

use crate::{Error, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Which cgroup interface carries the memory controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// cgroup v1: the memory hierarchy's mount point.
    V1(PathBuf),
    /// cgroup v2: the unified hierarchy's mount point.
    V2(PathBuf),
}

/// Find the hierarchy that has the memory controller, from /proc/self/mounts.
pub fn detect() -> Result<Layout> {
    let mounts = std::fs::read_to_string("/proc/self/mounts")
        .map_err(|e| Error::io("cannot read", "/proc/self/mounts", e))?;
    detect_in(&mounts, |p| std::fs::read_to_string(p).ok()).ok_or_else(|| {
        Error::Other(
            "no cgroup hierarchy with the memory controller is mounted; memory caps need cgroup v1 \
             (memory) or v2 with +memory"
                .into(),
        )
    })
}

/// [`detect`] over a mounts table; `read` reads a file (cgroup.controllers).
fn detect_in(mounts: &str, read: impl Fn(&Path) -> Option<String>) -> Option<Layout> {
    let mut v1 = None;
    let mut v2 = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 4 {
            continue;
        }
        let mp = PathBuf::from(f[1]);
        match f[2] {
            "cgroup2" => {
                let ctl = read(&mp.join("cgroup.controllers")).unwrap_or_default();
                if ctl.split_whitespace().any(|c| c == "memory") {
                    v2 = Some(mp);
                }
            }
            "cgroup" if f[3].split(',').any(|o| o == "memory") => v1 = Some(mp),
            _ => {}
        }
    }
    // A pure v2 host has only v2; on hybrid hosts memory sits on v1 and v2 lacks it.
    v2.map(Layout::V2).or(v1.map(Layout::V1))
}

/// fsbench's own cgroup path for `layout`, from /proc/self/cgroup (`/` when unknown).
fn own_cgroup(layout: &Layout) -> PathBuf {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    own_cgroup_in(&text, matches!(layout, Layout::V2(_)))
}

fn own_cgroup_in(text: &str, v2: bool) -> PathBuf {
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctl, path) = (parts.next(), parts.next(), parts.next());
        let (Some(ctl), Some(path)) = (ctl, path) else {
            continue;
        };
        let hit = if v2 {
            ctl.is_empty()
        } else {
            ctl.split(',').any(|c| c == "memory")
        };
        if hit {
            return PathBuf::from(path.trim_start_matches('/'));
        }
    }
    PathBuf::new()
}

/// A memory-capped cgroup. Dropping it waits (up to 10 s) for its processes to exit and
/// removes the directory.
#[derive(Debug)]
pub struct MemoryCgroup {
    path: PathBuf,
    v2: bool,
    limit: u64,
    /// `<path>/cgroup.procs` as a C string, prepared before fork for the child.
    procs: CString,
    /// Ledger entry, removed with the directory.
    held: Option<crate::host::ledger::Held>,
}

impl MemoryCgroup {
    /// Create a cgroup capped at `limit_bytes` of memory (swap capped too when the kernel
    /// accounts it), under whichever hierarchy carries the memory controller.
    pub fn create(limit_bytes: u64) -> Result<MemoryCgroup> {
        Self::create_in(&detect()?, limit_bytes)
    }

    /// [`MemoryCgroup::create`] on a given layout.
    pub fn create_in(layout: &Layout, limit_bytes: u64) -> Result<MemoryCgroup> {
        if limit_bytes < (8 << 20) {
            return Err(Error::invalid(
                "--memory-cap",
                format!("{limit_bytes} bytes is too small to start a process; use at least 8M"),
            ));
        }
        let (root, v2) = match layout {
            Layout::V1(p) => (p.clone(), false),
            Layout::V2(p) => (p.clone(), true),
        };
        let name = format!(
            "fsbench-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let nested = root.join(own_cgroup(layout));
        let mut last_err = None;
        for parent in [nested, root.clone()] {
            match Self::make(&parent, &name, v2, limit_bytes) {
                Ok(cg) => return Ok(cg),
                Err(e) => last_err = Some(e),
            }
            if parent == root {
                break;
            }
        }
        Err(last_err.expect("tried at least once"))
    }

    fn make(parent: &Path, name: &str, v2: bool, limit: u64) -> Result<MemoryCgroup> {
        if v2 {
            enable_memory_controller(parent)?;
        }
        let path = parent.join(name);
        let procs = CString::new(path.join("cgroup.procs").as_os_str().as_encoded_bytes())
            .map_err(|_| Error::Other(format!("cgroup path {} contains NUL", path.display())))?;
        let held =
            crate::host::ledger::hold(crate::host::ledger::Item::Cgroup { path: path.clone() })?;
        std::fs::create_dir(&path).map_err(|e| Error::io("cannot create cgroup", &path, e))?;
        // From here on Drop removes the directory if configuration fails.
        let cg = MemoryCgroup {
            path,
            v2,
            limit,
            procs,
            held: Some(held),
        };
        if v2 {
            cg.write("memory.max", &limit.to_string())?;
            if cg.path.join("memory.swap.max").exists() {
                cg.write("memory.swap.max", "0")?;
            }
        } else {
            cg.write("memory.limit_in_bytes", &limit.to_string())?;
            // memsw is memory + swap; equal to the limit means no swap. Set after the limit,
            // since the kernel insists memsw ≥ limit.
            if cg.path.join("memory.memsw.limit_in_bytes").exists() {
                cg.write("memory.memsw.limit_in_bytes", &limit.to_string())?;
            }
        }
        Ok(cg)
    }

    fn write(&self, file: &str, value: &str) -> Result<()> {
        let p = self.path.join(file);
        std::fs::write(&p, value).map_err(|e| Error::io(format!("cannot write {value} to"), &p, e))
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        std::fs::read_to_string(self.path.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The cgroup directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cap, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether this is a cgroup v2 group.
    pub fn is_v2(&self) -> bool {
        self.v2
    }

    /// Make the child spawned from `cmd` join this cgroup before it execs.
    pub fn configure(&self, cmd: &mut std::process::Command) {
        // Writing "0" to cgroup.procs moves the writing process itself.
        crate::host::sys::spawn::join_cgroup_before_exec(cmd, self.procs.clone());
    }

    /// Peak memory charged to the group, bytes (v1 max_usage_in_bytes, v2 memory.peak).
    pub fn peak_bytes(&self) -> Option<u64> {
        self.read_u64(if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        })
    }

    /// Processes the OOM killer killed in the group (v1 memory.oom_control, v2 memory.events).
    pub fn oom_kills(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        let text = std::fs::read_to_string(self.path.join(file)).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|v| v.trim().parse().ok())
    }

    /// PIDs currently in the group.
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Moves nothing: the child is expected to have exited. Wait for the kernel to finish
        // tearing it down, then remove the group.
        let start = Instant::now();
        while !self.pids().is_empty() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut last = None;
        for _ in 0..50 {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => {
                    drop(self.held.take());
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    drop(self.held.take());
                    return;
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(h) = self.held.take() {
            h.keep();
        }
        if let Some(e) = last {
            eprintln!(
                "fsbench: warning: cannot remove cgroup {}: {e} (processes left: {:?})",
                self.path.display(),
                self.pids()
            );
        }
    }
}

/// v2: make sure `parent` delegates the memory controller to its children.
fn enable_memory_controller(parent: &Path) -> Result<()> {
    let ctl = parent.join("cgroup.subtree_control");
    let cur = std::fs::read_to_string(&ctl).map_err(|e| Error::io("cannot read", &ctl, e))?;
    if cur.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    std::fs::write(&ctl, "+memory").map_err(|e| Error::io("cannot write +memory to", &ctl, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
        cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
        cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
    const PURE_V2: &str = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";

    #[test]
    fn detects_layouts() {
        let none = |_: &Path| Some("cpu io hugetlb".to_string());
        assert_eq!(
            detect_in(HYBRID, none),
            Some(Layout::V1("/sys/fs/cgroup/memory".into()))
        );
        let mem = |_: &Path| Some("cpu io memory pids".to_string());
        assert_eq!(
            detect_in(PURE_V2, mem),
            Some(Layout::V2("/sys/fs/cgroup".into()))
        );
        assert_eq!(detect_in(PURE_V2, none), None);
    }

    #[test]
    fn finds_own_cgroup() {
        let text = "5:devices:/\n4:memory:/process_api/abc\n0::/user.slice/x.scope\n";
        assert_eq!(own_cgroup_in(text, false), PathBuf::from("process_api/abc"));
        assert_eq!(
            own_cgroup_in(text, true),
            PathBuf::from("user.slice/x.scope")
        );
        assert_eq!(own_cgroup_in("", true), PathBuf::new());
    }
}
