//! `fsbench compare`: deltas between two results files (or the two halves of one), judged
//! with the one statistic (paired by round within one run, unpaired across runs), beyond
//! the control's drift when there is one.

use crate::cli::compare::{CompareArgs, CompareFormat};
use crate::report::compare;
use crate::results::Results;

/// Run `fsbench compare`; returns the exit code.
pub fn run(args: CompareArgs) -> crate::Result<i32> {
    let (a, b, a_name, b_name) = match (&args.split_rounds, &args.a, &args.b) {
        _ if args.against.is_some() => {
            if args.b.is_some() {
                return Err(crate::Error::invalid(
                    "--against",
                    "compares one results file (B) with a recorded run; give at most one file",
                ));
            }
            let against = args.against.as_deref().unwrap_or("last");
            super::history::against(&args.store, against, args.a.as_deref())?
        }
        (Some(path), _, _) => {
            let r = Results::load(path)?;
            let (odd, even) = compare::split::split_rounds(&r)?;
            let name =
                |h: &Results| format!("{} ({})", path.display(), compare::split::rounds_label(h));
            let (an, bn) = (name(&odd), name(&even));
            (odd, even, an, bn)
        }
        (None, Some(pa), Some(pb)) => (
            Results::load(pa)?,
            Results::load(pb)?,
            pa.display().to_string(),
            pb.display().to_string(),
        ),
        // clap requires both files unless --split-rounds is given.
        _ => {
            return Err(crate::Error::invalid(
                "compare",
                "give two results files (A.json B.json) or --split-rounds RESULTS.json",
            ));
        }
    };
    let opts = compare::Options {
        control: args.control.clone(),
        split_rounds: args.split_rounds.is_some(),
    };
    let c = compare::compare(&a, &b, &a_name, &b_name, &opts)?;
    let text = match args.format {
        CompareFormat::Table => compare::render_text(&c),
        CompareFormat::Md => compare::render_markdown(&c),
        CompareFormat::Json => compare::render_json(&c),
        CompareFormat::Html => compare::render_html(&c),
    };
    super::emit(args.output.as_deref(), text.as_bytes())?;
    Ok(crate::error::EXIT_OK)
}
