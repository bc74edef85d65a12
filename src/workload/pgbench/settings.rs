//! Checking a plan's extra server settings before anything is created.
//!
//! The names come from the server binary itself, `postgres --describe-config` (one line per
//! settable parameter, name first), so the list matches the installed version; asking a running
//! server (`pg_settings`) would be too late: the run would already have made its filesystems.

use super::server::{Binaries, RESERVED};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Parameter names of `postgres --describe-config` output.
pub fn parse_describe_config(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.split('\t').next())
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The installed server's parameter names (asked once per process); `None` when there is no
/// server or it cannot describe itself (the workload is then skipped at run time anyway).
fn known_names() -> Option<&'static BTreeSet<String>> {
    static NAMES: OnceLock<Option<BTreeSet<String>>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            let bins = Binaries::find().ok()?;
            let out = Command::new(bins.path("postgres"))
                .arg("--describe-config")
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()?;
            let names = parse_describe_config(&String::from_utf8_lossy(&out.stdout));
            (out.status.success() && !names.is_empty()).then_some(names)
        })
        .as_ref()
}

/// Refuse settings fsbench owns, and names the installed server does not know. `Err` names the
/// offending key.
pub fn check(keys: impl IntoIterator<Item = impl AsRef<str>>) -> Result<(), String> {
    check_against(keys, known_names())
}

fn check_against(
    keys: impl IntoIterator<Item = impl AsRef<str>>,
    known: Option<&BTreeSet<String>>,
) -> Result<(), String> {
    for k in keys {
        let k = k.as_ref();
        let lower = k.to_ascii_lowercase();
        if RESERVED.contains(&lower.as_str()) {
            return Err(format!(
                "settings.{k}: fsbench sets {k} itself to keep the server private; remove it"
            ));
        }
        if lower == "shared_buffers" {
            return Err(format!(
                "settings.{k}: give it as shared_buffers = \"…\" on the workload, not in settings"
            ));
        }
        if let Some(known) = known
            && !known.contains(&lower)
            // Custom options of extensions (`auto_explain.log_min_duration`) are not listed.
            && !lower.contains('.')
        {
            return Err(format!(
                "settings.{k}: the installed PostgreSQL has no setting named '{k}' \
                 (see `postgres --describe-config`)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_describe_config() {
        let names = parse_describe_config(
            "work_mem\tuser\tResource Usage / Memory\tINTEGER\t4096\t64\t2147483647\tSets…\t\n\
             checkpoint_timeout\tsighup\tWAL\tINTEGER\t300\t30\t86400\t…\t\n",
        );
        assert!(names.contains("work_mem") && names.contains("checkpoint_timeout"));
        assert_eq!(names.len(), 2);
        assert!(check_against(["work_mem", "Checkpoint_Timeout"], Some(&names)).is_ok());
        let e = check_against(["wrok_mem"], Some(&names)).unwrap_err();
        assert!(e.contains("'wrok_mem'"), "{e}");
        let e = check_against(["port"], Some(&names)).unwrap_err();
        assert!(e.contains("settings.port"), "{e}");
        assert!(check_against(["shared_buffers"], None).is_err());
        assert!(check_against(["anything"], None).is_ok());
        assert!(check_against(["auto_explain.log_min_duration"], Some(&names)).is_ok());
    }
}
