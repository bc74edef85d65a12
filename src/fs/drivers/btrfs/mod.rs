//! Btrfs: `mkfs.btrfs -f -q`, properties from `dump-super` and `btrfs filesystem df`.

/// Its option space for `fsbench tune`.
pub mod compression;
pub mod layouts;
pub mod options;
pub mod props;
pub mod snapshot;

use crate::fs::Filesystem;
use crate::fs::caps::{AgingEta, ArrayEta, Caps, Check, Crash, Eta, Grow, Shrink, Snapshot};
use crate::fs::drivers::simple::{KernelFs, tool_text};
use crate::fs::durability::{Weakening, Weakens};
use crate::fs::maintenance::{Inodes, Maintenance, Scrub};
use crate::fs::provenance::ToolVersion;
use crate::fs::redundancy::{ArrayOps, LiveArray, run_polled, wipe};
use crate::fs::setup::variant_args::{ArgRules, OptKey};
use crate::fs::setup::variant_keys::Accepts;
use crate::fs::snapshot_ops::{Backup, Copies, Maint, Own, Stream};
use crate::host::command::{self, argv};
use crate::host::packages::{Package, Tool};
use crate::measure::backing::Backing;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    // nocow: `chattr +C` on the data directory (applied by the workload runner).
    dir_attrs: &["nocow"],
    args: ARGS,
    hints: &[],
};

/// How mkfs.btrfs and the Btrfs mount options read a variant's words. Every positional word
/// is another device of a multi-device filesystem (`-m raid1 -d raid1 /dev/sdc1 /dev/sdc2`).
pub const ARGS: ArgRules = ArgRules {
    mkfs_tool: "mkfs.btrfs",
    short_with_value: "AbdlLmnOrRsuU",
    long_with_value: &[
        "alloc-start",
        "byte-count",
        "data",
        "metadata",
        "csum",
        "checksum",
        "nodesize",
        "sectorsize",
        "features",
        "runtime-features",
        "label",
        "uuid",
        "device-uuid",
        "rootdir",
        "subvol",
        "compress",
        "inode-flags",
        "leafsize",
    ],
    path_options: &[
        OptKey {
            option: "-r",
            key: "",
            what: "a directory to copy in",
        },
        OptKey {
            option: "--rootdir",
            key: "",
            what: "a directory to copy in",
        },
    ],
    device_options: &[],
    multi_device_words: &[],
    mount_device_keys: &["device"],
    mount_inner_path_keys: &["subvol"],
    removed_mount_options: &[],
};

fn describe(device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String> {
    let mut m = match device {
        Some(d) => props::parse_btrfs_super(&tool_text(&[
            "btrfs",
            "inspect-internal",
            "dump-super",
            &d.display().to_string(),
        ])),
        None => BTreeMap::new(),
    };
    m.extend(props::parse_btrfs_df(&tool_text(&[
        "btrfs",
        "filesystem",
        "df",
        &mnt.display().to_string(),
    ])));
    m
}

/// The btrfs driver.
pub const BTRFS: KernelFs = KernelFs {
    fstype: "btrfs",
    mkfs: "mkfs.btrfs",
    default_args: &["-f", "-q"],
    // mkfs.btrfs: "minimum size for each btrfs device is 114294784" (btrfs-progs 6.x).
    min_size: 114_294_784,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.btrfs", "mount"],
    caps: CAPS,
    array: Some(ARRAY_OPS),
    own: crate::fs::drivers::simple::Own {
        compression_ratio: Some(compression::ratio_of),
        shrink: None,
        // Nothing of its space is set at mkfs: its mount options say it all.
        current_options: None,
    },
};

/// A Btrfs layout's scrub, failed device and rebuild: a line through the steps' seconds of
/// two runs of raid1 over three loop images (256 MiB and 1.5 GiB of data; scrub 0.4 and
/// 3.5 s, rebuild 0.9 and 2.3 s) on the project's 2-core VM at load average 4, so rough.
const BTRFS_ARRAY: ArrayEta = ArrayEta {
    scrub_s: 0.2,
    scrub_s_per_gib: 2.2,
    fail_s: 0.5,
    rebuild_s: 0.7,
    rebuild_s_per_gib: 1.1,
};

/// What a Btrfs layout that survives a failed device does in the redundancy phase
/// (`fs/redundancy.rs`): the hooks of [`BTRFS`]'s `*_layout` methods.
const ARRAY_OPS: ArrayOps = ArrayOps {
    scrub: layout_scrub,
    degrade: layout_degrade,
    rebuild: layout_rebuild,
};

/// `btrfs scrub start -B` on the mount, polling `btrfs scrub status` for `tick`; seconds.
fn layout_scrub(array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> crate::Result<f64> {
    let t0 = Instant::now();
    let m = array.mountpoint.display().to_string();
    run_polled(
        &argv(&["btrfs", "scrub", "start", "-B", &m]),
        &[],
        0,
        array.timeout,
        &argv(&["btrfs", "scrub", "status", &m]),
        tick,
    )?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Unmount, wipe the last member, make the kernel forget it, mount `-o degraded` by the
/// first member (Btrfs has no "offline" of a member of a mounted filesystem).
fn layout_degrade(array: &mut LiveArray<'_>) -> crate::Result<()> {
    let failed = array.failed()?.to_path_buf();
    if let Some(m) = array.mounted.take() {
        m.release()?;
    }
    let size = crate::scratch::size_of(&failed)?;
    wipe(&failed, size, array.timeout)?;
    forget(&failed, array.timeout)?;
    let mut degraded = array.setup.clone();
    degraded.mount.push("degraded".into());
    let first = &array.members[0];
    *array.mounted = Some(BTRFS.mount(first, &degraded, array.mountpoint, array.timeout)?);
    Ok(())
}

/// Make the kernel forget the (wiped, unmounted) member `dev`, so the next mount must be
/// `-o degraded`.
fn forget(dev: &Path, timeout: Duration) -> crate::Result<()> {
    let d = dev.display().to_string();
    let a = argv(&["btrfs", "device", "scan", "--forget", &d]);
    // A wiped device is no longer registered: "not found" is the state wanted.
    crate::fs::setup::argv_guard::check_devices(&a, &[dev.to_path_buf()], 4)?;
    let _ = command::run_unchecked(&a, timeout)?;
    Ok(())
}

/// `btrfs replace start -B` of the missing member onto the spare or the wiped failed device,
/// polling `btrfs replace status -1` for `tick`; seconds. mkfs numbers the members 1…N in
/// order: the failed last one is devid N.
fn layout_rebuild(array: &LiveArray<'_>, tick: &dyn Fn(f64)) -> crate::Result<f64> {
    let onto = array.rebuild_onto()?;
    let d = onto.display().to_string();
    let id = array.members.len().to_string();
    let m = array.mountpoint.display().to_string();
    let a = argv(&["btrfs", "replace", "start", "-B", "-f", &id, &d, &m]);
    let status = argv(&["btrfs", "replace", "status", "-1", &m]);
    run_polled(&a, &[onto.to_path_buf()], 6, array.timeout, &status, tick)
}

const CAPS: Caps = Caps {
    mount_types: &["btrfs"],
    // A file's st_dev is anonymous; the devices are listed under /sys/fs/btrfs.
    backing: Backing::Members,
    check: Check::Offline(&["btrfs", "check", "--readonly"]),
    grow: Grow::Mountpoint(&["btrfs", "filesystem", "resize", "max"]),
    shrink: Shrink::OnlineBy(&["btrfs", "filesystem", "resize"]),
    snapshot: Snapshot::Subvolume(&["btrfs", "subvolume"]),
    // A clone has the recording's fsid: the kernel must forget it before the next one.
    layouts: layouts::LAYOUTS,
    crash: Crash::Clones {
        mount_extra: &[],
        forget: Some(&["btrfs", "device", "scan", "--forget"]),
    },
    probes: true,
    probe_image: 640 << 20,
    commit_s: 30,
    // The calibration runs' mean step times (plan/eta.rs): untar 5.0 s, cold find 2.7 s,
    // rm -rf 2.9 s, against ext4's 3.4, 2.2 and 1.5 s.
    eta: Eta {
        mkfs_s: 0.3,
        meta: [1.65, 1.7, 4.2],
        array: BTRFS_ARRAY,
        // As ext4's: 258 MiB/s churn at 8 GiB, the rest by bench/aging-vs-seqwrite.sh.
        aging: AgingEta {
            churn: 258.0,
            overwrite: 164.0,
            punch: 265.0,
            git: 45.0,
        },
    },
    userspace_daemon: None,
    maintenance: Maintenance {
        inodes: Some(Inodes::Unlimited),
        // Separate data and metadata block groups: mkfs.btrfs's default at every size
        // (`--mixed` shares them, and then the probe does not reproduce the trap).
        metadata_chunks: true,
        scrub: Some(Scrub::Foreground(&["btrfs", "scrub", "start", "-B"])),
    },
    backup: Backup {
        copies: Copies::Own(Own(&snapshot::SUBVOLUMES)),
        stream: Stream::Own,
        trim: Backup::FSTRIM,
        // Every data and metadata chunk rewritten: what seed 004 advises running periodically.
        balance: Maint::Run(&["btrfs", "balance", "start", "--full-balance"]),
    },
    weakens: &[
        Weakening {
            when: Weakens::Mount("nodatacow"),
            why: "mount option {o} turns off Btrfs data checksums; silent corruption goes undetected",
        },
        Weakening {
            when: Weakens::Mount("nodatasum"),
            why: "mount option {o} turns off Btrfs data checksums; silent corruption goes undetected",
        },
        Weakening {
            when: Weakens::DirAttr("nocow"),
            why: "{o} (chattr +C) stops Btrfs checksumming and compressing the data files; corruption goes undetected",
        },
    ],
    versions: &[
        ToolVersion {
            tool: "mkfs.btrfs",
            asks: &[&["mkfs.btrfs", "--version"]],
        },
        ToolVersion {
            tool: "btrfs",
            asks: &[&["btrfs", "--version"]],
        },
    ],
    packages: &[
        Tool::new("mkfs.btrfs", BTRFS_PROGS),
        Tool::new("btrfs", BTRFS_PROGS),
    ],
};

/// The package of Btrfs's programs on every distribution.
const BTRFS_PROGS: Package = Package::everywhere("btrfs-progs");

#[cfg(test)]
mod tests {
    use super::ARGS;
    use crate::fs::setup::variant_args::tests::verdict;

    #[test]
    fn a_layout_puts_profiles_before_the_variant_words_and_devices_last() {
        let mut s = crate::fs::SetupSpec::plain("btrfs");
        s.raid = Some("raid10".into());
        s.mraid = Some("raid1c3".into());
        s.mkfs = vec!["--nodesize".into(), "16k".into()];
        let l = crate::fs::layout::of_setup(&s).unwrap();
        let devs: Vec<std::path::PathBuf> =
            (1..=4).map(|i| format!("/dev/loop{i}").into()).collect();
        assert_eq!(
            super::BTRFS.layout_argv(l, &devs, &s).join(" "),
            "mkfs.btrfs -f -q -d raid10 -m raid1c3 --nodesize 16k /dev/loop1 /dev/loop2 \
             /dev/loop3 /dev/loop4"
        );
    }

    #[test]
    fn btrfs_single_device_options_pass_and_extra_devices_are_refused() {
        let ok = |mkfs: &[&str], mount: &[&str]| assert_eq!(verdict(&ARGS, mkfs, mount), "");
        ok(
            &[
                "-m",
                "dup",
                "--nodesize",
                "16k",
                "--csum=xxhash",
                "-O",
                "no-holes",
                "-K",
            ],
            &[],
        );
        ok(
            &["-L", "data", "--label=x"],
            &["noatime", "compress=zstd:3", "ssd"],
        );
        let no = |mkfs: &[&str], mount: &[&str], want: &str| {
            let e = verdict(&ARGS, mkfs, mount);
            assert!(e.contains(want), "{mkfs:?} {mount:?}: {e}");
        };
        // Seed 004's two-device RAID1, copied into a variant.
        let e = verdict(
            &ARGS,
            &["-m", "raid1", "-d", "raid1", "/dev/sdc1", "/dev/sdc2"],
            &[],
        );
        assert!(
            e.contains("\"/dev/sdc1\"") && e.contains("positional") && e.contains("multi-device"),
            "{e}"
        );
        no(
            &["/dev/loop0"],
            &[],
            "mkfs.btrfs would make it part of the filesystem",
        );
        no(
            &["--rootdir", "/etc"],
            &[],
            "outside fsbench's scratch area",
        );
        no(&["-r", "/etc"], &[], "outside fsbench's scratch area");
        no(&["--data"], &[], "needs a value");
        no(&[], &["device=/dev/sdz"], "not supported yet");
        // subvol= is a path inside the new filesystem, not on the host.
        assert_eq!(verdict(&ARGS, &[], &["subvol=/"]), "");
        no(&[], &["subvol=/dev/sdz"], "device path");
        no(&[], &["noatime", "device=sdz"], "another device");
    }
}
