//! Registry entry of `backup` (snapshots and backups, docs/backups.md): a timed step on the
//! filesystem under test every round; its send/receive target is an image of its own.

use super::{BackupParams, Where};
use crate::metrics::MetricId;
use crate::metrics::registry::*;
use crate::units::format_size;
use crate::workload::api::{
    Cost, Describe, Family, Headline, Kind, Names, Needs, Question, Workload, WorkloadOutput,
    Writes,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Snapshots, send/receive, reflink, dedupe, trim.
    pub const Backup: Kind = Kind::named("backup");
}

/// Snapshots and backups.
pub struct Backup;

fn params(w: &WorkloadSpec) -> BackupParams {
    w.params_of().unwrap_or_default()
}

impl Workload for Backup {
    fn kind(&self) -> Kind {
        Kind::Backup
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("size", "bytes in the snapshotted tree (\"256M\")"),
            ("files", "files the tree holds"),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Backups
    }
    fn names(&self, id: &str) -> Option<Names> {
        (id == "backup").then_some(Names {
            label: "snapshots, send/receive, reflink, dedupe, trim",
            short: "backup",
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        const ROWS: &[Headline] = &[
            Headline {
                rank: 60,
                workload: "backup",
                metrics: &[SNAPSHOT_SECONDS],
                label: "Snapshot creation",
            },
            Headline {
                rank: 61,
                workload: "backup",
                metrics: &[SNAPSHOT_SPACE_10PCT_BYTES],
                label: "Snapshot space after 10 % of the data rewritten",
            },
            Headline {
                rank: 62,
                workload: "backup",
                metrics: &[SEND_INCR_RATIO],
                label: "Incremental send: bytes sent / bytes changed",
            },
            Headline {
                rank: 63,
                workload: "backup",
                metrics: &[DEDUPE_SAVED_BYTES],
                label: "Space saved by dedupe",
            },
        ];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        Needs {
            root: true,
            programs: &["fstrim"],
            writes: Writes::Runner,
            ..Needs::NOTHING
        }
    }
    fn emits(&self) -> &'static [MetricId] {
        &[
            SNAPSHOT_SECONDS,
            SNAPSHOT_SPACE_BYTES,
            SNAPSHOT_SPACE_SHARE,
            SNAPSHOT_SPACE_1PCT_BYTES,
            SNAPSHOT_SPACE_10PCT_BYTES,
            SNAPSHOT_SPACE_50PCT_BYTES,
            SEND_FULL_BYTES,
            SEND_FULL_MIB_S,
            CHANGED_BYTES,
            SEND_INCR_BYTES,
            SEND_INCR_RATIO,
            SEND_INCR_MIB_S,
            REFLINK_SECONDS,
            REFLINK_SAVED_BYTES,
            DEDUPE_SECONDS,
            DEDUPE_SAVED_BYTES,
            FSTRIM_SECONDS,
            BALANCE_SECONDS,
            DEVICE_WRITE_BYTES,
            WRITE_AMPLIFICATION,
            DEVICE_WRITE_BYTES_TOTAL,
            WRITE_AMPLIFICATION_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::simple("backup", Kind::Backup)
                .with_params(&BackupParams::default())
                .opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"backup\"\nkind = \"backup\"\nsize = \"256M\"\nfiles = 8"
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        let mut p = base.map(params).unwrap_or_default();
        if let Some(v) = t.remove("size") {
            p.bytes = crate::units::toml_size(&v).map_err(|e| format!("size: {e}"))?;
        }
        if let Some(v) = t.remove("files") {
            p.files = v
                .as_integer()
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| format!("files: {v} is not a count (1 or more)"))?;
        }
        p.validate()?;
        *spec = std::mem::replace(spec, WorkloadSpec::simple("", Kind::Backup)).with_params(&p);
        Ok(())
    }
    fn refused_on_dir(&self, _: &WorkloadSpec) -> Option<&'static str> {
        Some(
            "it snapshots with the setup's filesystem and receives on a second image that \
             filesystem formats, and a --dir target has no filesystem fsbench made; run it \
             on an image (the default) or --device",
        )
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        // Write, rewrite 61 %, send the data and the 50 %, the quarter-size duplicates. On a
        // quiet 2-core VM (--profile backup, 256 MiB) a step took 2 s on ext4 and XFS (no
        // send), 15 s on zfs-fuse and 30 s on Btrfs; this is their mean.
        let mib = (params(w).bytes >> 20) as f64;
        Cost::Seconds(2.0 + mib * 0.035)
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p = params(w);
        format!(
            "snapshot {} in {} files, its space after 1/10/50 % rewritten, full and incremental send/receive to a second image, reflink copy and dedupe, fstrim and balance",
            format_size(p.bytes),
            p.files
        )
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let setup = cx.setup;
        super::run(
            &Where {
                fs: cx.driver(&w.id)?,
                setup,
                dir: cx.work.dir,
                root: cx.root,
                scratch: cx.scratch,
                seed: cx.work.seed,
                timeout: cx.tool_timeout,
            },
            &params(w),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_keys_set_the_sizes_and_bad_ones_are_refused() {
        let mut t: toml::Table = toml::from_str("size = \"32M\"\nfiles = 4").unwrap();
        let mut spec = WorkloadSpec::simple("backup", Kind::Backup);
        Backup.take_params(&mut t, None, &mut spec).unwrap();
        assert!(t.is_empty());
        assert_eq!(
            params(&spec),
            BackupParams {
                bytes: 32 << 20,
                files: 4
            }
        );
        let mut t: toml::Table = toml::from_str("size = \"1M\"").unwrap();
        let err = Backup.take_params(&mut t, None, &mut spec).unwrap_err();
        assert!(err.contains("too small"), "{err}");
    }
}
