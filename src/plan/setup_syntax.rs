//! Parsing of setups: `--fs ext4,xfs,zfs-16k=zfs:recordsize=16K` and plan-file `[[setup]]` tables.
//!
//! Syntax: `NAME=FS[:key=value;key=value…]` or a bare `FS`. Options are separated by `;`
//! because mount options themselves use commas (`mount=noatime,compress=zstd:3`). Several
//! setups are separated by commas or by repeating `--fs`; a comma-separated piece that does not
//! start a new setup (it is neither a known filesystem nor `NAME=FS…`) continues the mount list
//! of the previous variant, so `btrfs-z=btrfs:mount=noatime,compress=zstd:3` reads as intended.
//!
//! Keys are the driver's ([`crate::fs::setup::variant_keys::Accepts`]): `mkfs` (extra mkfs arguments,
//! split into words as a shell would: `'…'`, `"…"`, `\\`), `mount` (mount options, a comma
//! list, may repeat), `nocow` (Btrfs: `chattr +C` on the data directory), and ZFS's dataset
//! properties (`recordsize=16K` becomes `-O recordsize=16K`). Host tunings apply
//! to every filesystem: `sched=`, `read_ahead_kb=`, `nr_requests=`, `nomerges=`,
//! `wbt_lat_usec=` (the target device's queue) and `sysctl.vm.*` / `sysctl.fs.*`. Every
//! filesystem also takes `age=PROFILE[:AMOUNT[:FULLNESS%]]` ([`crate::fs::setup::age`]).

use crate::Error;
use crate::fs::SetupSpec;

/// Filesystem names a setup may use.
pub fn known_filesystems() -> &'static [&'static str] {
    crate::fs::KNOWN
}

/// Parse every `--fs` value (each may hold several comma-separated setups).
pub fn parse_fs_list(values: &[String]) -> crate::Result<Vec<SetupSpec>> {
    let mut pieces: Vec<String> = Vec::new();
    for value in values {
        let mut started = false;
        for piece in value.split(',') {
            let piece = piece.trim();
            if piece.is_empty() {
                continue;
            }
            if started && !starts_setup(piece) && pieces.last().is_some_and(|p| p.contains(':')) {
                let last = pieces.last_mut().expect("checked");
                last.push(',');
                last.push_str(piece);
            } else {
                pieces.push(piece.to_string());
                started = true;
            }
        }
    }
    let mut setups = Vec::with_capacity(pieces.len());
    for p in &pieces {
        setups.push(parse_setup(p)?);
    }
    check_unique(&setups)?;
    Ok(setups)
}

/// Whether a comma-separated piece begins a new setup rather than continuing a mount list.
fn starts_setup(piece: &str) -> bool {
    if known_filesystems().contains(&piece) {
        return true;
    }
    match piece.split_once('=') {
        Some((name, rest)) => {
            let fs = rest.split(':').next().unwrap_or("");
            valid_name(name) && known_filesystems().contains(&fs)
        }
        None => false,
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// Parse one setup written `FS` or `NAME=FS[:key=value;…]`.
pub fn parse_setup(text: &str) -> crate::Result<SetupSpec> {
    let text = text.trim();
    let (name, rest) = match text.split_once('=') {
        Some((n, r)) if !n.contains(':') => (n.trim().to_string(), r.trim()),
        _ => (String::new(), text),
    };
    let (fs, opts) = match rest.split_once(':') {
        Some((f, o)) => (f.trim(), Some(o)),
        None => (rest, None),
    };
    check_fs(fs, text)?;
    let name = if name.is_empty() {
        fs.to_string()
    } else {
        name
    };
    if !valid_name(&name) {
        return Err(Error::invalid(
            "--fs",
            format!(
                "setup name '{name}' in '{text}' may only use letters, digits, '-', '_' and '.'"
            ),
        ));
    }
    let mut pairs = Vec::new();
    if let Some(opts) = opts {
        for item in opts.split(';') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (k, v) = match item.split_once('=') {
                Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
                None => (item.to_string(), String::new()),
            };
            pairs.push((k, v));
        }
    }
    build_setup(&name, fs, &pairs, text)
}

/// The driver of the filesystem a user named, or the "unknown filesystem" refusal: the
/// place a name the user wrote becomes a driver (the setup then resolves it by its `fs`).
fn check_fs(fs: &str, context: &str) -> crate::Result<&'static dyn crate::fs::Filesystem> {
    // `KNOWN`, not every driver `fs::driver` finds: a test's fake is not a `--fs` word.
    let driver = if known_filesystems().contains(&fs) {
        crate::fs::driver(fs)
    } else {
        None
    };
    if let Some(d) = driver {
        Ok(d)
    } else {
        Err(Error::invalid(
            "--fs",
            format!(
                "unknown filesystem '{fs}' in '{context}'; known: {} (variants: NAME=FS:key=value;…)",
                known_filesystems().join(", ")
            ),
        ))
    }
}

/// Build a setup from `key = value` pairs (shared by `--fs` and plan files). Which keys a
/// filesystem takes is its driver's [`crate::fs::setup::variant_keys::Accepts`]; host tunings are the
/// host's ([`crate::host::tuning`]).
pub fn build_setup(
    name: &str,
    fs: &str,
    pairs: &[(String, String)],
    context: &str,
) -> crate::Result<SetupSpec> {
    let driver = check_fs(fs, context)?;
    let acc = driver.accepts();
    let mut s = SetupSpec {
        name: name.to_string(),
        fs: fs.to_string(),
        ..Default::default()
    };
    for (key, value) in pairs {
        let k = key.as_str();
        if k == "mkfs" && acc.mkfs {
            let words = shell_words(value).map_err(|why| {
                Error::invalid("--fs", format!("'{context}': mkfs={value}: {why}"))
            })?;
            s.mkfs.extend(words);
        } else if k == "mount" && acc.mount {
            s.mount.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .map(str::to_string),
            );
        } else if acc.dir_attrs.contains(&k) {
            match value.as_str() {
                "" | "true" | "1" | "yes" => s.dir_attrs.push(k.to_string()),
                "false" | "0" | "no" => {}
                other => {
                    return Err(Error::invalid(
                        "--fs",
                        format!("'{context}': {k} takes no value or true/false, not '{other}'"),
                    ));
                }
            }
        } else if k == crate::fs::setup::variant_keys::AGE_KEY {
            s.age = Some(crate::fs::setup::age::parse(value, "--fs")?);
        } else if k == "spare" && crate::fs::layout::takes(fs, k) {
            s.spare = crate::fs::layout::parse_spare(value, context)?;
        } else if crate::fs::layout::takes(fs, k) {
            crate::fs::layout::check_value(fs, k, value, context)?;
            let slot = if k == "raid" {
                &mut s.raid
            } else {
                &mut s.mraid
            };
            *slot = Some(value.clone());
        } else if crate::host::tuning::is_host_key(k) {
            let on_device = driver.caps().backing != crate::measure::backing::Backing::None;
            s.host.push(crate::host::tuning::parse(
                fs, on_device, k, value, context,
            )?);
        } else if acc.props.contains(&k) {
            if value.is_empty() {
                return Err(Error::invalid(
                    "--fs",
                    format!("'{context}': {fs} property '{k}' needs a value ({k}=…)"),
                ));
            }
            s.props.insert(k.to_string(), value.clone());
        } else {
            return Err(acc.refuse(fs, name, k));
        }
        s.raw
            .entry(key.clone())
            .and_modify(|v: &mut String| {
                v.push(';');
                v.push_str(value)
            })
            .or_insert_with(|| value.clone());
    }
    // What its options mean for durability is the driver's.
    s.warnings = driver.durability_warnings(&s);
    Ok(s)
}

/// Split a `mkfs=` value into the argv words mkfs gets, as a POSIX shell would, refusing
/// what a shell would expand ([`super::words`]), so the safety checks see exactly the words
/// the tool will.
pub fn shell_words(text: &str) -> Result<Vec<String>, String> {
    super::words::split(text)
}

/// Refuse two setups with the same name: samples are keyed by it.
pub fn check_unique(setups: &[SetupSpec]) -> crate::Result<()> {
    for (i, a) in setups.iter().enumerate() {
        if setups[..i].iter().any(|b| b.name == a.name) {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup name '{}' is used twice; give variants their own names (NAME=FS:…)",
                    a.name
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(t: &str) -> SetupSpec {
        parse_setup(t).unwrap()
    }

    #[test]
    fn plain_and_named_variants() {
        let s = one("ext4");
        assert_eq!((s.name.as_str(), s.fs.as_str()), ("ext4", "ext4"));
        let z = one("zfs-16k=zfs:recordsize=16K");
        assert_eq!(z.name, "zfs-16k");
        assert_eq!(z.props.get("recordsize").unwrap(), "16K");
        let b = one("btrfs-ssd=btrfs:mount=ssd");
        assert_eq!(b.mount, vec!["ssd"]);
        let c = one("btrfs-zstd=btrfs:mount=compress=zstd:3");
        assert_eq!(c.mount, vec!["compress=zstd:3"]);
        let e = one("ext4-tuned=ext4:mkfs=-m 1 -E lazy_itable_init=0;mount=noatime");
        assert_eq!(e.mkfs, vec!["-m", "1", "-E", "lazy_itable_init=0"]);
        assert_eq!(e.mount, vec!["noatime"]);
        assert!(e.warnings.is_empty());
        let n = one("btrfs-nocow=btrfs:nocow");
        assert!(n.nocow());
        assert_eq!(n.warnings.len(), 1);
    }

    #[test]
    fn mkfs_words_split_like_a_shell() {
        let e = one("e=ext4:mkfs=-L 'my label' -E \"a b\" x\\ y");
        assert_eq!(e.mkfs, ["-L", "my label", "-E", "a b", "x y"]);
        assert_eq!(shell_words("  -m   1 ").unwrap(), ["-m", "1"]);
        assert_eq!(shell_words("''").unwrap(), [""]);
        let e = parse_setup("e=ext4:mkfs=-L 'x").unwrap_err();
        assert!(e.to_string().contains("unterminated"), "{e}");
    }

    #[test]
    fn list_with_commas_inside_mount_options() {
        let v = parse_fs_list(&[
            "ext4,xfs,btrfs-z=btrfs:mount=noatime,compress=zstd:3,zfs".to_string(),
            "zfs-16k=zfs:recordsize=16K;compression=off".into(),
        ])
        .unwrap();
        let names: Vec<_> = v.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ext4", "xfs", "btrfs-z", "zfs", "zfs-16k"]);
        assert_eq!(v[2].mount, vec!["noatime", "compress=zstd:3"]);
        assert_eq!(v[4].props.len(), 2);
    }

    #[test]
    fn repeated_mount_keys_accumulate() {
        let s = one("e=ext4:mount=noatime;mount=data=writeback");
        assert_eq!(s.mount, vec!["noatime", "data=writeback"]);
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("data=writeback"));
    }

    #[test]
    fn durability_warnings_cover_each_weakening() {
        assert_eq!(one("a=ext4:mount=nobarrier").warnings.len(), 1);
        assert_eq!(one("a=xfs:mount=barrier=0").warnings.len(), 1);
        assert_eq!(one("a=zfs:sync=disabled").warnings.len(), 1);
        assert!(one("a=zfs:sync=always").warnings.is_empty());
    }

    #[test]
    fn raid_layouts_are_keys_of_the_drivers_that_build_them() {
        let s = parse_setup("b=btrfs:raid=raid0;mraid=raid1").unwrap();
        assert_eq!(
            (s.raid.as_deref(), s.mraid.as_deref()),
            (Some("raid0"), Some("raid1"))
        );
        crate::fs::Filesystem::validate(&crate::fs::BTRFS, &s).unwrap();
        let s = parse_setup("z=zfs:raid=mirror;recordsize=16K").unwrap();
        assert_eq!(s.raid.as_deref(), Some("mirror"));
        assert!(!s.spare);
        assert!(parse_setup("b=btrfs:raid=raid1;spare=yes").unwrap().spare);
        let e = parse_setup("b=btrfs:raid=raid1;spare=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("spare takes yes or no"), "{e}");
        // md has no rebuild here, so no spare either.
        let e = parse_setup("x=xfs:raid=raid1;spare=yes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not understand \"spare\""), "{e}");
        let e = parse_setup("z=zfs:mraid=raid1").unwrap_err().to_string();
        assert!(e.contains("zfs does not understand \"mraid\""), "{e}");
        let e = parse_setup("t=tmpfs:raid=raid1").unwrap_err().to_string();
        assert!(e.contains("does not understand \"raid\""), "{e}");
        let e = parse_setup("b=btrfs:raid=mirror").unwrap_err().to_string();
        assert!(e.contains("btrfs takes raid=single|raid0"), "{e}");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_setup("ntfs").unwrap_err().to_string();
        assert!(e.contains("unknown filesystem 'ntfs'"), "{e}");
        let e = parse_setup("x=ext4:recordsize=16K")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ext4 does not understand \"recordsize\"")
                && e.contains("valid keys for ext4: mkfs, mount, raid;"),
            "{e}"
        );
        let e = parse_setup("x=ext4:nocow").unwrap_err().to_string();
        assert!(e.contains("does not understand \"nocow\""), "{e}");
        // ZFS lists exactly what its driver takes: no `mount`, with advice for it.
        let e = parse_setup("z=zfs:mount=noatime").unwrap_err().to_string();
        assert!(
            e.contains("instead of mount=noatime")
                && e.contains("valid keys for zfs: mkfs, ashift,"),
            "{e}"
        );
        let zfs_keys = e.split("valid keys for zfs: ").nth(1).unwrap();
        assert!(
            !zfs_keys.contains("mount,") && !zfs_keys.contains("any zfs property"),
            "{e}"
        );
        let e = parse_setup("z=zfs:foo=1").unwrap_err().to_string();
        assert!(e.contains("zfs does not understand \"foo\""), "{e}");
        let e = parse_setup("t=tmpfs:mkfs=-x").unwrap_err().to_string();
        assert!(e.contains("valid keys for tmpfs: mount, size;"), "{e}");
        let e = parse_setup("x=zfs:recordsize").unwrap_err().to_string();
        assert!(e.contains("needs a value"), "{e}");
        let e = parse_fs_list(&["ext4,ext4".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("used twice"), "{e}");
        let e = parse_fs_list(&["ext4,bogus".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown filesystem 'bogus'"), "{e}");
        assert_eq!(parse_setup("ntfs").unwrap_err().exit_code(), 2);
    }

    #[test]
    fn every_filesystem_takes_age_and_bad_values_exit_2() {
        let s = one("ext4-aged=ext4:age=churn:2");
        let a = s.age.expect("aged");
        assert_eq!((a.profile.name(), a.amount), ("churn", 2.0));
        assert_eq!(s.raw.get("age").map(String::as_str), Some("churn:2"));
        crate::fs::setup::variant_keys::check("ext4", &s, &crate::fs::EXT4.accepts).unwrap();
        assert!(one("b=btrfs:age=punch;mount=noatime").age.is_some());
        assert!(one("ext4").age.is_none());
        let e = parse_setup("x=xfs:age=rot").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("unknown aging profile 'rot'"), "{e}");
    }
}
