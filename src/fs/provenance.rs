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
}
