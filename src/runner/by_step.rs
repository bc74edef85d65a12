//! A round by steps ([`crate::plan::Plan::by_step`]): every setup of the round on an image of
//! its own, all made at the round's start; then each timed step on every setup back to back,
//! in the round's (rotating) setup order (a step that reads what its previous step left in the
//! caches, `rm-tree` after `find-cold`, goes with that step: find, rm on one setup, then the
//! next); then each setup's capability probes and its release.
//!
//! A setup's ratio in a round then pairs two runs of the same step seconds apart, not a
//! setup's slot (a minute or more) apart: the disk's own pace, which on a shared host drifts
//! over minutes, falls mostly out of the ratio. Each setup takes the image at its place in the
//! round's order, so with the order rotating every round each setup meets every image.
//!
//! Each setup-round keeps its own record, journal entries and guards: an interrupt or an
//! error releases every open one (their `Drop`), and a resumed run redoes the setup-rounds
//! that had not finished, as in a round of setup-rounds.

use super::Runner;
use super::journal::RoundRecord;
use super::round::Open;
use crate::plan::{SetupRound, WorkloadSpec};
use crate::workload::registry;

impl Runner<'_> {
    /// One round by steps of the setup-rounds `todo` (one round's, in its order), each
    /// recording into its `recs` entry.
    pub(super) fn round_by_steps(
        &mut self,
        todo: &[SetupRound],
        recs: &mut [RoundRecord],
    ) -> crate::Result<()> {
        let Some(round) = todo.first().map(|sr| sr.round) else {
            return Ok(());
        };
        let devices = self.target.block_devices();
        let order = self.inv.plan.setup_order(round);
        self.target.check_identity()?;
        // Every image blank before the first is made (a discard of one in use would not be).
        self.discard();
        let mut open: Vec<(usize, Open)> = Vec::new();
        for (k, sr) in todo.iter().enumerate() {
            let place = order.iter().position(|&s| s == sr.setup).unwrap_or(k);
            let Some(dev) = devices.get(place).or(devices.first()).cloned() else {
                return Err(crate::Error::Other(
                    "target has no block device to format".into(),
                ));
            };
            if let Some(o) = self.open_round(*sr, Some(dev), &mut recs[k])? {
                open.push((k, o));
            }
        }
        // The timed steps in the plan's order, each on every setup that runs it.
        let steps: Vec<WorkloadSpec> = self
            .inv
            .plan
            .workloads
            .iter()
            .filter(|w| open.iter().any(|(_, o)| runs(&o.timed, w)))
            .cloned()
            .collect();
        for chain in chains(steps) {
            for (k, o) in open.iter_mut() {
                for w in &chain {
                    if runs(&o.timed, w) {
                        self.step_of_round(&mut recs[*k], o, w)?;
                    }
                }
            }
        }
        for (k, mut o) in open {
            for w in o.capability.clone() {
                self.step_of_round(&mut recs[k], &mut o, &w)?;
            }
            self.close_round(&mut recs[k], o)?;
        }
        Ok(())
    }
}

/// `steps` in chains run on one setup together ([`registry::chain_heads`]).
fn chains(steps: Vec<WorkloadSpec>) -> Vec<Vec<WorkloadSpec>> {
    let heads = registry::chain_heads(&steps);
    let mut chains: Vec<Vec<WorkloadSpec>> = Vec::new();
    for (i, w) in steps.into_iter().enumerate() {
        match chains.last_mut() {
            Some(c) if heads[i] != i => c.push(w),
            _ => chains.push(vec![w]),
        }
    }
    chains
}

/// Whether `w` is among `ws` (by id: a setup may leave a workload out of a round).
fn runs(ws: &[WorkloadSpec], w: &WorkloadSpec) -> bool {
    ws.iter().any(|t| t.id == w.id)
}
