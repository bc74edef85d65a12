//! Defence in depth: the last look at an mkfs, zpool or mount command before it runs.
//!
//! Plan-time checks ([`crate::fs::setup::variant_args`]) read variant words the way the tools do; this
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

/// The final check of a command that takes several of the target's devices (a `raid=`
/// layout): `argv[at..at + devices.len()]` must be exactly `devices`, by device number and
/// in order, each a block device and none twice; no other word may name a block device —
/// another one, or one of these in a second place (`-l logdev=` of a target device).
pub fn check_devices(argv: &[String], devices: &[PathBuf], at: usize) -> Result<()> {
    let mut wanted = Vec::with_capacity(devices.len());
    for d in devices {
        let Some(n) = block_dev(d) else {
            return Err(refusal(
                d.clone(),
                "it is not a block device of the target".into(),
                argv,
            ));
        };
        if wanted.contains(&n) {
            return Err(refusal(
                d.clone(),
                "it is named twice among the target's devices".into(),
                argv,
            ));
        }
        wanted.push(n);
    }
    let slots = at..at + devices.len();
    if at == 0 || argv.len() < slots.end {
        return Err(Error::Other(format!(
            "internal: no room for {} devices at word {at} of: {}",
            devices.len(),
            command::display(argv)
        )));
    }
    for (i, arg) in argv.iter().enumerate().skip(1) {
        if slots.contains(&i) {
            let want = wanted[i - at];
            match lookup(arg) {
                Lookup::Device(_, d) if d == want => continue,
                _ => {
                    return Err(refusal(
                        PathBuf::from(arg),
                        format!(
                            "word {i} must be the target's device {}",
                            devices[i - at].display()
                        ),
                        argv,
                    ));
                }
            }
        }
        for piece in pieces(arg) {
            match lookup(piece) {
                Lookup::NotADevice => {}
                Lookup::UnresolvedTag => {
                    return Err(refusal(
                        PathBuf::from(piece),
                        format!("it names a block device by tag ({piece})"),
                        argv,
                    ));
                }
                Lookup::Device(p, d) => {
                    let why = if wanted.contains(&d) {
                        "it is one of the target's devices, outside the places the layout \
                         puts them"
                            .to_string()
                    } else {
                        format!(
                            "it is a block device ({}:{}) that is not one of the target's ({})",
                            libc::major(d as libc::dev_t),
                            libc::minor(d as libc::dev_t),
                            devices
                                .iter()
                                .map(|d| d.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    return Err(refusal(p, why, argv));
                }
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
    // Relative words resolve where the command runs (`command::DEVICE_TOOL_DIR`).
    match block_dev(&Path::new(command::DEVICE_TOOL_DIR).join(piece)) {
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

    /// Two distinct block devices of this machine (only stat'ed, never opened).
    fn two_block_devices() -> Option<(PathBuf, PathBuf)> {
        let mut found: Vec<(PathBuf, u64)> = Vec::new();
        for e in std::fs::read_dir("/dev").ok()?.flatten() {
            let p = e.path();
            if let Some(d) = block_dev(&p)
                && !found.iter().any(|(_, x)| *x == d)
            {
                found.push((p, d));
            }
            if found.len() == 3 {
                break;
            }
        }
        (found.len() >= 3).then(|| (found[0].0.clone(), found[1].0.clone()))
    }

    #[test]
    fn a_layout_admits_exactly_the_target_devices_where_it_puts_them() {
        let Some((a, b)) = two_block_devices() else {
            eprintln!("skipped: fewer than three block devices in /dev");
            return;
        };
        // A third device: the victim no layout may name.
        let victim = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                block_dev(p).is_some_and(|d| Some(d) != block_dev(&a) && Some(d) != block_dev(&b))
            })
            .unwrap();
        let (sa, sb, sv) = (
            a.display().to_string(),
            b.display().to_string(),
            victim.display().to_string(),
        );
        let devs = [a.clone(), b.clone()];
        let ok = argv(&["mkfs.btrfs", "-f", "-d", "raid1", "-m", "raid1", &sa, &sb]);
        check_devices(&ok, &devs, 6).unwrap();
        // The victim among the devices, as an option value, or a target device twice.
        let cases = [
            (
                argv(&["mkfs.btrfs", "-f", "-d", "raid1", &sv, &sa, &sb]),
                "not one of the target's",
            ),
            (
                argv(&["mkfs.btrfs", "-f", "-d", "raid1", &sa, &sv]),
                "must be the target's device",
            ),
            (
                argv(&["zpool", "create", "p", "mirror", &sv, &sa, &sb]),
                "not one of the target's",
            ),
            (
                argv(&["mkfs.xfs", &format!("-llogdev={sa}"), &sa, &sb]),
                "outside the places the layout puts them",
            ),
            (
                argv(&["mkfs.btrfs", "-L", "LABEL=nope-x", &sa, &sb]),
                "by tag",
            ),
        ];
        for (cmd, want) in cases {
            let at = cmd.len() - 2;
            let e = check_devices(&cmd, &devs, at).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(want), "{cmd:?}: {e}");
        }
        let e = check_devices(&ok, &[a.clone(), a.clone()], 6).unwrap_err();
        assert!(e.to_string().contains("named twice"), "{e}");
        let e = check_devices(&ok, &[a, PathBuf::from("/var/tmp")], 6).unwrap_err();
        assert!(e.to_string().contains("not a block device"), "{e}");
    }

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
