//! ext4's option space: journal mode and commit interval, atime, barriers, discard, inode size.

use crate::fs::options::model::{
    Conflict, Factor, ONLINE_DISCARD, Place, Space, default, safe, unsafe_,
};

/// ext4's option space (docs/tune.md).
pub const SPACE: Space = Space {
    fs: "ext4",
    mkfs: "mkfs.ext4",
    fstab: true,
    factors: &[
        Factor {
            name: "atime",
            place: Place::Mount,
            values: &[default("relatime"), safe("noatime")],
            why: "every read of a file not read since its last change writes its inode \
                  (relatime); noatime writes none",
            seeds: "001, 003, 004",
        },
        Factor {
            name: "data",
            place: Place::Mount,
            values: &[
                default("data=ordered"),
                unsafe_("data=writeback"),
                safe("data=journal"),
            ],
            why: "ordered writes a file's data before the metadata that points at it; writeback \
                  drops the ordering (stale data after a crash), journal writes data twice",
            seeds: "001, 004",
        },
        Factor {
            name: "commit",
            place: Place::Mount,
            values: &[default("commit=5"), unsafe_("commit=60")],
            why: "fewer journal commits batch more metadata per commit; up to 60 s of \
                  acknowledged writes can vanish on power loss",
            seeds: "001",
        },
        Factor {
            name: "barrier",
            place: Place::Mount,
            values: &[default("barrier=1"), unsafe_("barrier=0")],
            why: "no cache flushes at commits: faster fsync on a device with a volatile cache, \
                  a corrupt filesystem after a power loss",
            seeds: "001, 004",
        },
        Factor {
            name: "async_commit",
            place: Place::Mount,
            values: &[default("sync commit"), safe("journal_async_commit")],
            why: "the commit block is written without waiting for the journal blocks before \
                  it (checksummed instead): one flush less per commit, for fsync-heavy work; \
                  the kernel takes it only with data=writeback",
            seeds: "",
        },
        Factor {
            name: "lazytime",
            place: Place::Mount,
            values: &[default("nolazytime"), safe("lazytime")],
            why: "timestamps kept in memory and written with the inode's next other update \
                  (or within 24 h): an overwrite in place no longer dirties the inode for its \
                  mtime",
            seeds: "",
        },
        ONLINE_DISCARD,
        Factor {
            name: "inode_size",
            place: Place::Mkfs,
            values: &[default("-I 256"), safe("-I 512")],
            why: "larger inodes keep more extended attributes and small directories inline: \
                  fewer blocks for metadata-heavy trees, more inode-table space",
            seeds: "",
        },
    ],
    conflicts: &[
        Conflict {
            a: ("data", "data=ordered"),
            b: ("async_commit", "journal_async_commit"),
            why: "the kernel refuses journal_async_commit in data=ordered mode (Linux 6.x: \
                  \"can't mount with journal_async_commit in data=ordered mode\")",
        },
        Conflict {
            a: ("data", "data=journal"),
            b: ("async_commit", "journal_async_commit"),
            why: "the kernel refuses journal_async_commit in data=journal mode",
        },
    ],
    left_out: &[
        (
            "nobarrier",
            "the same as barrier=0 (one spelling is enough)",
        ),
        (
            "dioread_nolock",
            "the default for extent-mapped files since Linux 5.6",
        ),
        (
            "-J size=",
            "the default journal already scales with the filesystem; a fixed size does not fit \
             small test images",
        ),
    ],
};
