//! What the history store says about a device's noise, for `fsbench plan` (here in `report/`,
//! beside the report whose noise floor it reads, so `history` imports no `report`): the paired noise of
//! each headline row in the recorded runs of the same device (the store's device identity,
//! [`crate::history::identity::Device::key`]), and which of those questions the planned rounds can
//! settle at ±10 % and which would need more.
//!
//! A run's noise per headline row is the report's own noise floor
//! ([`crate::report::model::noise_floor`]: the standard deviation of the per-round log ratios
//! of the leader and its noisiest rival), taken over the plan's setups when the run had at
//! least two of them; several runs are pooled (their variances weighted by degrees of freedom,
//! as one longer run would estimate it). The rounds a row needs are
//! [`crate::stats::paired::rounds_to_resolve`] at that noise.

use crate::history::identity::{self, Device};
use crate::history::location::Location;
use crate::history::runs::History;
use crate::plan::Invocation;
use crate::results::{Results, TargetInfo};
use crate::scratch::TargetKind;
use crate::stats::paired::rounds_to_resolve;
use crate::stats::sequential::DEFAULT_ALPHA;

/// The most recent runs of a device read for an estimate.
pub const MAX_RUNS: usize = 10;

/// One headline row's noise in the history.
#[derive(Debug, Clone, PartialEq)]
pub struct RowNoise {
    /// The row's label (`4K random read, IOPS`).
    pub test: String,
    /// Pooled paired noise (sd of the per-round log ratios).
    pub noise: f64,
    /// Runs it is pooled from.
    pub runs: usize,
    /// Rounds that tell ±10 % apart at that noise (`None`: more than 100).
    pub rounds_for_10pct: Option<usize>,
}

/// What the store says for one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Runs of the device read.
    pub runs: usize,
    /// Per headline row, in the report's order.
    pub rows: Vec<RowNoise>,
}

/// The device a plan's target would be recorded as: the same identity a run's results get
/// ([`identity::enrich`] on the live machine, then [`identity::device`]), built before
/// anything is created. `None` for a multi-device target's later devices (the first is the
/// one recorded) or a device path that cannot be read.
pub fn planned_device(inv: &Invocation) -> Option<Device> {
    let mut r = Results::new();
    r.target = planned_target(&inv.options.target)?;
    identity::enrich(&mut r);
    Some(identity::device(&r))
}

/// What `target::*::info` will record about `kind`, as far as it names the device (before
/// [`identity::enrich`] adds what the live machine knows).
pub fn planned_target(kind: &TargetKind) -> Option<TargetInfo> {
    use crate::host::mountinfo;
    let mut t = TargetInfo::default();
    match kind {
        TargetKind::Image {
            scratch_dir, size, ..
        } => {
            t.kind = "image".into();
            // The image's own name does not matter: its directory's disk identifies it.
            t.path = scratch_dir.join("fsbench.img").display().to_string();
            t.size_bytes = *size;
            let fs = mountinfo::read()
                .ok()
                .and_then(|m| mountinfo::containing(&m, scratch_dir))
                .map(|e| e.fs_type)
                .unwrap_or_default();
            t.extra.insert("backing_fs".into(), fs);
        }
        TargetKind::Device { path, .. } => {
            use std::os::unix::fs::MetadataExt;
            let dev = crate::host::sysfs::DevNum::from_dev(std::fs::metadata(path).ok()?.rdev());
            let sys = dev.sysfs_dir()?;
            let sectors: u64 = crate::host::sysfs::read_attr(&sys, "size")?.parse().ok()?;
            t = crate::scratch::block::device_info("device", path, dev, sectors * 512);
        }
        // Only `fsbench io` runs on a job's own file, and it estimates nothing.
        TargetKind::File { .. } => return None,
        TargetKind::Dir { path, .. } => {
            t.kind = "dir".into();
            t.path = path.display().to_string();
            if let Some(m) = mountinfo::read()
                .ok()
                .and_then(|m| mountinfo::containing(&m, path))
            {
                t.extra.insert("fs_type".into(), m.fs_type.clone());
                t.extra.insert("mount_source".into(), m.source.clone());
            }
        }
    }
    Some(t)
}

/// The headline rows of `workloads` (the plan's) and their noise in the recorded runs of
/// `device_key` (newest [`MAX_RUNS`]), judged over `setups` where a run had two of them.
/// `None` when the store has no run of the device with such a ranked headline row.
pub fn estimate(
    history: &mut History,
    device_key: &str,
    setups: &[String],
    workloads: &[String],
) -> crate::Result<Option<Estimate>> {
    let runs: Vec<i64> = history
        .list(&Default::default())?
        .into_iter()
        .filter(|r| r.device_key == device_key && !r.partial)
        .take(MAX_RUNS)
        .map(|r| r.id)
        .collect();
    // Per row label: (Σ (n − 1)·sd², Σ (n − 1), runs), in first-seen order.
    let mut pooled: Vec<(String, f64, f64, usize)> = Vec::new();
    let mut used = 0;
    for id in runs {
        let Some((_, results)) = history.get(id)? else {
            continue;
        };
        let floors = run_noise(&results, setups, workloads);
        used += usize::from(!floors.is_empty());
        for (test, (sd, n)) in floors {
            let df = n.saturating_sub(1) as f64;
            match pooled.iter_mut().find(|p| p.0 == test) {
                Some(p) => {
                    p.1 += df * sd * sd;
                    p.2 += df;
                    p.3 += 1;
                }
                None => pooled.push((test, df * sd * sd, df, 1)),
            }
        }
    }
    if pooled.is_empty() {
        return Ok(None);
    }
    let rows = pooled
        .into_iter()
        .filter(|p| p.2 > 0.0)
        .map(|(test, ss, df, runs)| {
            let noise = (ss / df).sqrt();
            RowNoise {
                test,
                noise,
                runs,
                // At the level a row of these setups judges its leader's comparisons.
                rounds_for_10pct: rounds_to_resolve(
                    noise,
                    crate::stats::paired::leader_alpha(DEFAULT_ALPHA, setups.len()),
                    0.10,
                ),
            }
        })
        .collect();
    Ok(Some(Estimate { runs: used, rows }))
}

/// One recorded run's noise floor per headline row of `workloads` with the rounds it rests
/// on, over the plan's setups when the run had at least two of them.
fn run_noise(
    results: &Results,
    setups: &[String],
    workloads: &[String],
) -> Vec<(String, (f64, usize))> {
    let mut r = results.clone();
    let ours = r.setups.iter().filter(|s| setups.contains(&s.name)).count();
    if ours >= 2 {
        r.samples.retain(|s| setups.contains(&s.setup));
        r.histograms.retain(|h| setups.contains(&h.setup));
        r.setups.retain(|s| setups.contains(&s.name));
    }
    let report = super::Report::new(&r);
    report
        .headline
        .iter()
        .filter(|row| workloads.contains(&row.workload))
        .filter_map(|row| {
            let j = row
                .cells
                .iter()
                .flatten()
                .filter_map(|c| c.versus_leader)
                .filter(|j| j.noise.is_some())
                .max_by(|a, b| a.noise.unwrap_or(0.0).total_cmp(&b.noise.unwrap_or(0.0)))?;
            Some((row.label.clone(), (j.noise?, j.rounds)))
        })
        .collect()
}

/// The plan's lines about noise, for `fsbench plan`'s summary: what the store at the default
/// location (`FSBENCH_STORE`, else the default SQLite file) says about this device, or why it
/// says nothing. Never fails: a store that cannot be read is one line saying so. Only
/// `fsbench plan` prints it (`fsbench run`'s copy of the summary has no outlook).
pub fn plan_lines(inv: &Invocation) -> String {
    let Some(device) = planned_device(inv) else {
        return "Noise: cannot tell which device the history would record (no estimate)\n".into();
    };
    let loc = match Location::resolve(None, None) {
        Ok(Some(loc)) => loc,
        Ok(None) => return "Noise: the history store is off (FSBENCH_STORE=off)\n".into(),
        Err(e) => return format!("Noise: no history store ({e})\n"),
    };
    if let Location::Sqlite(path) = &loc
        && !path.exists()
    {
        return no_history(&device);
    }
    let setups: Vec<String> = inv.plan.setups.iter().map(|s| s.name.clone()).collect();
    let workloads: Vec<String> = inv.plan.recorded().map(|w| w.id.clone()).collect();
    let estimate = History::open(&loc, false)
        .and_then(|mut h| estimate(&mut h, &device.key, &setups, &workloads));
    let rounds = inv.plan.rounds as usize;
    let most = inv.plan.settle.map(|s| s.max_rounds as usize);
    match estimate {
        Ok(Some(e)) => describe(&e, &device, rounds, most),
        Ok(None) => no_history(&device),
        Err(e) => format!(
            "Noise: the history store {} cannot be read ({e})\n",
            loc.shown()
        ),
    }
}

fn no_history(device: &Device) -> String {
    format!(
        "Noise: no history for this device ({}); a recorded run measures it, and `fsbench \
         plan` then says which questions these rounds can settle\n",
        device.label
    )
}

/// The estimate in lines: the rows `rounds` settle at ±10 %, then those that need more (with
/// `--until-settled`, whether its `--max-rounds` would reach them).
pub fn describe(e: &Estimate, device: &Device, rounds: usize, most: Option<usize>) -> String {
    let (settle, more): (Vec<&RowNoise>, Vec<&RowNoise>) = e
        .rows
        .iter()
        .partition(|r| r.rounds_for_10pct.is_some_and(|n| n <= rounds));
    let mut s = format!(
        "Noise (history: {} run(s) of {}; paired noise per headline row, rounds to tell ±10 % \
         apart):\n",
        e.runs, device.label
    );
    let list = |rows: &[&RowNoise]| {
        rows.iter()
            .map(|r| {
                format!(
                    "{} {:.0} % ({})",
                    r.test,
                    r.noise * 100.0,
                    r.rounds_for_10pct
                        .map_or("> 100".to_string(), |n| n.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    if !settle.is_empty() {
        s.push_str(&format!(
            "  {rounds} round(s) can settle {} of {}: {}\n",
            settle.len(),
            e.rows.len(),
            list(&settle)
        ));
    }
    if !more.is_empty() {
        let reach = match most {
            Some(m) => {
                let within = more
                    .iter()
                    .filter(|r| r.rounds_for_10pct.is_some_and(|n| n <= m))
                    .count();
                format!(" (--until-settled's {m} rounds reach {within} of them)")
            }
            None => String::new(),
        };
        s.push_str(&format!("  need more rounds{reach}: {}\n", list(&more)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::IOPS;
    use crate::results::{Sample, SetupInfo};

    /// A recorded run of ext4 against xfs on one image: random read with `wobble` of round
    /// noise on xfs only (it does not cancel in the ratio).
    fn run(started: &str, wobble: f64) -> Results {
        let mut r = Results::new();
        r.started_at = started.into();
        r.host.hostname = "h".into();
        r.target.kind = "image".into();
        r.target.path = "/var/tmp/x/fsbench.img".into();
        r.target.size_bytes = 8 << 30;
        r.target.extra.insert("backing_fs".into(), "ext4".into());
        for name in ["ext4", "xfs"] {
            r.setups.push(SetupInfo {
                name: name.into(),
                fs: name.into(),
                ..Default::default()
            });
        }
        for round in 1..=4u32 {
            let w = if round % 2 == 0 {
                1.0 + wobble
            } else {
                1.0 - wobble
            };
            for (setup, v) in [("ext4", 100.0), ("xfs", 90.0 * w)] {
                r.samples.push(Sample {
                    setup: setup.into(),
                    workload: "randread".into(),
                    metric: IOPS.into(),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                });
            }
        }
        r
    }

    #[test]
    fn a_filled_store_estimates_the_noise_of_the_same_device_only() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::Sqlite(dir.path().join("h.db"));
        let mut h = History::open(&loc, true).unwrap();
        h.record(&run("2026-12-01T10:00:00Z", 0.02), "run", "/r1")
            .unwrap();
        h.record(&run("2026-12-01T11:00:00Z", 0.04), "run", "/r2")
            .unwrap();
        let mut other = run("2026-12-01T12:00:00Z", 0.30);
        other.target.size_bytes = 4 << 30;
        h.record(&other, "run", "/r3").unwrap();
        let device = identity::device(&run("", 0.0));
        let setups = vec!["ext4".to_string(), "xfs".to_string()];
        let planned = vec!["randread".to_string()];
        let e = estimate(&mut h, &device.key, &setups, &planned)
            .unwrap()
            .expect("history");
        assert_eq!(e.runs, 2, "{e:?}");
        let row = &e.rows[0];
        assert_eq!(row.runs, 2);
        // Pooled from 2 % and 4 % wobble (sd of the logs about 2.3 % and 4.6 %), not the
        // other device's 30 %.
        assert!(row.noise > 0.02 && row.noise < 0.05, "{row:?}");
        let text = describe(&e, &device, 3, None);
        assert!(text.contains("3 round(s) can settle 1 of 1"), "{text}");
        // At two rounds the same noise needs more, which --until-settled may reach.
        let tight = RowNoise {
            rounds_for_10pct: Some(5),
            ..row.clone()
        };
        let e2 = Estimate {
            runs: 2,
            rows: vec![tight],
        };
        let text = describe(&e2, &device, 3, Some(8));
        assert!(
            text.contains("need more rounds (--until-settled's 8 rounds reach 1 of them)"),
            "{text}"
        );
        // A device the store never saw: no estimate.
        assert!(
            estimate(&mut h, "image|1|nowhere", &setups, &planned)
                .unwrap()
                .is_none()
        );
        // A plan without the recorded workload has nothing to learn from it.
        let other = vec!["untar".to_string()];
        assert!(
            estimate(&mut h, &device.key, &setups, &other)
                .unwrap()
                .is_none()
        );
    }
}
