//! Exporters behind one trait (terminal, Markdown, CSV, JSON, HTML) and recommendations.
