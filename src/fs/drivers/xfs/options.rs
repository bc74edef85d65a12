//! XFS's option space: atime, log buffer size, allocation size, discard, allocation groups.

use crate::fs::options::model::{Factor, ONLINE_DISCARD, Place, Space, default, safe};

/// XFS's option space (docs/tune.md).
pub const SPACE: Space = Space {
    fs: "xfs",
    mkfs: "mkfs.xfs",
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
            name: "logbsize",
            place: Place::Mount,
            values: &[default("logbsize=32k"), safe("logbsize=256k")],
            why: "larger in-memory log buffers write the log in fewer, larger I/Os: fewer \
                  flushes under metadata and fsync load",
            seeds: "001",
        },
        Factor {
            name: "allocsize",
            place: Place::Mount,
            values: &[default("dynamic allocsize"), safe("allocsize=64m")],
            why: "speculative preallocation past end of file: fewer extents for streaming \
                  writers, space held longer",
            seeds: "001, 004",
        },
        ONLINE_DISCARD,
        Factor {
            name: "agcount",
            place: Place::Mkfs,
            values: &[default("agcount by size"), safe("-d agcount=16")],
            why: "more allocation groups let more writers allocate in parallel; each group \
                  has its own free-space trees",
            seeds: "001, 004",
        },
    ],
    conflicts: &[],
    left_out: &[
        (
            "nobarrier",
            "removed from XFS in Linux 4.19: the mount is refused (fsbench says so)",
        ),
        (
            "logbufs=8",
            "already the default on every kernel fsbench runs on",
        ),
    ],
};
