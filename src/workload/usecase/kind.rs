//! Registry entries of the use-case families: `git` (source trees and builds), `maildir` and
//! `postmark` (mail), `logs`. Their parameters live in [`WorkloadSpec::kind_params`].

use super::git::GitParams;
use super::logs::LogParams;
use super::mail::MailParams;
use super::postmark::PostmarkParams;
use crate::host::packages::{Package, Tool};
use crate::metrics::MetricId;
use crate::workload::api::{
    Caches, Cost, Describe, Family, Headline, Kind, Names, Needs, Question, Workload,
    WorkloadOutput,
};
use crate::workload::spec::{JobDefaults, WorkloadSpec};
use crate::workload::step::StepContext;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The kinds this module implements, by their plan-file names (see [`Kind`]).
#[allow(non_upper_case_globals)]
impl Kind {
    /// Real git on a generated repository: clone, checkout, status, gc, a build.
    pub const Git: Kind = Kind::named("git");
    /// Maildir delivery, reading, flags, expunge.
    pub const Maildir: Kind = Kind::named("maildir");
    /// Debian's PostMark, the mail cross-check.
    pub const Postmark: Kind = Kind::named("postmark");
    /// Log appenders, rotation, tail followers.
    pub const Logs: Kind = Kind::named("logs");
}

/// The parameters of `w`, its kind's defaults where the plan gave none.
fn params<T: DeserializeOwned + Default>(w: &WorkloadSpec) -> T {
    w.params_of::<T>().unwrap_or_default()
}

/// `take_params` of every family: the catalog workload's (or the default) parameters, then
/// the table's keys over them.
fn take<T: DeserializeOwned + Default + Serialize>(
    t: &mut toml::Table,
    base: Option<&WorkloadSpec>,
    spec: &mut WorkloadSpec,
    take_from: impl FnOnce(&mut T, &mut toml::Table) -> Result<(), String>,
) -> Result<(), String> {
    let mut p: T = base.map(params).unwrap_or_default();
    take_from(&mut p, t)?;
    spec.set_params(&p);
    Ok(())
}

/// Needs of a family that writes in the data directory and runs `tool` (if any).
fn writes_with(tool: Option<&'static str>) -> Needs {
    Needs {
        tool,
        ..Needs::WRITES
    }
}

fn installed(tool: &str) -> Result<(), String> {
    if crate::host::packages::present(tool) {
        Ok(())
    } else {
        Err(format!(
            "{tool} is not installed (fsbench doctor --install-missing installs it)"
        ))
    }
}

/// Real git on the filesystem under test ([`super::git`]).
pub struct Git;

impl Workload for Git {
    fn kind(&self) -> Kind {
        Kind::Git
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("files", "files in the generated tree"),
            ("commits", "commits in its history"),
            ("changes", "files changed per commit"),
            (
                "revisions",
                "checkouts across the history (fewer than commits)",
            ),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Builds
    }
    fn names(&self, id: &str) -> Option<Names> {
        (id == "git").then_some(Names {
            label: "git clone, checkout, status, gc and a build",
            short: "git",
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 70,
                workload: "git",
                metrics: &[GIT_CLONE_SECONDS],
                label: "git clone --no-hardlinks",
            },
            Headline {
                rank: 71,
                workload: "git",
                metrics: &[GIT_CHECKOUT_SECONDS],
                label: "git checkout across revisions",
            },
            Headline {
                rank: 72,
                workload: "git",
                metrics: &[GIT_STATUS_COLD_SECONDS],
                label: "git status, cold cache",
            },
            Headline {
                rank: 73,
                workload: "git",
                metrics: &[GIT_STATUS_WARM_SECONDS],
                label: "git status, warm cache",
            },
            Headline {
                rank: 74,
                workload: "git",
                metrics: &[BUILD_SECONDS],
                label: "Build-shaped I/O (objects and an archive)",
            },
        ];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        writes_with(Some("git"))
    }
    fn packages(&self) -> &'static [Tool] {
        const GIT: &[Tool] = &[Tool::new("git", Package::everywhere("git"))];
        GIT
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            GIT_CLONE_SECONDS,
            GIT_CHECKOUT_SECONDS,
            GIT_STATUS_COLD_SECONDS,
            GIT_STATUS_WARM_SECONDS,
            GIT_GC_SECONDS,
            BUILD_SECONDS,
            BUILD_FILES_PER_S,
            ENTRIES,
            SECONDS,
            DEVICE_WRITE_BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::simple("git", Kind::Git)
                .with_params(&GitParams::default())
                .opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"git-small\"\nkind = \"git\"\nfiles = 2000\ncommits = 200\nchanges = 10\nrevisions = 5"
    }
    /// Calibrated loosely on a loaded 2-core VM (docs/usecases.md): per file for the clone,
    /// status, gc and build, per changed file for the checkouts.
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        let p: GitParams = params(w);
        // Calibrated on a quiet 2-core VM (2026-12-02, --profile build): 13.5–15.3 s a step on
        // ext4, XFS and Btrfs, 72 s on zfs-fuse; this is the four's mean.
        Cost::Seconds(
            2.0 + f64::from(p.files) * 0.0008
                + f64::from(p.commits) * f64::from(p.changes) / 1000.0,
        )
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p: GitParams = params(w);
        format!(
            "git: clone (--no-hardlinks) of a generated repository ({} files, {} commits of {} changes), checkout across {} revisions, status cold and warm, gc, build-shaped I/O",
            p.files, p.commits, p.changes, p.revisions
        )
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        take(t, base, spec, GitParams::take_from)
    }
    fn available(&self, _: &WorkloadSpec) -> Result<(), String> {
        installed("git")
    }
    /// Generating the source repository (once, into the cache) is not part of the step.
    fn prepare(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<Caches> {
        super::git::source_repo(
            &super::git::cache_dir(cx.scratch),
            &params(w),
            cx.tool_timeout,
        )?;
        Ok(Caches::Drop)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        let p: GitParams = params(w);
        let source =
            super::git::source_repo(&super::git::cache_dir(cx.scratch), &p, cx.tool_timeout)?;
        super::git::run(cx.work.dir, &source, &p, &w.id, cx.tool_timeout)
    }
}

/// Maildir delivery, reading, flags and expunge ([`super::mail`]).
pub struct Maildir;

impl Workload for Maildir {
    fn kind(&self) -> Kind {
        Kind::Maildir
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("messages", "messages delivered"),
            ("deliverers", "concurrent deliverers"),
            ("flag_share", "share of messages whose flags change"),
            ("expunge_share", "share of messages expunged"),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Mail
    }
    fn names(&self, id: &str) -> Option<Names> {
        (id == "maildir").then_some(Names {
            label: "maildir delivery (fsync'd), reading, flags, expunge",
            short: "maildir",
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 75,
                workload: "maildir",
                metrics: &[DELIVERIES_PER_S],
                label: "Maildir deliveries/s, concurrent deliverers",
            },
            Headline {
                rank: 76,
                workload: "maildir",
                metrics: &[LAT_P99_MS],
                label: "Maildir delivery p99 latency",
            },
        ];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        writes_with(None)
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            DELIVERIES_PER_S,
            LAT_P99_MS,
            LAT_MEAN_MS,
            LAT_P50_MS,
            MAIL_READ_SECONDS,
            MAIL_FLAG_SECONDS,
            MAIL_EXPUNGE_SECONDS,
            SECONDS,
            ENTRIES,
            BYTES,
            DEVICE_WRITE_BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::simple("maildir", Kind::Maildir)
                .with_params(&MailParams::default())
                .opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"maildir-small\"\nkind = \"maildir\"\nmessages = 500\ndeliverers = 8\nflag_share = 0.5\nexpunge_share = 0.25"
    }
    /// About 100 fsync'd deliveries per second, with reading, flags and expunge, on a loaded
    /// VM's loop image (docs/usecases.md: 50–165 deliveries/s).
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        let p: MailParams = params(w);
        // Quiet 2-core VM (--profile mail): 4.7–7 s a step on ext4, XFS, zfs-fuse, 31 s on
        // Btrfs; this is their mean.
        Cost::Seconds(1.0 + f64::from(p.messages) / 400.0)
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p: MailParams = params(w);
        format!(
            "maildir: {} messages by {} deliverers (tmp/, fsync, rename to new/, fsync new/), read cold, {:.0} % flagged, {:.0} % expunged",
            p.messages,
            p.deliverers,
            p.flag_share * 100.0,
            p.expunge_share * 100.0
        )
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        take(t, base, spec, MailParams::take_from)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        super::mail::run(cx.work.dir, &params(w), &w.id, cx.work.seed)
    }
}

/// Debian's PostMark, the mail cross-check ([`super::postmark`]).
pub struct Postmark;

impl Workload for Postmark {
    fn kind(&self) -> Kind {
        Kind::Postmark
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("files", "PostMark's initial files"),
            ("transactions", "PostMark's transactions"),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Mail
    }
    fn names(&self, id: &str) -> Option<Names> {
        (id == "postmark").then_some(Names {
            label: "PostMark (mail-server small-file transactions)",
            short: "postmark",
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[Headline {
            rank: 77,
            workload: "postmark",
            // PostMark's own rate is whole transactions over whole seconds (10,000 or 6,666
            // at quick sizes); the step's wall time is measured to the microsecond.
            metrics: &[SECONDS],
            label: "PostMark whole run (create, transactions, delete)",
        }];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        writes_with(Some("postmark"))
    }
    // Packaged by Debian only.
    fn packages(&self) -> &'static [Tool] {
        const POSTMARK: &[Tool] = &[Tool::new(
            "postmark",
            Package {
                apt: "postmark",
                dnf: "",
                zypper: "",
                pacman: "",
            },
        )];
        POSTMARK
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            POSTMARK_TX_PER_S,
            SECONDS,
            DEVICE_WRITE_BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::simple("postmark", Kind::Postmark)
                .with_params(&PostmarkParams::default())
                .opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"postmark-small\"\nkind = \"postmark\"\nfiles = 500\ntransactions = 2000"
    }
    /// About 500 transactions per second, plus creating and deleting the pool (a loaded VM's
    /// loop image gave 230–710 tx/s).
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        let p: PostmarkParams = params(w);
        // Quiet 2-core VM (--profile mail): 3.5–5.7 s a step on ext4, XFS, Btrfs, 28 s on
        // zfs-fuse; this is their mean.
        Cost::Seconds(1.0 + f64::from(p.transactions) / 2500.0 + f64::from(p.files) / 5000.0)
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p: PostmarkParams = params(w);
        format!(
            "postmark: {} files of 500 B–100 KB, {} transactions",
            p.files, p.transactions
        )
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        take(t, base, spec, PostmarkParams::take_from)
    }
    fn available(&self, _: &WorkloadSpec) -> Result<(), String> {
        installed("postmark")
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        super::postmark::run(cx.work.dir, &params(w), cx.work.seed, cx.tool_timeout)
    }
}

/// Appenders, rotation and tail followers ([`super::logs`]).
pub struct Logs;

impl Workload for Logs {
    fn kind(&self) -> Kind {
        Kind::Logs
    }
    fn keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("appenders", "appending writers"),
            ("readers", "tail followers"),
            ("commit_records", "records between fdatasyncs"),
            ("rotate_bytes", "rotate a log at this size (\"4M\")"),
            ("keep", "rotated logs kept"),
            ("seconds", "how long it runs"),
        ]
    }
    fn family(&self) -> Family {
        Family::Application
    }
    fn question(&self, _: &serde_json::Value) -> Question {
        Question::Logs
    }
    fn names(&self, id: &str) -> Option<Names> {
        (id == "logs").then_some(Names {
            label: "log appenders (fdatasync'd commits), rotation, tail followers",
            short: "logs",
        })
    }
    fn headlines(&self) -> &'static [Headline] {
        use crate::metrics::registry::*;
        const ROWS: &[Headline] = &[
            Headline {
                rank: 78,
                workload: "logs",
                metrics: &[RECORDS_PER_S],
                label: "Log records/s, fdatasync'd commits",
            },
            Headline {
                rank: 79,
                workload: "logs",
                metrics: &[LAT_P99_MS],
                label: "Log commit p99 latency",
            },
        ];
        ROWS
    }
    fn needs(&self, _: &WorkloadSpec) -> Needs {
        writes_with(None)
    }
    fn emits(&self) -> &'static [MetricId] {
        use crate::metrics::registry::*;
        &[
            RECORDS_PER_S,
            LAT_P99_MS,
            LAT_MEAN_MS,
            LAT_P50_MS,
            TAIL_RECORDS_PER_S,
            ROTATIONS,
            FSYNCS,
            SECONDS,
            BYTES,
            DEVICE_WRITE_BYTES,
            DEVICE_WRITE_BYTES_TOTAL,
        ]
    }
    fn shipped(&self) -> Vec<WorkloadSpec> {
        vec![
            WorkloadSpec::simple("logs", Kind::Logs)
                .with_params(&LogParams::default())
                .opt(),
        ]
    }
    fn example(&self) -> &'static str {
        "id = \"logs-small\"\nkind = \"logs\"\nappenders = 2\nreaders = 1\ncommit_records = 16\nrotate_bytes = 1048576\nkeep = 2\nseconds = 3"
    }
    fn cost(&self, w: &WorkloadSpec, _: &JobDefaults) -> Cost {
        let p: LogParams = params(w);
        Cost::Seconds(1.0 + f64::from(p.seconds))
    }
    fn describe(&self, w: &WorkloadSpec, _: &Describe<'_>) -> String {
        let p: LogParams = params(w);
        format!(
            "logs: {} appenders, fdatasync every {} records, rotation at {} keeping {} (gzip), {} tail followers, {} s",
            p.appenders,
            p.commit_records,
            crate::units::format_size(p.rotate_bytes),
            p.keep,
            p.readers,
            p.seconds
        )
    }
    fn take_params(
        &self,
        t: &mut toml::Table,
        base: Option<&WorkloadSpec>,
        spec: &mut WorkloadSpec,
    ) -> Result<(), String> {
        take(t, base, spec, LogParams::take_from)
    }
    fn run(&self, cx: &mut StepContext<'_>, w: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
        super::logs::run(cx.work.dir, &params(w), &w.id, cx.work.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_s_keys_override_the_catalog_s() {
        let base = Git.shipped().remove(0);
        let mut spec = WorkloadSpec::simple("g", Kind::Git);
        let mut t: toml::Table = toml::from_str("files = 30\ncommits = 12").unwrap();
        Git.take_params(&mut t, Some(&base), &mut spec).unwrap();
        assert!(t.is_empty());
        let p: GitParams = spec.params_of().unwrap();
        assert_eq!((p.files, p.commits, p.changes), (30, 12, 10));
        assert_eq!(spec.id, "g");
        let mut t: toml::Table = toml::from_str("flag_share = 2").unwrap();
        let err = Maildir
            .take_params(&mut t, None, &mut WorkloadSpec::simple("m", Kind::Maildir))
            .unwrap_err();
        assert!(err.contains("flag_share"), "{err}");
    }
}
