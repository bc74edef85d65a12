//! ext4: `mkfs.ext4 -F -q`, properties from `tune2fs -l`.

/// Its option space for `fsbench tune`.
pub mod current;
pub mod options;
pub mod props;

use crate::fs::caps::{
    AgingEta, ArrayEta, Caps, Check, Crash, Eta, Grow, OfflineResize, Shrink, Snapshot,
};
use crate::fs::drivers::simple::{KernelFs, tool_text};
use crate::fs::durability::{Weakening, Weakens};
use crate::fs::maintenance::{Inodes, Maintenance};
use crate::fs::provenance::ToolVersion;
use crate::fs::setup::variant_args::{ArgRules, OptKey};
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

/// How mke2fs and the ext4 mount options read a variant's words.
pub const ARGS: ArgRules = ArgRules {
    mkfs_tool: "mkfs.ext4",
    // mke2fs getopt: "b:cd:e:g:i:jl:m:no:qr:s:t:vC:DE:FG:I:J:KL:M:N:O:R:ST:U:Vz:".
    short_with_value: "bdegilmorstCEGIJLMNORTUz",
    long_with_value: &[],
    path_options: &[
        OptKey {
            option: "-d",
            key: "",
            what: "a directory to copy in",
        },
        OptKey {
            option: "-l",
            key: "",
            what: "a bad-blocks list file",
        },
        OptKey {
            option: "-z",
            key: "",
            what: "an undo file",
        },
    ],
    device_options: &[
        OptKey {
            option: "-J",
            key: "device",
            what: "an external journal device",
        },
        OptKey {
            option: "-O",
            key: "journal_dev",
            what: "the journal_dev feature (the target would become another filesystem's \
                   external journal)",
        },
    ],
    multi_device_words: &[],
    mount_device_keys: &["journal_path", "journal_dev"],
    mount_inner_path_keys: &["usrjquota", "grpjquota"],
    removed_mount_options: &[],
};

fn describe(device: Option<&Path>, _mnt: &Path) -> BTreeMap<String, String> {
    match device {
        Some(d) => props::parse_tune2fs(&tool_text(&["tune2fs", "-l", &d.display().to_string()])),
        None => BTreeMap::new(),
    }
}

/// The ext4 driver.
pub const EXT4: KernelFs = KernelFs {
    fstype: "ext4",
    mkfs: "mkfs.ext4",
    default_args: &["-F", "-q"],
    // Below ~8 MiB mke2fs drops the journal; keep ext4 what it is in production.
    min_size: 16 << 20,
    describe,
    accepts: ACCEPTS,
    tools: &["mkfs.ext4", "mount"],
    caps: CAPS,
    // md arrays under it are planned, not built (docs/multidev.md): no layout steps.
    array: None,
    own: crate::fs::drivers::simple::Own {
        current_options: Some(current::read),
        ..crate::fs::drivers::simple::Own::NONE
    },
};

/// resize2fs resizes offline only after a forced check, and reads the size it is given in KiB.
const OFFLINE_RESIZE: OfflineResize = OfflineResize {
    fsck: &["e2fsck", "-f", "-p"],
    geometry: &["dumpe2fs", "-h"],
    resize: &["resize2fs"],
};

const CAPS: Caps = Caps {
    mount_types: &["ext4"],
    backing: Backing::Device,
    check: Check::Offline(&["e2fsck", "-fn"]),
    // The online grow needs CAP_SYS_RESOURCE; without it (containers) it grows offline, which
    // is what an administrator would do.
    grow: Grow::Device {
        argv: &["resize2fs"],
        offline: Some(OFFLINE_RESIZE),
    },
    shrink: Shrink::Offline(OFFLINE_RESIZE),
    snapshot: Snapshot::None,
    layouts: crate::fs::layout::MD,
    crash: Crash::Clones {
        mount_extra: &[],
        forget: None,
    },
    probes: true,
    probe_image: 640 << 20,
    commit_s: 5,
    // Lazy inode-table initialisation keeps the device busy ~2 s after mkfs (its mkfs steps
    // took 4.9 s on average in the calibration runs of plan/eta.rs, the others' 3.1 s with a
    // 3 s quiet window). ext4 is the metadata baseline.
    eta: Eta {
        mkfs_s: 1.9,
        meta: [1.0, 1.0, 1.0],
        array: ArrayEta::GUESS,
        // The quiet 8 GiB churn run's 411 MiB/s; the other profiles by their ratio to
        // churn in bench/aging-vs-seqwrite.sh's run (git as measured there: small files do
        // not slow with the image's size like the page cache's share does).
        aging: AgingEta {
            churn: 411.0,
            overwrite: 333.0,
            punch: 508.0,
            git: 111.0,
        },
    },
    userspace_daemon: None,
    maintenance: Maintenance {
        inodes: Some(Inodes::Fixed),
        metadata_chunks: false,
        scrub: None,
    },
    // ext4 has neither snapshots nor reflinks (FICLONE is refused); an LVM snapshot is
    // below the filesystem, outside what is compared here.
    backup: Backup {
        copies: Copies::None(
            "ext4 has no snapshots and no reflink copies (FICLONE is refused); an LVM snapshot would be below the filesystem",
        ),
        stream: Stream::None("ext4 has no send stream (dump(8) of ext4 is not packaged here)"),
        trim: Backup::FSTRIM,
        balance: Backup::NO_BALANCE,
    },
    weakens: &[Weakening {
        when: Weakens::Mount("data=writeback"),
        why: "{o} lets stale data appear in recently written files after a crash",
    }],
    versions: &[
        ToolVersion {
            tool: "mkfs.ext4",
            asks: &[&["mkfs.ext4", "-V"]],
        },
        ToolVersion {
            tool: "e2fsck",
            asks: &[&["e2fsck", "--version"]],
        },
    ],
    packages: &[
        Tool::new("mkfs.ext4", E2FSPROGS),
        Tool::new("e2fsck", E2FSPROGS),
        Tool::new("tune2fs", E2FSPROGS),
        Tool::new("resize2fs", E2FSPROGS),
        Tool::new("dumpe2fs", E2FSPROGS),
    ],
};

/// The package of ext4's programs on every distribution.
const E2FSPROGS: Package = Package::everywhere("e2fsprogs");

#[cfg(test)]
mod tests {
    use super::ARGS;
    use crate::fs::setup::variant_args::tests::verdict;

    #[test]
    fn ext4_options_pass_and_device_forms_are_refused() {
        let ok = |mkfs: &[&str], mount: &[&str]| assert_eq!(verdict(&ARGS, mkfs, mount), "");
        ok(
            &["-m", "1", "-E", "lazy_itable_init=0"],
            &["noatime", "commit=60"],
        );
        ok(
            &[
                "-b",
                "4096",
                "-T",
                "news",
                "-L",
                "data",
                "-O",
                "^has_journal",
            ],
            &[],
        );
        ok(
            &["-qm1", "-Elazy_itable_init=0,lazy_journal_init=1"],
            &["data=ordered"],
        );
        let no = |mkfs: &[&str], mount: &[&str], want: &str| {
            let e = verdict(&ARGS, mkfs, mount);
            assert!(e.contains(want), "{mkfs:?} {mount:?}: {e}");
        };
        no(&["-J", "device=/dev/sdz"], &[], "external journal device");
        no(&["-Jdevice=UUID=1234"], &[], "not supported yet");
        no(
            &["-F", "-J", "size=64,device=LABEL=j"],
            &[],
            "external journal device",
        );
        no(
            &["-O", "^metadata_csum,journal_dev"],
            &[],
            "journal_dev feature",
        );
        no(&["-d", "/etc"], &[], "outside fsbench's scratch area");
        no(
            &["-z", "undo.e2undo"],
            &[],
            "outside fsbench's scratch area",
        );
        no(&["-l", "/dev/sdz"], &[], "device path");
        no(&["/dev/sdz"], &[], "positional");
        no(&["-m", "1", "100000"], &[], "positional");
        no(&["-m"], &[], "needs a value");
        no(&[], &["journal_path=/dev/sdz"], "not supported yet");
        no(&[], &["journal_dev=2049"], "another device");
        no(&[], &["noatime", "usrjquota=/dev/sdz"], "device path");
    }
}
