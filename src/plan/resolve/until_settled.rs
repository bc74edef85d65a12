//! `--until-settled` (or the plan file's `until_settled`) with its budget and round limit.

use crate::Error;
use crate::plan::PlanValues;
use std::time::Duration;

/// `--until-settled` (or the plan file's `until_settled`) with its budget and round limit;
/// `--budget`/`--max-rounds` alone are refused (they only bound extra rounds).
pub(super) fn resolve_settle(
    flags: &PlanValues,
    v: &PlanValues,
    rounds: u32,
) -> crate::Result<Option<crate::plan::Settle>> {
    if !v.until_settled {
        for (flag, given) in [
            ("--budget", flags.budget.is_some()),
            ("--max-rounds", flags.max_rounds.is_some()),
        ] {
            if given {
                return Err(Error::invalid(
                    flag,
                    format!(
                        "{flag} bounds the extra rounds of --until-settled; add --until-settled or drop {flag}"
                    ),
                ));
            }
        }
        return Ok(None);
    }
    let budget = v.budget.unwrap_or(Duration::from_secs(30 * 60));
    let max_rounds = v.max_rounds.unwrap_or(15);
    if max_rounds < rounds {
        return Err(Error::invalid(
            "--max-rounds",
            format!(
                "{max_rounds} is below --rounds {rounds}, the minimum: raise --max-rounds or lower --rounds"
            ),
        ));
    }
    Ok(Some(crate::plan::Settle { budget, max_rounds }))
}
