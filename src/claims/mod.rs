//! The published claims, checked on this disk.
//!
//! The four comparisons the project started from make concrete claims ("ext4 deletes a tree
//! 2.3x faster than XFS", "ZFS recordsize=16K doubles 4K random I/O"), and several contradict
//! each other. They ship as data (`claims.toml`, embedded in the binary); [`evaluate`] turns a
//! results file into one [`Verdict`] per claim: confirmed, refuted, inconclusive, or not measured
//! when the run lacks a setup or workload the claim needs. Nothing is guessed: a claim whose
//! inputs are missing says which.
//!
//! How to add a claim: append a `[[claim]]` table to `claims.toml` (its header documents the
//! fields), or for a claim about one workload kind alone to the kind's own `claims.toml` in its
//! folder (`Workload::claims`); the unit tests check that every claim parses and names a known assertion.

pub mod aging;
pub mod coverage;
pub mod render;
pub mod statements;
pub mod subset;
mod verdict;
pub use verdict::claim_verdict;

pub use verdict::{ClaimResult, Outcome, evaluate};

#[cfg(test)]
mod wording;

use crate::metrics::MetricId;
use serde::Deserialize;

/// The shipped claims file.
const CLAIMS_TOML: &str = include_str!("claims.toml");

/// One testable claim.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Stable id.
    pub id: String,
    /// Seed file and section.
    pub source: String,
    /// The claim in one line.
    pub claim: String,
    /// Selector of the setup in the numerator (or the only setup).
    pub a: String,
    /// Selector of the setup in the denominator; none for a claim about one setup's value.
    #[serde(default)]
    pub b: Option<String>,
    /// Workload id.
    pub workload: String,
    /// Metric id (parsing refuses one `metrics::registry` does not declare).
    pub metric: MetricId,
    /// What the ratio (or value) must do.
    #[serde(rename = "assert")]
    pub assertion: Assertion,
    /// Bound of `above` / `below`.
    #[serde(default)]
    pub threshold: Option<f64>,
    /// Lower bound of `between`.
    #[serde(default)]
    pub low: Option<f64>,
    /// Upper bound of `between`.
    #[serde(default)]
    pub high: Option<f64>,
    /// The seed's own figures, as it printed them.
    pub seed_figure: String,
    /// The ratio (or value) the seed's figures imply; 0 when it gave none.
    pub seed_ratio: f64,
    /// What a run must contain to measure it, for the "not measured" line.
    #[serde(default)]
    pub needs: Option<String>,
    /// Claims that contradict each other share a group.
    #[serde(default)]
    pub group: Option<String>,
    /// The magnitude the claim's wording gives ("about 2.3x faster"), as the ratio a/b (or the
    /// value, for one setup): judged against [`Claim::size_band`] beside the direction.
    #[serde(default)]
    pub size: Option<f64>,
    /// What the claim only holds on (host facts a results file records); elsewhere it is
    /// "not comparable here".
    #[serde(default)]
    pub requires: Vec<Requirement>,
    /// The kernel version the claim's setup exists only before (`"4.19"`: a mount option since
    /// removed); on that kernel or a later one the claim is "not comparable here".
    #[serde(default)]
    pub kernel_before: Option<String>,
    /// Why [`Claim::kernel_before`] makes it untestable, in words.
    #[serde(default)]
    pub removed: Option<String>,
    /// The rows of the seeds' statement table (`tests/fixtures/seed-statements.tsv`) this
    /// claim checks, so `fsbench claims` can say which statements have a verdict.
    #[serde(default)]
    pub statements: Vec<String>,
}

pub use crate::host::provenance::kernel_version;

/// A condition a claim's article measured under, checked against a results file's host facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Requirement {
    /// Every ZFS setup of the claim is kernel OpenZFS, not zfs-fuse (a FUSE daemon's figures
    /// say nothing about OpenZFS's).
    Openzfs,
    /// The target is a real block device (`--device`), not an image on a loop device or a
    /// directory: schedulers and device caches act on a real queue only.
    RealDevice,
    /// The target reports itself rotational (a claim about mounting options for spinning disks).
    Rotational,
    /// The target reports itself non-rotational (flash).
    NonRotational,
}

impl Requirement {
    /// What the requirement asks, in words ("kernel OpenZFS, not zfs-fuse").
    pub fn words(self) -> &'static str {
        match self {
            Requirement::Openzfs => "kernel OpenZFS, not zfs-fuse",
            Requirement::RealDevice => "a real block device, not a loop image or a directory",
            Requirement::Rotational => "a device that reports rotational",
            Requirement::NonRotational => "a non-rotational device",
        }
    }
}

/// How far the article's figure may be from the measured ratio for its size to hold: the
/// effect (the log of the ratio) within a third of itself, and never narrower than ±5 %.
/// "about 2.3x" accepts 1.74–3.04, "about a third" 0.23–0.48, "about 13 %" 1.08–1.19.
pub fn size_band(figure: f64) -> (f64, f64) {
    let half = (figure.ln().abs() / 3.0).max(1.05f64.ln());
    (figure * (-half).exp(), figure * half.exp())
}

/// The comparison a claim asserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Assertion {
    /// The ratio exceeds `threshold`.
    Above,
    /// The ratio stays under `threshold`.
    Below,
    /// The ratio lies within `[low, high]` (a tie, or "about N %").
    Between,
}

impl Claim {
    /// The accepted range of the ratio, as `(low, high)`; open ends are infinite.
    pub fn range(&self) -> (f64, f64) {
        match self.assertion {
            Assertion::Above => (self.threshold.unwrap_or(f64::NAN), f64::INFINITY),
            Assertion::Below => (f64::NEG_INFINITY, self.threshold.unwrap_or(f64::NAN)),
            Assertion::Between => (self.low.unwrap_or(f64::NAN), self.high.unwrap_or(f64::NAN)),
        }
    }

    /// The direction's region, for [`crate::stats::region::judge`].
    pub fn region(&self) -> crate::stats::region::Region {
        use crate::stats::region::Region;
        let (lo, hi) = self.range();
        match self.assertion {
            Assertion::Above => Region::above(lo),
            Assertion::Below => Region::below(hi),
            Assertion::Between => Region::between(lo, hi),
        }
    }

    /// The size band around [`Claim::size`], when the wording gives a magnitude.
    pub fn size_region(&self) -> Option<crate::stats::region::Region> {
        let (lo, hi) = size_band(self.size?);
        Some(crate::stats::region::Region::between(lo, hi))
    }

    /// The assertion in words: "> 1.05", "< 0.2", "0.90–1.11".
    pub fn expectation(&self) -> String {
        let (lo, hi) = self.range();
        match self.assertion {
            Assertion::Above => format!("> {}", trim(lo)),
            Assertion::Below => format!("< {}", trim(hi)),
            Assertion::Between => format!("{}–{}", trim(lo), trim(hi)),
        }
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimsFile {
    claim: Vec<Claim>,
}

/// Every shipped claim (`claims.toml`'s, then the workload kinds' own), in file order, except
/// that the claims of a contradiction group follow its first member (reports show them side by
/// side, marked ↔).
pub fn all() -> Vec<Claim> {
    let f: ClaimsFile = toml::from_str(CLAIMS_TOML).expect("claims.toml is checked by its tests");
    let mut claims = f.claim;
    // Then the kinds' own (`Workload::claims`), in registry order.
    for w in crate::workload::registry::entries() {
        if !w.claims().is_empty() {
            let own: ClaimsFile = toml::from_str(w.claims())
                .unwrap_or_else(|e| panic!("kind {}'s claims: {e}", w.name()));
            claims.extend(own.claim);
        }
    }
    coverage::side_by_side(claims)
}

/// A parsed setup selector: `FS` or `FS+KEY:VALUE+KEY:VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// Filesystem driver name.
    pub fs: String,
    /// Variant options the setup must carry, as (key, value).
    pub options: Vec<(String, String)>,
}

impl Selector {
    /// Parse `ext4`, `btrfs+mount:ssd`, `zfs+recordsize:16K`.
    pub fn parse(s: &str) -> Selector {
        let mut parts = s.split('+');
        let fs = parts.next().unwrap_or_default().to_string();
        let options = parts
            .filter_map(|p| p.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Selector { fs, options }
    }

    /// The setup of `setups` it picks: of those that match, the one with the fewest mount
    /// options beyond the selector's, so `ext4+mount:data=writeback` takes the setup mounted
    /// `data=writeback` over one mounted `data=writeback,barrier=0` (first listed on a tie).
    pub fn find<'a>(
        &self,
        setups: &'a [crate::results::SetupInfo],
    ) -> Option<&'a crate::results::SetupInfo> {
        let wanted = self
            .options
            .iter()
            .find(|(k, _)| k == "mount")
            .map_or(0, |(_, v)| v.split(',').count());
        setups
            .iter()
            .filter(|s| self.matches(&s.fs, &s.options))
            .min_by_key(|s| {
                s.options
                    .get("mount")
                    .map_or(0, |m| m.split(',').count())
                    .saturating_sub(wanted)
            })
    }

    /// Whether a setup (driver and the variant options as the user wrote them) matches.
    ///
    /// A bare `FS` matches only the filesystem with no options at all, so "ext4" never
    /// silently picks `ext4 data=writeback`. Mount options match item by item in the comma
    /// list; other keys match when equal, ignoring case (`16K` = `16k`).
    pub fn matches(&self, fs: &str, options: &std::collections::BTreeMap<String, String>) -> bool {
        if fs != self.fs {
            return false;
        }
        if self.options.is_empty() {
            return options.is_empty();
        }
        options.len() == self.options.len()
            && self.options.iter().all(|(k, v)| {
                options.get(k).is_some_and(|have| {
                    if k == "mount" {
                        let want: Vec<&str> = v.split(',').collect();
                        want.iter().all(|w| have.split(',').any(|h| h == *w))
                    } else {
                        have.eq_ignore_ascii_case(v)
                    }
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn a_kinds_own_claims_join_the_shipped_ones() {
        // The crash kind keeps its claims in its folder (`Workload::claims`).
        let crash = crate::workload::registry::of(crate::workload::api::Kind::Crash);
        assert!(crash.claims().contains("ext4-writeback-keeps-fsynced"));
        assert!(!CLAIMS_TOML.contains("id = \"ext4-writeback-keeps-fsynced\""));
        let ids: Vec<String> = all().into_iter().map(|c| c.id).collect();
        assert!(
            ids.iter().any(|i| i == "ext4-writeback-keeps-fsynced"),
            "{ids:?}"
        );
    }

    #[test]
    fn every_claim_parses_and_is_complete() {
        let claims = all();
        assert!(claims.len() >= 20, "{} claims", claims.len());
        let mut ids = BTreeSet::new();
        for c in &claims {
            assert!(ids.insert(c.id.clone()), "duplicate id {}", c.id);
            let (lo, hi) = c.range();
            assert!(
                !lo.is_nan() && !hi.is_nan() && lo < hi,
                "{}: bad bounds",
                c.id
            );
            assert!(!c.claim.is_empty() && !c.seed_figure.is_empty(), "{}", c.id);
        }
        // Every seed is represented.
        for seed in ["000", "001", "003", "004"] {
            assert!(
                claims.iter().any(|c| c.source.contains(seed)),
                "seed {seed}"
            );
        }
        // Contradicting claims come in groups of at least two.
        let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &claims {
            if let Some(g) = &c.group {
                *groups.entry(g).or_default() += 1;
            }
        }
        assert!(
            groups.len() >= 3 && groups.values().all(|&n| n >= 2),
            "{groups:?}"
        );
    }

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(kernel_version("6.18.0-1-amd64"), Some((6, 18)));
        assert_eq!(kernel_version("4.19"), Some((4, 19)));
        assert_eq!(kernel_version("4.9.337"), Some((4, 9)));
        assert!(kernel_version("4.9") < kernel_version("4.19"));
        assert_eq!(kernel_version(""), None);
    }

    #[test]
    fn a_selector_prefers_the_setup_with_fewest_extra_mount_options() {
        let setup = |name: &str, mount: &str| crate::results::SetupInfo {
            name: name.into(),
            fs: "ext4".into(),
            options: [("mount".to_string(), mount.to_string())].into(),
            ..Default::default()
        };
        let setups = [
            setup("nobarrier", "data=writeback,barrier=0"),
            setup("writeback", "data=writeback"),
        ];
        let pick = |sel: &str| Selector::parse(sel).find(&setups).map(|s| s.name.clone());
        assert_eq!(
            pick("ext4+mount:data=writeback").as_deref(),
            Some("writeback")
        );
        assert_eq!(
            pick("ext4+mount:data=writeback,barrier=0").as_deref(),
            Some("nobarrier")
        );
        assert_eq!(pick("ext4"), None);
    }

    #[test]
    fn selectors_match_exactly() {
        let opts = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let plain = Selector::parse("ext4");
        assert!(plain.matches("ext4", &opts(&[])));
        assert!(!plain.matches("ext4", &opts(&[("mount", "data=writeback")])));
        assert!(!plain.matches("xfs", &opts(&[])));
        let ssd = Selector::parse("btrfs+mount:ssd");
        assert!(ssd.matches("btrfs", &opts(&[("mount", "noatime,ssd")])));
        assert!(!ssd.matches("btrfs", &opts(&[("mount", "nossd")])));
        let zfs = Selector::parse("zfs+recordsize:16K");
        assert!(zfs.matches("zfs", &opts(&[("recordsize", "16k")])));
        assert!(!zfs.matches(
            "zfs",
            &opts(&[("recordsize", "16k"), ("compression", "off")])
        ));
        let zstd = Selector::parse("btrfs+mount:compress=zstd:3");
        assert_eq!(
            zstd.options,
            [("mount".to_string(), "compress=zstd:3".to_string())]
        );
    }

    /// Claims whose workload the claims profile does not run: the crash workloads are opt-in,
    /// with setups of their own (docs/crash.md), and `tests/crash.rs` measures their claims.
    const OUTSIDE_CLAIMS_PROFILE: &[&str] = &[
        "crash-fsync",
        "crash-append",
        "crash-pgbench",
        // Source trees and mail: their own profiles (build, mail) measure them.
        "git",
        "maildir",
        // Snapshots and backups: its own profile, `backup` (docs/backups.md).
        "backup",
    ];

    #[test]
    fn the_claims_profile_measures_every_claim() {
        let plan = crate::plan::profiles::load("claims").unwrap();
        let ids: Vec<&str> = plan.workloads.iter().map(|w| w.id.as_str()).collect();
        for c in all() {
            if OUTSIDE_CLAIMS_PROFILE.contains(&c.workload.as_str())
                || aging::tests::AGED_PROFILE_CLAIMS.contains(&c.id.as_str())
            {
                continue;
            }
            assert!(
                ids.contains(&c.workload.as_str()),
                "{}: workload {} not in the claims profile {ids:?}",
                c.id,
                c.workload
            );
            for sel in std::iter::once(&c.a).chain(c.b.as_ref()) {
                let s = Selector::parse(sel);
                let hits: Vec<&str> = plan
                    .setups
                    .iter()
                    .filter(|set| s.matches(&set.fs, &set.raw))
                    .map(|set| set.name.as_str())
                    .collect();
                assert_eq!(hits.len(), 1, "{}: selector {sel} matches {hits:?}", c.id);
            }
        }
        // A baseline a workload divides by must run too.
        for w in &plan.workloads {
            if let Some(b) = &w.baseline {
                assert!(ids.contains(&b.as_str()), "{}: baseline {b} missing", w.id);
            }
        }
    }

    /// Each workload of the claims profile runs exactly where its claims compare (plus what its
    /// dependents need: the data file, the unpacked tree, a baseline), so the profile's cost
    /// follows the claims: a workload left on every setup, or on a setup no claim reads, fails.
    #[test]
    fn the_claims_profile_runs_each_workload_only_where_its_claims_compare() {
        use crate::workload::registry::{self, Phase};
        let plan = crate::plan::profiles::load("claims").unwrap();
        let claims = all();
        let mut want: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for c in &claims {
            for sel in std::iter::once(&c.a).chain(c.b.as_ref()) {
                let s = Selector::parse(sel);
                for set in plan
                    .setups
                    .iter()
                    .filter(|set| s.matches(&set.fs, &set.raw))
                {
                    want.entry(c.workload.as_str())
                        .or_default()
                        .insert(set.name.as_str());
                }
            }
        }
        // Dependents first: a baseline or a prerequisite runs wherever what needs it runs
        // (iterated, since a baseline can need the data file in turn).
        for _ in 0..3 {
            for w in &plan.workloads {
                let Some(mine) = want.get(w.id.as_str()).cloned() else {
                    continue;
                };
                let mut needed: Vec<&str> = w.requires();
                needed.extend(w.baseline.as_deref());
                for id in needed {
                    want.entry(id).or_default().extend(mine.iter().copied());
                }
            }
        }
        for w in &plan.workloads {
            if registry::of(w.kind).needs(w).phase == Phase::Setup {
                // mkfs is timed on every setup anyway.
                continue;
            }
            let have: BTreeSet<&str> = w.setups.iter().map(String::as_str).collect();
            let wanted = want.get(w.id.as_str()).cloned().unwrap_or_default();
            assert!(!wanted.is_empty(), "{}: no claim reads it", w.id);
            assert_eq!(have, wanted, "{}: setups = {:?}", w.id, wanted);
        }
        // Every setup is there for a claim.
        for set in &plan.setups {
            assert!(
                claims.iter().any(|c| std::iter::once(&c.a)
                    .chain(c.b.as_ref())
                    .any(|sel| Selector::parse(sel).matches(&set.fs, &set.raw))),
                "setup {} is selected by no claim",
                set.name
            );
        }
    }
}
