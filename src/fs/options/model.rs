//! The option-space model `fsbench tune` searches: a [`Space`] of [`Factor`]s, their values
//! and durability classes, the pairs that conflict. Each driver's space is data of this
//! model in its own folder (`fs/drivers/<fs>/options.rs`).

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

/// Online discard as a mount option (`discard`, off by default), which ext4 and XFS spell
/// alike; Btrfs's differs (`discard=async` is its default), so it declares its own.
pub const ONLINE_DISCARD: Factor = Factor {
    name: "discard",
    place: Place::Mount,
    values: &[default("nodiscard"), safe("discard")],
    why: "online TRIM at every delete instead of a periodic fstrim: stalls on some devices, \
          space returned at once on thin storage",
    seeds: "000, 001, 004",
};

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
