//! JSON exporter: the results file itself, with its summary recomputed from the samples, and,
//! when crash workloads ran, the durability verdict under `durability` (derived, like the
//! summary: a reader of the results file ignores it).

use super::{Exporter, Report};

/// JSON exporter.
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> crate::Result<Vec<u8>> {
        let err =
            |e: serde_json::Error| crate::Error::Other(format!("cannot serialize results: {e}"));
        let durability = report
            .recommendations
            .iter()
            .find_map(|r| r.durability.as_ref());
        let mut v = match durability {
            None => serde_json::to_vec_pretty(&report.results).map_err(err)?,
            Some(d) => {
                let mut value = serde_json::to_value(&report.results).map_err(err)?;
                if let Some(o) = value.as_object_mut() {
                    o.insert("durability".into(), serde_json::to_value(d).map_err(err)?);
                }
                serde_json::to_vec_pretty(&value).map_err(err)?
            }
        };
        v.push(b'\n');
        Ok(v)
    }
}
