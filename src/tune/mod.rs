//! `fsbench tune`'s search (docs/tune.md): which mkfs and mount options of each filesystem's
//! option space ([`crate::fs::options`]) make a workload faster, proved with the paired
//! statistic of every other judgement ([`crate::stats::paired`]), and which do not matter.
//!
//! - [`candidate`]: a point of a space, written as an `--fs` variant, mkfs command and fstab
//!   line; a `--fs` baseline read back into a point (unknown options, invalid combinations:
//!   exit 2);
//! - [`current`]: `--current PATH`, the baseline a mounted filesystem runs with now
//!   (mountinfo and the superblock mapped onto the space);
//! - [`score`]: the per-round score of a setup over another (geometric mean of the
//!   workloads' headline ratios);
//! - [`screen`]: what screening runs for a baseline, one factor at a time or the two-level
//!   factors in a fractional design ([`design`]: its runs and main effects, pure);
//! - [`decide`]: screening effects, race combinations and elimination (pure);
//! - [`search`]: the stages over a [`search::Runs`] (the command runs real fsbench runs);
//! - [`preview`]: tune's plan before anything runs (`tune --dry-run`, `plan tune`, its JSON);
//! - [`answer`]: tune.json and the text shown first;
//! - [`journal`]: the finished stages in OUT, so `--resume OUT` skips them;
//! - [`forest`]: the forest plot of option effects (OUT/tune.html);
//! - [`doc`]: the option spaces as docs/tune.md's table.

pub mod answer;
pub mod candidate;
pub mod current;
pub mod decide;
pub mod design;
pub mod doc;
pub mod forest;
pub mod images;
pub mod journal;
pub mod preview;
pub mod score;
pub mod screen;
pub mod search;
pub mod settings;
