//! `fsbench tune`'s search (docs/tune.md): which mkfs and mount options of each filesystem's
//! option space ([`crate::fs::options`]) make a workload faster, proved with the paired
//! statistic of every other judgement ([`crate::stats::paired`]), and which do not matter.
//!
//! - [`candidate`]: a point of a space, written as an `--fs` variant, mkfs command and fstab
//!   line; a `--fs` baseline read back into a point (unknown options, invalid combinations:
//!   exit 2);
//! - [`score`]: the per-round score of a setup over another (geometric mean of the
//!   workloads' headline ratios);
//! - [`decide`]: screening effects, race combinations and elimination (pure);
//! - [`search`]: the stages over a [`search::Runs`] (the command runs real fsbench runs);
//! - [`answer`]: tune.json and the text shown first;
//! - [`doc`]: the option spaces as docs/tune.md's table.

pub mod answer;
pub mod candidate;
pub mod decide;
pub mod doc;
pub mod score;
pub mod search;
