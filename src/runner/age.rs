//! The aging step of a setup-round (`fs::age`, `workload::age`): after mkfs, mount and the
//! quiet wait, before the workloads. When any setup of the plan ages, every setup's age is
//! measured (workload id [`AGE`]: the state the workloads start from), so fresh and aged
//! setups are side by side; an aged setup also records its fresh state ([`AGE_BEFORE`])
//! and the aging itself (amount, time, throughput, and its rate about every second as a
//! `bw_mib_s` series under [`AGE`], charted over time by the HTML report). Each round re-ages
//! with its own seed.

use super::Runner;
use super::journal::RoundRecord;
use super::round::sample;
use crate::Error;
use crate::metrics::registry as m;
use crate::plan::{SetupSpec, step_seed};
use crate::workload::Metric;
use crate::workload::age::{self, measure::AgeMeasures};
use std::path::Path;

/// The workload id the age measures are recorded under: the state the workloads start from.
pub const AGE: &str = "age";
/// An aged setup's measures before aging (its fresh state).
pub const AGE_BEFORE: &str = "age-before";
/// Where the probe file is written (removed with it).
const PROBE_DIR: &str = "fsbench-age-probe";

impl Runner<'_> {
    /// Age `setup` (when it asks to) on the filesystem at `root` and record the age
    /// measures; nothing when no setup of the plan ages or the target is a directory. A
    /// failed aging is the round's failure; its workloads still run (the report shows both).
    pub(super) fn age_step(
        &mut self,
        rec: &mut RoundRecord,
        setup: &SetupSpec,
        round: u32,
        root: &Path,
    ) -> crate::Result<()> {
        let plan = &self.inv.plan;
        if !self.inv.options.target.formats() || plan.setups.iter().all(|s| s.age.is_none()) {
            return Ok(());
        }
        let files = root.join(age::AGED_DIR);
        let probe = root.join(PROBE_DIR);
        let r = (|| {
            let before = age::measure::measure(root, &files, &probe)?;
            let Some(spec) = setup.age else {
                self.record_age(rec, setup, round, AGE, &before, &[])?;
                return Ok(());
            };
            self.record_age(rec, setup, round, AGE_BEFORE, &before, &[])?;
            let seed = step_seed(self.inv.options.seed, &setup.name, round, AGE);
            let what = format!(
                "round {round}/{} · {} · aging {spec}",
                plan.rounds, setup.name
            );
            let progress = &self.progress;
            // The aging rate per tick (about a second): the HTML report's series over time.
            let (mut rate, mut last) = (Vec::new(), (0u64, 0.0f64));
            let aged = age::run(root, &spec, seed, &mut |t| {
                let now = (t.written, t.elapsed.as_secs_f64());
                if now.1 > last.1 {
                    rate.push((now.0 - last.0) as f64 / (1u64 << 20) as f64 / (now.1 - last.1));
                }
                last = now;
                let eta = t.eta_seconds().map_or(String::new(), |s| {
                    format!(" · ETA {}m {:02}s", s as u64 / 60, s as u64 % 60)
                });
                progress.percent(&format!("{what}{eta} ·"), t.percent());
            })?;
            let mib_s = aged.written as f64 / (1u64 << 20) as f64 / aged.seconds.max(1e-3);
            self.progress.note(&format!(
                "fsbench: {} round {round}: aged ({spec}): {} written in {:.0} s, {mib_s:.0} MiB/s",
                setup.name,
                crate::units::format_size(aged.written),
                aged.seconds
            ));
            let after = age::measure::measure(root, &files, &probe)?;
            let done = [
                Metric::new(m::AGE_WRITTEN_BYTES, "bytes", aged.written as f64),
                Metric::new(m::AGE_SECONDS, "s", aged.seconds),
                Metric::new(m::AGE_MIB_S, "MiB/s", mib_s),
            ];
            self.record_age(rec, setup, round, AGE, &after, &done)?;
            let mut step = self.empty(setup, round);
            step.series.push(crate::results::SeriesRecord {
                setup: setup.name.clone(),
                workload: AGE.to_string(),
                round,
                metric: m::BW_MIB_S.as_str().to_string(),
                values: rate,
            });
            self.commit(rec, AGE, step)
        })();
        match r {
            Err(e) if matches!(e, Error::Interrupted) || crate::cancel::requested() => {
                Err(Error::Interrupted)
            }
            Err(e) => self.fail(rec, setup, round, AGE, &e.to_string()),
            Ok(()) => Ok(()),
        }
    }

    /// Journal one set of age measures under workload `id`.
    fn record_age(
        &mut self,
        rec: &mut RoundRecord,
        setup: &SetupSpec,
        round: u32,
        id: &str,
        a: &AgeMeasures,
        more: &[Metric],
    ) -> crate::Result<()> {
        let mut step = self.empty(setup, round);
        for metric in metrics(a).iter().chain(more) {
            step.samples.push(sample(&setup.name, id, round, metric));
        }
        self.commit(rec, id, step)
    }
}

/// The measures as metrics (those a fresh filesystem has no value for left out).
pub fn metrics(a: &AgeMeasures) -> Vec<Metric> {
    let mut v = vec![
        Metric::new(m::AGE_FULLNESS, "%", a.fullness_pct),
        Metric::new(m::AGE_FILES, "count", a.files as f64),
    ];
    let opt = [
        (m::AGE_EXTENTS_PER_FILE, "extents", a.extents_mean),
        (m::AGE_EXTENTS_P90, "extents", a.extents_p90),
        (m::AGE_EXTENTS_MAX, "extents", a.extents_max),
        (m::AGE_LAYOUT_SCORE, "fraction", a.layout_score),
        (
            m::AGE_PROBE_EXTENTS,
            "extents",
            a.probe_extents.map(|n| n as f64),
        ),
        (m::AGE_FREE_EXTENT_KIB, "KiB", a.probe_extent_kib),
    ];
    v.extend(
        opt.into_iter()
            .filter_map(|(id, unit, x)| x.map(|x| Metric::new(id, unit, x))),
    );
    v
}
