//! The flags workload kinds own (`--image-archive` of the container kind): one clap argument
//! each, built when the command line is read from what every registered kind declares
//! (`workload::api::KindFlag`: flag and aliases, value name and kind, help), so a kind's flag
//! is declared in its folder only and reaches the plan as a flag → value pair
//! (`Overrides::kind_flags`).
//!
//! clap's derive wants a field per flag, written where the struct is; these are not known
//! there, so [`KindFlags`] implements `clap::Args` and `clap::FromArgMatches` by hand over
//! `workload::registry::flags()`.

use crate::workload::api::{KindFlag, KindValue};
use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Command, ValueHint};
use std::ffi::OsString;

/// The kinds' flags given on the command line, each with its value, in registry order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindFlags {
    /// `("--image-archive", value)` for every kind flag given, under the flag's own spelling
    /// (an alias given is recorded as the flag).
    pub given: Vec<(String, OsString)>,
}

/// The argument's id: the flag without its dashes (`image-archive`).
fn id(f: &'static KindFlag) -> &'static str {
    f.flag().trim_start_matches("--")
}

/// The clap argument of one kind flag, its help from the kind's declaration as its row in
/// the flag table gives it (`knobs::kind_row`), its value checked as the kind declares it.
fn arg(f: &'static KindFlag) -> Arg {
    let a = Arg::new(id(f))
        .long(id(f))
        .visible_aliases(f.flags[1..].iter().map(|a| a.trim_start_matches("--")))
        .value_name(f.value_name)
        .help(crate::plan::knobs::kind_row(f).help())
        .action(ArgAction::Set);
    match f.value {
        KindValue::Path => a
            .value_parser(OsStringValueParser::new())
            .value_hint(ValueHint::AnyPath),
        KindValue::Word(check) => {
            a.value_parser(OsStringValueParser::new().try_map(move |v: OsString| {
                match v.to_str().map(check) {
                    Some(Ok(())) => Ok(v),
                    Some(Err(why)) => Err(why),
                    None => Err(format!("{v:?} is not UTF-8")),
                }
            }))
        }
    }
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
            if let Ok(Some(value)) = m.try_remove_one::<OsString>(id(f)) {
                self.given.retain(|(flag, _)| flag != f.flag());
                self.given.push((f.flag().to_string(), value));
            }
        }
        Ok(())
    }
}

/// A FAKE kind declaring a flag, registered as a new kind is (here on the test's thread): it
/// becomes a flag of `run` and `plan` with the help and value name it declares, and its value
/// reaches the overrides, with nothing written for it in `cli` or `plan`.
#[cfg(test)]
mod fake_kind {
    use crate::cli::{Cli, Command};
    use crate::metrics::MetricId;
    use crate::workload::api::{
        Cost, Describe, Family, Kind, KindFlag, KindValue, Needs, Workload, WorkloadOutput,
    };
    use crate::workload::spec::{JobDefaults, WorkloadSpec};
    use crate::workload::step::StepContext;
    use clap::{CommandFactory, Parser};

    struct Fake;

    impl Workload for Fake {
        fn kind(&self) -> Kind {
            Kind::named("test-fake-flag")
        }
        fn flags(&self) -> &'static [KindFlag] {
            &[KindFlag {
                flags: &["--test-fake-path"],
                value_name: "FILE",
                value: KindValue::Path,
                doc: "A FAKE kind's flag of the test.",
                merge: "given to every test-fake-flag workload",
                lands: "nowhere",
                alone: None,
                apply: |_, _| Ok(()),
            }]
        }
        fn family(&self) -> Family {
            Family::Application
        }
        fn needs(&self, _: &WorkloadSpec) -> Needs {
            Needs::NOTHING
        }
        fn emits(&self) -> &'static [MetricId] {
            &[]
        }
        fn example(&self) -> &'static str {
            "id = \"fake\"\nkind = \"test-fake-flag\""
        }
        fn cost(&self, _: &WorkloadSpec, _: &JobDefaults) -> Cost {
            Cost::Seconds(0.0)
        }
        fn describe(&self, _: &WorkloadSpec, _: &Describe<'_>) -> String {
            String::new()
        }
        fn run(&self, _: &mut StepContext<'_>, _: &WorkloadSpec) -> crate::Result<WorkloadOutput> {
            Ok(WorkloadOutput::default())
        }
    }

    #[test]
    fn a_kinds_flag_is_declared_in_the_kind_only() {
        crate::workload::registry::register_for_test(&Fake);
        let help = Cli::command()
            .find_subcommand_mut("plan")
            .unwrap()
            .render_help()
            .to_string();
        assert!(
            help.contains("--test-fake-path <FILE>")
                && help.contains("A FAKE kind's flag of the test"),
            "{help}"
        );
        let Command::Run(r) = Cli::try_parse_from(["fsbench", "run", "--test-fake-path", "/x"])
            .unwrap()
            .command
        else {
            unreachable!()
        };
        assert_eq!(
            r.overrides().kind_flags,
            [("--test-fake-path".to_string(), "/x".into())]
        );
        let row = crate::plan::knobs::markdown();
        assert!(row.contains("| `--test-fake-path` |"), "{row}");
    }
}
