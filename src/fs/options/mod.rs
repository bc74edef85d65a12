//! Option spaces: the mkfs and mount options (ZFS: dataset properties) `fsbench tune`
//! searches for each filesystem, as data beside the drivers (`fs/drivers/<fs>/options.rs`,
//! listed in [`SPACES`]; the model in `model.rs`), documented in one table in docs/tune.md (checked against this
//! data by `tune::doc`'s test).
//!
//! A space is a list of [`Factor`]s, each with its default first and the values worth trying
//! after it, plus the pairs of values that cannot go together ([`Conflict`]). Each value
//! declares whether it weakens durability; a unit test checks every declaration against the
//! driver's weakening table ([`super::durability`], the driver's `Caps::weakens`), so the two
//! cannot drift apart. Small on purpose: a few options per filesystem that the seeds argue
//! about, each with why it might matter (Carver, FAST'20: a few parameters matter per
//! workload).

pub mod model;
pub use model::*;

use crate::host::mountinfo::MountEntry;

/// Every filesystem's space, in the default set's order.
pub const SPACES: &[&Space] = &[
    &crate::fs::drivers::ext4::options::SPACE,
    &crate::fs::drivers::xfs::options::SPACE,
    &crate::fs::drivers::btrfs::options::SPACE,
    &crate::fs::drivers::zfs::options::SPACE,
];

/// The option space of filesystem `fs`, if it has one.
pub fn space(fs: &str) -> Option<&'static Space> {
    SPACES.iter().copied().find(|s| s.fs == fs)
}

/// The option space of the filesystem whose mounts show as `mount_type` in mountinfo
/// (`fuse.zfs` → ZFS's: its driver's `Caps::mount_types`), if it has one.
pub fn of_mount_type(mount_type: &str) -> Option<&'static Space> {
    let r = super::DRIVERS
        .iter()
        .find(|r| r.driver.caps().mount_types.contains(&mount_type))?;
    space(r.name)
}

/// What the filesystem of `space` mounted as `entry` has now of the space beyond its mount
/// options, as the space's words: its driver's [`super::Filesystem::current_options`]
/// (`fsbench tune --current`).
pub fn current_words(space: &Space, entry: &MountEntry) -> Result<Vec<String>, String> {
    match super::driver(space.fs) {
        Some(d) => d.current_options(entry),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::SetupSpec;

    /// A setup of `fs` with the one value `v` of a factor placed as `place`.
    fn setup_with(fs: &str, place: Place, v: &Value) -> SetupSpec {
        let mut s = SetupSpec::plain(fs);
        match place {
            Place::Mount => s.mount = vec![v.words.to_string()],
            Place::Mkfs => s.mkfs = v.words.split_whitespace().map(String::from).collect(),
            Place::Prop => {
                let (k, x) = v.words.split_once('=').expect("key=value");
                s.props.insert(k.into(), x.into());
            }
        }
        s
    }

    #[test]
    fn every_value_declares_the_durability_the_weakening_table_gives_it() {
        let mut checked = 0;
        for space in SPACES {
            let driver = crate::fs::driver(space.fs).expect("a driver");
            for f in space.factors {
                for v in f.values.iter().filter(|v| !v.words.is_empty()) {
                    let w = driver.durability_warnings(&setup_with(space.fs, f.place, v));
                    assert_eq!(
                        v.weakens,
                        !w.is_empty(),
                        "{} {}={}: declared weakens={}, the table says {w:?}",
                        space.fs,
                        f.name,
                        v.words,
                        v.weakens
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "{checked}");
        // The table's own entries are in the spaces, so tune can report what they cost.
        let weakening: Vec<&str> = SPACES
            .iter()
            .flat_map(|s| s.factors.iter())
            .flat_map(|f| f.values.iter())
            .filter(|v| v.weakens)
            .map(|v| v.words)
            .collect();
        for w in [
            "data=writeback",
            "barrier=0",
            "nodatacow",
            "sync=disabled",
            "commit=60",
        ] {
            assert!(weakening.contains(&w), "{w} missing from the spaces");
        }
    }

    #[test]
    fn names_are_unique_defaults_come_first_and_conflicts_name_real_values() {
        for space in SPACES {
            let mut names: Vec<&str> = space.factors.iter().map(|f| f.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), space.factors.len(), "{}", space.fs);
            for f in space.factors {
                assert!(
                    f.values.len() >= 2,
                    "{}: {} has nothing to try",
                    space.fs,
                    f.name
                );
                assert!(!f.default().weakens, "{}: a default cannot weaken", f.name);
                assert!(!f.why.is_empty());
                let mut vals: Vec<&str> = f.values.iter().map(|v| v.name()).collect();
                vals.sort();
                vals.dedup();
                assert_eq!(vals.len(), f.values.len(), "{}", f.name);
                if f.place == Place::Prop {
                    assert!(f.values.iter().all(|v| v.words.contains('=')));
                }
            }
            for c in space.conflicts {
                for (f, v) in [c.a, c.b] {
                    let (_, fac) = space.factor(f).unwrap_or_else(|| panic!("{f}"));
                    assert!(fac.value(v).is_some(), "{}: {f}={v}", space.fs);
                }
            }
        }
    }

    #[test]
    fn a_conflicting_choice_is_found_and_a_fine_one_is_not() {
        let s = space("btrfs").unwrap();
        let mut choice = vec![0; s.factors.len()];
        assert!(s.conflict(&choice).is_none());
        let (ci, c) = s.factor("compress").unwrap();
        let (ni, n) = s.factor("datacow").unwrap();
        choice[ci] = c.value("compress=zstd:1").unwrap();
        assert!(s.conflict(&choice).is_none());
        choice[ni] = n.value("nodatacow").unwrap();
        let why = s.conflict(&choice).expect("refused").why;
        assert!(why.contains("compress"), "{why}");
        assert!(s.weakens(&choice));
        let e = space("ext4").unwrap();
        let mut choice = vec![0; e.factors.len()];
        choice[e.factor("data").unwrap().0] =
            e.factor("data").unwrap().1.value("data=journal").unwrap();
        choice[e.factor("async_commit").unwrap().0] = 1;
        assert!(e.conflict(&choice).is_some());
    }
}
