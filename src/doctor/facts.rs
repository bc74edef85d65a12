//! What the doctor looks at, gathered in one pass and only by reading: sysfs, /proc,
//! mountinfo, PATH. Devices are identified by their number through `/sys/dev/block`; no device
//! node is ever opened. The checks see nothing but these structs, so tests build them by hand.

use super::tools::{self, Wants};
use crate::host::sysfs::{self, DevNum};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Everything the checks may look at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    /// The machine.
    pub host: HostFacts,
    /// Block devices involved: the target, and the disk holding an image or directory.
    pub devices: Vec<DeviceFacts>,
    /// Directories involved: the scratch directory for images, or the `--dir` target.
    pub dirs: Vec<DirFacts>,
    /// The setups asked for: (name, filesystem); `{"name", "fs"}` objects in JSON.
    #[serde(serialize_with = "setups_as_objects")]
    pub setups: Vec<(String, String)>,
    /// Data file size, when one was given or planned.
    pub file_size: Option<u64>,
    /// Whether some workload goes through the page cache (buffered I/O, metadata).
    pub buffered_io: bool,
    /// The I/O jobs as fio would run them (for engine-specific traps).
    pub io_jobs: Vec<IoJobFact>,
    /// Programs the requested setups need and that are not installed.
    pub missing_tools: Vec<MissingTool>,
    /// What killed fsbench runs still hold (their ledgers), as recovery would release it.
    pub stale: Vec<StaleItem>,
    /// Whether I/O jobs run until steady (`--steady-state`).
    pub steady_state: bool,
}

/// One item a dead fsbench process still holds, from its ledger.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StaleItem {
    /// The dead process.
    pub pid: u32,
    /// The item in the ledger's words (`setting /proc/sys/vm/dirty_ratio (was "20", …)`).
    pub item: String,
    /// Whether it is a kernel setting left changed (else a mount, loop device, image…).
    pub setting: bool,
}

/// Memory, CPU and load.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostFacts {
    /// Online CPUs.
    pub cpus: u32,
    /// MemTotal, bytes.
    pub mem_total: u64,
    /// MemAvailable, bytes.
    pub mem_available: u64,
    /// Page cache now (Cached), bytes.
    pub cached: u64,
    /// SwapTotal, bytes.
    pub swap_total: u64,
    /// SwapFree, bytes.
    pub swap_free: u64,
    /// Active swap areas.
    pub swaps: Vec<SwapFact>,
    /// 1-minute load average.
    pub load1: f64,
    /// CPUs' worth of busy time during the sample (1.5 = one and a half CPUs busy), from
    /// /proc/stat; `None` when no sample was taken. The load average trails by minutes, so
    /// this says whether anything competes now.
    pub cpu_busy: Option<f64>,
    /// Distinct cpufreq governors of the online CPUs; empty when cpufreq is absent (most VMs).
    pub governors: Vec<String>,
    /// Whether turbo/boost is on; `None` when the kernel does not say.
    pub boost: Option<bool>,
    /// Whether the CPU flags say this is a virtual machine.
    pub hypervisor: bool,
    /// Whether the zfs kernel module is loaded.
    pub kernel_zfs: bool,
    /// Whether zfs-fuse is installed.
    pub zfs_fuse: bool,
    /// Processes that read or wrote storage during the sample, most first.
    pub io_processes: Vec<ProcIo>,
}

/// One line of /proc/swaps.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SwapFact {
    /// Swap file or partition.
    pub path: String,
    /// Kernel name of the device it lives on (`zram0`, `vda`).
    pub device: String,
    /// Bytes in use.
    pub used: u64,
}

/// Storage I/O of one process during the sample.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcIo {
    /// Process id.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Bytes it made the storage layer read or write during the sample.
    pub bytes: u64,
}

/// One block device.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceFacts {
    /// Why it is here: `target`, or `holds /var/tmp`.
    pub role: String,
    /// Device node (`/dev/loop3`) or kernel name.
    pub path: String,
    /// Kernel name (`sdb1`, `loop3`).
    pub name: String,
    /// Whole-disk kernel name (queue settings live there).
    pub disk: String,
    /// Device model, if sysfs has one.
    pub model: String,
    /// `queue/rotational`.
    pub rotational: Option<bool>,
    /// Active scheduler (`none`, `mq-deadline`).
    pub scheduler: String,
    /// `queue/write_cache` (`write back`, `write through`).
    pub write_cache: String,
    /// `queue/discard_max_bytes`.
    pub discard_max_bytes: Option<u64>,
    /// What kind of virtual device it is, when it is one (`loop device`, `virtio disk`…).
    pub virtual_kind: Option<String>,
    /// Whether it is zram.
    pub zram: bool,
    /// Loop devices: the backing file.
    pub loop_backing: Option<String>,
    /// Loop devices: whether direct I/O is on.
    pub loop_dio: Option<bool>,
    /// Loop devices: facts of the disk holding the backing file (rotational, virtual).
    pub backing: Option<BackingFacts>,
    /// I/O the device did during the sample.
    pub activity: Option<Activity>,
}

/// What a loop device inherits its flags from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BackingFacts {
    /// Kernel name of the disk holding the backing file.
    pub disk: String,
    /// Its rotational flag.
    pub rotational: Option<bool>,
    /// Whether it is itself virtual.
    pub is_virtual: bool,
}

/// I/O counted over the sample window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Activity {
    /// Window length, seconds.
    pub seconds: f64,
    /// Completed reads + writes.
    pub ios: u64,
    /// Bytes read + written.
    pub bytes: u64,
}

/// A directory involved in the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirFacts {
    /// `scratch` (where images go) or `target` (`--dir`).
    pub role: String,
    /// The path.
    pub path: String,
    /// Filesystem type holding it (`ext4`, `tmpfs`, `fuse.zfs`).
    pub fs_type: String,
    /// Mount source.
    pub source: String,
}

/// An I/O job's engine parameters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IoJobFact {
    /// Workload id, or `fio` for a job described on the doctor's command line.
    pub id: String,
    /// fio's ioengine (`libaio`, `io_uring`, `psync`).
    pub ioengine: String,
    /// Queue depth per job.
    pub iodepth: u32,
    /// Parallel jobs.
    pub numjobs: u32,
}

/// A program that is needed and missing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MissingTool {
    /// Program.
    pub tool: String,
    /// What needs it.
    pub needed_by: String,
    /// Package providing it on this system's package manager (Debian's name when unknown).
    pub package: String,
}

/// What to look at.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Device nodes with their role.
    pub devices: Vec<(PathBuf, String)>,
    /// Directories with their role; the disk holding each is added as a device.
    pub dirs: Vec<(PathBuf, String)>,
    /// What the run needs (for missing tools and ZFS checks).
    pub wants: Wants,
    /// Data file size.
    pub file_size: Option<u64>,
    /// Some workload is buffered.
    pub buffered_io: bool,
    /// I/O jobs.
    pub io_jobs: Vec<IoJobFact>,
    /// How long to watch the devices for other I/O (zero: not at all).
    pub sample: Duration,
    /// I/O jobs run until steady (`--steady-state`).
    pub steady_state: bool,
}

/// Gather the facts for `req`. Only reads; unknown values stay empty.
pub fn gather(req: &Request) -> Facts {
    let cpuinfo = read("/proc/cpuinfo");
    let mem = parse_meminfo(&read("/proc/meminfo"));
    let kb = |k: &str| mem.get(k).copied().unwrap_or(0) * 1024;
    let kernel_zfs = crate::host::zfs::kernel();
    let mut host = HostFacts {
        cpus: crate::host::provenance::host_info().cpus.max(1),
        mem_total: kb("MemTotal"),
        mem_available: kb("MemAvailable"),
        cached: kb("Cached"),
        swap_total: kb("SwapTotal"),
        swap_free: kb("SwapFree"),
        swaps: parse_swaps(&read("/proc/swaps")),
        load1: read("/proc/loadavg")
            .split_whitespace()
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0.0),
        governors: governors(),
        boost: boost(),
        hypervisor: cpuinfo
            .lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor")),
        kernel_zfs,
        zfs_fuse: tools::present("zfs-fuse"),
        io_processes: Vec::new(),
        cpu_busy: None,
    };

    let mounts = crate::host::mountinfo::read().unwrap_or_default();
    let mut dirs = Vec::new();
    let mut wanted: Vec<(DevNum, String, String)> = Vec::new();
    for (path, role) in &req.devices {
        if let Ok(md) = std::fs::metadata(path)
            && md.file_type().is_block_device()
        {
            wanted.push((
                DevNum::from_dev(md.rdev()),
                path.display().to_string(),
                role.clone(),
            ));
        }
    }
    for (path, role) in &req.dirs {
        let entry = crate::host::mountinfo::containing(&mounts, path);
        dirs.push(DirFacts {
            role: role.clone(),
            path: path.display().to_string(),
            fs_type: entry
                .as_ref()
                .map(|e| e.fs_type.clone())
                .unwrap_or_default(),
            source: entry.as_ref().map(|e| e.source.clone()).unwrap_or_default(),
        });
        if let Ok(md) = std::fs::metadata(path) {
            let dev = DevNum::from_dev(md.dev());
            if dev.major != 0 {
                wanted.push((dev, String::new(), format!("holds {}", path.display())));
            }
        }
    }
    let mut devices: Vec<(DevNum, DeviceFacts)> = Vec::new();
    for (dev, path, role) in wanted {
        if devices.iter().any(|(d, _)| *d == dev) {
            continue;
        }
        if let Some(mut f) = device_facts(dev) {
            f.role = role;
            if !path.is_empty() {
                f.path = path;
            }
            // A loop device's flags and I/O come from the disk under its file: look at it too.
            let backing_dev = f.loop_backing.as_ref().and_then(|b| {
                let md = std::fs::metadata(b).ok()?;
                Some(DevNum::from_dev(md.dev())).filter(|d| d.major != 0)
            });
            let name = f.name.clone();
            devices.push((dev, f));
            if let Some(bd) = backing_dev
                && !devices.iter().any(|(d, _)| *d == bd)
                && let Some(mut b) = device_facts(bd)
            {
                b.role = format!("holds the file of {name}");
                let last = devices.len() - 1;
                devices[last].1.backing = Some(BackingFacts {
                    disk: b.disk.clone(),
                    rotational: b.rotational,
                    is_virtual: b.virtual_kind.is_some(),
                });
                devices.push((bd, b));
            }
        }
    }

    if !req.sample.is_zero() {
        sample_activity(&mut devices, &mut host, req.sample);
    }

    let manager = tools::detect_manager();
    let missing_tools = tools::needs(&Wants {
        kernel_zfs,
        ..req.wants.clone()
    })
    .into_iter()
    .filter(|n| !tools::present(&n.tool))
    .map(|n| MissingTool {
        package: manager
            .and_then(|m| tools::package(&n.tool, m, kernel_zfs))
            .unwrap_or_else(|| tools::debian_package(&n.tool))
            .to_string(),
        tool: n.tool,
        needed_by: n.needed_by,
    })
    .collect();

    Facts {
        host,
        devices: devices.into_iter().map(|(_, f)| f).collect(),
        dirs,
        setups: req.wants.setups.clone(),
        file_size: req.file_size,
        buffered_io: req.buffered_io,
        io_jobs: req.io_jobs.clone(),
        missing_tools,
        stale: stale_items(),
        steady_state: req.steady_state,
    }
}

/// What dead runs' ledgers hold (read only). A setting counts only while it still reads the
/// value fsbench wrote: one someone already put back, or changed again, is not ours to report.
fn stale_items() -> Vec<StaleItem> {
    use crate::host::ledger::{self, Item};
    ledger::stale()
        .into_iter()
        .filter(|(_, item)| match item {
            Item::Setting { path, applied, .. } => std::fs::read_to_string(path)
                .is_ok_and(|now| ledger::setting_value(&now) == ledger::setting_value(applied)),
            _ => true,
        })
        .map(|(pid, item)| StaleItem {
            pid,
            setting: matches!(item, Item::Setting { .. }),
            item: item.to_string(),
        })
        .collect()
}

fn setups_as_objects<S: serde::Serializer>(
    v: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for (name, fs) in v {
        seq.serialize_element(&serde_json::json!({"name": name, "fs": fs}))?;
    }
    seq.end()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Facts of one device from sysfs, without its role.
fn device_facts(dev: DevNum) -> Option<DeviceFacts> {
    let sys = dev.sysfs_dir()?;
    let disk = sysfs::whole_disk(&sys);
    let q = disk.join("queue");
    let name = sysfs::kernel_name(&sys);
    let disk_name = sysfs::kernel_name(&disk);
    let model = sysfs::read_attr(&disk, "device/model").unwrap_or_default();
    let loop_dir = disk.join("loop");
    Some(DeviceFacts {
        role: String::new(),
        path: format!("/dev/{name}"),
        virtual_kind: virtual_kind(&disk_name, &model),
        zram: disk_name.starts_with("zram"),
        rotational: sysfs::read_attr(&q, "rotational").map(|v| v != "0"),
        scheduler: sysfs::read_attr(&q, "scheduler")
            .map(|s| sysfs::parse_scheduler(&s))
            .unwrap_or_default(),
        write_cache: sysfs::read_attr(&q, "write_cache").unwrap_or_default(),
        discard_max_bytes: sysfs::read_attr(&q, "discard_max_bytes").and_then(|v| v.parse().ok()),
        loop_backing: sysfs::read_attr(&loop_dir, "backing_file"),
        loop_dio: sysfs::read_attr(&loop_dir, "dio").map(|v| v == "1"),
        backing: None,
        activity: None,
        name,
        disk: disk_name,
        model,
    })
}

/// What kind of virtual device a disk is, from its kernel name and model.
pub fn virtual_kind(disk: &str, model: &str) -> Option<String> {
    let by_name = [
        ("loop", "loop device"),
        ("nbd", "network block device"),
        ("zram", "zram device (compressed RAM)"),
        ("xvd", "Xen virtual disk"),
        ("vd", "virtio disk"),
    ];
    if let Some((_, what)) = by_name.iter().find(|(p, _)| disk.starts_with(p)) {
        return Some(what.to_string());
    }
    let m = model.to_ascii_lowercase();
    ["qemu", "vbox", "virtual", "vmware"]
        .iter()
        .any(|p| m.contains(p))
        .then(|| format!("virtual disk ({})", model.trim()))
}

/// Watch the devices' counters and every process's storage I/O for `window`.
fn sample_activity(devices: &mut [(DevNum, DeviceFacts)], host: &mut HostFacts, window: Duration) {
    let stat = |d: &DevNum| {
        d.sysfs_dir()
            .and_then(|s| crate::measure::device::read_counters(&s.join("stat")).ok())
    };
    let before: Vec<_> = devices.iter().map(|(d, _)| stat(d)).collect();
    let procs_before = proc_io();
    let cpu_before = crate::measure::cpu::CpuSnapshot::now();
    let t0 = Instant::now();
    std::thread::sleep(window);
    let secs = t0.elapsed().as_secs_f64();
    let util = cpu_before
        .usage_until(&crate::measure::cpu::CpuSnapshot::now())
        .system_util;
    host.cpu_busy = Some(util * f64::from(host.cpus));
    for ((d, f), b) in devices.iter_mut().zip(before) {
        if let (Some(b), Some(a)) = (b, stat(d)) {
            let x = b.delta(&a);
            f.activity = Some(Activity {
                seconds: secs,
                ios: x.reads + x.writes,
                bytes: x.read_bytes + x.write_bytes,
            });
        }
    }
    let me = std::process::id();
    let mut moved: Vec<ProcIo> = proc_io()
        .into_iter()
        .filter_map(|(pid, bytes)| {
            let was = procs_before.get(&pid).copied()?;
            let delta = bytes.saturating_sub(was);
            (delta > 0 && pid != me).then(|| ProcIo {
                pid,
                comm: read(&format!("/proc/{pid}/comm")).trim().to_string(),
                bytes: delta,
            })
        })
        .collect();
    moved.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    moved.truncate(5);
    host.io_processes = moved;
}

/// read_bytes + write_bytes of every process we may read (/proc/PID/io).
fn proc_io() -> BTreeMap<u32, u64> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(text) = std::fs::read_to_string(e.path().join("io")) {
            m.insert(pid, parse_proc_io(&text));
        }
    }
    m
}

/// Storage bytes (read_bytes + write_bytes) from a /proc/PID/io text.
pub fn parse_proc_io(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| *k == "read_bytes" || *k == "write_bytes")
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// /proc/meminfo as key → kB.
pub fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.to_string(), v.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// /proc/swaps: every area with the device it lives on.
pub fn parse_swaps(text: &str) -> Vec<SwapFact> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let path = crate::host::mountinfo::unescape(f.first()?);
            let used = f.get(3)?.parse::<u64>().ok()? * 1024;
            let device = crate::measure::device::resolve(Path::new(&path))
                .map(|d| d.name)
                .unwrap_or_default();
            Some(SwapFact { path, device, used })
        })
        .collect()
}

fn governors() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/devices/system/cpu")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            std::fs::read_to_string(e.path().join("cpufreq/scaling_governor"))
                .ok()
                .map(|s| s.trim().to_string())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn boost() -> Option<bool> {
    let cpu = Path::new("/sys/devices/system/cpu");
    if let Some(b) = sysfs::read_attr(&cpu.join("cpufreq"), "boost") {
        return Some(b == "1");
    }
    // intel_pstate says it the other way round.
    sysfs::read_attr(&cpu.join("intel_pstate"), "no_turbo").map(|v| v == "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_disks_are_recognised_by_name_and_model() {
        assert_eq!(virtual_kind("loop3", "").as_deref(), Some("loop device"));
        assert_eq!(virtual_kind("vda", "").as_deref(), Some("virtio disk"));
        assert_eq!(
            virtual_kind("xvdb", "").as_deref(),
            Some("Xen virtual disk")
        );
        assert_eq!(
            virtual_kind("sda", "QEMU HARDDISK   ").as_deref(),
            Some("virtual disk (QEMU HARDDISK)")
        );
        assert_eq!(virtual_kind("sda", "Samsung SSD 870"), None);
        assert_eq!(virtual_kind("nvme0n1", "WDC WDS100T"), None);
    }

    #[test]
    fn proc_files_parse() {
        let m = parse_meminfo(
            "MemTotal:       24588000 kB\nMemAvailable:   20000 kB\nHugePages_Total:       0\n",
        );
        assert_eq!(m["MemTotal"], 24_588_000);
        assert_eq!(m["HugePages_Total"], 0);
        assert_eq!(
            parse_proc_io(
                "rchar: 10\nwchar: 5\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
            ),
            12288
        );
        let s = parse_swaps(
            "Filename\tType\tSize\tUsed\tPriority\n/nonexistent/swapfile file 1024 12 -2\n",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].used, 12 * 1024);
        assert_eq!(s[0].path, "/nonexistent/swapfile");
    }
}
