//! A setup's aging: `age=PROFILE[:AMOUNT[:FULLNESS%]][:layout=SCORE][:replicate=HOW]`
//! (`--fs 'ext4-aged=ext4:age=churn:3'`, `--age churn:1:75%:layout=0.6`, a `[[setup]]`'s
//! `age = "churn:3:replicate=restore"`), as plain data. Every driver takes the key
//! (it is part of the setup, not of a filesystem); `workload::age` does the aging and
//! `runner::age` runs it after mkfs + mount and before the workloads.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How an aged filesystem is aged: the kind of use a year of it resembles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeProfile {
    /// A source tree's history checked out revision after revision (Conway et al.).
    Git,
    /// Files created, appended, overwritten and deleted (Geriatrix, Impressions).
    Churn,
    /// Random overwrites inside large files (databases, VM images; hurts CoW).
    Overwrite,
    /// Holes punched and refilled (free-space fragmentation).
    Punch,
}

/// Every profile: its name as written and what it does (the one list messages and docs use).
pub const PROFILES: &[(AgeProfile, &str, &str)] = &[
    (
        AgeProfile::Git,
        "git",
        "a generated source tree's history checked out revision after revision (small files rewritten by rename, added, deleted)",
    ),
    (
        AgeProfile::Churn,
        "churn",
        "files of a log-normal size and random depth created, appended, overwritten and deleted around the target fullness",
    ),
    (
        AgeProfile::Overwrite,
        "overwrite",
        "random 4-64 KiB overwrites inside a few large files filling the target fullness",
    ),
    (
        AgeProfile::Punch,
        "punch",
        "holes of 4 KiB-1 MiB punched in files filling the target fullness and refilled elsewhere",
    ),
];

/// Data written by aging when AMOUNT is not given, as a multiple of the capacity. Conway et
/// al. age with far more (hundreds of pulls); one capacity keeps `--profile aged` near its
/// 30-minute budget on a 2-core VM and already moves every age measure (docs/aging.md).
pub const DEFAULT_AMOUNT: f64 = 1.0;
/// Fullness aging works around when not given, percent of the capacity (Geriatrix's and
/// the 75 %).
pub const DEFAULT_FULLNESS: f64 = 75.0;
/// The most an AMOUNT may ask for (a typo like `30` would take hours).
pub const MAX_AMOUNT: f64 = 20.0;
/// How the rounds of an aged setup get their aged filesystem when `replicate=` is not
/// given (docs/aging.md, "Replication": the measurement behind the choice).
pub const DEFAULT_REPLICATE: Replicate = Replicate::ReAge;

/// How each round of an aged setup gets its aged filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Replicate {
    /// Every round makes the filesystem and ages it again with its own seed: the rounds
    /// cover aging's own variation.
    #[default]
    #[serde(rename = "re-age")]
    ReAge,
    /// The first round ages and keeps an image of the aged filesystem; later rounds write
    /// it back to the device and mount it: the same layout every round, for less time.
    #[serde(rename = "restore")]
    Restore,
}

/// Every replication as written, and what it does (messages and docs).
pub const REPLICATES: &[(Replicate, &str)] = &[
    (Replicate::ReAge, "re-age"),
    (Replicate::Restore, "restore"),
];

impl Replicate {
    /// As written (`restore`).
    pub fn name(self) -> &'static str {
        REPLICATES
            .iter()
            .find(|(r, _)| *r == self)
            .map_or("?", |(_, n)| n)
    }
}

fn default_replicate() -> Replicate {
    DEFAULT_REPLICATE
}

/// One setup's aging, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AgeSpec {
    /// What kind of use.
    pub profile: AgeProfile,
    /// Data written, as a multiple of the filesystem's capacity.
    pub amount: f64,
    /// Fullness aging works around and leaves behind, percent.
    pub fullness: f64,
    /// The target's capacity in bytes as known when the plan was resolved (0: unknown),
    /// for the plan's estimate.
    #[serde(default)]
    pub capacity: u64,
    /// Stop early once the sampled layout score falls to this (`layout=0.6`), whichever of
    /// it and the amount comes first.
    #[serde(default)]
    pub stop_layout: Option<f64>,
    /// How the rounds after the first get their aged filesystem.
    #[serde(default = "default_replicate")]
    pub replicate: Replicate,
}

/// Aging's rate assumed by the plan's estimate on filesystem `fs`, MiB/s: the driver's
/// measured rate for the profile ([`crate::fs::caps::AgingEta`]).
fn eta_mib_s(p: AgeProfile, fs: &str) -> f64 {
    let r = crate::fs::driver(fs).map_or(crate::fs::caps::AgingEta::GUESS, |d| d.caps().eta.aging);
    match p {
        AgeProfile::Churn => r.churn,
        AgeProfile::Overwrite => r.overwrite,
        AgeProfile::Punch => r.punch,
        AgeProfile::Git => r.git,
    }
}

/// The rate assumed for keeping and for writing back an aged image, MiB/s of the used part
/// (sequential copies of large runs; loaded 2-core VM, loop image; docs/aging.md).
const RESTORE_MIB_S: f64 = 400.0;

impl AgeSpec {
    /// Bytes aging will write (amount × capacity; 0 when the capacity is unknown).
    pub fn bytes(&self) -> u64 {
        (self.amount * self.capacity as f64) as u64
    }

    /// Estimated seconds on filesystem `fs`, leaving `reserve` bytes written free: the
    /// writing at the driver's rate for the profile, the room check (the reserve written once
    /// at the churn rate, about a sequential write's), plus the age measures (a probe file
    /// before and after, the aged files mapped).
    pub fn estimate_seconds(&self, fs: &str, reserve: u64) -> f64 {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        mib(self.bytes()) / eta_mib_s(self.profile, fs)
            + mib(reserve) / eta_mib_s(AgeProfile::Churn, fs)
            + 5.0
    }

    /// Estimated seconds of copying the used part of an aged image once (keeping it, or
    /// writing it back).
    fn copy_seconds(&self) -> f64 {
        self.fullness / 100.0 * self.capacity as f64 / (1u64 << 20) as f64 / RESTORE_MIB_S
    }

    /// Estimated seconds of the aging step in `round` (1-based) of a plan of `rounds`:
    /// aging (and, with `replicate=restore` and rounds to come, keeping the image) in the
    /// first, writing it back in the others; a restore also measures the age (about as
    /// long as the fixed part).
    pub fn round_seconds(&self, fs: &str, reserve: u64, round: u32, rounds: u32) -> f64 {
        let aging = self.estimate_seconds(fs, reserve);
        match (self.replicate, round) {
            (Replicate::ReAge, _) => aging,
            (Replicate::Restore, 0 | 1) if rounds > 1 => aging + self.copy_seconds(),
            (Replicate::Restore, 0 | 1) => aging,
            (Replicate::Restore, _) => self.copy_seconds() + 5.0,
        }
    }
}

impl AgeProfile {
    /// The profile's name as written (`churn`).
    pub fn name(self) -> &'static str {
        PROFILES
            .iter()
            .find(|(p, _, _)| *p == self)
            .map_or("?", |(_, n, _)| n)
    }
}

impl std::fmt::Display for AgeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}%",
            self.profile.name(),
            self.amount,
            self.fullness
        )?;
        if let Some(s) = self.stop_layout {
            write!(f, ":layout={s}")?;
        }
        if self.replicate != DEFAULT_REPLICATE {
            write!(f, ":replicate={}", self.replicate.name())?;
        }
        Ok(())
    }
}

/// The syntax, for error messages.
const SYNTAX: &str = "PROFILE[:AMOUNT[:FULLNESS%]][:layout=SCORE][:replicate=re-age|restore]";

/// Parse `PROFILE[:AMOUNT[:FULLNESS%]][:layout=SCORE][:replicate=HOW]` (`churn`,
/// `overwrite:0.5`, `punch:2:60%`, `churn:3:75%:layout=0.6`, `git:replicate=restore`): the
/// positional parts in order, the named ones anywhere after the profile. `flag` names
/// where it came from in the error (`--age`, `--fs`).
pub fn parse(text: &str, flag: &str) -> Result<AgeSpec> {
    let mut parts = text.trim().split(':');
    let name = parts.next().unwrap_or("").trim();
    let names: Vec<&str> = PROFILES.iter().map(|(_, n, _)| *n).collect();
    let Some((profile, _, _)) = PROFILES.iter().find(|(_, n, _)| *n == name) else {
        return Err(Error::invalid(
            flag,
            format!(
                "unknown aging profile '{name}' in '{text}'; profiles: {} ({SYNTAX}, e.g. churn:1)",
                names.join(", ")
            ),
        ));
    };
    let mut spec = AgeSpec {
        profile: *profile,
        amount: DEFAULT_AMOUNT,
        fullness: DEFAULT_FULLNESS,
        capacity: 0,
        stop_layout: None,
        replicate: DEFAULT_REPLICATE,
    };
    let mut positional = 0;
    for part in parts.map(str::trim) {
        if let Some((key, value)) = part.split_once('=') {
            named(&mut spec, key.trim(), value.trim(), text, flag)?;
            continue;
        }
        positional += 1;
        match positional {
            1 => spec.amount = parse_amount(part, text, flag)?,
            2 => spec.fullness = parse_fullness(part, text, flag)?,
            _ => {
                return Err(Error::invalid(
                    flag,
                    format!("'{text}': unexpected ':{part}' ({SYNTAX})"),
                ));
            }
        }
    }
    Ok(spec)
}

/// AMOUNT: above 0, at most [`MAX_AMOUNT`], an optional `x`; empty is the default.
fn parse_amount(a: &str, text: &str, flag: &str) -> Result<f64> {
    if a.is_empty() {
        return Ok(DEFAULT_AMOUNT);
    }
    let v: f64 = a.trim_end_matches(['x', 'X']).parse().map_err(|_| {
        Error::invalid(
            flag,
            format!("'{text}': AMOUNT '{a}' is not a number (data written as a multiple of the capacity, e.g. 1 or 0.5x)"),
        )
    })?;
    if !(v > 0.0 && v <= MAX_AMOUNT) {
        return Err(Error::invalid(
            flag,
            format!(
                "'{text}': AMOUNT {a} must be above 0 and at most {MAX_AMOUNT} (times the capacity)"
            ),
        ));
    }
    Ok(v)
}

/// FULLNESS: 5–95 %, an optional `%`; empty is the default.
fn parse_fullness(p: &str, text: &str, flag: &str) -> Result<f64> {
    if p.is_empty() {
        return Ok(DEFAULT_FULLNESS);
    }
    let v: f64 = p.trim_end_matches('%').parse().map_err(|_| {
        Error::invalid(
            flag,
            format!("'{text}': FULLNESS '{p}' is not a percentage (e.g. 75%)"),
        )
    })?;
    if !(5.0..=95.0).contains(&v) {
        return Err(Error::invalid(
            flag,
            format!("'{text}': FULLNESS {p} must be between 5% and 95%"),
        ));
    }
    Ok(v)
}

/// A named part: `layout=SCORE` (above 0, below 1: a score of 1 is a fresh filesystem's)
/// or `replicate=re-age|restore`.
fn named(spec: &mut AgeSpec, key: &str, value: &str, text: &str, flag: &str) -> Result<()> {
    match key {
        "layout" => {
            let v: f64 = value.parse().map_err(|_| {
                Error::invalid(
                    flag,
                    format!("'{text}': layout='{value}' is not a number (the layout score to stop at, e.g. layout=0.6)"),
                )
            })?;
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::invalid(
                    flag,
                    format!(
                        "'{text}': layout={value} must be above 0 and below 1 (a fresh filesystem scores 1)"
                    ),
                ));
            }
            spec.stop_layout = Some(v);
        }
        "replicate" => {
            let Some((r, _)) = REPLICATES.iter().find(|(_, n)| *n == value) else {
                let known: Vec<&str> = REPLICATES.iter().map(|(_, n)| *n).collect();
                return Err(Error::invalid(
                    flag,
                    format!(
                        "'{text}': replicate='{value}' is not one of {} (how later rounds get the aged filesystem)",
                        known.join(", ")
                    ),
                ));
            };
            spec.replicate = *r;
        }
        _ => {
            return Err(Error::invalid(
                flag,
                format!(
                    "'{text}': unknown key '{key}=' (the keys are layout= and replicate=; {SYNTAX})"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_profile_amount_and_fullness_with_defaults() {
        let a = parse("churn", "--age").unwrap();
        assert_eq!(a.profile, AgeProfile::Churn);
        assert_eq!(a.amount, DEFAULT_AMOUNT);
        assert_eq!(a.fullness, DEFAULT_FULLNESS);
        let b = parse("punch:2x:60%", "--age").unwrap();
        assert_eq!(
            (b.profile, b.amount, b.fullness),
            (AgeProfile::Punch, 2.0, 60.0)
        );
        assert_eq!(parse(&b.to_string(), "--age").unwrap(), b);
        let c = parse("churn:3:layout=0.6:replicate=restore", "--fs").unwrap();
        assert_eq!((c.amount, c.fullness), (3.0, DEFAULT_FULLNESS));
        assert_eq!(c.stop_layout, Some(0.6));
        assert_eq!(c.replicate, Replicate::Restore);
        assert_eq!(parse(&c.to_string(), "--age").unwrap(), c);
        let d = parse("git:replicate=re-age:2", "--age").unwrap();
        assert_eq!((d.amount, d.replicate), (2.0, Replicate::ReAge));
    }

    #[test]
    fn a_restored_round_costs_the_copy_not_the_aging() {
        let mut a = parse("churn:3:replicate=restore", "--age").unwrap();
        a.capacity = 8 << 30;
        let aging = a.estimate_seconds("ext4", 1 << 30);
        assert!(a.round_seconds("ext4", 1 << 30, 1, 3) > aging);
        assert_eq!(a.round_seconds("ext4", 1 << 30, 1, 1), aging);
        assert!(a.round_seconds("ext4", 1 << 30, 2, 3) < aging / 2.0);
        a.replicate = Replicate::ReAge;
        assert_eq!(a.round_seconds("ext4", 1 << 30, 2, 3), aging);
    }

    #[test]
    fn each_profile_and_filesystem_ages_at_its_own_measured_rate() {
        let mut a = parse("overwrite:1", "--age").unwrap();
        a.capacity = 4 << 30;
        // 4 GiB at 333 MiB/s on ext4, 164 MiB/s on Btrfs, plus the 512 MiB room check.
        let ext4 = a.estimate_seconds("ext4", 512 << 20);
        let btrfs = a.estimate_seconds("btrfs", 512 << 20);
        assert!(
            (ext4 - (4096.0 / 333.0 + 512.0 / 411.0 + 5.0)).abs() < 1e-9,
            "{ext4}"
        );
        let btrfs_want = 4096.0 / 164.0 + 512.0 / 258.0 + 5.0;
        assert!((btrfs - btrfs_want).abs() < 1e-9, "{btrfs}");
        assert!(btrfs > 1.5 * ext4, "{btrfs} against {ext4}");
        a.profile = AgeProfile::Git;
        assert!(a.estimate_seconds("ext4", 0) > ext4);
        // A driver with no measurement takes the old assumption.
        assert!((a.estimate_seconds("tmpfs", 0) - (4096.0 / 75.0 + 5.0)).abs() < 1e-9);
    }

    #[test]
    fn refuses_bad_values_naming_the_input() {
        for bad in [
            "chrun",
            "churn:0",
            "churn:-1",
            "churn:abc",
            "churn:99",
            "churn:1:100%",
            "churn:1:50%:x",
            "churn:layout=1",
            "churn:layout=abc",
            "churn:1:layout=0",
            "churn:replicate=copy",
            "churn:depth=3",
        ] {
            let e = parse(bad, "--age").unwrap_err().to_string();
            assert!(
                e.contains(bad.split(':').next().unwrap()) || e.contains(bad),
                "{bad}: {e}"
            );
            assert!(matches!(
                parse(bad, "--age"),
                Err(Error::InvalidInput { .. })
            ));
        }
    }
}
