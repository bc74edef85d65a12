//! A candidate setup of one filesystem: a value for each factor of its option space, and how
//! it is written: as an `--fs` variant, an mkfs command and an `/etc/fstab` line.

use crate::fs::SetupSpec;
use crate::fs::options::{Place, Space};
use serde::Serialize;

/// One point of a filesystem's option space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The space it is a point of.
    pub space: &'static Space,
    /// The baseline's setup name (`ext4`), the prefix of every candidate's name.
    pub base: String,
    /// The baseline's value index of each factor.
    pub baseline: Vec<usize>,
    /// This candidate's value index of each factor.
    pub choice: Vec<usize>,
}

/// How a candidate is written, for the answer and tune.json.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Written {
    /// The setup name.
    pub name: String,
    /// The filesystem.
    pub fs: String,
    /// The options that differ from the baseline, as written (`noatime`, `-I 512`).
    pub changes: Vec<String>,
    /// The baseline's value of each changed option, in the same order (`relatime`), so the
    /// answer reads "change relatime to noatime".
    pub was: Vec<String>,
    /// The `--fs` variant (`ext4-noatime=ext4:mount=noatime`).
    pub variant: String,
    /// The command that makes it (`mkfs.ext4 -I 512 /dev/DEVICE`).
    pub mkfs: String,
    /// Its `/etc/fstab` line (`/dev/DEVICE /srv/data ext4 noatime 0 2`; ZFS: none).
    pub fstab: Option<String>,
    /// Whether any of its values weakens durability.
    pub weakens: bool,
}

impl Candidate {
    /// The baseline itself.
    pub fn baseline(space: &'static Space, base: &str, baseline: Vec<usize>) -> Candidate {
        Candidate {
            space,
            base: base.to_string(),
            choice: baseline.clone(),
            baseline,
        }
    }

    /// The same baseline with other values.
    pub fn with(&self, choice: Vec<usize>) -> Candidate {
        Candidate {
            choice,
            ..self.clone()
        }
    }

    /// The factors whose value differs from the baseline's.
    pub fn changed(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.choice.len()).filter(|&i| self.choice[i] != self.baseline[i])
    }

    /// Whether it is the baseline.
    pub fn is_baseline(&self) -> bool {
        self.choice == self.baseline
    }

    /// Whether any value weakens durability.
    pub fn weakens(&self) -> bool {
        self.space.weakens(&self.choice)
    }

    /// Its setup name: the baseline's, then each changed value (`ext4-noatime-data-journal`).
    pub fn name(&self) -> String {
        let mut n = self.base.clone();
        for i in self.changed() {
            let v = self.space.factors[i].values[self.choice[i]];
            let slug = if v.words.is_empty() {
                format!("{}-default", self.space.factors[i].name)
            } else {
                v.words.to_string()
            };
            n.push('-');
            n.push_str(&slugify(&slug));
        }
        n
    }

    /// The words of each value at `place` that differs from the filesystem's default, in
    /// factor order (a default is the filesystem's own: written as nothing).
    fn words(&self, place: Place) -> Vec<&'static str> {
        self.space
            .factors
            .iter()
            .zip(&self.choice)
            .filter(|(f, v)| f.place == place && **v != 0)
            .map(|(f, &v)| f.values[v].words)
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// The setup as fsbench reads it.
    pub fn variant(&self) -> String {
        let mut keys = Vec::new();
        let mkfs = self.words(Place::Mkfs);
        if !mkfs.is_empty() {
            keys.push(format!("mkfs={}", mkfs.join(" ")));
        }
        let mount = self.words(Place::Mount);
        if !mount.is_empty() {
            keys.push(format!("mount={}", mount.join(",")));
        }
        keys.extend(self.words(Place::Prop).iter().map(|p| p.to_string()));
        let name = self.name();
        match (keys.is_empty(), name == self.space.fs) {
            (true, true) => name,
            (true, false) => format!("{name}={}", self.space.fs),
            (false, _) => format!("{name}={}:{}", self.space.fs, keys.join(";")),
        }
    }

    /// The setup fsbench runs.
    pub fn setup(&self) -> crate::Result<SetupSpec> {
        crate::plan::setup_syntax::parse_setup(&self.variant())
    }

    /// How it is written for a user.
    pub fn written(&self) -> Written {
        let fs = self.space.fs;
        let changes = self
            .changed()
            .map(|i| {
                self.space.factors[i].values[self.choice[i]]
                    .name()
                    .to_string()
            })
            .collect();
        let was = self
            .changed()
            .map(|i| {
                self.space.factors[i].values[self.baseline[i]]
                    .name()
                    .to_string()
            })
            .collect();
        let (mkfs, fstab) = if !self.space.fstab {
            let o: Vec<String> = self
                .words(Place::Prop)
                .iter()
                .map(|p| format!("-o {p}"))
                .collect();
            let mut cmd = vec![self.space.mkfs.to_string()];
            cmd.extend(o);
            cmd.push("POOL/DATASET".into());
            (cmd.join(" "), None)
        } else {
            let mut cmd = vec![self.space.mkfs.to_string()];
            cmd.extend(self.words(Place::Mkfs).iter().map(|w| w.to_string()));
            cmd.push("/dev/DEVICE".into());
            let mount = self.words(Place::Mount);
            let opts = if mount.is_empty() {
                "defaults".to_string()
            } else {
                mount.join(",")
            };
            (
                cmd.join(" "),
                Some(format!("/dev/DEVICE  /srv/data  {fs}  {opts}  0  2")),
            )
        };
        Written {
            name: self.name(),
            fs: fs.to_string(),
            changes,
            was,
            variant: self.variant(),
            mkfs,
            fstab,
            weakens: self.weakens(),
        }
    }
}

/// A setup name made of a value: letters, digits and `_` kept, the rest one `-`.
fn slugify(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The baseline of a `--fs` setup: the plain filesystem, or a variant whose every option is a
/// value of the filesystem's space (its value index per factor). Refused (exit 2): a
/// filesystem with no space, an option the space does not know, two values of one factor,
/// a combination the space calls invalid, and what tune does not vary (raid=, age=, host
/// tunings, data-directory attributes).
pub fn baseline_of(setup: &SetupSpec) -> crate::Result<Candidate> {
    let flag = |m: String| crate::Error::invalid("--fs", m);
    let space = crate::fs::options::space(&setup.fs).ok_or_else(|| {
        flag(format!(
            "fsbench tune has no option space for {} (it has: {})",
            setup.fs,
            crate::fs::options::SPACES
                .iter()
                .map(|s| s.fs)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    if setup.raid.is_some() || setup.age.is_some() || !setup.host.is_empty() {
        return Err(flag(format!(
            "{}: tune searches mkfs and mount options only; raid=, age= and host tunings are \
             not searched (run them with fsbench run)",
            setup.name
        )));
    }
    if !setup.dir_attrs.is_empty() {
        return Err(flag(format!(
            "{}: data-directory attributes ({}) are not in tune's option space yet",
            setup.name,
            setup.dir_attrs.join(", ")
        )));
    }
    let mut choice = vec![0usize; space.factors.len()];
    let mut set = vec![false; space.factors.len()];
    let mut put = |word: &str, place: Place| -> crate::Result<()> {
        let hit = space.factors.iter().enumerate().find_map(|(i, f)| {
            (f.place == place)
                .then(|| f.values.iter().position(|v| v.words == word))
                .flatten()
                .map(|j| (i, j))
        });
        let Some((i, j)) = hit else {
            return Err(flag(format!(
                "{}: {} option '{word}' is not in tune's {} space ({}); see docs/tune.md",
                setup.name,
                place.key(),
                space.fs,
                known(space, place)
            )));
        };
        if set[i] {
            return Err(flag(format!(
                "{}: two values of {} ('{word}' and '{}')",
                setup.name,
                space.factors[i].name,
                space.factors[i].values[choice[i]].name()
            )));
        }
        set[i] = true;
        choice[i] = j;
        Ok(())
    };
    for m in &setup.mount {
        put(m, Place::Mount)?;
    }
    for (k, v) in &setup.props {
        put(&format!("{k}={v}"), Place::Prop)?;
    }
    // mkfs values are word groups (`-I 512`): match each group at its place in the words.
    let words = &setup.mkfs;
    let mut at = 0;
    while at < words.len() {
        let found = space
            .factors
            .iter()
            .filter(|f| f.place == Place::Mkfs)
            .flat_map(|f| f.values.iter())
            .map(|v| v.words.split_whitespace().collect::<Vec<_>>())
            .find(|g| {
                !g.is_empty()
                    && words[at..].starts_with(&g.iter().map(|w| w.to_string()).collect::<Vec<_>>())
            });
        match found {
            Some(g) => {
                put(&g.join(" "), Place::Mkfs)?;
                at += g.len();
            }
            None => put(&words[at], Place::Mkfs)?,
        }
    }
    if let Some(c) = space.conflict(&choice) {
        return Err(flag(format!(
            "{}: {} with {} is an invalid combination: {}",
            setup.name, c.a.1, c.b.1, c.why
        )));
    }
    Ok(Candidate::baseline(space, &setup.name, choice))
}

fn known(space: &Space, place: Place) -> String {
    space
        .factors
        .iter()
        .filter(|f| f.place == place)
        .flat_map(|f| f.values.iter())
        .filter(|v| !v.words.is_empty())
        .map(|v| v.words)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::setup_syntax::parse_setup;

    fn base(text: &str) -> crate::Result<Candidate> {
        baseline_of(&parse_setup(text).unwrap())
    }

    #[test]
    fn a_candidate_is_written_as_a_variant_fsbench_reads_back() {
        let b = base("ext4").unwrap();
        assert_eq!(b.variant(), "ext4");
        let s = b.space;
        let mut choice = b.baseline.clone();
        choice[s.factor("atime").unwrap().0] = 1;
        choice[s.factor("data").unwrap().0] = 2;
        choice[s.factor("inode_size").unwrap().0] = 1;
        let c = b.with(choice);
        assert_eq!(
            c.variant(),
            "ext4-noatime-data-journal-I-512=ext4:mkfs=-I 512;mount=noatime,data=journal"
        );
        let setup = c.setup().unwrap();
        assert_eq!(setup.mount, ["noatime", "data=journal"]);
        assert_eq!(setup.mkfs, ["-I", "512"]);
        let w = c.written();
        assert_eq!(w.mkfs, "mkfs.ext4 -I 512 /dev/DEVICE");
        assert_eq!(
            w.fstab.as_deref(),
            Some("/dev/DEVICE  /srv/data  ext4  noatime,data=journal  0  2")
        );
        assert!(!w.weakens);
        // Read back as a baseline, the same values.
        assert_eq!(baseline_of(&setup).unwrap().baseline, c.choice);
        let z = base("zfs").unwrap();
        let mut zc = z.baseline.clone();
        zc[0] = 1;
        let zc = z.with(zc);
        assert_eq!(zc.variant(), "zfs-recordsize-16K=zfs:recordsize=16K");
        assert_eq!(zc.setup().unwrap().props["recordsize"], "16K");
        assert_eq!(
            zc.written().mkfs,
            "zfs create -o recordsize=16K POOL/DATASET"
        );
    }

    #[test]
    fn a_baseline_with_an_unknown_option_or_an_invalid_combination_is_refused() {
        let e = base("e=ext4:mount=noatime,user_xattr")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'user_xattr' is not in tune's ext4 space"),
            "{e}"
        );
        let e = base("e=ext4:mount=data=journal,journal_async_commit")
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid combination"), "{e}");
        let e = base("e=ext4:mount=noatime,data=journal,data=writeback")
            .unwrap_err()
            .to_string();
        assert!(e.contains("two values of data"), "{e}");
        let e = base("t=tmpfs").unwrap_err().to_string();
        assert!(e.contains("no option space for tmpfs"), "{e}");
        let ok = base("b=btrfs:mount=noatime,compress=zstd:1").unwrap();
        assert_eq!(ok.changed().count(), 0);
        assert!(ok.choice.iter().filter(|&&v| v != 0).count() == 2);
        let e = base("b=btrfs:mount=nodatacow,compress=zstd:1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("never compressed"), "{e}");
    }
}
