//! `--steady-state`, `--steady-max` (for `fsbench io` and `fsbench run`) and `--precondition`
//! (`fsbench run`): flattened into those commands' flags, kept here in one place.

use crate::engine::SteadySpec;
use crate::measure::steady::SteadyCriteria;
use crate::plan::params as P;
use std::time::Duration;

/// Run-until-steady flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SteadyArgs {
    /// Keep each I/O job running until its IOPS settle, then measure only the settled part.
    ///
    /// The job stops once its last N one-second IOPS values vary by at most RANGE % of their
    /// average (highest minus lowest) and their trend line moves by at most SLOPE % across them;
    /// IOPS, MiB/s and latency are then those N seconds'. Without a value: 5,20,10 (the SNIA
    /// Performance Test Specification's rule). If the job never settles before --steady-max,
    /// the whole run's figures are reported and marked "not steady". The job's --runtime does
    /// not apply; --fio-job sections are not affected.
    #[arg(
        long,
        value_name = "N,RANGE,SLOPE",
        num_args = 0..=1,
        default_missing_value = "5,20,10",
        value_parser = SteadyCriteria::parse,
    )]
    pub steady_state: Option<SteadyCriteria>,

    /// With --steady-state: the longest a job may run looking for a steady state [default: 5m].
    #[arg(long, value_name = "TIME", requires = "steady_state", value_parser = P::STEADY_MAX.duration_arg(), help = P::STEADY_MAX.help())]
    pub steady_max: Option<Duration>,
}

impl SteadyArgs {
    /// The spec these flags ask for (`None` without `--steady-state`); the engine's
    /// validation checks that the limit leaves room for the N seconds.
    pub fn spec(&self) -> Option<SteadySpec> {
        self.steady_state.map(|criteria| SteadySpec {
            criteria,
            max: self
                .steady_max
                .unwrap_or(crate::engine::steady::DEFAULT_MAX),
        })
    }
}

/// `fsbench run`'s preconditioning flag.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PreconditionArgs {
    /// With --device (an SSD): before the I/O jobs of every setup-round, write the data file
    /// sequentially twice more and then overwrite it once at random (4 KiB), so the drive is
    /// measured worn in rather than fresh. Costs about 2 × file size ÷ sequential write speed +
    /// file size ÷ random 4 KiB write speed per setup-round (`fsbench plan` shows the estimate).
    /// Refused for the default loop image and --dir: there is no flash to condition.
    #[arg(long)]
    pub precondition: bool,
}
