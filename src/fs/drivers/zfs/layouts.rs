//! ZFS's `raid=` layouts: one pool whose vdev type goes before the devices
//! (`zpool create … [mirror|raidz1|raidz2] dev…`).

use crate::fs::layout::{Builder, Layout, row};

/// The vdev layouts fsbench builds and how many devices each needs.
pub const LAYOUTS: &[Layout] = &[
    row("stripe", 1, Builder::Vdev(None), 0),
    row("mirror", 2, Builder::Vdev(Some("mirror")), 1),
    row("raidz1", 2, Builder::Vdev(Some("raidz1")), 1),
    row("raidz2", 3, Builder::Vdev(Some("raidz2")), 2),
];
