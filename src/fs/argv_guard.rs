//! Defence in depth: the last look at an mkfs, zpool or mount command before it runs.
//!
//! Plan-time checks ([`super::variant_args`]) read variant words the way the tools do; this
//! one does not trust that reading. Every argument that is an existing path, every piece of a
//! comma list and every value after `=` that is one, and every `LABEL=`/`UUID=` tag is looked
//! up; the only block device allowed is the target, compared by device number.

use crate::host::command;
use crate::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `/dev/disk/by-*` directory for each tag form the tools resolve.
const TAG_DIRS: &[(&str, &str)] = &[
    ("LABEL=", "by-label"),
    ("UUID=", "by-uuid"),
    ("PARTUUID=", "by-partuuid"),
    ("PARTLABEL=", "by-partlabel"),
    ("ID=", "by-id"),
];

/// Refuse to run `argv` when it names a block device other than `target` (or any block
/// device when `target` is not one, e.g. tmpfs). The error (exit 2) prints the command.
pub fn check(argv: &[String], target: &Path) -> Result<()> {
    let target_dev = block_dev(target);
    for arg in argv.iter().skip(1) {
        for piece in pieces(arg) {
            let (shown, dev) = match lookup(piece) {
                Lookup::Device(p, d) => (p, d),
                Lookup::UnresolvedTag => {
                    return Err(refusal(
                        PathBuf::from(piece),
                        format!("it names a block device by tag ({piece})"),
                        argv,
                    ));
                }
                Lookup::NotADevice => continue,
            };
            if Some(dev) != target_dev {
                return Err(refusal(
                    shown,
                    format!(
                        "it is a block device ({}:{}) that is not the target {}",
                        libc::major(dev as libc::dev_t),
                        libc::minor(dev as libc::dev_t),
                        target.display()
                    ),
                    argv,
                ));
            }
        }
    }
    Ok(())
}

fn refusal(path: PathBuf, why: String, argv: &[String]) -> Error {
    Error::refused(
        path,
        format!("{why}; refused to run: {}", command::display(argv)),
    )
}

enum Lookup {
    Device(PathBuf, u64),
    UnresolvedTag,
    NotADevice,
}

fn lookup(piece: &str) -> Lookup {
    if let Some((tag, dir)) = TAG_DIRS.iter().find(|(t, _)| piece.starts_with(*t)) {
        let link = Path::new("/dev/disk").join(dir).join(&piece[tag.len()..]);
        return match block_dev(&link) {
            Some(d) => Lookup::Device(link, d),
            None => Lookup::UnresolvedTag,
        };
    }
    match block_dev(Path::new(piece)) {
        Some(d) => Lookup::Device(PathBuf::from(piece), d),
        None => Lookup::NotADevice,
    }
}

/// The device number of `p` when it is (or links to) a block device.
fn block_dev(p: &Path) -> Option<u64> {
    let md = std::fs::metadata(p).ok()?;
    md.file_type().is_block_device().then(|| md.rdev())
}

/// The argument, its attached short-option value (`-l/dev/x`), each comma-separated item and
/// everything after each `=`.
fn pieces(arg: &str) -> Vec<&str> {
    let mut v = vec![arg];
    if arg.len() > 2 && arg.starts_with('-') && !arg.starts_with("--") {
        v.push(&arg[2..]);
    }
    for item in arg.split(',') {
        v.push(item);
        let mut rest = item;
        while let Some((_, after)) = rest.split_once('=') {
            v.push(after);
            rest = after;
        }
    }
    let mut seen = Vec::with_capacity(v.len());
    for s in v {
        if !s.is_empty() && !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::command::argv;

    #[test]
    fn pieces_cover_attached_and_nested_values() {
        assert_eq!(
            pieces("-Jdevice=UUID=ab"),
            ["-Jdevice=UUID=ab", "device=UUID=ab", "UUID=ab", "ab"]
        );
        assert!(pieces("noatime,logdev=/dev/x").contains(&"/dev/x"));
    }

    #[test]
    fn only_the_target_may_be_named() {
        // Without root there may be no block device to point at; any existing one will do.
        let Some(dev) = std::fs::read_dir("/dev")
            .ok()
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| block_dev(p).is_some())
        else {
            eprintln!("skipped: no block device in /dev");
            return;
        };
        let d = dev.display().to_string();
        check(&argv(&["mkfs.ext4", "-F", &d]), &dev).unwrap();
        let other = Path::new("/var/tmp/not-a-device");
        let e = check(&argv(&["mkfs.btrfs", "-f", &d, "/var/tmp/img"]), other).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        assert!(msg.contains("refused to run: mkfs.btrfs -f"), "{msg}");
        let e = check(&argv(&["mount", "-o", &format!("logdev={d}"), "x"]), other).unwrap_err();
        assert!(e.to_string().contains("not the target"), "{e}");
        let e = check(&argv(&["mkfs.ext4", "-J", "device=LABEL=nope-x"]), &dev).unwrap_err();
        assert!(e.to_string().contains("by tag"), "{e}");
        check(
            &argv(&["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", "/x"]),
            other,
        )
        .unwrap();
    }
}
