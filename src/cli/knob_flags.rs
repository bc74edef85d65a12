//! The flags of the knobs both a plan file and the flags give, generated from their list
//! (`knobs::plan_knobs!`): [`SwitchFlags`] (`--until-settled`, `--warmup`…) and
//! [`ValueFlags`] (`--rounds`, `--runtime`…), each flag named, helped and parsed by its row,
//! so a new knob writes no clap field and no `overrides()` line. A value's type says how its
//! flag reads it ([`FlagValue`]: a count, a duration, a real number, a choice), so every flag
//! of one type refuses a bad value alike: exit 2, naming the flag and what to give.
//!
//! The knobs the list marks `by_hand` (`--steady-state` and its companions, `--precondition`)
//! keep their clap fields in `steady_flags.rs`, shared with `fsbench io`; a test here checks
//! them against their rows.

use crate::plan::knobs::*;
use crate::plan::params::{self as P, Param, Unit};
use clap::builder::{EnumValueParser, ValueParser};
use std::time::Duration;

/// What a value knob's flag shows, from the table its row is in: its name, value name and
/// help.
pub trait FlagRow: Sync + 'static {
    /// The flag without its dashes (`rounds`): the row's first.
    fn long(&'static self) -> &'static str;
    /// What `--help` shows after the flag (`N`, `TIME`); a choice is named by its field
    /// (`ERROR`), as clap names a derived one.
    fn value_name(&self, field: &str) -> String;
    /// The `--help` text.
    fn help(&self) -> String;
}

/// A number's row: the value name its unit writes (`N`, `TIME`, `X`, `SIZE`, `PERCENT`, the
/// names `cli`'s test takes for a number) and its range in the help.
impl FlagRow for Param {
    fn long(&'static self) -> &'static str {
        long_of(self.flags)
    }
    fn value_name(&self, _: &str) -> String {
        match self.unit {
            Unit::Count => "N",
            Unit::Seconds => "TIME",
            Unit::Real => "X",
            Unit::Bytes => "SIZE",
            Unit::Percent => "PERCENT",
        }
        .to_string()
    }
    fn help(&self) -> String {
        Param::help(self)
    }
}

/// Any other row: a text's value name as it writes it, a choice's its field's.
impl FlagRow for Knob {
    fn long(&'static self) -> &'static str {
        long_of(self.flags)
    }
    fn value_name(&self, field: &str) -> String {
        match self.value {
            Value::Text(name) | Value::List(name) => name.to_string(),
            _ => field.to_uppercase(),
        }
    }
    fn help(&self) -> String {
        Knob::help(self)
    }
}

/// How a value knob's flag parses its value, by the value's type, from the row that declares
/// it: the row's range checked, its message naming what to give.
pub trait FlagValue: Sized + Clone + Send + Sync + 'static {
    /// The table the row is in: [`Param`] for a number (its range), [`Knob`] for the rest.
    type Row: FlagRow;
    /// The clap parser.
    fn parser(row: &'static Self::Row) -> ValueParser;
}

/// `--rounds` without its dashes.
fn long_of(flags: &'static [&'static str]) -> &'static str {
    let flag = flags.first().expect("a value knob's row has a flag");
    flag.trim_start_matches("--")
}

/// A whole number in its row's range (`--rounds 3`).
impl FlagValue for u32 {
    type Row = Param;
    fn parser(row: &'static Param) -> ValueParser {
        ValueParser::new(row.count_arg::<u32>())
    }
}

/// A duration in its row's range (`--runtime 30s`).
impl FlagValue for Duration {
    type Row = Param;
    fn parser(row: &'static Param) -> ValueParser {
        ValueParser::new(row.duration_arg())
    }
}

/// A real number in its row's range (`--corpus-scale 0.5`).
impl FlagValue for f64 {
    type Row = Param;
    fn parser(row: &'static Param) -> ValueParser {
        ValueParser::new(row.real_arg())
    }
}

/// `per-question` or `per-run` (`--error`); its row lists the same names (a test in
/// `cli/mod.rs` checks).
impl FlagValue for crate::results::ErrorControl {
    type Row = Knob;
    fn parser(_: &'static Knob) -> ValueParser {
        EnumValueParser::<Self>::new().into()
    }
}

/// Declares [`SwitchFlags`] and [`ValueFlags`] from the list `knobs::plan_knobs!` hands it:
/// a switch's flag is named by its field (`by_setup`: `--by-setup`; a test below checks it is
/// its row's), a value's by its row, each with its row's help, in the list's order. The rows
/// are named as the list writes them, so they resolve where this is expanded.
macro_rules! knob_flags {
    (
        switches { $($(#[doc = $sdoc:literal])* $switch:ident = $srow:ident $(in $splan:ident)?;)* }
        values { $($(#[doc = $vdoc:literal])* $value:ident: Option<$vty:ty> = $vread:ident($vrow:expr) $(in $vplan:ident)?;)* }
        by_hand { $($hand:tt)* }
    ) => {
        /// The switches a plan file has keys for too, one flag each, in the list's order.
        #[derive(Debug, Clone, clap::Args)]
        pub struct SwitchFlags {
            $(
                $(#[doc = $sdoc])*
                #[arg(help = $srow.help(), long)]
                pub $switch: bool,
            )*
        }

        impl SwitchFlags {
            /// `values` with these switches set.
            pub fn over(&self, mut values: PlanValues) -> PlanValues {
                $(values.$switch = self.$switch;)*
                values
            }
        }

        /// The values a plan file has keys for too, one flag each, in the list's order.
        #[derive(Debug, Clone, clap::Args)]
        pub struct ValueFlags {
            $(
                $(#[doc = $vdoc])*
                #[arg(
                    long = $crate::cli::knob_flags::FlagRow::long($vrow),
                    value_name = $crate::cli::knob_flags::FlagRow::value_name($vrow, stringify!($value)),
                    help = $crate::cli::knob_flags::FlagRow::help($vrow),
                    value_parser = <$vty as $crate::cli::knob_flags::FlagValue>::parser($vrow),
                )]
                pub $value: Option<$vty>,
            )*
        }

        impl ValueFlags {
            /// `values` with the values these flags give (`None` where not given).
            pub fn over(&self, mut values: PlanValues) -> PlanValues {
                $(values.$value = ::std::clone::Clone::clone(&self.$value);)*
                values
            }
        }
    };
}

plan_knobs!(knob_flags {});

/// The recipe for a knob (docs/ARCHITECTURE.md, "A flag or plan key"), followed by a test: a
/// FAKE switch and a FAKE value declared as new ones are — their rows and their lines in a
/// list like `knobs::plan_knobs!` — get their flags, their plan-file keys, the override rule
/// and their place in the plan from the same macros the real list goes through, with nothing
/// else written.
#[cfg(test)]
mod knob_recipe {
    use crate::plan::knobs::{Knob, Merge, Reader, plan_values};
    use crate::plan::params::Param;
    use clap::{CommandFactory, Parser};

    /// The FAKE switch's row, as it would stand in `knobs!`.
    static TEST_SWITCH: Knob = Knob::switch("test switch", "A FAKE switch of the recipe's test.")
        .flags(&["--test-switch"])
        .key("test_switch")
        .merge(Merge::Either)
        .lands("plan.json plan.test_switch");

    /// The FAKE value's row, as it would stand in the parameter table.
    static TEST_VALUE: Param =
        Param::count("test value", 1, 9, "A FAKE value of the recipe's test")
            .flags(&["--test-value"])
            .key("test_value");

    /// The FAKE list, as `knobs::plan_knobs!` is written: one line for each.
    macro_rules! fake_knobs {
        ($then:ident { $($pass:tt)* }) => {
            $then! {
                switches {
                    /// The FAKE switch (`--test-switch`, `test_switch`).
                    test_switch = TEST_SWITCH in plan;
                }
                values {
                    /// The FAKE value (`--test-value`, `test_value`).
                    test_value: Option<u32> = count(&TEST_VALUE) in plan;
                }
                by_hand {}
                $($pass)*
            }
        };
    }

    fake_knobs!(plan_values {});
    fake_knobs!(knob_flags {});

    #[derive(Debug, Parser)]
    struct Cmd {
        #[command(flatten)]
        values: ValueFlags,
        #[command(flatten)]
        switches: SwitchFlags,
    }

    impl Cmd {
        fn values(args: &[&str]) -> Result<PlanValues, clap::Error> {
            let c = Cmd::try_parse_from(std::iter::once("fsbench").chain(args.iter().copied()))?;
            Ok(c.switches.over(c.values.over(PlanValues::default())))
        }
    }

    /// Stands where `Plan` flattens what lands as given.
    #[derive(serde::Serialize)]
    struct FakePlan {
        rounds: u32,
        #[serde(flatten)]
        given: PlanGiven,
    }

    fn from_file(text: &str) -> crate::Result<PlanValues> {
        let table: toml::Table = toml::from_str(text).unwrap();
        PlanValues::from_plan(&Reader::new(&table, text, "p.toml"))
    }

    #[test]
    fn a_switch_is_its_row_and_its_line() {
        // The flag, with its row's help.
        let given = Cmd::values(&["--test-switch"]).unwrap();
        assert!(given.test_switch);
        assert!(!Cmd::values(&[]).unwrap().test_switch);
        let help = Cmd::command().render_help().to_string();
        assert!(
            help.contains("--test-switch") && help.contains("A FAKE switch of the recipe's test"),
            "{help}"
        );
        // The plan-file key, read by the row's key; a wrong type names the line and the key.
        let file = from_file("\ntest_switch = true\n").unwrap();
        assert!(file.test_switch);
        let e = from_file("test_switch = 1\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("p.toml:1: test_switch: expected true or false"),
            "{e}"
        );
        // The override rule: on when the flag or the file turns it on.
        assert!(PlanValues::default().over(&file).test_switch);
        assert!(given.over(&PlanValues::default()).test_switch);
        // Its place in the plan: flattened beside the plan's other fields, as plan.json has it.
        let plan = FakePlan {
            rounds: 2,
            given: given.in_plan(),
        };
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["test_switch"], true, "{json}");
        let back: PlanGiven = serde_json::from_str("{}").unwrap();
        assert!(
            !back.test_switch,
            "an older plan.json without it reads as off"
        );
    }

    #[test]
    fn a_value_is_its_row_and_its_line() {
        // The flag, named, helped and parsed by its row: value name and range in `--help`.
        let given = Cmd::values(&["--test-value", "7"]).unwrap();
        assert_eq!(given.test_value, Some(7));
        assert_eq!(Cmd::values(&[]).unwrap().test_value, None);
        let help = Cmd::command().render_help().to_string();
        assert!(
            help.contains("--test-value <N>")
                && help.contains("A FAKE value of the recipe's test [1–9]"),
            "{help}"
        );
        // A value outside the row's range is bad input (exit 2), naming the flag and the range.
        let e = Cmd::values(&["--test-value", "10"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        assert!(
            msg.contains("--test-value") && msg.contains("give a value from 1 to 9"),
            "{msg}"
        );
        // The plan-file key, read by the row's key; a wrong type names the line and the key.
        let file = from_file("test_value = 3\n").unwrap();
        assert_eq!(file.test_value, Some(3));
        let e = from_file("\ntest_value = \"3\"\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("p.toml:2: test_value: expected a whole number"),
            "{e}"
        );
        // The override rule: the flag, else the plan file.
        assert_eq!(given.over(&file).test_value, Some(7));
        assert_eq!(PlanValues::default().over(&file).test_value, Some(3));
        // Its place in the plan, as given; an older plan.json without it reads as not given.
        let plan = FakePlan {
            rounds: 2,
            given: given.over(&file).in_plan(),
        };
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["test_value"], 7, "{json}");
        let back: PlanGiven = serde_json::from_str("{}").unwrap();
        assert_eq!(back.test_value, None);
    }
}

/// The real list checked against its rows: every switch's flag and key are its field's name,
/// one marked `in plan` lands in the resolved plan.json under it, and every knob written by
/// hand has its row's flag and help in `run` and `plan` and reaches the overrides.
#[cfg(test)]
mod rows {
    use crate::cli::{Cli, Command};
    use crate::plan::knobs::*;
    use clap::{CommandFactory, Parser};

    macro_rules! check_rows {
        (
            switches { $($(#[doc = $sdoc:literal])* $switch:ident = $srow:ident $(in $splan:ident)?;)* }
            values { $($values:tt)* }
            by_hand { $($(#[doc = $hdoc:literal])* $hand:ident: $hty:ty = $hread:ident($hrow:expr);)* }
        ) => {
            $(
                let row = &crate::plan::knobs::$srow;
                let flag = format!("--{}", stringify!($switch).replace('_', "-"));
                assert_eq!(row.flags, [flag.as_str()], "{}", row.name);
                assert_eq!(row.key, Some(stringify!($switch)), "{}", row.name);
                $(
                    assert_eq!(stringify!($splan), "plan");
                    let mut o = crate::plan::Overrides::default();
                    o.values.$switch = true;
                    let json = resolved(&o);
                    assert_eq!(json[stringify!($switch)], true, "{}", row.name);
                    assert_eq!(resolved(&Default::default())[stringify!($switch)], false);
                    assert!(row.lands.contains(&format!("plan.{}", stringify!($switch))), "{}", row.name);
                )?
            )*
            $(
                let row: &Knob = $hrow;
                assert!(row.key.is_some(), "{}", row.name);
                for sub in ["run", "plan"] {
                    let cmd = Cli::command();
                    let sub = cmd.find_subcommand(sub).unwrap();
                    let arg = sub
                        .get_arguments()
                        .find(|a| a.get_long().map(|l| format!("--{l}")).as_deref() == Some(row.flags[0]))
                        .unwrap_or_else(|| panic!("{}: no {} in {}", row.name, row.flags[0], sub.get_name()));
                    assert_eq!(arg.get_help().map(|h| h.to_string()), Some(row.help()), "{}", row.name);
                }
                // Given alone (a switch, or a value with a default), the flag reaches its value.
                let Command::Plan(p) = Cli::try_parse_from(["fsbench", "plan", row.flags[0]]).unwrap().command else {
                    unreachable!()
                };
                assert_ne!(
                    p.plan.overrides().values.$hand,
                    PlanValues::default().$hand,
                    "{}",
                    row.name
                );
            )*
        };
    }

    fn resolved(o: &crate::plan::Overrides) -> serde_json::Value {
        let src = crate::plan::resolve::Source::new(o, None).unwrap();
        let inv =
            crate::plan::resolve::resolve(&src, o, &crate::host::facts::HostFacts::fixed(), vec![])
                .unwrap();
        serde_json::to_value(&inv.plan).unwrap()
    }

    #[test]
    fn every_switch_and_hand_written_knob_matches_its_row() {
        plan_knobs!(check_rows {});
    }
}
