//! Btrfs's `raid=` layouts: profiles of one filesystem over all the target's devices
//! (`mkfs.btrfs -d P -m P dev…`; `mraid=` the metadata profile).

use crate::fs::layout::{Builder, Layout, row};

/// The profiles fsbench builds and how many devices each needs.
pub const LAYOUTS: &[Layout] = &[
    row("single", 1, Builder::Profile, 0),
    row("raid0", 2, Builder::Profile, 0),
    row("raid1", 2, Builder::Profile, 1),
    // The kernel builds a degenerate raid10 on 2 or 3 devices since 5.15; what a buyer
    // means by raid10 starts at 4 (raid1 and raid0 measure the smaller cases).
    row("raid10", 4, Builder::Profile, 1),
    row("raid1c3", 3, Builder::Profile, 2),
];
