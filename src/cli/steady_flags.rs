//! `--steady-state`, `--steady-round`, `--steady-quick`, `--steady-max` and `--precondition`
//! (for `fsbench io` and `fsbench run`): flattened into those commands' flags, kept here in
//! one place. Their values are checked in one place too, [`crate::engine::SteadySpec::check`].

use crate::engine::SteadySpec;
use crate::measure::snia_criteria::SteadyCriteria;
use crate::plan::knobs as K;
use crate::plan::params as P;
use std::time::Duration;

/// Run-until-steady flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SteadyArgs {
    /// Run each I/O job in rounds until its IOPS reach steady state, then measure only the
    /// steady rounds (the SNIA Solid State Storage Performance Test Specification's rule).
    ///
    /// The job runs in rounds of --steady-round (60 s) and stops once its last N rounds' IOPS
    /// vary by at most RANGE % of their mean (highest minus lowest) and their least-squares
    /// line moves by at most SLOPE % of it across them; IOPS, MiB/s and latency are then
    /// those N rounds'. Without a value: 5,20,10 (SNIA's window). A job not steady after 25
    /// rounds (or --steady-max) reports the whole run's figures, marked "not steady". On a
    /// block device steady state is claimed only after --precondition; on a file, an image
    /// or --dir the rounds still run, but the caches underneath make them a stability check,
    /// not steady state. The job's --runtime does not apply; --fio-job sections are not
    /// affected.
    #[arg(
        long,
        help = K::STEADY_STATE.help(),
        value_name = "N,RANGE,SLOPE",
        num_args = 0..=1,
        default_missing_value = "5,20,10",
        value_parser = SteadyCriteria::parse,
    )]
    pub steady_state: Option<SteadyCriteria>,

    /// With --steady-state: the length of one steady-state round.
    #[arg(long, value_name = "TIME", value_parser = P::STEADY_ROUND.duration_arg(), help = P::STEADY_ROUND.help(), requires = "steady_state")]
    pub steady_round: Option<Duration>,

    /// [`K::STEADY_QUICK`]: its help, values and plan-file key.
    #[arg(long, help = K::STEADY_QUICK.help(), requires = "steady_state", conflicts_with = "steady_round")]
    pub steady_quick: bool,

    /// With --steady-state: the longest a job may run looking for steady state.
    #[arg(long, value_name = "TIME", value_parser = P::STEADY_MAX.duration_arg(), help = P::STEADY_MAX.help(), requires = "steady_state")]
    pub steady_max: Option<Duration>,
}

impl SteadyArgs {
    /// The spec these flags ask for (`None` without `--steady-state`), defaults filled in but
    /// not checked: the plan resolver and the engine check it ([`SteadySpec::check`]).
    pub fn spec(&self) -> Option<SteadySpec> {
        self.steady_state.map(|criteria| {
            SteadySpec::assemble(
                criteria,
                self.steady_max,
                self.steady_round,
                self.steady_quick,
            )
        })
    }
}

/// The preconditioning flag of `fsbench run` and `fsbench io`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PreconditionArgs {
    /// Precondition a block device as SNIA's Performance Test Specification does, so an SSD
    /// is measured worn in rather than fresh: first 2 × its capacity in 128 KiB sequential
    /// writes (once, before anything else), then the workload-dependent part.
    ///
    /// `fsbench run --device`: the device is written before the first mkfs, and in every
    /// setup-round the data file, after its layout, is written sequentially twice more and
    /// overwritten once at random (4 KiB). `fsbench io --filename DEVICE`: the device, then
    /// the job's own rounds. Costs 2 × capacity ÷ sequential write speed (`fsbench plan`
    /// shows the estimate). Without it, --steady-state on a device reports "not
    /// preconditioned" and claims no steady state. Refused for the default loop image, --dir
    /// and a file: there is no flash to condition.
    #[arg(long, help = K::PRECONDITION.help())]
    pub precondition: bool,
}
