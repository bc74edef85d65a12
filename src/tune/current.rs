//! `fsbench tune --current PATH`: the baseline is the filesystem PATH is mounted with now, so
//! the answer reads "change X to Y and gain Z" for the machine in front of the user.
//!
//! The mount options come from `/proc/self/mountinfo` (per-mount and superblock options, so
//! Btrfs' `compress=zstd:3` is seen); the mkfs-time values of the space from the superblock
//! where that is cheap, read by the filesystem's driver (`fs::Filesystem::current_options`,
//! in its folder: ext4's inode size by `tune2fs -l`, XFS's allocation groups by `xfs_info`,
//! ZFS properties by `zfs get`; Btrfs' space is set by mount options alone). Each word is mapped onto the filesystem's option space: a value of
//! the space is kept, a default's own spelling (`relatime`, `data=ordered`) is the default, and
//! anything else (`errors=remount-ro`, `space_cache=v2`, an inode size of 1024) is named in the
//! answer as *kept at fsbench's default*, since tune formats fresh images and cannot reproduce
//! what its space does not know. The mapping is pure ([`from_mount`]); [`read`] gathers.

use crate::fs::options::{Place, Space};
use crate::host::mountinfo::MountEntry;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The setup name of the baseline read from a mount.
pub const NAME: &str = "current";

/// What `--current PATH` read, for the answer and tune.json.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Current {
    /// The mount point given.
    pub path: PathBuf,
    /// The filesystem (a driver name: `ext4`, `xfs`, `btrfs`, `zfs`).
    pub fs: String,
    /// What is mounted there (`/dev/sda2`, a ZFS dataset).
    pub source: String,
    /// The options as mountinfo lists them (per-mount, then superblock).
    pub options: String,
    /// What the superblock (or `zfs get`) said, as space words (`-I 512`), and what could not
    /// be read.
    pub superblock: Vec<String>,
    /// The baseline as a `--fs` variant (`current=ext4:mount=noatime`).
    pub variant: String,
    /// Options in use that tune's space does not hold: the baseline runs them at fsbench's
    /// default, and the answer says so.
    pub kept_out: Vec<String>,
}

/// Options every mount lists that say nothing about performance: left out of the notes.
const SILENT: &[&str] = &["rw", "seclabel"];

/// The baseline of a mount: `entry`'s options and the superblock's `words` (space words such as
/// `-I 512` or `recordsize=16K`) mapped onto `space`. Never fails: what does not map is listed
/// in `kept_out`.
pub fn from_mount(entry: &MountEntry, space: &Space, words: &[String]) -> Current {
    let mut mkfs: Vec<&str> = Vec::new();
    let mut mount: Vec<&str> = Vec::new();
    let mut props: Vec<&str> = Vec::new();
    let mut kept_out = Vec::new();
    let options = entry.all_options();
    let mount_words = options.split(',').filter(|w| !w.is_empty());
    let supers = words.iter().map(String::as_str);
    for w in mount_words.chain(supers) {
        match place_of(space, w) {
            Some(Some(Place::Mkfs)) => mkfs.push(w),
            Some(Some(Place::Mount)) => mount.push(w),
            Some(Some(Place::Prop)) => props.push(w),
            // The default's own spelling: the default, written as nothing.
            Some(None) => {}
            None if SILENT.contains(&w) => {}
            None => kept_out.push(w.to_string()),
        }
    }
    mount.dedup();
    let mut keys = Vec::new();
    if !mkfs.is_empty() {
        keys.push(format!("mkfs={}", mkfs.join(" ")));
    }
    if !mount.is_empty() {
        keys.push(format!("mount={}", mount.join(",")));
    }
    keys.extend(props.iter().map(|p| p.to_string()));
    let variant = if keys.is_empty() {
        format!("{NAME}={}", space.fs)
    } else {
        format!("{NAME}={}:{}", space.fs, keys.join(";"))
    };
    Current {
        path: entry.mount_point.clone(),
        fs: space.fs.to_string(),
        source: entry.source.clone(),
        options,
        superblock: words.to_vec(),
        variant,
        kept_out,
    }
}

/// Where `word` goes in `space`: `Some(Some(place))` for a value to write, `Some(None)` for a
/// default's spelling, `None` for a word the space does not know.
fn place_of(space: &Space, word: &str) -> Option<Option<Place>> {
    for f in space.factors {
        for (i, v) in f.values.iter().enumerate() {
            // The default (first) value is written as nothing, as candidates write it, whether
            // it has words (ZFS `recordsize=128K`) or only a label (`relatime`).
            if i == 0 && (v.words == word || v.label == word) {
                return Some(None);
            }
            if !v.words.is_empty() && v.words == word {
                return Some(Some(f.place));
            }
        }
    }
    None
}

/// The mount at exactly `path` and its tune space; bad input (exit 2, nothing created): a path
/// that does not exist, is not a mount point, or holds a filesystem tune has no space for.
pub fn mount_at(
    entries: &[MountEntry],
    path: &Path,
) -> crate::Result<(MountEntry, &'static Space)> {
    let flag = |m: String| crate::Error::invalid("--current", m);
    let real = std::fs::canonicalize(path).map_err(|e| flag(format!("{}: {e}", path.display())))?;
    let Some(entry) = crate::host::mountinfo::find_mount_point(entries, &real) else {
        let within = crate::host::mountinfo::containing(entries, &real)
            .map(|m| {
                format!(
                    " (it is inside {}, on {})",
                    m.mount_point.display(),
                    m.fs_type
                )
            })
            .unwrap_or_default();
        return Err(flag(format!(
            "{} is not a mount point{within}; name the directory a filesystem is mounted on",
            path.display()
        )));
    };
    let space = crate::fs::options::of_mount_type(&entry.fs_type).ok_or_else(|| {
        let searched: Vec<&str> = crate::fs::options::SPACES.iter().map(|s| s.fs).collect();
        flag(format!(
            "{} is a {} mount; fsbench tune searches {}",
            path.display(),
            entry.fs_type,
            searched.join(", ")
        ))
    })?;
    Ok((entry, space))
}

/// Read the baseline PATH is mounted with now (mountinfo, then the superblock where cheap).
/// A superblock that cannot be read is a note in `superblock`, not an error: the mount options
/// still make a baseline.
pub fn read(path: &Path) -> crate::Result<Current> {
    let entries = crate::host::mountinfo::read()?;
    let (entry, space) = mount_at(&entries, path)?;
    let words = crate::fs::options::current_words(space, &entry);
    let mut cur = from_mount(&entry, space, &words.clone().unwrap_or_default());
    if let Err(why) = words {
        cur.superblock = vec![format!(
            "not read ({why}): mkfs values at fsbench's defaults"
        )];
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::mountinfo::parse;
    use crate::tune::candidate::baseline_of;

    const MOUNTINFO: &str = "\
22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro
40 22 7:3 / /srv/db rw,noatime,lazytime shared:9 - ext4 /dev/loop3 rw,seclabel,data=ordered,commit=60
41 22 7:4 / /srv/x rw,relatime - xfs /dev/loop4 rw,attr2,inode64,logbufs=8,logbsize=256k,noquota
42 22 0:50 / /srv/b rw,noatime - btrfs /dev/loop5 rw,compress=zstd:3,ssd,discard=async,space_cache=v2,subvolid=5,subvol=/
43 22 0:40 / /tank/d rw,relatime - fuse.zfs tank/d rw,user_id=0,group_id=0
44 22 0:26 / /run rw,nosuid - tmpfs tmpfs rw,size=100k
";

    fn mount(point: &str) -> MountEntry {
        let all = parse(MOUNTINFO);
        crate::host::mountinfo::find_mount_point(&all, Path::new(point)).unwrap()
    }

    fn current(point: &str, words: &[String]) -> Current {
        let e = mount(point);
        let space = crate::fs::options::of_mount_type(&e.fs_type).unwrap();
        from_mount(&e, space, words)
    }

    #[test]
    fn ext4_mount_options_and_inode_size_become_a_baseline_of_its_space() {
        let c = current(
            "/srv/db",
            &crate::fs::drivers::ext4::current::words(
                "Inode count: 1\nInode size:\t          512\n",
            ),
        );
        assert_eq!(
            c.variant,
            "current=ext4:mkfs=-I 512;mount=noatime,lazytime,commit=60"
        );
        // data=ordered is the default's spelling; rw and seclabel say nothing.
        assert!(c.kept_out.is_empty(), "{:?}", c.kept_out);
        let setup = crate::plan::setup_syntax::parse_setup(&c.variant).unwrap();
        let b = baseline_of(&setup).unwrap();
        assert_eq!(b.name(), "current");
        assert!(b.weakens(), "commit=60 weakens durability");
        // A root ext4 with errors=remount-ro: the option is named as kept out.
        let root = current("/", &["-I 256".to_string()]);
        assert_eq!(root.variant, "current=ext4");
        assert_eq!(root.kept_out, ["errors=remount-ro"]);
    }

    #[test]
    fn xfs_btrfs_and_zfs_mounts_map_onto_their_spaces() {
        let x = current(
            "/srv/x",
            &crate::fs::drivers::xfs::current::words(
                "meta-data=/dev/loop4 isize=512    agcount=16, agsize=4096 blks\n",
            ),
        );
        assert_eq!(
            x.variant,
            "current=xfs:mkfs=-d agcount=16;mount=logbsize=256k"
        );
        assert_eq!(x.kept_out, ["attr2", "inode64", "logbufs=8", "noquota"]);
        let b = current("/srv/b", &[]);
        assert_eq!(b.variant, "current=btrfs:mount=noatime,compress=zstd:3,ssd");
        assert_eq!(b.kept_out, ["space_cache=v2", "subvolid=5", "subvol=/"]);
        baseline_of(&crate::plan::setup_syntax::parse_setup(&b.variant).unwrap()).unwrap();
        let z = current(
            "/tank/d",
            &crate::fs::drivers::zfs::current::words(
                "recordsize\t16K\ncompression\tlz4\natime\toff\nsync\tstandard\n",
            ),
        );
        assert_eq!(z.variant, "current=zfs:recordsize=16K;atime=off");
        assert_eq!(z.kept_out, ["relatime", "user_id=0", "group_id=0"]);
        let setup = crate::plan::setup_syntax::parse_setup(&z.variant).unwrap();
        assert_eq!(setup.props["recordsize"], "16K");
    }

    #[test]
    fn a_path_that_is_no_mount_point_of_a_searched_filesystem_is_refused() {
        let all = parse(MOUNTINFO);
        let e = mount_at(&all, Path::new("/no/such/path")).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        assert!(e.to_string().contains("/no/such/path"), "{e}");
        // /proc exists but is not in this table's mount points: inside "/".
        let e = mount_at(&all, Path::new("/proc")).unwrap_err().to_string();
        assert!(
            e.contains("/proc is not a mount point (it is inside /, on ext4)"),
            "{e}"
        );
        let e = mount_at(&all, Path::new("/run")).unwrap_err().to_string();
        assert!(e.contains("/run is a tmpfs mount"), "{e}");
    }
}
