//! `fsbench report`: re-render a results.json in any format.

use crate::cli::report::ReportArgs;
use crate::report::csv::{Csv, CsvSection};
use crate::report::terminal::Terminal;
use crate::report::{Exporter, Format, Report, exporter};
use crate::results::Results;
use std::io::Write;

/// Run `fsbench report`; returns the exit code.
pub fn run(args: ReportArgs) -> crate::Result<i32> {
    let results = Results::load(&args.results)?;
    let report = Report::new(&results);
    let exporter = |format: Format| -> Box<dyn Exporter> {
        match format {
            Format::Table => Box::new(Terminal { wide: args.wide }),
            f => exporter(f),
        }
    };
    match &args.output {
        None => {
            let bytes = if args.format == Format::Csv {
                Csv(args.csv_section).render(&report)?
            } else {
                exporter(args.format).render(&report)?
            };
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = out.write_all(&bytes).and_then(|_| out.flush());
        }
        Some(path) => {
            let bytes = exporter(args.format).render(&report)?;
            crate::report::write_shareable(path, &bytes)?;
            if args.format == Format::Csv {
                let summary = path.with_extension("summary.csv");
                crate::report::write_shareable(
                    &summary,
                    &Csv(CsvSection::Summary).render(&report)?,
                )?;
                eprintln!("wrote {} and {}", path.display(), summary.display());
            } else {
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(crate::error::EXIT_OK)
}
