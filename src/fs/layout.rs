//! Setups over several devices: the `raid=` (and `mraid=`) key over the layouts each driver
//! declares (`Caps::layouts`).
//!
//! A layout says how a filesystem puts the target's devices together: profiles of one
//! multi-device filesystem (Btrfs `mkfs.btrfs -d P -m P dev…`), vdevs of a pool (ZFS
//! `zpool create … [mirror|raidz1|raidz2] dev…`), each declared in its driver's folder, and
//! md arrays under a kernel filesystem ([`MD`], which ext4 and XFS declare: `mdadm
//! --create`, then mkfs with the stripe geometry). The
//! devices are always fsbench's (the target's, in order); a variant never names one
//! ([`super::setup::variant_args`]), and the final argv check admits exactly these
//! ([`super::setup::argv_guard::check_devices`]).
//!
//! md is refused at plan time where the kernel has no md driver (no `/proc/mdstat`): its
//! argument builders are unit-tested, its lifecycle is not written yet (see docs/multidev.md).
//! UNTESTED HERE: the project's machine has no md driver, so nothing of md has run; there is
//! no md resync, fail, re-add or spare (`spare=` is refused for md layouts).

use crate::fs::SetupSpec;
use crate::{Error, Result};

/// How a layout's devices become one filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builder {
    /// One filesystem over all devices, the driver's mkfs given the layout's name as its
    /// data profile (and, with `mraid=`, a metadata profile: Btrfs `-d P -m P`).
    Profile,
    /// One pool; `Some(word)` is the vdev type its create takes before the devices (ZFS
    /// `mirror`, `raidz1`), `None` stripes.
    Vdev(Option<&'static str>),
    /// An md array of this level, then the filesystem on it.
    Md(&'static str),
}

/// One layout a driver builds (its `Caps::layouts`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Its `raid=` value.
    pub name: &'static str,
    /// Fewest devices it can be built on (what the tool accepts).
    pub min_devices: usize,
    /// How it is built.
    pub builder: Builder,
    /// Devices that may fail without losing data (for the docs and degraded figures).
    pub redundancy: usize,
}

/// A layout row: its name, fewest devices, builder, devices that may fail.
pub const fn row(
    name: &'static str,
    min_devices: usize,
    builder: Builder,
    redundancy: usize,
) -> Layout {
    Layout {
        name,
        min_devices,
        builder,
        redundancy,
    }
}

/// md arrays under a kernel filesystem (the layouts ext4 and XFS declare).
pub const MD: &[Layout] = &[
    row("raid0", 2, Builder::Md("0"), 0),
    row("raid1", 2, Builder::Md("1"), 1),
    row("raid10", 2, Builder::Md("10"), 1),
    row("raid5", 3, Builder::Md("5"), 1),
];

/// Metadata profiles `mraid=` takes beyond the data profiles (a [`Builder::Profile`] layout).
const PROFILE_METADATA_EXTRA: &[&str] = &["dup"];

/// The layouts of driver `fs`, as its capabilities declare them (none for a name no driver
/// has).
pub fn of(fs: &str) -> impl Iterator<Item = &'static Layout> + '_ {
    let layouts: &'static [Layout] = super::driver(fs).map_or(&[], |d| d.caps().layouts);
    layouts.iter()
}
/// The layout `raid=name` of driver `fs`.
pub fn find(fs: &str, name: &str) -> Option<&'static Layout> {
    of(fs).find(|l| l.name == name)
}

/// Whether driver `fs` takes setup key `key` (`raid`, `spare`, and `mraid` for Btrfs).
pub fn takes(fs: &str, key: &str) -> bool {
    match key {
        "raid" => of(fs).next().is_some(),
        "mraid" => of(fs).any(|l| l.builder == Builder::Profile),
        // md's rebuild is not written (untested here): no spare for it either.
        "spare" => of(fs).any(|l| l.redundancy > 0 && !matches!(l.builder, Builder::Md(_))),
        _ => false,
    }
}

/// The layout keys driver `fs` takes, for "valid keys" messages.
pub fn keys(fs: &str) -> Vec<&'static str> {
    ["raid", "mraid", "spare"]
        .into_iter()
        .filter(|k| takes(fs, k))
        .collect()
}

/// `spare=`'s value: whether the target's last device is kept out of the layout as the
/// spare the rebuild replaces the failed device with.
pub fn parse_spare(value: &str, context: &str) -> Result<bool> {
    match value {
        "" | "1" | "yes" | "true" => Ok(true),
        "0" | "no" | "false" => Ok(false),
        other => Err(Error::invalid(
            "--fs",
            format!(
                "'{context}': spare={other:?}: spare takes yes or no (spare=yes keeps the \
                 target's last device out of the layout, as the spare the rebuild uses)"
            ),
        )),
    }
}

/// The devices a setup's layout is built on, and its spare: every device of the target, or
/// with `spare=yes` all but the last, which is the spare. `None` for the spare when there is
/// none (or too few devices to keep one; [`check_setups`] refuses that before).
pub fn members<'a>(
    setup: &SetupSpec,
    devices: &'a [std::path::PathBuf],
) -> (&'a [std::path::PathBuf], Option<&'a std::path::PathBuf>) {
    match devices.split_last() {
        Some((spare, rest)) if setup.spare && !rest.is_empty() => (rest, Some(spare)),
        _ => (devices, None),
    }
}

/// The plan's line for a layout setup over a target of `count` devices: which devices the
/// layout takes and what the rebuild writes onto. `None` without `raid=`.
pub fn describe(setup: &SetupSpec, count: usize) -> Option<String> {
    let l = of_setup(setup)?;
    let used = if setup.spare {
        count.saturating_sub(1)
    } else {
        count
    };
    let over = match used {
        1 => "device 1".to_string(),
        n => format!("devices 1–{n}"),
    };
    let rebuild = match (l.redundancy, setup.spare) {
        (0, _) => "no rebuild (it survives no failed device)".to_string(),
        (_, true) => format!(
            "device {count} is the spare: the rebuild replaces the failed device {used} with it"
        ),
        (_, false) => {
            format!("rebuild onto the failed device {used}, wiped (spare=yes for a spare)")
        }
    };
    Some(format!(
        "{}: {} raid={} over {over} of {count}; {rebuild}",
        setup.name, setup.fs, l.name
    ))
}

fn names(fs: &str) -> Vec<&'static str> {
    of(fs).map(|l| l.name).collect()
}

/// Check a `raid=`/`mraid=` value while parsing a setup (`context` is the setup as written).
pub fn check_value(fs: &str, key: &str, value: &str, context: &str) -> Result<()> {
    let ok =
        find(fs, value).is_some() || (key == "mraid" && PROFILE_METADATA_EXTRA.contains(&value));
    if ok {
        return Ok(());
    }
    let mut valid = names(fs);
    if key == "mraid" {
        valid.extend(PROFILE_METADATA_EXTRA);
    }
    Err(Error::invalid(
        "--fs",
        format!(
            "'{context}': {fs} has no {key}={value:?}; {fs} takes {key}={}",
            valid.join("|")
        ),
    ))
}

/// The layout a setup asks for (`None`: the first device alone, as for one device).
pub fn of_setup(setup: &SetupSpec) -> Option<&'static Layout> {
    setup.raid.as_deref().and_then(|r| find(&setup.fs, r))
}

/// Plan-time check of every setup's layout against the target: enough devices, and a
/// kernel that has the driver (md needs `/proc/mdstat`). Exit 2 with the reason.
pub fn check_setups(setups: &[SetupSpec], devices: usize, md_here: bool) -> Result<()> {
    for s in setups {
        if s.mraid.is_some() && s.raid.is_none() {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: mraid= sets the metadata profile of a raid= layout; add \
                     raid= (e.g. raid=raid0;mraid=raid1)",
                    s.name
                ),
            ));
        }
        if s.spare && s.raid.is_none() {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: spare= keeps a device out of a raid= layout for its \
                     rebuild; add raid= (e.g. raid=raid1;spare=yes)",
                    s.name
                ),
            ));
        }
        let Some(l) = of_setup(s) else { continue };
        if s.spare && l.redundancy == 0 {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} survives no failed device, so there is no rebuild \
                     for a spare; drop spare= or choose a redundant layout",
                    s.name, l.name
                ),
            ));
        }
        // With a spare, the layout gets one device fewer than the target has.
        let need = l.min_devices + usize::from(s.spare);
        if devices == 0 {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} needs block devices and --dir has none; use --images \
                     {} or --device more than once",
                    s.name, l.name, l.min_devices
                ),
            ));
        }
        if devices < need {
            let spare = if s.spare { " and a spare" } else { "" };
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} needs at least {} devices{spare} and the target has \
                     {devices}; use --images {need} or give --device {need} times",
                    s.name, l.name, l.min_devices
                ),
            ));
        }
        if matches!(l.builder, Builder::Md(_)) && !md_here {
            return Err(Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: raid={} under {} is an md array, and this kernel has no md \
                     driver (no /proc/mdstat; containers usually lack it); use Btrfs or ZFS \
                     layouts here, or run on a host with md",
                    s.name, l.name, s.fs
                ),
            ));
        }
    }
    Ok(())
}

/// The words a Btrfs layout puts before the devices: `-d P -m M` (`M` = `mraid`, else `P`).
pub fn btrfs_profile_args(setup: &SetupSpec, layout: &Layout) -> Vec<String> {
    let meta = setup.mraid.as_deref().unwrap_or(layout.name);
    ["-d", layout.name, "-m", meta]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// md chunk size fsbench uses (mdadm's default), bytes.
pub const MD_CHUNK: u64 = 512 << 10;

/// `mdadm --create` for an md layout over `devices` at `md_path`. Untested here (no md).
pub fn mdadm_create_argv(level: &str, md_path: &str, devices: &[String]) -> Vec<String> {
    let mut a: Vec<String> = [
        "mdadm",
        "--create",
        md_path,
        "--run",
        "--metadata=1.2",
        "--assume-clean",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--level={level}"));
    a.push(format!("--chunk={}K", MD_CHUNK >> 10));
    a.push(format!("--raid-devices={}", devices.len()));
    a.extend(devices.iter().cloned());
    a
}

/// Devices that hold data in an md array of `level` over `n` devices (parity and mirror
/// copies excluded): what the stripe width counts.
pub fn md_data_devices(level: &str, n: usize) -> usize {
    match level {
        "0" => n,
        "1" => 1,
        "10" => (n / 2).max(1),
        "5" => n.saturating_sub(1).max(1),
        _ => 1,
    }
}

/// The stripe geometry mkfs gets on an md array: ext4 `-E stride=,stripe_width=` in 4 KiB
/// blocks, XFS `-d su=,sw=`.
pub fn md_stripe_args(fs: &str, level: &str, n: usize) -> Vec<String> {
    let data = md_data_devices(level, n) as u64;
    match fs {
        "ext4" => {
            let stride = MD_CHUNK / 4096;
            vec![
                "-E".into(),
                format!("stride={stride},stripe_width={}", stride * data),
            ]
        }
        "xfs" => vec!["-d".into(), format!("su={}k,sw={data}", MD_CHUNK >> 10)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(fs: &str, raid: Option<&str>, mraid: Option<&str>) -> SetupSpec {
        SetupSpec {
            name: "s".into(),
            fs: fs.into(),
            raid: raid.map(str::to_string),
            mraid: mraid.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn one_row_per_layout_and_driver() {
        for fs in crate::fs::KNOWN {
            let all: Vec<&Layout> = of(fs).collect();
            for (i, a) in all.iter().enumerate() {
                assert!(a.min_devices >= 1 && a.redundancy < a.min_devices.max(2));
                assert!(
                    all[i + 1..].iter().all(|b| b.name != a.name),
                    "{fs}: {} twice",
                    a.name
                );
            }
        }
        assert_eq!(find("btrfs", "raid1").unwrap().min_devices, 2);
        assert_eq!(find("zfs", "raidz2").unwrap().min_devices, 3);
        assert!(find("zfs", "raid1").is_none());
        assert!(matches!(
            find("xfs", "raid5").unwrap().builder,
            Builder::Md("5")
        ));
        assert!(takes("btrfs", "mraid") && !takes("zfs", "mraid") && !takes("tmpfs", "raid"));
        assert_eq!(keys("zfs"), ["raid", "spare"]);
        assert_eq!(keys("xfs"), ["raid"]);
    }

    #[test]
    fn values_are_checked_against_the_table() {
        check_value("btrfs", "raid", "raid1c3", "b").unwrap();
        check_value("btrfs", "mraid", "dup", "b").unwrap();
        let e = check_value("btrfs", "raid", "dup", "b=btrfs:raid=dup").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--fs: 'b=btrfs:raid=dup': btrfs has no raid=\"dup\"; btrfs takes \
             raid=single|raid0|raid1|raid10|raid1c3"
        );
        let e = check_value("zfs", "raid", "raid5", "z")
            .unwrap_err()
            .to_string();
        assert!(e.contains("stripe|mirror|raidz1|raidz2"), "{e}");
    }

    #[test]
    fn refusals_at_plan_time() {
        let r1 = setup("btrfs", Some("raid1"), None);
        check_setups(std::slice::from_ref(&r1), 2, false).unwrap();
        let e = check_setups(std::slice::from_ref(&r1), 1, false).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains(
                "raid=raid1 needs at least 2 devices and the target has 1; use --images 2"
            ),
            "{e}"
        );
        let e = check_setups(&[setup("zfs", Some("mirror"), None)], 0, true).unwrap_err();
        assert!(e.to_string().contains("--dir has none"), "{e}");
        let md = setup("xfs", Some("raid5"), None);
        let e = check_setups(std::slice::from_ref(&md), 3, false).unwrap_err();
        assert!(e.to_string().contains("no /proc/mdstat"), "{e}");
        check_setups(std::slice::from_ref(&md), 3, true).unwrap();
        let e = check_setups(&[setup("btrfs", None, Some("raid1"))], 2, true).unwrap_err();
        assert!(e.to_string().contains("add raid="), "{e}");
        // No layout: the first device alone, whatever the target has.
        check_setups(&[setup("ext4", None, None)], 1, false).unwrap();
    }

    #[test]
    fn a_spare_is_the_last_device_and_needs_one_more() {
        let devs: Vec<std::path::PathBuf> = ["/dev/loop1", "/dev/loop2", "/dev/loop3"]
            .map(Into::into)
            .to_vec();
        let mut s = setup("zfs", Some("mirror"), None);
        assert_eq!(members(&s, &devs), (&devs[..], None));
        assert_eq!(
            describe(&s, 3).unwrap(),
            "s: zfs raid=mirror over devices 1–3 of 3; rebuild onto the failed device 3, \
             wiped (spare=yes for a spare)"
        );
        s.spare = true;
        assert_eq!(members(&s, &devs), (&devs[..2], Some(&devs[2])));
        assert_eq!(
            describe(&s, 3).unwrap(),
            "s: zfs raid=mirror over devices 1–2 of 3; device 3 is the spare: the rebuild \
             replaces the failed device 2 with it"
        );
        check_setups(std::slice::from_ref(&s), 3, false).unwrap();
        let e = check_setups(std::slice::from_ref(&s), 2, false).unwrap_err();
        assert!(
            e.to_string().contains(
                "needs at least 2 devices and a spare and the target has 2; use --images 3"
            ),
            "{e}"
        );
        let mut r0 = setup("btrfs", Some("raid0"), None);
        r0.spare = true;
        let e = check_setups(&[r0], 3, false).unwrap_err();
        assert!(e.to_string().contains("no rebuild for a spare"), "{e}");
        let mut bare = setup("btrfs", None, None);
        bare.spare = true;
        let e = check_setups(&[bare], 3, false).unwrap_err();
        assert!(e.to_string().contains("add raid="), "{e}");
        assert!(describe(&setup("ext4", None, None), 3).is_none());
        assert!(takes("btrfs", "spare") && takes("zfs", "spare") && !takes("xfs", "spare"));
    }

    #[test]
    fn btrfs_profiles_and_md_geometry() {
        let l = find("btrfs", "raid1").unwrap();
        assert_eq!(
            btrfs_profile_args(&setup("btrfs", Some("raid1"), None), l),
            ["-d", "raid1", "-m", "raid1"]
        );
        let l = find("btrfs", "raid0").unwrap();
        assert_eq!(
            btrfs_profile_args(&setup("btrfs", Some("raid0"), Some("raid1")), l),
            ["-d", "raid0", "-m", "raid1"]
        );
        let devs = vec![
            "/dev/loop1".to_string(),
            "/dev/loop2".into(),
            "/dev/loop3".into(),
        ];
        assert_eq!(
            mdadm_create_argv("5", "/dev/md/fsbench", &devs).join(" "),
            "mdadm --create /dev/md/fsbench --run --metadata=1.2 --assume-clean --level=5 \
             --chunk=512K --raid-devices=3 /dev/loop1 /dev/loop2 /dev/loop3"
        );
        assert_eq!(
            md_stripe_args("ext4", "5", 3),
            ["-E", "stride=128,stripe_width=256"]
        );
        assert_eq!(md_stripe_args("xfs", "10", 4), ["-d", "su=512k,sw=2"]);
        assert_eq!(md_stripe_args("xfs", "1", 2), ["-d", "su=512k,sw=1"]);
    }
}
