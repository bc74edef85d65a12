//! The tool versions a result records (`host.tool_versions`): each driver names the programs
//! its setups depend on and how each says its version ([`super::Filesystem::versions`]).

use std::collections::BTreeMap;

/// One program a filesystem depends on and how to ask it its version.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolVersion {
    /// The program (`mkfs.ext4`), the key in `tool_versions`.
    pub tool: &'static str,
    /// Commands tried in order; the first that exits 0 and prints a version wins.
    pub asks: &'static [&'static [&'static str]],
}

/// The version of every installed tool a comparison depends on: fio and the like
/// (`host::provenance::DEFAULT_TOOLS`) and every driver's [`super::Filesystem::versions`].
pub fn tool_versions() -> BTreeMap<String, String> {
    let mut out = crate::host::provenance::tool_versions(crate::host::provenance::DEFAULT_TOOLS);
    for r in &super::DRIVERS {
        for v in r.driver.versions() {
            if let Some(found) = crate::host::provenance::version_of(v.tool, v.asks) {
                out.insert(v.tool.to_string(), found);
            }
        }
    }
    out
}

/// The filesystem whose driver declares `tool` among its [`super::Filesystem::versions`]
/// (`mkfs.xfs` → `xfs`); `None` for a tool that concerns every setup (fio…). A comparison
/// reads this, so a driver added with its tools is known there without a table to update.
pub fn owner(tool: &str) -> Option<&'static str> {
    super::DRIVERS
        .iter()
        .find(|r| r.driver.versions().iter().any(|v| v.tool == tool))
        .map(|r| r.name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_driver_asks_its_own_programs() {
        for r in &super::super::DRIVERS {
            for v in r.driver.versions() {
                assert!(
                    !v.asks.is_empty(),
                    "{}: {} has no way to ask",
                    r.name,
                    v.tool
                );
                for ask in v.asks {
                    assert!(
                        ask.first() == Some(&v.tool) || ask.first() == Some(&"dpkg-query"),
                        "{}: {ask:?} does not ask {}",
                        r.name,
                        v.tool
                    );
                }
            }
        }
    }

    #[test]
    fn each_tool_belongs_to_the_driver_that_declares_it() {
        assert_eq!(super::owner("mkfs.xfs"), Some("xfs"));
        assert_eq!(super::owner("zfs-fuse"), Some("zfs"));
        assert_eq!(super::owner("btrfs"), Some("btrfs"));
        assert_eq!(super::owner("fio"), None);
    }
}
