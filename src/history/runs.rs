//! The history's typed API over a [`Store`]: record a run, list runs, read one back, and the
//! samples `trend` and `check` work on. The SQL is here and only here.

use super::identity;
use super::location::Location;
use super::store::{Store, Value, in_transaction};
use crate::results::Results;
use crate::{Error, Result};

/// An open history: a store at the current schema version.
pub struct History {
    store: Box<dyn Store>,
}

/// One run as `fsbench history` lists it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// The run's id in this store (what `show`, `export` and `compare --against` take).
    pub id: i64,
    /// When it was recorded (RFC 3339, UTC).
    pub recorded_at: String,
    /// When the run started.
    pub started_at: String,
    /// `run`, `io`, `meta` or `import`.
    pub source: String,
    /// The results directory it was recorded from.
    pub results_dir: String,
    /// Host name.
    pub hostname: String,
    /// `/etc/machine-id`, when known.
    pub machine_id: String,
    /// Kernel release.
    pub kernel: String,
    /// fsbench version.
    pub fsbench_version: String,
    /// Profile or plan name.
    pub profile: String,
    /// [`identity::plan_hash`].
    pub plan_hash: String,
    /// [`identity::Device::key`].
    pub device_key: String,
    /// [`identity::Device::label`].
    pub device_label: String,
    /// Setup names, in plan order.
    pub setups: Vec<String>,
    /// Whether the run was interrupted.
    pub partial: bool,
}

/// One sample with the run it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    /// Run id.
    pub run_id: i64,
    /// Setup name.
    pub setup: String,
    /// Workload id.
    pub workload: String,
    /// Metric id.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Round.
    pub round: u32,
    /// Value.
    pub value: f64,
}

/// Which runs to list (every field a substring or exact match; empty: any).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Part of the device key or label.
    pub device: Option<String>,
    /// Part of the host name.
    pub host: Option<String>,
    /// A setup the run has (exact).
    pub setup: Option<String>,
    /// The profile (exact).
    pub profile: Option<String>,
}

impl Filter {
    /// Whether `r` passes.
    pub fn matches(&self, r: &RunRow) -> bool {
        let has = |f: &Option<String>, hay: &[&str]| {
            f.as_deref()
                .is_none_or(|n| hay.iter().any(|h| h.contains(n)))
        };
        has(&self.device, &[&r.device_key, &r.device_label])
            && has(&self.host, &[&r.hostname])
            && self
                .setup
                .as_deref()
                .is_none_or(|s| r.setups.iter().any(|x| x == s))
            && self.profile.as_deref().is_none_or(|p| r.profile == p)
    }
}

/// What a recording did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// A new run with this id.
    New(i64),
    /// The store already had this run (same start, host, device and plan), with this id.
    Already(i64),
}

const RUN_COLUMNS: &str = "id, recorded_at, started_at, source, results_dir, hostname, \
    machine_id, kernel, fsbench_version, profile, plan_hash, device_key, device_label, setups, \
    partial";

fn run_row(r: &[Value]) -> RunRow {
    RunRow {
        id: r[0].int(),
        recorded_at: r[1].text(),
        started_at: r[2].text(),
        source: r[3].text(),
        results_dir: r[4].text(),
        hostname: r[5].text(),
        machine_id: r[6].text(),
        kernel: r[7].text(),
        fsbench_version: r[8].text(),
        profile: r[9].text(),
        plan_hash: r[10].text(),
        device_key: r[11].text(),
        device_label: r[12].text(),
        setups: r[13]
            .text()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        partial: r[14].int() != 0,
    }
}

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl History {
    /// Open (and with `create`, create) the store at `loc`, migrated to the current schema.
    pub fn open(loc: &Location, create: bool) -> Result<History> {
        let mut store: Box<dyn Store> = match loc {
            Location::Sqlite(p) => Box::new(super::sqlite::Sqlite::open(p, create)?),
            Location::Postgres(t) => Box::new(super::postgres::Postgres::connect(t)?),
        };
        super::schema::migrate(store.as_mut())?;
        Ok(History { store })
    }

    /// Wrap an already open store (tests of the upgrade path).
    pub fn from_store(mut store: Box<dyn Store>) -> Result<History> {
        super::schema::migrate(store.as_mut())?;
        Ok(History { store })
    }

    /// Where the store is (no password).
    pub fn shown(&self) -> String {
        self.store.shown().to_string()
    }

    /// Record `results` (from `source`: `run`, `io`, `meta`, `import`; read from `dir`) in one
    /// transaction; a run the store already holds is not recorded twice.
    pub fn record(&mut self, results: &Results, source: &str, dir: &str) -> Result<Recorded> {
        let dev = identity::device(results);
        let plan_hash = identity::plan_hash(results);
        let h = &results.host;
        let machine_id = h.extra.get("machine_id").cloned().unwrap_or_default();
        let profile = h.extra.get("plan").cloned().unwrap_or_default();
        let setups: Vec<&str> = results.setups.iter().map(|s| s.name.as_str()).collect();
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let body = json(results);
        in_transaction(self.store.as_mut(), false, |s| {
            let dup = s.query(
                "SELECT id FROM fsbench_runs WHERE started_at = $1 AND hostname = $2 \
                 AND device_key = $3 AND plan_hash = $4",
                &[
                    results.started_at.as_str().into(),
                    h.hostname.as_str().into(),
                    dev.key.as_str().into(),
                    plan_hash.as_str().into(),
                ],
            )?;
            if let Some(row) = dup.first()
                && !results.started_at.is_empty()
            {
                return Ok(Recorded::Already(row[0].int()));
            }
            let rows = s.query(
                "INSERT INTO fsbench_runs (recorded_at, started_at, finished_at, source, \
                 results_dir, hostname, machine_id, kernel, fsbench_version, tool_versions, \
                 profile, plan_hash, device_key, device_label, device_kind, device_model, \
                 device_serial, device_wwn, device_size, backing_device, setups, partial, \
                 results_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
                 $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) RETURNING id",
                &[
                    now.as_str().into(),
                    results.started_at.as_str().into(),
                    results.finished_at.as_str().into(),
                    source.into(),
                    dir.into(),
                    h.hostname.as_str().into(),
                    machine_id.into(),
                    h.kernel.as_str().into(),
                    results.fsbench_version.as_str().into(),
                    json(&h.tool_versions).into(),
                    profile.into(),
                    plan_hash.as_str().into(),
                    dev.key.as_str().into(),
                    dev.label.as_str().into(),
                    dev.kind.as_str().into(),
                    dev.model.as_str().into(),
                    dev.serial.as_str().into(),
                    dev.wwn.as_str().into(),
                    Value::Int(dev.size as i64),
                    dev.backing.as_str().into(),
                    setups.join(",").into(),
                    Value::Int(results.partial.into()),
                    body.as_str().into(),
                ],
            )?;
            let id = rows
                .first()
                .map(|r| r[0].int())
                .ok_or_else(|| Error::Other("the store returned no id for the new run".into()))?;
            for st in &results.setups {
                s.execute(
                    "INSERT INTO fsbench_setups (run_id, name, fs, options, mkfs_args, \
                     mount_opts, properties, host_settings) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[
                        Value::Int(id),
                        st.name.as_str().into(),
                        st.fs.as_str().into(),
                        json(&st.options).into(),
                        json(&st.mkfs_args).into(),
                        st.mount_opts.as_str().into(),
                        json(&st.properties).into(),
                        json(&st.host).into(),
                    ],
                )?;
            }
            for x in &results.samples {
                s.execute(
                    "INSERT INTO fsbench_samples (run_id, setup, workload, metric, unit, round, \
                     value) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        Value::Int(id),
                        x.setup.as_str().into(),
                        x.workload.as_str().into(),
                        x.metric.as_str().into(),
                        x.unit.as_str().into(),
                        Value::Int(x.round.into()),
                        Value::Real(x.value),
                    ],
                )?;
            }
            Ok(Recorded::New(id))
        })
    }

    /// Every run passing `filter`, newest first (by start time, then id).
    pub fn list(&mut self, filter: &Filter) -> Result<Vec<RunRow>> {
        let rows = self.store.query(
            &format!("SELECT {RUN_COLUMNS} FROM fsbench_runs ORDER BY started_at DESC, id DESC"),
            &[],
        )?;
        Ok(rows
            .iter()
            .map(|r| run_row(r))
            .filter(|r| filter.matches(r))
            .collect())
    }

    /// One run and its results file, as recorded.
    pub fn get(&mut self, id: i64) -> Result<Option<(RunRow, Results)>> {
        let rows = self.store.query(
            &format!("SELECT {RUN_COLUMNS}, results_json FROM fsbench_runs WHERE id = $1"),
            &[Value::Int(id)],
        )?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let results: Results = serde_json::from_str(&r[15].text()).map_err(|e| {
            Error::Other(format!(
                "history run {id}: its stored results.json does not load: {e}"
            ))
        })?;
        Ok(Some((run_row(r), results)))
    }

    /// Every sample in the store, or those of one (setup, workload, metric).
    pub fn samples(&mut self, key: Option<(&str, &str, &str)>) -> Result<Vec<SampleRow>> {
        let cols = "run_id, setup, workload, metric, unit, round, value";
        let rows = match key {
            Some((s, w, m)) => self.store.query(
                &format!(
                    "SELECT {cols} FROM fsbench_samples WHERE setup = $1 AND workload = $2 \
                     AND metric = $3 ORDER BY run_id, round"
                ),
                &[s.into(), w.into(), m.into()],
            )?,
            None => self.store.query(
                &format!("SELECT {cols} FROM fsbench_samples ORDER BY run_id, round"),
                &[],
            )?,
        };
        Ok(rows
            .iter()
            .map(|r| SampleRow {
                run_id: r[0].int(),
                setup: r[1].text(),
                workload: r[2].text(),
                metric: r[3].text(),
                unit: r[4].text(),
                round: r[5].int().max(0) as u32,
                value: r[6].real(),
            })
            .collect())
    }

    /// The schema version the store is at.
    pub fn schema_version(&mut self) -> Result<i64> {
        let rows = self
            .store
            .query("SELECT MAX(version) FROM fsbench_schema", &[])?;
        Ok(rows.first().and_then(|r| r.first()).map_or(0, Value::int))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::SECONDS;
    use crate::results::{Sample, SetupInfo};

    fn results(started: &str, value: f64) -> Results {
        let mut r = Results::new();
        r.started_at = started.into();
        r.host.hostname = "h".into();
        r.host.kernel = "6.1".into();
        r.target.kind = "image".into();
        r.target.size_bytes = 1 << 30;
        r.setups.push(SetupInfo {
            name: "ext4".into(),
            fs: "ext4".into(),
            ..Default::default()
        });
        for round in 1..=3 {
            r.samples.push(Sample {
                setup: "ext4".into(),
                workload: "untar".into(),
                metric: SECONDS.into(),
                unit: "s".into(),
                round,
                value: value + f64::from(round) * 0.01,
            });
        }
        r
    }

    fn sqlite(dir: &std::path::Path) -> Location {
        Location::Sqlite(dir.join("sub/history.db"))
    }

    #[test]
    fn a_run_goes_in_and_comes_back_out() {
        let dir = tempfile::tempdir().unwrap();
        let loc = sqlite(dir.path());
        let mut h = History::open(&loc, true).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("sub/history.db"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let r = results("2026-12-01T10:00:00Z", 10.0);
        let Recorded::New(id) = h.record(&r, "run", "/out").unwrap() else {
            panic!("not new")
        };
        assert_eq!(h.record(&r, "run", "/out").unwrap(), Recorded::Already(id));
        let (row, back) = h.get(id).unwrap().unwrap();
        assert_eq!(back, r);
        assert_eq!(row.setups, vec!["ext4"]);
        assert_eq!(
            h.samples(Some(("ext4", "untar", "seconds"))).unwrap().len(),
            3
        );
        assert_eq!(h.schema_version().unwrap(), super::super::schema::VERSION);
    }

    #[test]
    fn an_older_schema_is_migrated_and_a_newer_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut s = super::super::sqlite::Sqlite::open(&path, true).unwrap();
        super::super::schema::migrate_to(&mut s, 1).unwrap();
        let mut h = History::from_store(Box::new(s)).unwrap();
        assert_eq!(h.schema_version().unwrap(), 2);
        h.record(&results("2026-12-01T10:00:00Z", 1.0), "run", "")
            .unwrap();
        drop(h);
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute("UPDATE fsbench_schema SET version = 99", [])
            .unwrap();
        drop(c);
        let e = History::open(&Location::Sqlite(path), false).err().unwrap();
        assert!(e.to_string().contains("newer than this fsbench"), "{e}");
    }

    #[test]
    fn writers_at_the_same_moment_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let loc = sqlite(dir.path());
        History::open(&loc, true).unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (loc, barrier) = (loc.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut h = History::open(&loc, true).unwrap();
                    barrier.wait();
                    h.record(&results(&format!("2026-12-01T10:00:0{i}Z"), 1.0), "run", "")
                        .unwrap()
                })
            })
            .collect();
        for t in threads {
            assert!(matches!(t.join().unwrap(), Recorded::New(_)));
        }
        let mut h = History::open(&loc, false).unwrap();
        assert_eq!(h.list(&Filter::default()).unwrap().len(), 8);
    }
}
