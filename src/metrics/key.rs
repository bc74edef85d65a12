//! The metric of a sample, a summary row or a series: a registered [`MetricId`], or the id
//! string of one this build does not know.

use super::{MetricDef, MetricId, def, lookup};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// The metric a recorded value is of. What fsbench measures is always [`MetricKey::Known`]
/// (built from a [`MetricId`]: `metric: registry::IOPS.into()`); a results.json or a history
/// store written by an older or a newer fsbench may name an id this build does not know, kept
/// verbatim as [`MetricKey::Unknown`] and shown as a not-ranked fact. Serialized as the plain
/// id string, so results.json is unchanged by the type.
///
/// Equality, order and hash are those of the id string (a known and an unknown key never
/// spell the same id: [`MetricKey::parse`] makes every registered id known).
#[derive(Debug, Clone)]
pub enum MetricKey {
    /// A registered metric.
    Known(MetricId),
    /// An id the registry does not declare (from a file of another fsbench version).
    Unknown(String),
}

impl MetricKey {
    /// The key of an id read from a file or a store: known when the registry declares it.
    pub fn parse(id: &str) -> MetricKey {
        match lookup(id) {
            Some(d) => MetricKey::Known(d.id),
            None => MetricKey::Unknown(id.to_string()),
        }
    }

    /// The id as stored in `results.json`.
    pub fn as_str(&self) -> &str {
        match self {
            MetricKey::Known(id) => id.as_str(),
            MetricKey::Unknown(s) => s,
        }
    }

    /// The registered id, if it is one.
    pub fn id(&self) -> Option<MetricId> {
        match self {
            MetricKey::Known(id) => Some(*id),
            MetricKey::Unknown(_) => None,
        }
    }

    /// Its definition ([`super::UNKNOWN`] for an unknown id).
    pub fn def(&self) -> &'static MetricDef {
        def(self.as_str())
    }
}

impl From<MetricId> for MetricKey {
    fn from(id: MetricId) -> Self {
        MetricKey::Known(id)
    }
}

impl Default for MetricKey {
    /// An empty unknown id (what `Sample::default()` holds until a metric is set).
    fn default() -> Self {
        MetricKey::Unknown(String::new())
    }
}

impl AsRef<str> for MetricKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for MetricKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl PartialEq for MetricKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for MetricKey {}

impl PartialEq<MetricId> for MetricKey {
    fn eq(&self, other: &MetricId) -> bool {
        // By the string, as `==` between keys is, whichever variant built the key.
        self.as_str() == other.as_str()
    }
}

impl PartialEq<MetricKey> for MetricId {
    fn eq(&self, other: &MetricKey) -> bool {
        other == self
    }
}

impl Hash for MetricKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialOrd for MetricKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MetricKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl serde::Serialize for MetricKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for MetricKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = <String as serde::Deserialize>::deserialize(d)?;
        Ok(MetricKey::parse(&id))
    }
}

impl<'de> serde::Deserialize<'de> for MetricId {
    /// Only a registered id: what names a metric fsbench ships (a claim) must be one.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = <String as serde::Deserialize>::deserialize(d)?;
        lookup(&id).map(|m| m.id).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "metric {id:?} is not in metrics::registry (docs/ARCHITECTURE.md, \"A metric\")"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::registry::{IOPS, LAT_P99_MS};
    use super::*;

    #[test]
    fn a_key_is_its_id_string_in_json_and_knows_whether_it_is_registered() {
        let known: MetricKey = serde_json::from_str("\"iops\"").unwrap();
        assert_eq!(known, IOPS);
        assert_eq!(known, MetricKey::from(IOPS));
        assert_eq!(serde_json::to_string(&known).unwrap(), "\"iops\"");
        let unknown: MetricKey = serde_json::from_str("\"iops_but_new\"").unwrap();
        assert_eq!(unknown.id(), None);
        assert_eq!(unknown.as_str(), "iops_but_new");
        assert_eq!(unknown.def().role, super::super::Role::Fact);
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "\"iops_but_new\"");
        // Ordered as the strings are, whether known or not.
        let mut keys = [unknown.clone(), LAT_P99_MS.into(), known.clone()];
        keys.sort();
        let ids: Vec<&str> = keys.iter().map(MetricKey::as_str).collect();
        assert_eq!(ids, ["iops", "iops_but_new", "lat_p99_ms"]);
        assert_eq!(MetricKey::parse("iops"), IOPS);
        assert!(serde_json::from_str::<MetricId>("\"iops\"").is_ok());
        assert!(serde_json::from_str::<MetricId>("\"iops_but_new\"").is_err());
    }
}
