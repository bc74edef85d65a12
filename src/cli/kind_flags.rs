//! The flags workload kinds own (`--image-archive` of the container kind): one clap argument
//! each, built when the command line is read from what every registered kind declares
//! (`workload::api::KindFlag`: flag, value name, help), so a kind's flag is declared in its
//! folder only and reaches the plan as a flag → path pair (`Overrides::kind_flags`).
//!
//! clap's derive wants a field per flag, written where the struct is; these are not known
//! there, so [`KindFlags`] implements `clap::Args` and `clap::FromArgMatches` by hand over
//! `workload::registry::flags()`.

use crate::workload::api::KindFlag;
use clap::{Arg, ArgAction, ArgMatches, Command, ValueHint};
use std::path::PathBuf;

/// The kinds' flags given on the command line, each with its path, in registry order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindFlags {
    /// `("--image-archive", path)` for every kind flag given.
    pub given: Vec<(String, PathBuf)>,
}

/// The argument's id: the flag without its dashes (`image-archive`).
fn id(f: &'static KindFlag) -> &'static str {
    f.flag.trim_start_matches("--")
}

/// The clap argument of one kind flag, its help from the kind's declaration as its row in
/// the flag table gives it (`knobs::kind_row`).
fn arg(f: &'static KindFlag) -> Arg {
    Arg::new(id(f))
        .long(id(f))
        .value_name(f.value_name)
        .help(crate::plan::knobs::kind_row(f).help())
        .value_parser(clap::value_parser!(PathBuf))
        .value_hint(ValueHint::AnyPath)
        .action(ArgAction::Set)
}

impl clap::Args for KindFlags {
    fn augment_args(cmd: Command) -> Command {
        crate::workload::registry::flags().fold(cmd, |cmd, f| cmd.arg(arg(f)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for KindFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }

    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = KindFlags::default();
        flags.update_from_arg_matches_mut(m)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.update_from_arg_matches_mut(&mut m.clone())
    }

    /// The flags given replace earlier values of the same flag; the others stay.
    fn update_from_arg_matches_mut(&mut self, m: &mut ArgMatches) -> Result<(), clap::Error> {
        for f in crate::workload::registry::flags() {
            // An id the command lacks (a kind registered after it was built) is not given.
            if let Ok(Some(path)) = m.try_remove_one::<PathBuf>(id(f)) {
                self.given.retain(|(flag, _)| flag != f.flag);
                self.given.push((f.flag.to_string(), path));
            }
        }
        Ok(())
    }
}
