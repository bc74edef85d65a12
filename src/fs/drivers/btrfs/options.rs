//! Btrfs's option space: compression, copy-on-write, SSD allocation, atime, autodefrag,
//! commit interval, discard.

use crate::fs::options::model::{Conflict, Factor, Place, Space, default, safe, unsafe_};

/// Btrfs's option space (docs/tune.md).
pub const SPACE: Space = Space {
    fs: "btrfs",
    mkfs: "mkfs.btrfs",
    fstab: true,
    factors: &[
        Factor {
            name: "atime",
            place: Place::Mount,
            values: &[default("relatime"), safe("noatime")],
            why: "on a copy-on-write filesystem an atime update rewrites the metadata path up to \
                  the root (and unshares snapshots); noatime writes none",
            seeds: "001, 003, 004",
        },
        Factor {
            name: "compress",
            place: Place::Mount,
            values: &[
                default("no compression"),
                safe("compress=zstd:1"),
                safe("compress=zstd:3"),
                safe("compress=lzo"),
            ],
            why: "fewer bytes to the device for compressible data at the cost of CPU; \
                  incompressible data is detected and stored as it is",
            seeds: "001, 003, 004",
        },
        Factor {
            name: "datacow",
            place: Place::Mount,
            values: &[default("datacow"), unsafe_("nodatacow")],
            why: "overwrites in place instead of copy-on-write: random writes to large files \
                  fragment less, but data checksums and compression go",
            seeds: "003",
        },
        Factor {
            name: "ssd",
            place: Place::Mount,
            values: &[
                default("ssd by rotational flag"),
                safe("ssd"),
                safe("nossd"),
            ],
            why: "the allocator's SSD mode follows the device's rotational flag, which a \
                  virtual disk often gets wrong",
            seeds: "000",
        },
        Factor {
            name: "autodefrag",
            place: Place::Mount,
            values: &[default("noautodefrag"), safe("autodefrag")],
            why: "small random writes queue the file for background defragmentation: better \
                  sequential reads after, more writes",
            seeds: "004",
        },
        Factor {
            name: "commit",
            place: Place::Mount,
            values: &[default("commit=30"), unsafe_("commit=120")],
            why: "fewer transaction commits batch more metadata; up to 120 s of acknowledged \
                  writes can vanish on power loss",
            seeds: "001",
        },
        Factor {
            name: "discard",
            place: Place::Mount,
            values: &[default("discard=async"), safe("nodiscard")],
            why: "asynchronous discard (the default on SSDs since Linux 6.2) batches TRIM in \
                  the background; off leaves it to fstrim",
            seeds: "001, 003",
        },
    ],
    conflicts: &[
        Conflict {
            a: ("datacow", "nodatacow"),
            b: ("compress", "compress=zstd:1"),
            why: "nodatacow files are never compressed: compress would be silently ignored",
        },
        Conflict {
            a: ("datacow", "nodatacow"),
            b: ("compress", "compress=zstd:3"),
            why: "nodatacow files are never compressed: compress would be silently ignored",
        },
        Conflict {
            a: ("datacow", "nodatacow"),
            b: ("compress", "compress=lzo"),
            why: "nodatacow files are never compressed: compress would be silently ignored",
        },
        Conflict {
            a: ("datacow", "nodatacow"),
            b: ("autodefrag", "autodefrag"),
            why: "autodefrag acts on copy-on-write rewrites, which nodatacow files no longer make",
        },
    ],
    left_out: &[
        (
            "space_cache=v2",
            "the default since Linux 5.15 (the v1 cache is deprecated)",
        ),
        (
            "nodatasum",
            "weakens like nodatacow without its performance reason",
        ),
    ],
};
