//! Profiles: TOML plans shipped inside the binary (`--profile NAME`), each its file here plus
//! the `[[workload]]` tables the workload kinds add to it from their own modules
//! (`Workload::profile_entries`).

use super::file::{PlanDraft, parse};

/// Every profile: (name, TOML text). `quick` is the default.
pub const PROFILES: &[(&str, &str)] = &[
    ("quick", include_str!("profiles/quick.toml")),
    ("standard", include_str!("profiles/standard.toml")),
    ("vps", include_str!("profiles/vps.toml")),
    ("nvme", include_str!("profiles/nvme.toml")),
    ("tuning", include_str!("profiles/tuning.toml")),
    ("db", include_str!("profiles/db.toml")),
    ("claims", include_str!("profiles/claims.toml")),
    // Containers and VM images.
    ("vm", include_str!("profiles/vm.toml")),
    ("containers", include_str!("profiles/containers.toml")),
    // Source trees, mail, logs, snapshots and backups.
    ("build", include_str!("profiles/build.toml")),
    ("mail", include_str!("profiles/mail.toml")),
    ("logs", include_str!("profiles/logs.toml")),
    ("backup", include_str!("profiles/backup.toml")),
    // Aging.
    ("aged", include_str!("profiles/aged.toml")),
];

/// The profile used when neither `--profile` nor `--plan` is given.
pub const DEFAULT: &str = "quick";

/// `--profile`'s long help: every shipped profile with its own description (one source: the
/// profile's TOML), so the help says what each one runs.
pub fn help() -> String {
    let mut s = String::from("A shipped profile (default: quick):");
    for (name, text) in PROFILES {
        let d = parse(text, name).map(|d| d.description).unwrap_or_default();
        s.push_str(&format!("\n  {name:<9} {d}"));
    }
    s
}

/// Names of the shipped profiles.
pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|(n, _)| *n).collect()
}

/// Every workload id of the built-in catalog and of the shipped profiles, sorted (the
/// suggestions for `--only` / `--skip`; a plan file may add its own).
pub fn workload_ids() -> Vec<String> {
    let mut ids: Vec<String> = super::workload::catalog()
        .into_iter()
        .map(|w| w.id)
        .collect();
    for n in names() {
        if let Ok(d) = load(n) {
            ids.extend(d.workloads.into_iter().map(|w| w.id));
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

/// Load a shipped profile by name.
pub fn load(name: &str) -> crate::Result<PlanDraft> {
    let (_, text) = PROFILES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        crate::Error::invalid(
            "--profile",
            format!(
                "unknown profile '{name}'; choose one of {}",
                names().join(", ")
            ),
        )
    })?;
    let text = format!("{text}{}", crate::workload::registry::profile_tables(name));
    parse(&text, &format!("profile {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::{Kind, standard_ids};

    #[test]
    fn every_profile_parses() {
        for n in names() {
            let d = load(n).unwrap_or_else(|e| panic!("profile {n}: {e}"));
            assert_eq!(d.name, n);
            assert!(!d.workloads.is_empty());
        }
        assert!(
            load("turbo")
                .unwrap_err()
                .to_string()
                .contains("quick, standard, vps, nvme, tuning, db, claims")
        );
    }

    #[test]
    fn kinds_add_tables_to_shipped_profiles_only() {
        for p in crate::workload::registry::profiles_joined() {
            assert!(
                names().contains(&p),
                "a kind adds to profile {p}, which is not shipped"
            );
        }
        // pgbench and sqlite declare their quick-sized, opt-in entries in their modules.
        let q = load("quick").unwrap();
        let rw = q.workloads.iter().find(|w| w.id == "pgbench-rw").unwrap();
        assert!(rw.optional);
        let wal = q.workloads.iter().find(|w| w.id == "sqlite-wal").unwrap();
        assert!(wal.optional);
    }

    #[test]
    fn quick_and_standard_are_the_standard_suite() {
        for n in ["quick", "standard"] {
            let d = load(n).unwrap();
            let ids: Vec<String> = d
                .workloads
                .iter()
                .filter(|w| !w.optional)
                .map(|w| w.id.clone())
                .collect();
            assert_eq!(ids, standard_ids());
        }
        // The default spends its time on rounds (docs/design-notes.md, "The default's design").
        assert_eq!(load("quick").unwrap().values.rounds, Some(5));
        let s = load("standard").unwrap();
        assert_eq!(s.values.rounds, Some(3));
        assert_eq!(s.values.runtime, Some(std::time::Duration::from_secs(60)));
        assert_eq!(s.values.ramp, Some(std::time::Duration::from_secs(10)));
    }

    #[test]
    fn tuning_varies_seed_001s_advice_against_the_defaults() {
        let t = load("tuning").unwrap();
        let ids: Vec<String> = t
            .workloads
            .iter()
            .filter(|w| !w.optional)
            .map(|w| w.id.clone())
            .collect();
        assert_eq!(ids, standard_ids(), "the I/O and metadata suites");
        let get = |n: &str| t.setups.iter().find(|s| s.name == n).unwrap();
        let host = |n: &str| {
            get(n)
                .host
                .iter()
                .map(|h| format!("{}={}", h.key, h.value))
                .collect::<Vec<_>>()
        };
        for (n, s) in [
            ("ext4-none", "none"),
            ("ext4-deadline", "mq-deadline"),
            ("ext4-bfq", "bfq"),
        ] {
            assert_eq!(host(n), [format!("sched={s}")]);
        }
        assert_eq!(
            host("ext4-dirty"),
            [
                "sysctl.vm.dirty_ratio=10",
                "sysctl.vm.dirty_background_ratio=5"
            ]
        );
        assert_eq!(get("xfs-logbsize").mount, ["logbsize=256k"]);
        assert_eq!(get("btrfs-discard").mount, ["discard=async"]);
        assert!(get("ext4").host.is_empty());
        assert!(
            get("ext4-commit60")
                .warnings
                .iter()
                .any(|w| w.contains("60 s"))
        );
    }

    #[test]
    fn db_profile_has_the_database_setups_and_workloads() {
        let d = load("db").unwrap();
        let names: Vec<_> = d.setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ext4",
                "ext4-writeback",
                "xfs",
                "btrfs",
                "btrfs-nocow",
                "zfs-8k",
                "zfs"
            ]
        );
        assert_eq!(d.setups[1].mount, ["data=writeback"]);
        assert!(d.setups[4].nocow());
        assert_eq!(
            d.setups[5].props.get("recordsize").map(String::as_str),
            Some("8K")
        );
        let ids: Vec<_> = d
            .workloads
            .iter()
            .filter(|w| !w.optional)
            .map(|w| w.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "pgbench-rw",
                "pgbench-ro",
                "sqlite-wal",
                "sqlite-delete",
                "layout",
                "fsync-write"
            ]
        );
        let rw: crate::workload::pgbench::PgbenchParams = d.workloads[0].params_of().unwrap();
        assert_eq!((rw.clients, rw.scale), (32, 10), "seed 004: 32 clients");
        assert_eq!(
            d.workloads[3]
                .params_of::<crate::workload::sqlite::SqliteParams>()
                .unwrap()
                .journal_mode,
            crate::workload::sqlite::JournalMode::Delete
        );
    }

    #[test]
    fn vps_and_nvme_follow_their_seeds() {
        let v = load("vps").unwrap();
        let names: Vec<_> = v.setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ext4", "xfs", "btrfs", "btrfs-zstd"]);
        assert_eq!(v.setups[3].mount, ["compress=zstd:3"]);
        let par = v.workloads.iter().find(|w| w.id == "par8-write").unwrap();
        let p = par.io_job().unwrap();
        assert_eq!((p.numjobs, p.iodepth, p.bs), (8, 4, 1 << 20));
        assert_eq!(par.baseline.as_deref(), Some("seqwrite"));
        let c = v
            .workloads
            .iter()
            .find(|w| w.kind == Kind::Compress)
            .unwrap();
        assert_eq!(c.own_size(), Some(1 << 30));
        let cap = v.workloads.iter().find(|w| w.kind == Kind::Memcap).unwrap();
        assert_eq!(cap.param::<u64>("memory_limit"), Some(512 << 20));
        let n = load("nvme").unwrap();
        let ids: Vec<_> = n.workloads.iter().map(|w| w.id.as_str()).collect();
        for id in [
            "randread-qd1",
            "randread-qd128",
            "randwrite-qd64",
            "randread-j8",
            "randwrite-j16",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        let qd128 = n
            .workloads
            .iter()
            .find(|w| w.id == "randread-qd128")
            .unwrap();
        let p = qd128.io_job().unwrap();
        assert!(p.direct && p.numjobs == 1 && p.iodepth == 128);
    }
}
