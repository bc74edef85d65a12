//! What a setup's options mean for durability: the warnings a plan shows and a result keeps
//! (`SetupSpec::warnings`) for a setup less durable than its filesystem's default.
//!
//! Two mount options weaken every journaling filesystem alike (write barriers off, a commit
//! interval above its default, [`super::Caps::commit_s`]); the rest are a driver's own,
//! declared as data in its [`super::Caps::weakens`] (ext4 `data=writeback`, Btrfs
//! `nodatacow`, ZFS `sync=disabled`) and read by [`super::Filesystem::durability_warnings`].

use super::{Caps, SetupSpec};

/// Which option of a setup weakens it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weakens {
    /// A mount option, exactly.
    Mount(&'static str),
    /// A property with this value (`sync`, `disabled`).
    Prop(&'static str, &'static str),
    /// A data-directory attribute (`nocow`).
    DirAttr(&'static str),
}

/// One option a driver knows to weaken durability, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weakening {
    /// The option.
    pub when: Weakens,
    /// The sentence after the setup's name; `{o}` stands for the option as written.
    pub why: &'static str,
}

/// Why `s` is less durable than its filesystem's default, one sentence each, in the order
/// its mount options, properties and attributes are declared.
pub fn warnings(caps: &Caps, s: &SetupSpec) -> Vec<String> {
    let mut w = Vec::new();
    let say = |w: &mut Vec<String>, why: &str, o: &str| {
        w.push(format!("{}: {}", s.name, why.replace("{o}", o)));
    };
    for opt in &s.mount {
        let o = opt.as_str();
        if o == "nobarrier" || o == "barrier=0" {
            say(
                &mut w,
                "mount option {o} disables write barriers; a power loss can corrupt the filesystem",
                o,
            );
        } else if let Some(k) = caps
            .weakens
            .iter()
            .find(|k| matches!(k.when, Weakens::Mount(m) if m == o))
        {
            say(&mut w, k.why, o);
        } else if let Some(n) = o
            .strip_prefix("commit=")
            .and_then(|n| n.parse::<u32>().ok())
            && n > caps.commit_s
        {
            w.push(format!(
                "{}: commit={n} lets up to {n} s of acknowledged writes vanish on power loss (default {} s)",
                s.name, caps.commit_s
            ));
        }
    }
    for k in caps.weakens {
        match k.when {
            Weakens::Prop(key, value) if s.props.get(key).is_some_and(|v| v == value) => {
                say(&mut w, k.why, &format!("{key}={value}"));
            }
            Weakens::DirAttr(attr) if s.dir_attrs.iter().any(|a| a == attr) => {
                say(&mut w, k.why, attr);
            }
            _ => {}
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_commit_and_a_drivers_own_options() {
        const CAPS: Caps = Caps {
            commit_s: 5,
            weakens: &[
                Weakening {
                    when: Weakens::Mount("data=writeback"),
                    why: "{o} is weaker",
                },
                Weakening {
                    when: Weakens::Prop("sync", "disabled"),
                    why: "{o} lies",
                },
            ],
            ..Caps::NONE
        };
        let mut s = SetupSpec::plain("x");
        s.name = "n".into();
        s.mount = vec![
            "noatime".into(),
            "barrier=0".into(),
            "data=writeback".into(),
            "commit=60".into(),
            "commit=5".into(),
        ];
        s.props.insert("sync".into(), "disabled".into());
        let w = warnings(&CAPS, &s);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].starts_with("n: mount option barrier=0 disables"));
        assert_eq!(w[1], "n: data=writeback is weaker");
        assert!(w[2].contains("commit=60 lets up to 60 s"), "{}", w[2]);
        assert_eq!(w[3], "n: sync=disabled lies");
        s.props.insert("sync".into(), "always".into());
        assert_eq!(warnings(&CAPS, &s).len(), 3);
    }
}
