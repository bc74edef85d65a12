//! JSON exporter: the results file itself, with its summary recomputed from the samples.

use super::{Exporter, Report};

/// JSON exporter.
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(&report.results)
            .map_err(|e| crate::Error::Other(format!("cannot serialize results: {e}")))?;
        v.push(b'\n');
        Ok(v)
    }
}
