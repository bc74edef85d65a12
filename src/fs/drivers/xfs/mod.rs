//! XFS: `mkfs.xfs -f -q`, properties from `xfs_info` of the mounted filesystem.

/// Its option space for `fsbench tune`.
pub mod current;
pub mod options;
pub mod props;
pub mod resize;

use crate::fs::caps::{AgingEta, ArrayEta, Caps, Check, Crash, Eta, Grow, Shrink, Snapshot};
use crate::fs::drivers::simple::{KernelFs, tool_text};
use crate::fs::maintenance::{Inodes, Maintenance};
use crate::fs::provenance::ToolVersion;
use crate::fs::setup::variant_args::{ArgRules, OptKey, Removed};
use crate::fs::setup::variant_keys::Accepts;
use crate::fs::snapshot_ops::{Backup, Copies, Stream};
use crate::host::packages::{Package, Tool};
use crate::measure::backing::Backing;
use std::collections::BTreeMap;
use std::path::Path;

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    dir_attrs: &[],
    args: ARGS,
    hints: &[],
};

/// How mkfs.xfs and the XFS mount options read a variant's words.
pub const ARGS: ArgRules = ArgRules {
    mkfs_tool: "mkfs.xfs",
    // mkfs.xfs: -b -c -d -i -l -L -m -n -p -r -s take values; -f -K -N -q -V are flags.
    short_with_value: "bcdilLmnprs",
    long_with_value: &[],
    path_options: &[
        OptKey {
            option: "-p",
            key: "",
            what: "a prototype file",
        },
        OptKey {
            option: "-c",
            key: "options",
            what: "a config file",
        },
    ],
    device_options: &[
        OptKey {
            option: "-l",
            key: "logdev",
            what: "an external log device",
        },
        OptKey {
            option: "-l",
            key: "name",
            what: "an external log device",
        },
        OptKey {
            option: "-r",
            key: "rtdev",
            what: "a realtime device",
        },
        OptKey {
            option: "-r",
            key: "name",
            what: "a realtime device",
        },
        OptKey {
            option: "-d",
            key: "name",
            what: "the data device (fsbench names the target itself)",
        },
    ],
    multi_device_words: &[],
    mount_device_keys: &["logdev", "rtdev"],
    mount_inner_path_keys: &[],
    // Seed 004's `nobarrier` log volume: gone since 4.19 (XFS always flushes its cache).
    removed_mount_options: &[
        Removed {
            option: "nobarrier",
            since: (4, 19),
            why: NO_BARRIER_OPTIONS,
        },
        Removed {
            option: "barrier",
            since: (4, 19),
            why: NO_BARRIER_OPTIONS,
        },
    ],
};

const NO_BARRIER_OPTIONS: &str = "XFS always issues cache flushes and has no barrier or \
    nobarrier option any more; remove it (ext4 still takes barrier=0, see docs/crash.md)";

fn describe(_device: Option<&Path>, mnt: &Path) -> BTreeMap<String, String> {
    props::parse_xfs_info(&tool_text(&["xfs_info", &mnt.display().to_string()]))
}

/// The xfs driver.
pub const XFS: KernelFs = KernelFs {
    fstype: "xfs",
    mkfs: "mkfs.xfs",
    default_args: &["-f", "-q"],
    // xfsprogs 5.19+ refuses filesystems under 300 MiB.
    min_size: 300 << 20,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.xfs", "mount"],
    caps: CAPS,
    // md arrays under it are planned, not built (docs/multidev.md): no layout steps.
    array: None,
    own: crate::fs::drivers::simple::Own {
        compression_ratio: None,
        shrink: Some(resize::shrink),
        current_options: Some(current::read),
    },
};

const CAPS: Caps = Caps {
    mount_types: &["xfs"],
    backing: Backing::Device,
    check: Check::Offline(&["xfs_repair", "-n"]),
    grow: Grow::Mountpoint(&["xfs_growfs"]),
    // Kernel ≥ 5.12, `xfs_growfs -D`, marked experimental: never a whole allocation group.
    shrink: Shrink::Own,
    snapshot: Snapshot::None,
    // Every crash state is a clone with the recording's UUID.
    layouts: crate::fs::layout::MD,
    crash: Crash::Clones {
        mount_extra: &["nouuid"],
        forget: None,
    },
    probes: true,
    // xfsprogs refuses to format below 300 MiB; the probes' images are larger anyway.
    probe_image: 640 << 20,
    commit_s: 5,
    // The calibration runs' mean step times (plan/eta.rs): untar 3.9 s, cold find 2.4 s,
    // rm -rf 2.3 s, against ext4's 3.4, 2.2 and 1.5 s.
    eta: Eta {
        mkfs_s: 0.3,
        meta: [1.2, 1.3, 2.85],
        array: ArrayEta::GUESS,
        // As ext4's: 448 MiB/s churn at 8 GiB, the rest by bench/aging-vs-seqwrite.sh.
        aging: AgingEta {
            churn: 448.0,
            overwrite: 428.0,
            punch: 607.0,
            git: 101.0,
        },
    },
    userspace_daemon: None,
    maintenance: Maintenance {
        inodes: Some(Inodes::Dynamic),
        metadata_chunks: false,
        // xfs_scrub checks metadata only (XFS has no data checksums).
        scrub: None,
    },
    // Reflink copies stand in for snapshots (mkfs.xfs enables reflink=1 by default).
    backup: Backup {
        copies: Copies::Reflink,
        stream: Stream::None("XFS has no send stream of a copy (xfsdump dumps a whole filesystem)"),
        trim: Backup::FSTRIM,
        balance: Backup::NO_BALANCE,
    },
    weakens: &[],
    versions: &[
        ToolVersion {
            tool: "mkfs.xfs",
            asks: &[&["mkfs.xfs", "-V"]],
        },
        ToolVersion {
            tool: "xfs_repair",
            asks: &[&["xfs_repair", "--version"]],
        },
    ],
    packages: &[
        Tool::new("mkfs.xfs", XFSPROGS),
        Tool::new("xfs_repair", XFSPROGS),
        Tool::new("xfs_info", XFSPROGS),
        Tool::new("xfs_growfs", XFSPROGS),
    ],
};

/// The package of XFS's programs on every distribution.
const XFSPROGS: Package = Package::everywhere("xfsprogs");

#[cfg(test)]
mod tests {
    use super::ARGS;
    use crate::fs::setup::variant_args::tests::verdict;

    #[test]
    fn xfs_options_pass_and_external_devices_are_refused() {
        let ok = |mkfs: &[&str], mount: &[&str]| assert_eq!(verdict(&ARGS, mkfs, mount), "");
        ok(&["-K"], &[]);
        ok(
            &[
                "-m",
                "crc=1,reflink=1",
                "-l",
                "size=64m",
                "-d",
                "agcount=4",
                "-i",
                "size=512",
            ],
            &["noatime", "logbsize=256k"],
        );
        let no = |mkfs: &[&str], mount: &[&str], want: &str| {
            let e = verdict(&ARGS, mkfs, mount);
            assert!(e.contains(want), "{mkfs:?} {mount:?}: {e}");
        };
        no(
            &["-l", "logdev=/dev/sdz,size=64m"],
            &[],
            "external log device",
        );
        no(&["-l", "size=64m,logdev=sdz"], &[], "external log device");
        no(&["-r", "rtdev=/dev/sdz"], &[], "realtime device");
        no(&["-d", "name=/dev/sdz"], &[], "data device");
        no(&["-p", "/etc/proto"], &[], "outside fsbench's scratch area");
        no(
            &["-c", "options=/etc/xfs.conf"],
            &[],
            "outside fsbench's scratch area",
        );
        no(&["-f", "/dev/sdz"], &[], "positional");
        no(&[], &["logdev=/dev/sdz"], "not supported yet");
        no(&[], &["noatime", "rtdev=/dev/sdz"], "not supported yet");
    }

    /// Seed 004's `nobarrier` is refused at plan time with the reason, on kernels that
    /// removed it, and passes on one before.
    #[test]
    fn nobarrier_is_refused_where_the_kernel_removed_it() {
        use crate::fs::setup::variant_args::Removed;
        let rules = ARGS.removed_mount_options;
        let why = Removed::refuses(rules, "nobarrier", Some((6, 18))).unwrap();
        assert!(why.contains("removed in Linux 4.19"), "{why}");
        assert!(Removed::refuses(rules, "barrier", Some((4, 19))).is_some());
        assert!(Removed::refuses(rules, "barrier", None).is_some());
        assert_eq!(Removed::refuses(rules, "nobarrier", Some((4, 9))), None);
        assert_eq!(Removed::refuses(rules, "noatime", Some((6, 18))), None);
        // On this machine's kernel (the test suite runs on ≥ 4.19), through the setup check.
        if crate::host::provenance::running_kernel() >= Some((4, 19)) {
            let e = verdict(&ARGS, &[], &["noatime", "nobarrier"]);
            assert!(
                e.contains("mount option \"nobarrier\" was removed in Linux 4.19"),
                "{e}"
            );
        }
    }
}
