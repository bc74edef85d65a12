//! `fsbench claims`: every checkable statement of the seeds, with the claim that checks it (and
//! its verdict in a results file) or the reason none does.

use crate::claims::coverage;
use crate::cli::claims::ClaimsArgs;
use crate::results::Results;

/// Run `fsbench claims`; returns the exit code.
pub fn run(args: ClaimsArgs) -> crate::Result<i32> {
    let verdicts = match &args.results {
        Some(path) => Some(crate::claims::evaluate(&Results::load(path)?)),
        None => None,
    };
    let doc = coverage::document(verdicts.as_deref());
    let bytes = if args.json {
        let mut s = serde_json::to_string_pretty(&doc).expect("the claims document serializes");
        s.push('\n');
        s.into_bytes()
    } else {
        coverage::text(&doc).into_bytes()
    };
    super::emit(args.output.as_deref(), &bytes)?;
    Ok(0)
}
