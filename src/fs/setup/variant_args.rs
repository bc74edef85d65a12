//! A variant's `mkfs=` and `mount=` values are options, never targets.
//!
//! mkfs tools take devices as positional arguments (`mkfs.btrfs -f /dev/a /dev/b` makes one
//! filesystem over both) and as option values (ext4 `-J device=`, XFS `-l logdev=`, mount
//! `logdev=`). fsbench appends the target itself, so any device a variant names would be
//! wiped without the checks and consent `--device` gets. This module reads the words the way
//! the tool will (short-option clusters, `--long=value`, comma lists of `key=value`), with each
//! driver's [`ArgRules`] saying which options take a value, a path or a device, and refuses at
//! plan time (exit 2, nothing created): positional arguments, device options, block devices
//! by path, symlink or `LABEL=`/`UUID=` tag, and paths outside fsbench's scratch area.

use crate::fs::SetupSpec;
use crate::host::command;
use crate::scratch::TargetKind;
use crate::{Error, Result};
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// An option (and, for `key=value` sub-options, the key) with a special meaning.
#[derive(Debug, Clone, Copy)]
pub struct OptKey {
    /// The option as written (`-J`, `--rootdir`); empty for mount options.
    pub option: &'static str,
    /// The sub-option key (`device` in `-J device=…`), or empty for the whole value.
    pub key: &'static str,
    /// What it is, for the refusal (`an external journal device`).
    pub what: &'static str,
}

/// How one filesystem's tools read variant arguments. Each driver declares its own, next to
/// the variant keys it accepts.
#[derive(Debug, Clone, Copy)]
pub struct ArgRules {
    /// The program `mkfs=` words go to, for messages (`mkfs.ext4`, `zpool create`).
    pub mkfs_tool: &'static str,
    /// Short option letters that take a value, attached (`-m1`) or as the next word (`-m 1`).
    pub short_with_value: &'static str,
    /// Long options that take a value (`--label x`, `--label=x`).
    pub long_with_value: &'static [&'static str],
    /// Options whose value names a file or directory even without a `/` (ext4 `-d`, btrfs
    /// `--rootdir`): checked as paths relative to [`command::DEVICE_TOOL_DIR`], where mkfs runs.
    pub path_options: &'static [OptKey],
    /// mkfs options whose value names (or makes the target) another device: always refused.
    pub device_options: &'static [OptKey],
    /// Positional words that add devices (ZFS vdev types `mirror`, `log`…), for the message.
    pub multi_device_words: &'static [&'static str],
    /// Mount option keys that name another device (`logdev`, `journal_path`): always refused.
    pub mount_device_keys: &'static [&'static str],
    /// Mount option keys whose value is a path inside the new filesystem (Btrfs `subvol=/`),
    /// not on the host: only device forms are refused there.
    pub mount_inner_path_keys: &'static [&'static str],
    /// Mount options the kernel no longer has (XFS `nobarrier`): refused on a kernel that
    /// removed them, before anything is made, instead of a mount failure mid-run.
    pub removed_mount_options: &'static [Removed],
}

/// A mount option a kernel release removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    /// The option's key (the part before any `=`).
    pub option: &'static str,
    /// The kernel release, `(major, minor)`, that removed it.
    pub since: (u32, u32),
    /// Why, and what to do instead.
    pub why: &'static str,
}

impl Removed {
    /// The refusal's reason for `key` on a kernel `(major, minor)`, when it removed the option
    /// (an unknown kernel counts as a current one).
    pub fn refuses(list: &[Removed], key: &str, kernel: Option<(u32, u32)>) -> Option<String> {
        let r = list.iter().find(|r| r.option == key)?;
        kernel.is_none_or(|k| k >= r.since).then(|| {
            format!(
                "was removed in Linux {}.{} and this kernel's mount refuses it: {}",
                r.since.0, r.since.1, r.why
            )
        })
    }
}

impl ArgRules {
    /// Rules for a driver that takes no mkfs arguments (tmpfs): only the generic checks.
    pub const NONE: ArgRules = ArgRules {
        mkfs_tool: "mkfs",
        short_with_value: "",
        long_with_value: &[],
        path_options: &[],
        device_options: &[],
        multi_device_words: &[],
        mount_device_keys: &[],
        mount_inner_path_keys: &[],
        removed_mount_options: &[],
    };
}

/// Tag forms that name a block device (blkid, mount(8), mke2fs `-J device=`).
const DEVICE_TAGS: &[&str] = &["LABEL=", "UUID=", "PARTUUID=", "PARTLABEL=", "ID="];

/// The sentence every multi-device refusal ends with.
pub const MULTI_DEVICE: &str = "devices named in mkfs=/mount= words (extra data devices, \
    external journals or logs) are not supported yet; multi-device setups take the target's \
    devices instead, each through the checks and consent of the first: --images N or --device \
    repeated, arranged by raid= (docs/multidev.md)";

/// Directories a variant argument may name: the image's scratch directory (image targets) and
/// fsbench's mount root.
pub fn scratch_area(target: &TargetKind) -> Vec<PathBuf> {
    let mut v = vec![crate::fs::mount_root()];
    if let TargetKind::Image { scratch_dir, .. } = target {
        v.push(scratch_dir.clone());
    }
    v
}

/// Refuse any mkfs word, mount option or property of `setup` that could reach a device other
/// than the target, naming the argument and why (exit 2).
pub fn check(setup: &SetupSpec, rules: &ArgRules, scratch: &[PathBuf]) -> Result<()> {
    let ctx = Ctx {
        setup,
        rules,
        scratch,
    };
    ctx.mkfs_words()?;
    for item in &setup.mount {
        ctx.mount_option(item)?;
    }
    for (k, v) in &setup.props {
        ctx.generic(&format!("property {k}={v}"), v)?;
    }
    Ok(())
}

struct Ctx<'a> {
    setup: &'a SetupSpec,
    rules: &'a ArgRules,
    scratch: &'a [PathBuf],
}

impl Ctx<'_> {
    fn refuse(&self, what: &str, why: impl std::fmt::Display) -> Error {
        Error::invalid("--fs", format!("setup {:?}: {what} {why}", self.setup.name))
    }

    /// Walk the mkfs words as getopt would: clusters of short flags, a value-taking letter
    /// ends its cluster and takes the rest or the next word.
    fn mkfs_words(&self) -> Result<()> {
        let words = &self.setup.mkfs;
        let tool = self.rules.mkfs_tool;
        let mut i = 0;
        while i < words.len() {
            let w = words[i].as_str();
            let arg = format!("mkfs argument {w:?}");
            if w == "--" {
                return Err(self.refuse(
                    &arg,
                    format!("ends the options: {tool} would read every later word as a device"),
                ));
            }
            if let Some(long) = w.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                let opt = format!("--{name}");
                if self.rules.long_with_value.contains(&name) {
                    let value = match attached {
                        Some(v) => v.to_string(),
                        None => {
                            i += 1;
                            self.next_value(words, i, &opt)?
                        }
                    };
                    self.option_value(&opt, &value)?;
                } else if let Some(v) = attached {
                    self.option_value(&opt, v)?;
                }
            } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) {
                let mut consumed = false;
                for (at, c) in cluster.char_indices() {
                    if self.rules.short_with_value.contains(c) {
                        consumed = true;
                        let opt = format!("-{c}");
                        let rest = &cluster[at + c.len_utf8()..];
                        let value = if rest.is_empty() {
                            i += 1;
                            self.next_value(words, i, &opt)?
                        } else {
                            rest.to_string()
                        };
                        self.option_value(&opt, &value)?;
                        break;
                    }
                }
                // A flag fsbench does not know might carry an attached path (`-X/dev/sdc`).
                if !consumed {
                    let tail = cluster.find('/').map_or(cluster, |at| &cluster[at..]);
                    self.generic(&arg, tail)?;
                }
            } else {
                return Err(self.positional(w));
            }
            i += 1;
        }
        Ok(())
    }

    fn next_value(&self, words: &[String], i: usize, opt: &str) -> Result<String> {
        words.get(i).cloned().ok_or_else(|| {
            self.refuse(
                &format!("mkfs option {opt}"),
                format!(
                    "needs a value; without one {} would take the target device as its value",
                    self.rules.mkfs_tool
                ),
            )
        })
    }

    fn positional(&self, w: &str) -> Error {
        let tool = self.rules.mkfs_tool;
        let arg = format!("mkfs argument {w:?}");
        if self.rules.multi_device_words.contains(&w) {
            return self.refuse(
                &arg,
                format!(
                    "is a vdev type: {tool} would add more devices to the pool; {MULTI_DEVICE}"
                ),
            );
        }
        if let Some(why) = self.names_device(w) {
            return self.refuse(
                &arg,
                format!(
                    "is a positional argument that {why}: {tool} would make it part of the \
                     filesystem and wipe it; {MULTI_DEVICE}"
                ),
            );
        }
        self.refuse(
            &arg,
            format!(
                "is a positional argument: {tool} reads those as devices (or a size), and fsbench \
                 adds the target itself; mkfs= takes options only (e.g. mkfs=-m 1 -E \
                 lazy_itable_init=0; write the value of an option fsbench does not know \
                 attached: -X5 or --opt=5)"
            ),
        )
    }

    /// One option's value: device options are refused, path options are checked as paths,
    /// then every `key=value` piece gets the generic checks.
    fn option_value(&self, opt: &str, value: &str) -> Result<()> {
        let arg = format!("mkfs option {opt} {value}");
        for item in value.split(',') {
            let key = item.split_once('=').map_or(item, |(k, _)| k);
            let hit = |list: &[OptKey]| {
                list.iter()
                    .find(|o| o.option == opt && (o.key.is_empty() || o.key == key))
                    .copied()
            };
            if let Some(d) = hit(self.rules.device_options) {
                return Err(self.refuse(&arg, format!("names {}; {MULTI_DEVICE}", d.what)));
            }
            if let Some(p) = hit(self.rules.path_options) {
                let path = if p.key.is_empty() {
                    value
                } else {
                    item.split_once('=').map_or("", |(_, v)| v)
                };
                self.path(&arg, path)?;
                if p.key.is_empty() {
                    return Ok(());
                }
            }
        }
        self.generic(&arg, value)
    }

    fn mount_option(&self, item: &str) -> Result<()> {
        let arg = format!("mount option {item:?}");
        let key = item.split_once('=').map_or(item, |(k, _)| k);
        if let Some(why) = Removed::refuses(
            self.rules.removed_mount_options,
            key,
            crate::host::provenance::running_kernel(),
        ) {
            return Err(self.refuse(&arg, why));
        }
        if self.rules.mount_device_keys.contains(&key) {
            return Err(self.refuse(
                &arg,
                format!("names another device for the filesystem; {MULTI_DEVICE}"),
            ));
        }
        if self.rules.mount_inner_path_keys.contains(&key) {
            let value = item.split_once('=').map_or("", |(_, v)| v);
            return match self.names_device(value) {
                Some(why) => Err(self.refuse(&arg, format!("{why}; {MULTI_DEVICE}"))),
                None => Ok(()),
            };
        }
        self.generic(&arg, item)
    }

    /// Checks for any word: a device tag or a path anywhere in its comma list or after any
    /// `=` is refused unless it is a path inside the scratch area.
    fn generic(&self, arg: &str, text: &str) -> Result<()> {
        for piece in candidates(text) {
            if let Some(tag) = DEVICE_TAGS.iter().find(|t| piece.starts_with(**t)) {
                return Err(self.refuse(
                    arg,
                    format!(
                        "names a block device by {}; {MULTI_DEVICE}",
                        tag.trim_end_matches('=')
                    ),
                ));
            }
            // `key=/path` is checked through its value; a piece with `=` is a path itself
            // only when it is absolute (`/var/tmp/a=b`).
            if looks_like_path(piece) && (!piece.contains('=') || piece.starts_with('/')) {
                self.path(arg, piece)?;
            } else if is_block_device(piece) {
                // A bare word that names a device relative to where mkfs and mount run.
                return Err(self.refuse(
                    arg,
                    format!(
                        "names {}, a block device, relative to the directory mkfs runs in; \
                         {MULTI_DEVICE}",
                        resolve_lexically(Path::new(piece)).display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A path is allowed only when it is not (and does not resolve to) a device and lies
    /// inside the scratch area.
    fn path(&self, arg: &str, p: &str) -> Result<()> {
        if let Some(why) = self.names_device(p) {
            return Err(self.refuse(arg, format!("{why}; {MULTI_DEVICE}")));
        }
        let full = resolve_lexically(Path::new(p));
        let inside = self
            .scratch
            .iter()
            .any(|root| full.starts_with(resolve_lexically(root)));
        if !inside {
            return Err(self.refuse(
                arg,
                format!(
                    "names the path {}, outside fsbench's scratch area ({}); variant arguments \
                     may only name files there",
                    full.display(),
                    self.scratch
                        .iter()
                        .map(|s| s.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Why `w` names a block device (a tag, a `/dev` path, or a path that resolves to one).
    fn names_device(&self, w: &str) -> Option<String> {
        if let Some(tag) = DEVICE_TAGS.iter().find(|t| w.starts_with(**t)) {
            return Some(format!(
                "names a block device by {}",
                tag.trim_end_matches('=')
            ));
        }
        let given = Path::new(w);
        let abs = if given.is_absolute() {
            given.to_path_buf()
        } else {
            Path::new(command::DEVICE_TOOL_DIR).join(given)
        };
        let full = resolve_lexically(given);
        let via = |what: &str| {
            if full != abs {
                format!("resolves to {} ({what})", full.display())
            } else {
                format!("is {what}")
            }
        };
        if is_block_device(w) {
            return Some(via("a block device"));
        }
        if full.starts_with("/dev") || abs.starts_with("/dev") {
            return Some(via("a device path"));
        }
        None
    }
}

/// Every piece of a word worth checking: the word, each comma-separated item, and whatever
/// follows each `=` in it (`device=UUID=…` gives `UUID=…` and `…`).
fn candidates(text: &str) -> Vec<&str> {
    let mut v = vec![text];
    for item in text.split(',') {
        v.push(item);
        let mut rest = item;
        while let Some((_, after)) = rest.split_once('=') {
            v.push(after);
            rest = after;
        }
    }
    v.retain(|s| !s.is_empty());
    v
}

/// Whether `p` is, or links to, a block device (relative paths from
/// [`command::DEVICE_TOOL_DIR`], where mkfs and mount run).
fn is_block_device(p: &str) -> bool {
    std::fs::metadata(Path::new(command::DEVICE_TOOL_DIR).join(p))
        .is_ok_and(|m| m.file_type().is_block_device())
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/') || s.starts_with('~') || s == "." || s == ".."
}

/// The absolute form of `p`: symlinks resolved as far as the path exists, `.`/`..` folded
/// for the rest, relative paths taken from [`command::DEVICE_TOOL_DIR`], where mkfs and mount run.
pub fn resolve_lexically(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(command::DEVICE_TOOL_DIR).join(p)
    };
    // Canonicalize the longest existing prefix, then append the rest.
    let mut existing = abs.clone();
    let mut tail: Vec<PathBuf> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for c in tail.iter().rev() {
                out = fold(out, c);
            }
            return out;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(PathBuf::from(name));
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        out = fold(out, Path::new(c.as_os_str()));
    }
    out
}

fn fold(mut base: PathBuf, c: &Path) -> PathBuf {
    for comp in c.components() {
        match comp {
            Component::ParentDir => {
                base.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::Normal(n) => base.push(n),
        }
    }
    base
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A setup whose mkfs words and mount options are given.
    pub(crate) fn setup(fs: &str, mkfs: &[&str], mount: &[&str]) -> SetupSpec {
        let mut s = SetupSpec::plain(fs);
        s.name = format!("{fs}-v");
        s.mkfs = mkfs.iter().map(|w| w.to_string()).collect();
        s.mount = mount.iter().map(|w| w.to_string()).collect();
        s
    }

    /// The refusal for a setup under `rules`, or "" when it passes.
    pub(crate) fn verdict(rules: &ArgRules, mkfs: &[&str], mount: &[&str]) -> String {
        let scratch = [PathBuf::from("/var/tmp"), PathBuf::from("/run/fsbench")];
        match check(&setup("ext4", mkfs, mount), rules, &scratch) {
            Ok(()) => String::new(),
            Err(e) => {
                assert_eq!(e.exit_code(), 2, "{e}");
                e.to_string()
            }
        }
    }

    #[test]
    fn generic_checks_catch_devices_tags_and_outside_paths() {
        let r = &ArgRules::NONE;
        assert_eq!(verdict(r, &[], &["noatime", "commit=60"]), "");
        let e = verdict(r, &[], &["foo=/dev/sdz"]);
        assert!(
            e.contains("\"foo=/dev/sdz\"") && e.contains("device path"),
            "{e}"
        );
        let e = verdict(r, &[], &["x=UUID=1234"]);
        assert!(
            e.contains("by UUID") && e.contains("not supported yet"),
            "{e}"
        );
        let e = verdict(r, &[], &["x=PARTLABEL=data"]);
        assert!(e.contains("by PARTLABEL"), "{e}");
        let e = verdict(r, &[], &["x=/etc/passwd"]);
        assert!(e.contains("outside fsbench's scratch area"), "{e}");
        assert_eq!(verdict(r, &[], &["x=/var/tmp/fsbench-file"]), "");
        let e = verdict(r, &[], &["x=/var/tmp/../etc/shadow"]);
        assert!(e.contains("/etc/shadow"), "{e}");
        let e = verdict(r, &["/dev/sdz"], &[]);
        assert!(e.contains("positional") && e.contains("device path"), "{e}");
        let e = verdict(r, &["2G"], &[]);
        assert!(
            e.contains("positional") && e.contains("options only"),
            "{e}"
        );
        let e = verdict(r, &["--", "-x"], &[]);
        assert!(e.contains("ends the options"), "{e}");
        // An unknown flag with an attached path is still looked at.
        let e = verdict(r, &["-X/dev/sdz"], &[]);
        assert!(e.contains("device path"), "{e}");
    }

    #[test]
    fn symlinks_to_devices_are_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("disk");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        // /dev/null is a character device: refused as a /dev path once resolved.
        let scratch = [dir.path().to_path_buf()];
        let s = setup("ext4", &[], &[&format!("x={}", link.display())]);
        let e = check(&s, &ArgRules::NONE, &scratch)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/null") || e.contains("device"), "{e}");
        let plain = dir.path().join("file");
        std::fs::write(&plain, b"").unwrap();
        let s = setup("ext4", &[], &[&format!("x={}", plain.display())]);
        check(&s, &ArgRules::NONE, &scratch).unwrap();
    }

    #[test]
    fn lexical_resolution_folds_dots() {
        assert_eq!(
            resolve_lexically(Path::new("/no-such-dir-x/a/../b")),
            PathBuf::from("/no-such-dir-x/b")
        );
    }
}
