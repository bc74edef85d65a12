//! The doctor's checks: one registry, each entry a small pure function from [`Facts`] to the
//! findings it makes. Nothing here reads the system, so every check is tested over fake facts.

use super::facts::{DeviceFacts, Facts};
use super::{Finding, Severity};
use crate::units::format_size;

/// One check of the registry.
pub struct Check {
    /// Stable id, also each finding's `code`.
    pub code: &'static str,
    /// What it looks at, for `--help`-style listings and the "passed" footer.
    pub title: &'static str,
    /// The check itself.
    pub run: fn(&Facts) -> Vec<Finding>,
}

/// Every check, in the order findings are listed within a severity.
pub const CHECKS: &[Check] = &[
    Check {
        code: "missing-tools",
        title: "programs the requested setups need",
        run: missing_tools,
    },
    Check {
        code: "unrestored-tunings",
        title: "host settings a killed run left changed",
        run: unrestored_tunings,
    },
    Check {
        code: "stale-resources",
        title: "mounts, loop devices, images a killed run still holds",
        run: stale_resources,
    },
    Check {
        code: "tmpfs",
        title: "scratch or target directory in RAM",
        run: tmpfs,
    },
    Check {
        code: "zram",
        title: "target on zram",
        run: zram,
    },
    Check {
        code: "loop-direct-io",
        title: "loop device without direct I/O",
        run: loop_direct_io,
    },
    Check {
        code: "scheduler",
        title: "I/O scheduler on a non-rotational device",
        run: scheduler,
    },
    Check {
        code: "rotational-virtual",
        title: "virtual disk that reports rotational",
        run: rotational_virtual,
    },
    Check {
        code: "write-cache",
        title: "device write-cache mode",
        run: write_cache,
    },
    Check {
        code: "discard",
        title: "discard support",
        run: discard,
    },
    Check {
        code: "page-cache",
        title: "data file size against RAM",
        run: page_cache,
    },
    Check {
        code: "memory",
        title: "memory available",
        run: memory,
    },
    Check {
        code: "swap",
        title: "swap in use, on the target, or on zram",
        run: swap,
    },
    Check {
        code: "cpu-governor",
        title: "CPU frequency governor",
        run: cpu_governor,
    },
    Check {
        code: "cpu-boost",
        title: "CPU turbo/boost",
        run: cpu_boost,
    },
    Check {
        code: "load",
        title: "a busy host",
        run: load,
    },
    Check {
        code: "device-busy",
        title: "other I/O on the devices right now",
        run: device_busy,
    },
    Check {
        code: STEADY_CACHES,
        title: "steady state on an image or directory",
        run: steady_caches,
    },
    Check {
        code: "zfs-fuse",
        title: "zfs-fuse instead of kernel ZFS",
        run: zfs_fuse,
    },
    Check {
        code: "zfs-libaio",
        title: "ZFS with fio on libaio (queue-depth trap)",
        run: zfs_libaio,
    },
];

/// The code of the finding that steady state means nothing on a cached target.
pub const STEADY_CACHES: &str = "steady-state-caches";

/// `--steady-state` on an image (its scratch directory) or a `--dir` target: the caches of the
/// storage underneath make steady state meaningless; the rounds still run.
fn steady_caches(f: &Facts) -> Vec<Finding> {
    if !f.steady_state {
        return Vec::new();
    }
    f.dirs
        .iter()
        .map(|d| {
            let what = if d.role == "scratch" {
                format!("an image file in {} ({})", d.path, d.fs_type)
            } else {
                format!("the directory {} ({})", d.path, d.fs_type)
            };
            steady_caches_finding(&d.path, &what)
        })
        .collect()
}

/// The finding [`STEADY_CACHES`] for `subject`, `what` saying what the job runs on (also
/// printed by `fsbench io --steady-state` on a file, a loop device or zram).
pub fn steady_caches_finding(subject: &str, what: &str) -> Finding {
    finding(
        STEADY_CACHES,
        Severity::Warn,
        subject,
        format!("--steady-state runs on {what}"),
        "the page cache and the backing storage's caches (the host filesystem, the disk's \
         DRAM and SLC cache) sit between the job and any flash, so the rounds settle on a \
         cache's speed or drift as it fills: steady state is meaningless here, and the rounds \
         are only a stability check (they still run)",
        "for an SSD's steady state, benchmark a scratch SSD with --device DEV --precondition \
         (fsbench io: --filename /dev/DEV --precondition)"
            .into(),
    )
}

fn finding(
    code: &str,
    severity: Severity,
    subject: &str,
    finding: String,
    why: &str,
    fix: String,
) -> Finding {
    Finding {
        code: code.into(),
        severity,
        subject: subject.into(),
        finding,
        why: why.into(),
        fix,
    }
}

/// Devices once per whole disk (a partition and its disk share queue settings).
fn disks(f: &Facts) -> Vec<&DeviceFacts> {
    let mut seen: Vec<&str> = Vec::new();
    f.devices
        .iter()
        .filter(|d| {
            let new = !seen.contains(&d.disk.as_str());
            seen.push(&d.disk);
            new
        })
        .collect()
}

fn is_loop(d: &DeviceFacts) -> bool {
    d.loop_backing.is_some() || d.disk.starts_with("loop")
}

fn missing_tools(f: &Facts) -> Vec<Finding> {
    let mut by: Vec<(&str, Vec<&str>, Vec<&str>)> = Vec::new();
    for m in &f.missing_tools {
        match by.iter_mut().find(|(n, _, _)| *n == m.needed_by) {
            Some((_, t, p)) => {
                t.push(&m.tool);
                if !p.contains(&m.package.as_str()) {
                    p.push(&m.package);
                }
            }
            None => by.push((&m.needed_by, vec![&m.tool], vec![&m.package])),
        }
    }
    by.into_iter()
        .map(|(needer, tools, packages)| {
            finding(
                "missing-tools",
                Severity::Warn,
                needer,
                format!("{} not installed", tools.join(", ")),
                "what needs it is skipped with a note, so the comparison has a column fewer",
                format!(
                    "fsbench doctor --install-missing (installs {})",
                    packages.join(" ")
                ),
            )
        })
        .collect()
}

fn unrestored_tunings(f: &Facts) -> Vec<Finding> {
    f.stale
        .iter()
        .filter(|s| s.setting)
        .map(|s| {
            finding(
                "unrestored-tunings",
                Severity::Warn,
                &format!("pid {}", s.pid),
                format!("a killed fsbench (pid {}) left a {}", s.pid, s.item),
                "the host is not in its own configuration, so every benchmark (and everything                  else) now runs with that setting",
                "sudo fsbench doctor --restore (any fsbench run as root also puts it back first)"
                    .into(),
            )
        })
        .collect()
}

fn stale_resources(f: &Facts) -> Vec<Finding> {
    let items: Vec<&super::facts::StaleItem> = f.stale.iter().filter(|s| !s.setting).collect();
    if items.is_empty() {
        return Vec::new();
    }
    let mut pids: Vec<u32> = items.iter().map(|s| s.pid).collect();
    pids.dedup();
    vec![finding(
        "stale-resources",
        Severity::Warn,
        "host",
        format!(
            "killed fsbench run(s) (pid {}) still hold: {}",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            items
                .iter()
                .map(|s| s.item.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        "leftover mounts, loop devices and images take memory, disk space and device numbers,          and a leftover pool or mount can be mistaken for a new run's",
        "sudo fsbench doctor --cleanup (--dry-run first to see each item)".into(),
    )]
}

fn tmpfs(f: &Facts) -> Vec<Finding> {
    f.dirs
        .iter()
        .filter(|d| d.fs_type == "tmpfs" || d.fs_type == "ramfs")
        .map(|d| {
            let scratch = d.role == "scratch";
            finding(
                "tmpfs",
                Severity::Warn,
                &d.path,
                format!(
                    "{} ({}) is on {}",
                    d.path,
                    if scratch {
                        "where images go"
                    } else {
                        "the target"
                    },
                    d.fs_type
                ),
                "it lives in RAM, so the numbers measure memory, not a disk",
                if scratch {
                    "use --scratch-dir on a real disk (e.g. /var/tmp)".into()
                } else {
                    "benchmark a directory on the disk you care about".into()
                },
            )
        })
        .collect()
}

fn zram(f: &Facts) -> Vec<Finding> {
    disks(f)
        .into_iter()
        .filter(|d| d.zram)
        .map(|d| {
            finding(
                "zram",
                Severity::Warn,
                &d.disk,
                format!("{} ({}) is zram, compressed RAM", d.disk, d.role),
                "the numbers would measure compression and memory bandwidth, not storage",
                "use a real disk, or an image file on one (the default target)".into(),
            )
        })
        .collect()
}

fn loop_direct_io(f: &Facts) -> Vec<Finding> {
    f.devices
        .iter()
        .filter(|d| d.loop_dio == Some(false))
        .map(|d| {
            finding(
                "loop-direct-io",
                Severity::Warn,
                &d.name,
                format!(
                    "{} (file {}) has direct I/O off",
                    d.name,
                    d.loop_backing.as_deref().unwrap_or("?")
                ),
                "every write lands in the host's page cache of the backing file first, so the \
                 numbers measure RAM and the backing filesystem's writeback",
                format!(
                    "losetup --direct-io=on {} (fsbench's own images are attached that way)",
                    d.path
                ),
            )
        })
        .collect()
}

fn scheduler(f: &Facts) -> Vec<Finding> {
    disks(f)
        .into_iter()
        .filter(|d| {
            d.rotational == Some(false)
                && !d.zram
                && matches!(d.scheduler.as_str(), "bfq" | "mq-deadline" | "kyber")
        })
        .map(|d| {
            let kind = if d.disk.starts_with("nvme") {
                "an NVMe device"
            } else {
                "non-rotational"
            };
            finding(
                "scheduler",
                Severity::Warn,
                &d.disk,
                format!(
                    "{} is {kind} and uses the {} scheduler",
                    d.disk, d.scheduler
                ),
                "on flash a scheduler only adds work per request (seed 001: bfq added up to 35 % \
                 latency on NVMe), so the numbers would partly measure the scheduler",
                format!(
                    "echo none > /sys/block/{}/queue/scheduler (until reboot; a udev rule makes \
                     it permanent), or measure both: --fs 'ext4,ext4-none=ext4:sched=none'",
                    d.disk
                ),
            )
        })
        .collect()
}

fn rotational_virtual(f: &Facts) -> Vec<Finding> {
    let flagged: Vec<&DeviceFacts> = disks(f)
        .into_iter()
        .filter(|d| d.rotational == Some(true) && d.virtual_kind.is_some() && !d.zram)
        // A loop device over a real spinning disk is right to say it spins.
        .filter(|d| {
            !(is_loop(d)
                && d.backing
                    .as_ref()
                    .is_some_and(|b| b.rotational == Some(true) && !b.is_virtual))
        })
        .collect();
    // A flagged loop device names the disk it inherits from; that disk needs no row of its own.
    let inherited_from: Vec<&str> = flagged
        .iter()
        .filter(|d| is_loop(d))
        .filter_map(|d| d.backing.as_ref().map(|b| b.disk.as_str()))
        .collect();
    // Btrfs is what the flag costs most; without a Btrfs setup it is context, not a warning.
    let btrfs = f.setups.is_empty() || f.setups.iter().any(|(_, fs)| fs == "btrfs");
    flagged
        .into_iter()
        .filter(|d| !inherited_from.contains(&d.disk.as_str()))
        .map(|d| {
            let kind = d.virtual_kind.as_deref().unwrap_or("virtual disk");
            let (inherited, flag_on) = match (&d.backing, is_loop(d)) {
                (Some(b), true) => (format!(", inherited from {}", b.disk), b.disk.clone()),
                _ => (String::new(), d.disk.clone()),
            };
            finding(
                "rotational-virtual",
                if btrfs { Severity::Warn } else { Severity::Info },
                &d.disk,
                format!("{} ({kind}) reports rotational=1{inherited}", d.disk),
                "a virtual disk is rarely a spinning disk underneath, but the kernel believes the \
                 flag: Btrfs turns off its ssd allocation mode and the block layer picks its \
                 rotational defaults, so Btrfs is measured in a mode it would not use on flash \
                 (seed 000)",
                format!(
                    "if the storage underneath is flash: echo 0 > /sys/block/{flag_on}/queue/rotational \
                     (before attaching images), or rotational=no / rotation_rate=1 in the \
                     hypervisor's disk settings; or measure Btrfs with mount=ssd \
                     (--fs 'btrfs,btrfs-ssd=btrfs:mount=ssd')"
                ),
            )
        })
        .collect()
}

fn write_cache(f: &Facts) -> Vec<Finding> {
    disks(f)
        .into_iter()
        // Loop devices and zram have no cache of their own; the disk under a loop is listed too.
        .filter(|d| !d.write_cache.is_empty() && !is_loop(d) && !d.zram)
        .map(|d| match (d.write_cache.as_str(), &d.virtual_kind) {
            ("write through", Some(kind)) => finding(
                "write-cache",
                Severity::Warn,
                &d.disk,
                format!(
                    "{} ({kind}) reports write through: the guest sends no cache flushes",
                    d.disk
                ),
                "fsync then returns once the hypervisor has the data, which may still sit in the \
                 host's RAM, so fsync-write and database numbers can be far better than the disk \
                 can durably do",
                "check the hypervisor's cache mode (cache=none or directsync gives honest fsync), \
                 or read fsync results as an upper bound"
                    .into(),
            ),
            ("write through", None) => finding(
                "write-cache",
                Severity::Info,
                &d.disk,
                format!(
                    "{} has no volatile write cache, or it is off (write through)",
                    d.disk
                ),
                "fsync costs only the write itself; fsync-heavy results compare only with disks \
                 in the same mode",
                "nothing to fix (hdparm -W / sdparm show a disk's setting)".into(),
            ),
            (mode, _) => finding(
                "write-cache",
                Severity::Info,
                &d.disk,
                format!("{} has a volatile write cache ({mode})", d.disk),
                "fsync and journal commits wait for a cache flush, so fsync-heavy results depend \
                 on how fast this device flushes; compare them only with disks in the same mode",
                "nothing to fix; fsbench records it with the results".into(),
            ),
        })
        .collect()
}

fn discard(f: &Facts) -> Vec<Finding> {
    disks(f)
        .into_iter()
        .filter(|d| d.discard_max_bytes == Some(0) && !d.zram)
        // A real spinning disk has nothing to discard.
        .filter(|d| !(d.rotational == Some(true) && d.virtual_kind.is_none()))
        .map(|d| {
            finding(
                "discard",
                Severity::Info,
                &d.disk,
                format!("{} does not support discard", d.disk),
                "fsbench discards the whole device before every mkfs so each round starts from an \
                 empty SSD; without it earlier rounds' data stays mapped and later rounds can be \
                 slower as the SSD's garbage collection works harder",
                "on a VM, pass discard through (virtio-blk discard=unmap); otherwise compare \
                 rounds with that in mind"
                    .into(),
            )
        })
        .collect()
}

fn page_cache(f: &Facts) -> Vec<Finding> {
    let (Some(size), ram) = (f.file_size, f.host.mem_total) else {
        return Vec::new();
    };
    if ram == 0 {
        return Vec::new();
    }
    let now = format!(
        "RAM {}, page cache now {}, {} available",
        format_size(ram),
        format_size(f.host.cached),
        format_size(f.host.mem_available)
    );
    if size < ram {
        if !f.buffered_io {
            return Vec::new();
        }
        return vec![finding(
            "page-cache",
            Severity::Warn,
            "host",
            format!(
                "data file {} is smaller than RAM ({now})",
                format_size(size)
            ),
            "the page cache can hold the whole file, so buffered reads and writes measure memory, \
             not the disk (seed 000 used a file of 4x RAM for this reason)",
            "use --file-size 4xram (the target needs that much room), or keep to the O_DIRECT \
             jobs"
                .into(),
        )];
    }
    vec![finding(
        "page-cache",
        Severity::Info,
        "host",
        format!("data file {} is larger than RAM ({now})", format_size(size)),
        "the page cache cannot hold it, so even buffered I/O reaches the disk; laying the file \
         out alone writes its full size per setup and round",
        format!(
            "nothing to fix; the target needs room for it (e.g. --image-size {} or larger)",
            crate::units::fio_size(size + size / 4).to_uppercase()
        ),
    )]
}

fn memory(f: &Facts) -> Vec<Finding> {
    let h = &f.host;
    if h.mem_total == 0 || h.mem_available >= (512 << 20).max(h.mem_total / 10) {
        return Vec::new();
    }
    vec![finding(
        "memory",
        Severity::Warn,
        "host",
        format!(
            "only {} of {} RAM available",
            format_size(h.mem_available),
            format_size(h.mem_total)
        ),
        "the kernel will reclaim page cache and may swap during the run, so the results include \
         memory pressure nobody asked for",
        "stop memory-hungry processes, or use a host with more free RAM".into(),
    )]
}

fn swap(f: &Facts) -> Vec<Finding> {
    let h = &f.host;
    let mut out = Vec::new();
    let used = h.swap_total.saturating_sub(h.swap_free);
    if used > 64 << 20 {
        out.push(finding(
            "swap",
            Severity::Warn,
            "host",
            format!("{} is swapped out now", format_size(used)),
            "pages swapped back in during a run add reads to the swap device and latency to \
             everything else",
            "swapoff -a && swapon -a (with enough free RAM) before the run".into(),
        ));
    }
    for s in &h.swaps {
        if let Some(d) = f
            .devices
            .iter()
            .find(|d| !s.device.is_empty() && (d.name == s.device || d.disk == s.device))
        {
            out.push(finding(
                "swap",
                Severity::Warn,
                &d.disk,
                format!(
                    "swap {} lives on {}, a device in use here",
                    s.path, s.device
                ),
                "swapping during the run adds I/O the filesystem under test did not do",
                format!("swapoff {} for the benchmark", s.path),
            ));
        } else if s.device.starts_with("zram") {
            out.push(finding(
                "swap",
                Severity::Info,
                "host",
                format!("swap {} is on zram", s.path),
                "memory pressure compresses pages into RAM instead of writing to a disk, so \
                 memory-capped workloads behave unlike a host with disk swap",
                "nothing to fix; note it when comparing hosts".into(),
            ));
        }
    }
    out
}

fn cpu_governor(f: &Facts) -> Vec<Finding> {
    let g = &f.host.governors;
    if g.is_empty() || g.iter().all(|x| x == "performance") {
        return Vec::new();
    }
    vec![finding(
        "cpu-governor",
        Severity::Warn,
        "host",
        format!("CPU frequency governor: {}", g.join(", ")),
        "a governor that lowers the clock when idle makes short jobs and latencies vary with how \
         busy the CPU happened to be",
        "cpupower frequency-set -g performance for the run (and back afterwards)".into(),
    )]
}

fn cpu_boost(f: &Facts) -> Vec<Finding> {
    if f.host.boost != Some(true) {
        return Vec::new();
    }
    vec![finding(
        "cpu-boost",
        Severity::Info,
        "host",
        "CPU turbo/boost is on".into(),
        "boost clocks depend on temperature and on how many cores are busy, so rounds can \
         differ for reasons that are not the filesystem",
        "echo 0 > /sys/devices/system/cpu/cpufreq/boost (intel_pstate: echo 1 > \
         /sys/devices/system/cpu/intel_pstate/no_turbo) for the run"
            .into(),
    )]
}

fn load(f: &Facts) -> Vec<Finding> {
    let h = &f.host;
    let half = f64::from(h.cpus.max(1)) * 0.5;
    if h.load1 <= half {
        return Vec::new();
    }
    let share = |busy: f64| 100.0 * busy / f64::from(h.cpus.max(1));
    let why = "runnable tasks compete with the I/O threads and the filesystems' own workers, so \
               CPU-bound steps (checksums, compression, metadata) slow down by chance";
    match h.cpu_busy {
        // The load average trails by minutes: a build that just ended, or the previous stage of
        // the same tune, still counts in it while the CPUs are already idle.
        Some(busy) if busy <= half => vec![finding(
            "load",
            Severity::Info,
            "host",
            format!(
                "load average {:.2} on {} CPU(s) is from work that has ended: {:.0} % of the \
                 CPUs were busy during the sample",
                h.load1,
                h.cpus,
                share(busy)
            ),
            why,
            "none needed now; a load that comes back during the run shows as spread between rounds"
                .into(),
        )],
        busy => vec![finding(
            "load",
            Severity::Warn,
            "host",
            match busy {
                Some(b) => format!(
                    "load average {:.2} on {} CPU(s), and {:.0} % of the CPUs busy during the sample",
                    h.load1,
                    h.cpus,
                    share(b)
                ),
                None => format!("load average {:.2} on {} CPU(s)", h.load1, h.cpus),
            },
            why,
            "wait until the host is idle or stop other jobs; interleaved rounds spread such noise \
             but do not remove it"
                .into(),
        )],
    }
}

/// More than this many I/Os or bytes per second is "someone else is using the disk".
const BUSY_IOPS: f64 = 20.0;
const BUSY_BYTES_PER_S: f64 = (1 << 20) as f64;

fn device_busy(f: &Facts) -> Vec<Finding> {
    let procs: Vec<String> = f
        .host
        .io_processes
        .iter()
        .take(3)
        .map(|p| format!("{} ({}, {})", p.comm, p.pid, format_size(p.bytes)))
        .collect();
    f.devices
        .iter()
        .filter_map(|d| Some((d, d.activity.as_ref()?)))
        .filter(|(_, a)| {
            let s = a.seconds.max(0.001);
            a.ios as f64 / s > BUSY_IOPS || a.bytes as f64 / s > BUSY_BYTES_PER_S
        })
        .map(|(d, a)| {
            let who = if procs.is_empty() {
                String::new()
            } else {
                format!(
                    "; processes doing storage I/O meanwhile (on any device): {}",
                    procs.join(", ")
                )
            };
            finding(
                "device-busy",
                Severity::Warn,
                &d.name,
                format!(
                    "{} did {} I/Os ({}) in {:.1} s before anything was started{who}",
                    d.name,
                    a.ios,
                    format_size(a.bytes),
                    a.seconds
                ),
                "other I/O on the device competes with the workloads and lands in the numbers \
                 and in the device-write counters",
                "stop or wait for the other I/O (iotop -o shows it), or use a disk of its own"
                    .into(),
            )
        })
        .collect()
}

/// Whether a setup or a directory is on a filesystem that can be served from user space
/// (its driver's `Caps::userspace_daemon`: ZFS by zfs-fuse). The facts name filesystems as
/// the user wrote them (`fsbench doctor --fs`) and serialize them so: a look-up by name.
fn zfs_wanted(f: &Facts) -> bool {
    let userspace = |fs: &str| crate::fs::caps::of(fs).userspace_daemon.is_some();
    f.setups.iter().any(|(_, fs)| userspace(fs))
        || f.dirs.iter().any(|d| {
            crate::fs::caps::by_mount_type(&d.fs_type).is_some_and(|c| c.userspace_daemon.is_some())
        })
}

fn zfs_fuse(f: &Facts) -> Vec<Finding> {
    if !zfs_wanted(f) || f.host.kernel_zfs || !f.host.zfs_fuse {
        return Vec::new();
    }
    vec![finding(
        "zfs-fuse",
        Severity::Warn,
        "zfs",
        "ZFS here is zfs-fuse: the zfs kernel module is not loaded".into(),
        "zfs-fuse runs in user space over FUSE, years behind OpenZFS, without O_DIRECT or \
         asynchronous I/O; its numbers say nothing about kernel OpenZFS",
        "install OpenZFS (Debian: zfs-dkms and zfsutils-linux from contrib) and modprobe zfs; \
         otherwise read the zfs column as zfs-fuse (fsbench labels it so)"
            .into(),
    )]
}

fn zfs_libaio(f: &Facts) -> Vec<Finding> {
    if !zfs_wanted(f) {
        return Vec::new();
    }
    f.io_jobs
        .iter()
        .filter(|j| j.ioengine == "libaio" && j.iodepth > 1)
        .map(|j| {
            finding(
                "zfs-libaio",
                Severity::Warn,
                &j.id,
                format!(
                    "{}: ioengine=libaio at iodepth {} x {} job(s) on ZFS",
                    j.id, j.iodepth, j.numjobs
                ),
                "ZFS has no native asynchronous I/O, so libaio submissions block and the queue \
                 depth collapses to about one I/O in flight per job (seed 000: one job at QD32 \
                 gave ZFS 2,634 random-read IOPS, four jobs 14,847)",
                format!(
                    "spread the depth over jobs (numjobs={}, iodepth={}), or use ioengine=io_uring",
                    j.numjobs.max(4),
                    (j.iodepth / 4).max(1)
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::facts::{
        Activity, BackingFacts, DirFacts, HostFacts, IoJobFact, MissingTool, ProcIo, SwapFact,
    };
    use super::*;

    const GIB: u64 = 1 << 30;

    fn host() -> HostFacts {
        HostFacts {
            cpus: 4,
            mem_total: 16 * GIB,
            mem_available: 12 * GIB,
            cached: GIB,
            load1: 0.1,
            ..Default::default()
        }
    }

    fn dev(name: &str) -> DeviceFacts {
        DeviceFacts {
            role: "target".into(),
            path: format!("/dev/{name}"),
            name: name.into(),
            disk: name.into(),
            rotational: Some(false),
            scheduler: "none".into(),
            discard_max_bytes: Some(1 << 30),
            virtual_kind: super::super::facts::virtual_kind(name, ""),
            ..Default::default()
        }
    }

    fn facts(devices: Vec<DeviceFacts>) -> Facts {
        Facts {
            host: host(),
            devices,
            ..Default::default()
        }
    }

    fn codes(f: &Facts) -> Vec<String> {
        super::super::diagnose(f.clone())
            .findings
            .into_iter()
            .map(|x| format!("{}:{}", x.code, x.subject))
            .collect()
    }

    #[test]
    fn steady_state_on_an_image_or_a_directory_is_called_meaningless() {
        let mut f = facts(vec![dev("vda")]);
        f.dirs.push(super::super::facts::DirFacts {
            role: "scratch".into(),
            path: "/var/tmp".into(),
            fs_type: "ext4".into(),
            source: "/dev/vda1".into(),
        });
        assert!(!codes(&f).iter().any(|c| c.starts_with(STEADY_CACHES)));
        f.steady_state = true;
        let d = super::super::diagnose(f.clone());
        let x = d.findings.iter().find(|x| x.code == STEADY_CACHES).unwrap();
        assert_eq!(x.severity, Severity::Warn);
        assert!(x.finding.contains("an image file in /var/tmp"), "{x:?}");
        assert!(x.why.contains("meaningless") && x.fix.contains("--precondition"));
        // A device target has no directory: nothing to say.
        f.dirs.clear();
        assert!(!codes(&f).iter().any(|c| c.starts_with(STEADY_CACHES)));
    }

    #[test]
    fn a_clean_nvme_host_has_no_findings() {
        let f = facts(vec![dev("nvme0n1")]);
        assert_eq!(codes(&f), Vec::<String>::new());
        let d = super::super::diagnose(f);
        assert_eq!(d.passed.len(), CHECKS.len());
    }

    #[test]
    fn scheduler_on_flash_is_flagged_not_on_spinning_disks() {
        let mut nvme = dev("nvme0n1");
        nvme.scheduler = "bfq".into();
        let mut hdd = dev("sda");
        hdd.rotational = Some(true);
        hdd.scheduler = "mq-deadline".into();
        let f = facts(vec![nvme, hdd]);
        let found = scheduler(&f);
        assert_eq!(found.len(), 1);
        assert!(found[0].finding.contains("NVMe") && found[0].finding.contains("bfq"));
        assert!(found[0].fix.contains("/sys/block/nvme0n1/queue/scheduler"));
    }

    #[test]
    fn rotational_virtual_disks_and_loops_over_them() {
        let mut vda = dev("vda");
        vda.rotational = Some(true);
        let mut lp = dev("loop3");
        lp.rotational = Some(true);
        lp.loop_backing = Some("/var/tmp/x.img".into());
        lp.backing = Some(BackingFacts {
            disk: "vda".into(),
            rotational: Some(true),
            is_virtual: true,
        });
        // The loop names vda; vda gets no second row.
        let found = rotational_virtual(&facts(vec![lp.clone(), vda.clone()]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].finding.contains("inherited from vda"), "{found:?}");
        assert!(found[0].fix.contains("/sys/block/vda/queue/rotational"));
        assert_eq!(found[0].severity, Severity::Warn);
        let alone = rotational_virtual(&facts(vec![vda.clone()]));
        assert_eq!(alone[0].subject, "vda");
        // Without a Btrfs setup it is context.
        let mut ext4_only = facts(vec![vda]);
        ext4_only.setups = vec![("ext4".into(), "ext4".into())];
        assert_eq!(rotational_virtual(&ext4_only)[0].severity, Severity::Info);
        // Over a real spinning disk the flag is right.
        lp.backing = Some(BackingFacts {
            disk: "sda".into(),
            rotational: Some(true),
            is_virtual: false,
        });
        assert!(rotational_virtual(&facts(vec![lp])).is_empty());
        // A physical HDD is not virtual.
        let mut sda = dev("sda");
        sda.rotational = Some(true);
        assert!(rotational_virtual(&facts(vec![sda])).is_empty());
    }

    #[test]
    fn write_cache_modes() {
        let mut vda = dev("vda");
        vda.write_cache = "write through".into();
        let mut sda = dev("sda");
        sda.write_cache = "write back".into();
        let mut lp = dev("loop0");
        lp.write_cache = "write back".into();
        let found = write_cache(&facts(vec![vda, sda, lp]));
        let sev: Vec<(Severity, &str)> = found
            .iter()
            .map(|f| (f.severity, f.subject.as_str()))
            .collect();
        assert_eq!(sev, [(Severity::Warn, "vda"), (Severity::Info, "sda")]);
    }

    #[test]
    fn page_cache_against_ram() {
        let mut f = facts(vec![]);
        assert!(page_cache(&f).is_empty(), "no file size, nothing to say");
        f.file_size = Some(GIB);
        assert!(
            page_cache(&f).is_empty(),
            "O_DIRECT only: the cache is bypassed"
        );
        f.buffered_io = true;
        let small = page_cache(&f);
        assert_eq!(small[0].severity, Severity::Warn);
        assert!(small[0].finding.contains("smaller than RAM"));
        f.file_size = Some(64 * GIB);
        let big = page_cache(&f);
        assert_eq!(big[0].severity, Severity::Info);
        assert!(
            big[0]
                .finding
                .contains("64 GiB is larger than RAM (RAM 16 GiB")
        );
        assert!(big[0].fix.contains("--image-size 80G"), "{}", big[0].fix);
    }

    #[test]
    fn memory_and_swap() {
        let mut f = facts(vec![dev("sda")]);
        f.host.mem_available = GIB;
        assert_eq!(memory(&f).len(), 1);
        f.host.mem_available = 8 * GIB;
        assert!(memory(&f).is_empty());
        f.host.swap_total = 4 * GIB;
        f.host.swap_free = 3 * GIB;
        f.host.swaps = vec![
            SwapFact {
                path: "/dev/sda2".into(),
                device: "sda".into(),
                used: GIB,
            },
            SwapFact {
                path: "/dev/zram0".into(),
                device: "zram0".into(),
                used: 0,
            },
        ];
        let s = swap(&f);
        let what: Vec<(&str, Severity)> =
            s.iter().map(|x| (x.subject.as_str(), x.severity)).collect();
        assert_eq!(
            what,
            [
                ("host", Severity::Warn),
                ("sda", Severity::Warn),
                ("host", Severity::Info)
            ]
        );
    }

    #[test]
    fn cpu_governor_boost_and_load() {
        let mut f = facts(vec![]);
        assert!(
            cpu_governor(&f).is_empty(),
            "no cpufreq (VM): nothing to say"
        );
        f.host.governors = vec!["performance".into()];
        assert!(cpu_governor(&f).is_empty());
        f.host.governors = vec!["performance".into(), "powersave".into()];
        assert!(cpu_governor(&f)[0].finding.contains("powersave"));
        f.host.boost = Some(true);
        assert_eq!(cpu_boost(&f).len(), 1);
        f.host.load1 = 2.0;
        assert!(load(&f).is_empty(), "2 runnable on 4 CPUs is fine");
        f.host.load1 = 3.5;
        assert!(load(&f)[0].finding.contains("3.50 on 4"));
        assert_eq!(
            load(&f)[0].severity,
            Severity::Warn,
            "no sample: the average decides"
        );
        // The load of work that has ended (a tune's previous stage): a note, not a warning.
        f.host.cpu_busy = Some(0.2);
        let ended = load(&f);
        assert_eq!(ended[0].severity, Severity::Info);
        assert!(
            ended[0].finding.contains("5 % of the CPUs"),
            "{}",
            ended[0].finding
        );
        f.host.cpu_busy = Some(3.0);
        let now = load(&f);
        assert_eq!(now[0].severity, Severity::Warn);
        assert!(
            now[0].finding.contains("75 % of the CPUs busy"),
            "{}",
            now[0].finding
        );
    }

    #[test]
    fn other_io_on_the_device_names_the_processes() {
        let mut d = dev("sda");
        d.activity = Some(Activity {
            seconds: 1.0,
            ios: 5,
            bytes: 4096,
        });
        let mut f = facts(vec![d.clone()]);
        assert!(
            device_busy(&f).is_empty(),
            "a few I/Os a second is background noise"
        );
        d.activity = Some(Activity {
            seconds: 1.0,
            ios: 400,
            bytes: 50 << 20,
        });
        f.devices = vec![d];
        f.host.io_processes = vec![ProcIo {
            pid: 42,
            comm: "rsync".into(),
            bytes: 50 << 20,
        }];
        let b = device_busy(&f);
        assert!(b[0].finding.contains("400 I/Os") && b[0].finding.contains("rsync (42"));
    }

    #[test]
    fn tmpfs_zram_and_loop_without_direct_io() {
        let mut f = facts(vec![]);
        f.dirs = vec![
            DirFacts {
                role: "scratch".into(),
                path: "/tmp".into(),
                fs_type: "tmpfs".into(),
                source: "tmpfs".into(),
            },
            DirFacts {
                role: "scratch".into(),
                path: "/var/tmp".into(),
                fs_type: "ext4".into(),
                source: "/dev/vda".into(),
            },
        ];
        assert_eq!(codes(&f), ["tmpfs:/tmp"]);
        let mut z = dev("zram0");
        z.zram = true;
        let mut lp = dev("loop1");
        lp.loop_backing = Some("/var/tmp/a.img".into());
        lp.loop_dio = Some(false);
        let mut lp2 = dev("loop2");
        lp2.loop_dio = Some(true);
        f.dirs.clear();
        f.devices = vec![z, lp, lp2];
        assert_eq!(codes(&f), ["zram:zram0", "loop-direct-io:loop1"]);
    }

    #[test]
    fn discard_missing_matters_on_flash_and_virtual_disks_only() {
        let mut ssd = dev("sdb");
        ssd.discard_max_bytes = Some(0);
        let mut hdd = dev("sdc");
        hdd.discard_max_bytes = Some(0);
        hdd.rotational = Some(true);
        let found = discard(&facts(vec![ssd, hdd]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].subject, "sdb");
    }

    #[test]
    fn zfs_fuse_and_the_libaio_queue_depth_trap() {
        let mut f = facts(vec![]);
        f.host.zfs_fuse = true;
        f.io_jobs = vec![IoJobFact {
            id: "randread".into(),
            ioengine: "libaio".into(),
            iodepth: 32,
            numjobs: 1,
        }];
        assert!(
            zfs_fuse(&f).is_empty() && zfs_libaio(&f).is_empty(),
            "no ZFS asked for"
        );
        f.setups = vec![("zfs".into(), "zfs".into())];
        assert_eq!(zfs_fuse(&f).len(), 1);
        let trap = zfs_libaio(&f);
        assert!(
            trap[0].fix.contains("numjobs=4, iodepth=8"),
            "{}",
            trap[0].fix
        );
        f.host.kernel_zfs = true;
        assert!(zfs_fuse(&f).is_empty());
        f.io_jobs[0].ioengine = "io_uring".into();
        assert!(zfs_libaio(&f).is_empty());
    }

    #[test]
    fn missing_tools_are_grouped_per_setup() {
        let mut f = facts(vec![]);
        let m = |tool: &str, by: &str, pkg: &str| MissingTool {
            tool: tool.into(),
            needed_by: by.into(),
            package: pkg.into(),
        };
        f.missing_tools = vec![
            m("mkfs.xfs", "xfs", "xfsprogs"),
            m("zpool", "zfs", "zfs-fuse"),
            m("zfs", "zfs", "zfs-fuse"),
        ];
        let found = missing_tools(&f);
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].finding, "zpool, zfs not installed");
        assert_eq!(
            found[1].fix,
            "fsbench doctor --install-missing (installs zfs-fuse)"
        );
    }

    #[test]
    fn what_killed_runs_left_behind() {
        let mut f = facts(vec![]);
        let item = |pid: u32, item: &str, setting: bool| super::super::facts::StaleItem {
            pid,
            item: item.into(),
            setting,
        };
        f.stale = vec![
            item(
                7,
                "setting /proc/sys/vm/dirty_ratio (was \"20\", set to \"10\")",
                true,
            ),
            item(7, "mount /run/fsbench/ext4-7-0 (/dev/loop3)", false),
            item(
                7,
                "loop device /dev/loop3 on /var/tmp/fsbench-7-0.img",
                false,
            ),
        ];
        assert_eq!(
            codes(&f),
            ["unrestored-tunings:pid 7", "stale-resources:host"]
        );
        let t = unrestored_tunings(&f);
        assert!(t[0].finding.contains("dirty_ratio") && t[0].fix.contains("--restore"));
        let s = stale_resources(&f);
        assert!(
            s[0].finding
                .contains("(pid 7) still hold: mount /run/fsbench/ext4-7-0")
        );
        assert!(s[0].fix.contains("--cleanup"));
    }

    #[test]
    fn findings_are_warnings_first() {
        let mut vda = dev("vda");
        vda.rotational = Some(true);
        vda.write_cache = "write back".into();
        let d = super::super::diagnose(facts(vec![vda]));
        let sev: Vec<Severity> = d.findings.iter().map(|f| f.severity).collect();
        assert_eq!(sev, [Severity::Warn, Severity::Info]);
        assert!(!d.passed.contains(&"rotational-virtual".to_string()));
    }
}
