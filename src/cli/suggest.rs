//! Completion hints for free-form flags: `--profile`, `--only`, `--skip` accept any string
//! (a plan file may define its own workload ids), but shells and `--help` should still offer
//! the known ones.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

/// A string parser that accepts every value and lists `known()` as possible values for
/// completion scripts; validation stays with the command (which names the flag at fault).
#[derive(Clone, Copy)]
pub struct Suggest {
    known: fn() -> Vec<String>,
}

impl Suggest {
    /// Suggest the values `known` returns.
    pub fn new(known: fn() -> Vec<String>) -> Self {
        Suggest { known }
    }
}

impl TypedValueParser for Suggest {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.known)().into_iter().map(PossibleValue::new)))
    }
}
