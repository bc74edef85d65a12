//! `fsbench compare`: deltas between two results files and whether they are significant.

use crate::cli::compare::{CompareArgs, CompareFormat};
use crate::report::compare;
use crate::results::Results;
use std::io::Write;

/// Run `fsbench compare`; returns the exit code.
pub fn run(args: CompareArgs) -> crate::Result<i32> {
    let a = Results::load(&args.a)?;
    let b = Results::load(&args.b)?;
    let c = compare::compare(
        &a,
        &b,
        &args.a.display().to_string(),
        &args.b.display().to_string(),
    )?;
    let text = match args.format {
        CompareFormat::Table => compare::render_text(&c),
        CompareFormat::Md => compare::render_markdown(&c),
        CompareFormat::Json => compare::render_json(&c),
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    Ok(crate::error::EXIT_OK)
}
