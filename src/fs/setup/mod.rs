//! A filesystem setup: a filesystem plus its variant options (`zfs-16k=zfs:recordsize=16K`).
//!
//! The one definition of a setup. `plan::variant` parses `--fs` and plan-file tables into it,
//! each driver says which keys it takes ([`crate::fs::setup::variant_keys::Accepts`]), the runner mounts it.

pub mod age;
pub mod argv_guard;
pub mod variant_args;
pub mod variant_keys;

use crate::host::tuning::HostSetting;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One setup to benchmark, as resolved from `--fs` or a plan file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetupSpec {
    /// Display name (`ext4`, `zfs-16k`); unique within a plan.
    pub name: String,
    /// Filesystem driver name (`ext4`, `xfs`, `btrfs`, `zfs`, `tmpfs`, `dir`).
    pub fs: String,
    /// Extra mkfs arguments, already split (`-m 1 -E lazy_itable_init=0`).
    #[serde(default)]
    pub mkfs: Vec<String>,
    /// Mount options (`noatime`, `compress=zstd:3`), joined with commas when mounting.
    #[serde(default)]
    pub mount: Vec<String>,
    /// Filesystem properties (ZFS `-O key=value`: recordsize, compression…).
    #[serde(default)]
    pub props: BTreeMap<String, String>,
    /// Attributes set on fsbench's data directory after mount (`nocow` → `chattr +C`).
    #[serde(default)]
    pub dir_attrs: Vec<String>,
    /// The options as the user wrote them (for the record).
    #[serde(default)]
    pub raw: BTreeMap<String, String>,
    /// `raid=`: the layout over the target's devices (the driver's `Caps::layouts`); `None` uses
    /// the first device alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<String>,
    /// `mraid=`: Btrfs's metadata profile when it differs from `raid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mraid: Option<String>,
    /// `spare=yes`: the layout leaves the target's last device out, and the rebuild
    /// replaces the failed device with it (`fs::layout::members`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spare: bool,
    /// Host tunings applied for this setup's rounds and put back after: block-queue
    /// settings of the target device and sysctls (see [`crate::host::tuning`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<HostSetting>,
    /// `age=PROFILE[:AMOUNT[:FULLNESS%]]`: aged after mkfs and before the workloads
    /// (`runner::age`); `None`: measured fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<crate::fs::setup::age::AgeSpec>,
    /// Why this setup is less durable than the default (nobarrier, sync=disabled, nocow…);
    /// printed before the run and carried into `results.json`.
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl SetupSpec {
    /// A setup with default options for `fs`, named after it.
    pub fn plain(fs: &str) -> Self {
        SetupSpec {
            name: fs.to_string(),
            fs: fs.to_string(),
            ..Default::default()
        }
    }

    /// Mount options joined for `mount -o`, or `None` when there are none.
    pub fn mount_option_string(&self) -> Option<String> {
        if self.mount.is_empty() {
            None
        } else {
            Some(self.mount.join(","))
        }
    }

    /// Its filesystem's driver: the one look-up of a setup's `fs` name and the one "no
    /// driver" error (it names the known filesystems). `--fs` parsing refuses a name without
    /// a driver, so only a directory target's setup (`dir`) or an edited plan.json has none.
    pub fn driver(&self) -> crate::Result<&'static dyn crate::fs::Filesystem> {
        crate::fs::driver(&self.fs).ok_or_else(|| {
            crate::Error::invalid(
                "--fs",
                format!(
                    "setup {:?}: no driver for filesystem {:?}; known filesystems: {}",
                    self.name,
                    self.fs,
                    crate::fs::KNOWN.join(", ")
                ),
            )
        })
    }

    /// What its driver offers ([`crate::fs::Caps`]); [`crate::fs::Caps::NONE`] without a driver.
    pub fn caps(&self) -> crate::fs::Caps {
        self.driver().map_or(crate::fs::Caps::NONE, |d| *d.caps())
    }

    /// Whether fsbench's data directory gets `chattr +C` (Btrfs nodatacow).
    pub fn nocow(&self) -> bool {
        self.dir_attrs.iter().any(|a| a == "nocow")
    }
}
