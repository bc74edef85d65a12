//! How `fsbench tune` searches, as the command resolved it: the stages' rounds, the budget, the
//! `--options` filter, the setups given with `--confirm` and how screening measures
//! (`--screen`). Both screening ([`super::screen`]) and the search ([`super::search`]) read it.

use super::candidate::Candidate;

/// How screening measures the values (`--screen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Screen {
    /// The fractional design where it costs no more setups than one at a time and has at
    /// least [`super::screen::AUTO_MIN_FACTORS`] options (7 in 8 runs, 11 in 12…: each
    /// effect then from every run, at the same cost), else one at a time.
    #[default]
    Auto,
    /// Each value alone against the baseline: no assumption about interactions.
    OneAtATime,
    /// Two-level factors in a resolution-III fractional design (every run informs every main
    /// effect; two-factor interactions alias into them), the rest one at a time.
    Fractional,
}

/// How the search runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Rounds of screening.
    pub screen_rounds: u32,
    /// Screening's looks after its first at most, one round each, of the values it has not
    /// separated yet, while the budget holds (0: screening is one look).
    pub screen_looks: u32,
    /// Rounds of each race look.
    pub race_rounds: u32,
    /// Race looks at most.
    pub race_looks: u32,
    /// Rounds of the confirmation.
    pub confirm_rounds: u32,
    /// Combinations raced per filesystem and durability class at most.
    pub cap: usize,
    /// Search values that weaken durability.
    pub allow_unsafe: bool,
    /// Wall-time budget, seconds.
    pub budget_s: f64,
    /// Which values may be searched: `(fs, factor, value)` → allowed (`--options`).
    pub allowed: fn(&Filter, &str, &str, &str) -> bool,
    /// The `--options` words (empty: all).
    pub filter: Filter,
    /// Setups to confirm without screening and racing (`--confirm`), each with the index of
    /// its baseline; empty: search.
    pub given: Vec<(usize, Candidate)>,
    /// How screening measures the values (`--screen`).
    pub screen: Screen,
}

impl Settings {
    /// Rounds of race look `look` (from 1): the first look needs `race_rounds` for an
    /// interval, each later one adds a single round, so every round the group-sequential
    /// rule spends α on is a look taken (looks every `race_rounds` rounds would leave the α
    /// of the rounds between unspent, and the bound wider than it needs to be).
    pub fn look_rounds(&self, look: usize) -> u32 {
        if look <= 1 { self.race_rounds } else { 1 }
    }

    /// Screening rounds at its last look.
    pub fn screen_max_rounds(&self) -> u32 {
        self.screen_rounds + self.screen_looks
    }

    /// Race rounds at the last look.
    pub fn race_max_rounds(&self) -> u32 {
        self.race_rounds + self.race_looks.saturating_sub(1)
    }
}

/// The `--options` subset: factor names or value names; empty means everything.
#[derive(Debug, Clone, Default)]
pub struct Filter(pub Vec<String>);

/// Whether `--options` lets value `value` of `factor` be searched.
pub fn allowed(f: &Filter, _fs: &str, factor: &str, value: &str) -> bool {
    f.0.is_empty() || f.0.iter().any(|w| w == factor || w == value)
}

/// The `--options` words that name nothing in the spaces of `baselines` (exit 2).
pub fn unknown_options(filter: &Filter, baselines: &[Candidate]) -> Vec<String> {
    filter
        .0
        .iter()
        .filter(|w| {
            !baselines.iter().any(|b| {
                b.space.factors.iter().any(|f| {
                    f.name == w.as_str() || f.values.iter().any(|v| v.name() == w.as_str())
                })
            })
        })
        .cloned()
        .collect()
}

/// The tests' settings: 3 rounds to screen (one look) and confirm, race looks of 2 rounds and 3 looks
/// at most, a cap of 8, a budget of 1000 s, `options` searched (empty: all), safe values only.
#[cfg(test)]
pub fn of_tests(options: &[&str]) -> Settings {
    Settings {
        screen_rounds: 3,
        screen_looks: 0,
        race_rounds: 2,
        race_looks: 3,
        confirm_rounds: 3,
        cap: 8,
        allow_unsafe: false,
        budget_s: 1000.0,
        allowed,
        filter: Filter(options.iter().map(|s| s.to_string()).collect()),
        given: Vec::new(),
        screen: Screen::OneAtATime,
    }
}
