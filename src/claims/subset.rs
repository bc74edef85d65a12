//! `--claims-for`: run only what a subset of the claims needs.
//!
//! A value picks claims by id, by workload id, by contradiction group, or by the class of the
//! seed statements they check ("metadata", "durability", "tuning", "general I/O"…, the table's
//! class column). The plan then keeps only the setups the picked claims' selectors name and
//! the workloads they read (with the baselines those divide by), so `--profile claims
//! --claims-for metadata` runs the untar / find / rm / smallfiles / fsmark claims alone.

use super::{Claim, Selector, all, statements};
use crate::Error;
use crate::plan::file::PlanDraft;

/// The claims `filters` pick; an unknown value is refused, naming what is known.
pub fn pick(filters: &[String]) -> crate::Result<Vec<Claim>> {
    let table = statements::table();
    let class_of = |row: &String| {
        table
            .iter()
            .find(|s| &s.row == row)
            .map(|s| class_words(&s.class))
            .unwrap_or_default()
    };
    let in_class = |c: &Claim, class: &str| {
        c.statements
            .iter()
            .any(|row| class_of(row).contains(&norm(class)))
    };
    let claims = all();
    let mut picked: Vec<Claim> = vec![];
    for f in filters {
        let hits: Vec<&Claim> = claims
            .iter()
            .filter(|c| {
                &c.id == f || &c.workload == f || c.group.as_ref() == Some(f) || in_class(c, f)
            })
            .collect();
        if hits.is_empty() {
            return Err(Error::invalid(
                "--claims-for",
                format!(
                    "'{f}' names no claim, workload, group or statement class; classes: {} \
                     (`fsbench claims` lists every claim)",
                    classes().join(", ")
                ),
            ));
        }
        for c in hits {
            if !picked.iter().any(|p| p.id == c.id) {
                picked.push(c.clone());
            }
        }
    }
    Ok(picked)
}

/// A class as typed on the command line: lower case, `I/O` as `io`, spaces as dashes
/// ("general I/O" and "general-io" are the same class).
fn norm(class: &str) -> String {
    class
        .trim()
        .to_lowercase()
        .replace("i/o", "io")
        .replace(' ', "-")
}

/// The classes of a table row ("build servers/mail/containers" is three).
fn class_words(class: &str) -> Vec<String> {
    norm(class).split('/').map(|p| p.to_string()).collect()
}

/// The statement classes claims can be picked by, sorted.
pub fn classes() -> Vec<String> {
    let mut out: Vec<String> = statements::table()
        .iter()
        .flat_map(|s| class_words(&s.class))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Narrow `draft` to what `claims` need: the setups a selector matches and the workloads they
/// read (plus the baselines those divide by). Returns the workload ids to pass as `--only`.
/// Refused when the plan has none of them (a plan without the claims' setups).
pub fn narrow(claims: &[Claim], draft: &mut PlanDraft) -> crate::Result<Vec<String>> {
    // A claim whose workload the plan lacks (the crash claims outside the claims profile)
    // brings no setup: it would run the others' workloads for nothing.
    let claims: Vec<&Claim> = claims
        .iter()
        .filter(|c| draft.workloads.iter().any(|w| w.id == c.workload))
        .collect();
    let selectors: Vec<Selector> = claims
        .iter()
        .flat_map(|c| std::iter::once(&c.a).chain(c.b.as_ref()))
        .map(|s| Selector::parse(s))
        .collect();
    draft
        .setups
        .retain(|s| selectors.iter().any(|sel| sel.matches(&s.fs, &s.raw)));
    let mut ids: Vec<String> = vec![];
    for c in &claims {
        if !ids.contains(&c.workload) {
            ids.push(c.workload.clone());
        }
    }
    let baselines: Vec<String> = draft
        .workloads
        .iter()
        .filter(|w| ids.contains(&w.id))
        .filter_map(|w| w.baseline.clone())
        .collect();
    for b in baselines {
        if !ids.contains(&b) {
            ids.push(b);
        }
    }
    ids.retain(|id| draft.workloads.iter().any(|w| &w.id == id));
    if draft.setups.is_empty() || ids.is_empty() {
        return Err(Error::invalid(
            "--claims-for",
            format!(
                "the plan '{}' has none of the setups or workloads these claims need; use \
                 --profile claims",
                draft.name
            ),
        ));
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_picks_its_claims_and_the_profile_shrinks_to_them() {
        let picked = pick(&["metadata".to_string()]).unwrap();
        assert!(picked.iter().any(|c| c.id == "ext4-rm-faster-than-xfs"));
        assert!(picked.iter().all(|c| c.workload != "randwrite"));
        let mut draft = crate::plan::profiles::load("claims").unwrap();
        let before = draft.setups.len();
        let only = narrow(&picked, &mut draft).unwrap();
        assert!(only.contains(&"untar".to_string()) && only.contains(&"fsmark".to_string()));
        assert!(!only.contains(&"randwrite".to_string()));
        assert!(draft.setups.len() < before);
        assert!(draft.setups.iter().all(|s| !s.raw.contains_key("sched")));
    }

    #[test]
    fn a_workload_brings_its_baseline_and_an_unknown_value_is_refused() {
        let picked = pick(&["randwrite-128m".to_string()]).unwrap();
        let mut draft = crate::plan::profiles::load("claims").unwrap();
        let only = narrow(&picked, &mut draft).unwrap();
        assert_eq!(only, ["randwrite-128m", "randwrite-buffered"]);
        let names: Vec<&str> = draft.setups.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ext4", "btrfs", "ext4-dirty"]);
        assert!(
            classes().contains(&"general-io".to_string()),
            "{:?}",
            classes()
        );
        assert_eq!(
            pick(&["general I/O".to_string()]).unwrap().len(),
            pick(&["general-io".to_string()]).unwrap().len()
        );
        let e = pick(&["no-such-thing".to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--claims-for") && e.contains("metadata"), "{e}");
        // The crash claims' workloads are not in the profile: a setup stays only when a
        // claim with a kept workload names it.
        let mut draft = crate::plan::profiles::load("claims").unwrap();
        let picked = pick(&["durability".to_string()]).unwrap();
        assert!(picked.iter().any(|c| c.workload.starts_with("crash")));
        let only = narrow(&picked, &mut draft).unwrap();
        assert!(only.iter().all(|w| !w.starts_with("crash")), "{only:?}");
        for s in &draft.setups {
            assert!(
                picked.iter().any(|c| only.contains(&c.workload)
                    && std::iter::once(&c.a)
                        .chain(c.b.as_ref())
                        .any(|sel| Selector::parse(sel).matches(&s.fs, &s.raw))),
                "{} kept for nothing",
                s.name
            );
        }
    }
}
