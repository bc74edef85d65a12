//! Exporters behind one trait (terminal, Markdown, CSV, JSON, HTML) and recommendations.

use crate::results::Results;

/// The seed-style terminal table (rows = tests, columns = setups, median with (min–max)).
pub fn render_terminal(results: &Results) -> String {
    let _ = results;
    todo!("report::render_terminal")
}
