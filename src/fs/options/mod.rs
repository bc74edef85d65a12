//! Option spaces: the mkfs and mount options (ZFS: dataset properties) `fsbench tune`
//! searches for each filesystem, as data beside the drivers (`ext4.rs`, `xfs.rs`, `btrfs.rs`,
//! `zfs.rs` in this directory), documented in one table in docs/tune.md (checked against this
//! data by `tune::doc`'s test).
//!
//! A space is a list of [`Factor`]s, each with its default first and the values worth trying
//! after it, plus the pairs of values that cannot go together ([`Conflict`]). Each value
//! declares whether it weakens durability; a unit test checks every declaration against the
//! driver's weakening table ([`super::durability`], the driver's `Caps::weakens`), so the two
//! cannot drift apart. Small on purpose: a few options per filesystem that the seeds argue
//! about, each with why it might matter (Carver, FAST'20: a few parameters matter per
//! workload).

mod btrfs;
mod ext4;
mod xfs;
mod zfs;

/// Where a value goes in a setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// Extra mkfs arguments (`-I 512`).
    Mkfs,
    /// One mount option (`noatime`, `data=writeback`).
    Mount,
    /// A dataset property, `key=value` (ZFS `recordsize=16K`).
    Prop,
}

impl Place {
    /// The variant key the value is written under (`mkfs=`, `mount=`; properties bare).
    pub fn key(self) -> &'static str {
        match self {
            Place::Mkfs => "mkfs",
            Place::Mount => "mount",
            Place::Prop => "property",
        }
    }
}

/// One value of a factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// The words as written in a setup: a mount option, mkfs arguments, `key=value`; empty
    /// for a default that is written as nothing.
    pub words: &'static str,
    /// What the value is called in tables when `words` is empty (`relatime (default)`).
    pub label: &'static str,
    /// Whether it makes the setup less durable than the filesystem's default (the driver's
    /// weakening table says the same; the module's test checks it).
    pub weakens: bool,
}

/// A value that keeps durability as it is.
pub const fn safe(words: &'static str) -> Value {
    Value {
        words,
        label: words,
        weakens: false,
    }
}

/// A value that weakens durability (searched only with `fsbench tune --allow-unsafe`).
pub const fn unsafe_(words: &'static str) -> Value {
    Value {
        words,
        label: words,
        weakens: true,
    }
}

/// The default written as nothing, with the label tables show for it.
pub const fn default(label: &'static str) -> Value {
    Value {
        words: "",
        label,
        weakens: false,
    }
}

impl Value {
    /// The value's name in tables, flags and tune.json.
    pub fn name(&self) -> &'static str {
        if self.words.is_empty() {
            self.label
        } else {
            self.words
        }
    }
}

/// One option of a space: its default and the values worth trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Factor {
    /// Short name (`atime`, `data`, `recordsize`), unique within its space.
    pub name: &'static str,
    /// Where its values go.
    pub place: Place,
    /// The default first, then the values tried.
    pub values: &'static [Value],
    /// Why it might matter for some workload, in a sentence.
    pub why: &'static str,
    /// The seeds that discuss it (`001, 004`), or empty when none does.
    pub seeds: &'static str,
}

impl Factor {
    /// The default value.
    pub fn default(&self) -> &'static Value {
        &self.values[0]
    }

    /// The values tried besides the default.
    pub fn alternatives(&self) -> &'static [Value] {
        &self.values[1..]
    }

    /// The value named `name` (its words, or the default's label).
    pub fn value(&self, name: &str) -> Option<usize> {
        self.values.iter().position(|v| v.name() == name)
    }
}

/// Two values that cannot be set together, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// One value, as `factor=value name`… written as the factor's name and the value's name.
    pub a: (&'static str, &'static str),
    /// The other value.
    pub b: (&'static str, &'static str),
    /// Why (the kernel refuses the mount, or one silently cancels the other).
    pub why: &'static str,
}

/// One filesystem's option space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// The filesystem (a driver name).
    pub fs: &'static str,
    /// The command that makes it, as a user would type it (`mkfs.ext4`; ZFS: `zfs create`).
    pub mkfs: &'static str,
    /// Whether it is mounted through `/etc/fstab` (ZFS mounts its datasets itself, and its
    /// values are `-o` properties of `zfs create`).
    pub fstab: bool,
    /// Its options.
    pub factors: &'static [Factor],
    /// Pairs of values that cannot go together.
    pub conflicts: &'static [Conflict],
    /// Options deliberately left out, and why (docs/tune.md lists them).
    pub left_out: &'static [(&'static str, &'static str)],
}

impl Space {
    /// The factor named `name`.
    pub fn factor(&self, name: &str) -> Option<(usize, &'static Factor)> {
        self.factors
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == name)
    }

    /// The conflict `choice` (a value index per factor) runs into, if any.
    pub fn conflict(&self, choice: &[usize]) -> Option<&'static Conflict> {
        let has = |(f, v): (&str, &str)| {
            self.factor(f)
                .is_some_and(|(i, fac)| fac.values[choice[i]].name() == v)
        };
        self.conflicts.iter().find(|c| has(c.a) && has(c.b))
    }

    /// Whether `choice` weakens durability (any value that does).
    pub fn weakens(&self, choice: &[usize]) -> bool {
        self.factors
            .iter()
            .zip(choice)
            .any(|(f, &v)| f.values[v].weakens)
    }
}

/// Every filesystem's space, in the default set's order.
pub const SPACES: &[&Space] = &[&ext4::SPACE, &xfs::SPACE, &btrfs::SPACE, &zfs::SPACE];

/// The option space of filesystem `fs`, if it has one.
pub fn space(fs: &str) -> Option<&'static Space> {
    SPACES.iter().copied().find(|s| s.fs == fs)
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
