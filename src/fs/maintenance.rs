//! What a filesystem's capacity and maintenance look like, as facts of its driver
//! ([`super::Filesystem::maintenance`]): how it allocates inodes, whether its metadata has
//! space of its own that can run out while `df` still shows free space, and how its data is
//! scrubbed while mounted. The capacity probes (`probe-inodes`, `probe-metadata`, and
//! `probe-fsck`'s scrub) read these instead of matching on filesystem names.

/// How a filesystem gets its inodes (seed 004, "How each filesystem handles on-disk
/// structure").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inodes {
    /// A fixed table made at mkfs (ext4: one inode per `-i` bytes, 16 KiB by default): it can
    /// run out while space is left.
    Fixed,
    /// Allocated from free space as files are made, up to a share of the space (XFS's
    /// `imaxpct`): no fixed count.
    Dynamic,
    /// Items in the metadata trees, no count at all (Btrfs, ZFS): statvfs reports none.
    Unlimited,
}

impl Inodes {
    /// A few words for notes ("fixed at mkfs").
    pub fn words(self) -> &'static str {
        match self {
            Inodes::Fixed => "a fixed inode table made at mkfs",
            Inodes::Dynamic => "inodes allocated dynamically from free space",
            Inodes::Unlimited => "no inode count (inodes are items in its metadata trees)",
        }
    }
}

/// How a mounted filesystem's data is scrubbed (every block read and checked against its
/// checksum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrub {
    /// A command that scrubs in the foreground until done; the mountpoint is appended
    /// (`btrfs scrub start -B`).
    Foreground(&'static [&'static str]),
    /// `zpool scrub` on the dataset's pool, which returns at once: done when `zpool status`
    /// no longer shows it in progress.
    Pool,
}

/// A driver's capacity and maintenance facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maintenance {
    /// How it allocates inodes; `None` for a filesystem this does not apply to (tmpfs).
    pub inodes: Option<Inodes>,
    /// Metadata lives in chunks of its own, allocated on demand from the space data also
    /// takes (Btrfs's non-mixed block groups), so metadata can be exhausted while `df` still
    /// counts free data space.
    pub metadata_chunks: bool,
    /// How its data is scrubbed while mounted, if it can be.
    pub scrub: Option<Scrub>,
}

impl Maintenance {
    /// Nothing known: not an on-disk filesystem.
    pub const NONE: Maintenance = Maintenance {
        inodes: None,
        metadata_chunks: false,
        scrub: None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::driver;

    #[test]
    fn the_drivers_state_what_seed_004_says() {
        let m = |name: &str| driver(name).unwrap().maintenance();
        assert_eq!(m("ext4").inodes, Some(Inodes::Fixed));
        assert_eq!(m("xfs").inodes, Some(Inodes::Dynamic));
        assert_eq!(m("btrfs").inodes, Some(Inodes::Unlimited));
        assert!(m("btrfs").metadata_chunks);
        assert!(!m("ext4").metadata_chunks && !m("xfs").metadata_chunks);
        assert!(matches!(m("btrfs").scrub, Some(Scrub::Foreground(_))));
        assert_eq!(m("zfs").scrub, Some(Scrub::Pool));
        assert_eq!(m("ext4").scrub, None);
        assert_eq!(m("tmpfs"), Maintenance::NONE);
    }
}
