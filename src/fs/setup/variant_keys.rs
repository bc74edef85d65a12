//! Which variant keys each driver understands, and the check that rejects the rest.

use crate::fs::SetupSpec;
use crate::fs::setup::variant_args::ArgRules;
use crate::{Error, Result};

/// What a driver accepts in a setup.
pub struct Accepts {
    /// `mkfs=…` extra arguments.
    pub mkfs: bool,
    /// `mount=…` options.
    pub mount: bool,
    /// Property keys (`recordsize`, `compression`…).
    pub props: &'static [&'static str],
    /// Data-directory attributes (`nocow`).
    pub dir_attrs: &'static [&'static str],
    /// How the tools read `mkfs=`/`mount=` words: which options take values, paths, devices.
    pub args: ArgRules,
    /// Advice for keys users reach for that this driver refuses (`mount` on ZFS).
    pub hints: &'static [(&'static str, &'static str)],
}

impl Accepts {
    /// Every key a user may write for this driver, for messages.
    pub fn keys(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.mkfs {
            v.push("mkfs");
        }
        if self.mount {
            v.push("mount");
        }
        if !self.dir_attrs.is_empty() {
            v.extend(self.dir_attrs.iter().copied());
        }
        v.extend(self.props.iter().copied());
        v
    }

    /// The refusal of `key` in setup `setup` of filesystem `fs`: exactly the keys this driver
    /// takes, the host tunings every setup may use, and advice when there is some.
    pub fn refuse(&self, fs: &str, setup: &str, key: &str) -> Error {
        let hint = self
            .hints
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, h)| format!(" ({h})"))
            .unwrap_or_default();
        let mut keys = self.keys();
        keys.extend(crate::fs::layout::keys(fs));
        let valid = if keys.is_empty() {
            format!("{fs} takes no options of its own")
        } else {
            format!("valid keys for {fs}: {}", keys.join(", "))
        };
        Error::invalid(
            "--fs",
            format!(
                "setup {setup:?}: {fs} does not understand {key:?}{hint}; {valid}; host tunings: {}",
                crate::host::tuning::KEYS_HELP
            ),
        )
    }
}

/// The key every driver takes: the setup's aging ([`crate::fs::setup::age`]).
pub const AGE_KEY: &str = "age";

/// Keys a plan parser may record in `raw` for data-directory attributes.
const ATTR_KEYS: &[&str] = &["chattr", "dir_attrs", "attrs"];

/// Reject anything `setup` asks for that `fs` does not understand, naming the valid keys.
pub fn check(fs: &str, setup: &SetupSpec, acc: &Accepts) -> Result<()> {
    let bad = |key: &str| acc.refuse(fs, &setup.name, key);
    if setup.fs != fs {
        return Err(Error::invalid(
            "--fs",
            format!("setup {:?} is a {} setup, not {fs}", setup.name, setup.fs),
        ));
    }
    if !acc.mkfs && !setup.mkfs.is_empty() {
        return Err(bad("mkfs"));
    }
    if !acc.mount && !setup.mount.is_empty() {
        return Err(bad("mount"));
    }
    if let Some(r) = &setup.raid {
        if !crate::fs::layout::takes(fs, "raid") {
            return Err(bad("raid"));
        }
        crate::fs::layout::check_value(fs, "raid", r, &setup.name)?;
    }
    if let Some(m) = &setup.mraid {
        if !crate::fs::layout::takes(fs, "mraid") {
            return Err(bad("mraid"));
        }
        crate::fs::layout::check_value(fs, "mraid", m, &setup.name)?;
    }
    if setup.spare && !crate::fs::layout::takes(fs, "spare") {
        return Err(bad("spare"));
    }
    for k in setup.props.keys() {
        if !acc.props.contains(&k.as_str()) {
            return Err(bad(k));
        }
    }
    for a in &setup.dir_attrs {
        if !acc.dir_attrs.contains(&a.as_str()) {
            return Err(bad(a));
        }
    }
    for k in setup.raw.keys() {
        let k = k.as_str();
        let ok = (k == "mkfs" && acc.mkfs)
            || (k == "mount" && acc.mount)
            || acc.props.contains(&k)
            || acc.dir_attrs.contains(&k)
            || (ATTR_KEYS.contains(&k) && !acc.dir_attrs.is_empty())
            || crate::fs::layout::takes(fs, k)
            // Aging is the setup's, whatever its filesystem (`fs::setup::age`).
            || (k == AGE_KEY && setup.age.is_some())
            // Host tunings belong to the host, not the driver (checked by host::tuning).
            || setup.host.iter().any(|h| h.key == k);
        if !ok {
            return Err(bad(k));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXT4: Accepts = Accepts {
        mkfs: true,
        mount: true,
        props: &[],
        dir_attrs: &[],
        args: ArgRules::NONE,
        hints: &[],
    };

    #[test]
    fn rejects_unknown_keys_with_the_valid_list() {
        let mut s = SetupSpec::plain("ext4");
        s.name = "ext4-x".into();
        s.mount = vec!["noatime".into()];
        s.raw.insert("mount".into(), "noatime".into());
        check("ext4", &s, &EXT4).unwrap();
        s.raw.insert("recordsize".into(), "16K".into());
        let e = check("ext4", &s, &EXT4).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "--fs: setup \"ext4-x\": ext4 does not understand \"recordsize\"; valid keys for ext4: mkfs, mount, raid; host tunings: sched, read_ahead_kb, nr_requests, nomerges, wbt_lat_usec, sysctl.vm.*, sysctl.fs.*"
        );
        let mut s = SetupSpec::plain("ext4");
        s.dir_attrs = vec!["nocow".into()];
        assert!(check("ext4", &s, &EXT4).is_err());
        let s = SetupSpec::plain("xfs");
        assert!(
            check("ext4", &s, &EXT4)
                .unwrap_err()
                .to_string()
                .contains("not ext4")
        );
    }
}
