//! ZFS's option space: dataset properties (recordsize, compression, atime, sync, logbias,
//! primarycache). Declared for completeness; zfs-fuse is no stand-in for OpenZFS, so tune
//! searches it only when `--fs` names zfs.

use crate::fs::options::model::{Factor, Place, Space, safe, unsafe_};

/// ZFS's option space (docs/tune.md).
pub const SPACE: Space = Space {
    fs: "zfs",
    mkfs: "zfs create",
    fstab: false,
    factors: &[
        Factor {
            name: "recordsize",
            place: Place::Prop,
            values: &[
                safe("recordsize=128K"),
                safe("recordsize=16K"),
                safe("recordsize=1M"),
            ],
            why: "ZFS checksums and rewrites whole records: a 4K random write to a 128K record \
                  reads and writes 128K; large records stream better",
            seeds: "000",
        },
        Factor {
            name: "compression",
            place: Place::Prop,
            values: &[
                safe("compression=lz4"),
                safe("compression=off"),
                safe("compression=zstd"),
            ],
            why: "fewer bytes to the pool for compressible data at the cost of CPU",
            seeds: "000, 001",
        },
        Factor {
            name: "atime",
            place: Place::Prop,
            values: &[safe("atime=on"), safe("atime=off")],
            why: "every read writes the file's access time (a copy-on-write metadata update)",
            seeds: "000",
        },
        Factor {
            name: "sync",
            place: Place::Prop,
            values: &[safe("sync=standard"), unsafe_("sync=disabled")],
            why: "fsync returns before the data is in the ZIL: database commits at memory \
                  speed, seconds of acknowledged writes lost on power loss",
            seeds: "000",
        },
        Factor {
            name: "logbias",
            place: Place::Prop,
            values: &[safe("logbias=latency"), safe("logbias=throughput")],
            why: "throughput writes large synchronous writes to the pool directly instead of \
                  the intent log",
            seeds: "",
        },
        Factor {
            name: "primarycache",
            place: Place::Prop,
            values: &[safe("primarycache=all"), safe("primarycache=metadata")],
            why: "a database with its own cache avoids caching its data twice",
            seeds: "",
        },
    ],
    conflicts: &[],
    left_out: &[(
        "checksum=off",
        "weakens (silent corruption undetected) with no performance case on modern CPUs",
    )],
};
