//! A setup's aging: `age=PROFILE[:AMOUNT[:FULLNESS%]]` (`--fs 'ext4-aged=ext4:age=churn:3'`,
//! `--age churn`, a `[[setup]]`'s `age = "churn"`), as plain data. Every driver takes the key
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
}

/// Aging's rate assumed by the plan's estimate, MiB/s: small files (git) go at about half
/// the rate of the others (loaded 2-core VM, loop image; docs/aging.md).
fn eta_mib_s(p: AgeProfile) -> f64 {
    if p == AgeProfile::Git { 75.0 } else { 150.0 }
}

impl AgeSpec {
    /// Bytes aging will write (amount × capacity; 0 when the capacity is unknown).
    pub fn bytes(&self) -> u64 {
        (self.amount * self.capacity as f64) as u64
    }

    /// Estimated seconds: the writing at the assumed rate, plus the age measures (a probe
    /// file before and after, the aged files mapped).
    pub fn estimate_seconds(&self) -> f64 {
        self.bytes() as f64 / (1u64 << 20) as f64 / eta_mib_s(self.profile) + 5.0
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
        )
    }
}

/// Parse `PROFILE[:AMOUNT[:FULLNESS%]]` (`churn`, `overwrite:0.5`, `punch:2:60%`); `flag`
/// names where it came from in the error (`--age`, `--fs`).
pub fn parse(text: &str, flag: &str) -> Result<AgeSpec> {
    let mut parts = text.trim().split(':');
    let name = parts.next().unwrap_or("").trim();
    let names: Vec<&str> = PROFILES.iter().map(|(_, n, _)| *n).collect();
    let Some((profile, _, _)) = PROFILES.iter().find(|(_, n, _)| *n == name) else {
        return Err(Error::invalid(
            flag,
            format!(
                "unknown aging profile '{name}' in '{text}'; profiles: {} (PROFILE[:AMOUNT[:FULLNESS%]], e.g. churn:1)",
                names.join(", ")
            ),
        ));
    };
    let amount = match parts.next().map(str::trim) {
        None | Some("") => DEFAULT_AMOUNT,
        Some(a) => {
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
            v
        }
    };
    let fullness = match parts.next().map(str::trim) {
        None | Some("") => DEFAULT_FULLNESS,
        Some(p) => {
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
            v
        }
    };
    if let Some(extra) = parts.next() {
        return Err(Error::invalid(
            flag,
            format!("'{text}': unexpected ':{extra}' (PROFILE[:AMOUNT[:FULLNESS%]])"),
        ));
    }
    Ok(AgeSpec {
        profile: *profile,
        amount,
        fullness,
        capacity: 0,
    })
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
