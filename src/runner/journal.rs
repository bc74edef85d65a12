//! The journal: `OUT/journal.jsonl`, one JSON object per finished step, fsync'd, so an
//! interrupted or crashed run can be resumed.
//!
//! Resume granularity is a whole setup-round: the filesystem is created anew for every
//! setup-round, so steps of a setup-round that did not reach its `round_done` record are
//! discarded and that setup-round is run again from mkfs.

use crate::results::{
    Failure, HistogramRecord, RankRecord, Sample, SeriesRecord, SetupInfo, Warning,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What one setup-round produced (its steps merged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// Setup name.
    pub setup: String,
    /// Round, 1-based.
    pub round: u32,
    /// Samples.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// Histograms.
    #[serde(default)]
    pub histograms: Vec<HistogramRecord>,
    /// Series.
    #[serde(default)]
    pub series: Vec<SeriesRecord>,
    /// Failed steps.
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// Warnings.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Workload notes.
    #[serde(default)]
    pub notes: Vec<Warning>,
    /// Setup description (mkfs args/output, mount options, properties) when it was created.
    #[serde(default)]
    pub setup_info: Option<SetupInfo>,
    /// Every process's own measurement of its coordinated steps (the leader's record only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankRecord>,
    /// The report of each I/O step run as one whole job ([`crate::workload::io::GroupJob`]):
    /// every process's reduced (`fsbench io --mpi`, the leader's record only) or one
    /// process's own (`fsbench io`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_reports: Vec<super::reduce::aggregate::MpiIoReport>,
}

impl RoundRecord {
    /// Append another part (one step) of the same setup-round.
    pub fn absorb(&mut self, other: RoundRecord) {
        self.samples.extend(other.samples);
        self.histograms.extend(other.histograms);
        self.series.extend(other.series);
        self.failures.extend(other.failures);
        self.warnings.extend(other.warnings);
        self.notes.extend(other.notes);
        self.ranks.extend(other.ranks);
        self.job_reports.extend(other.job_reports);
        if other.setup_info.is_some() {
            self.setup_info = other.setup_info;
        }
    }
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Externally tagged (`{"step":{…}}`): internally tagged or flattened enums buffer values through
// serde's generic content, which cannot hold the u128 `sum_ns` of histograms.
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// A setup-round begins (again). Steps journaled by an earlier, unfinished attempt of the
    /// same setup-round are void from here on.
    RoundStart {
        /// Setup name.
        setup: String,
        /// Round.
        round: u32,
    },
    /// A finished step (workload, mkfs, usable-space…) with what it recorded.
    Step {
        /// Workload id.
        workload: String,
        /// What it recorded (setup and round inside).
        record: Box<RoundRecord>,
    },
    /// The setup-round finished and its filesystem was released.
    RoundDone {
        /// Setup name.
        setup: String,
        /// Round.
        round: u32,
    },
}

/// Append-only journal writer.
pub struct Journal {
    path: PathBuf,
    /// `None`: a run kept in memory (`RunOptions::in_memory`), which journals nothing.
    file: Option<std::fs::File>,
}

impl Journal {
    /// Path of the journal inside an output directory.
    pub fn path(out: &Path) -> PathBuf {
        out.join("journal.jsonl")
    }

    /// Open (create or append).
    pub fn open(out: &Path) -> crate::Result<Journal> {
        let path = Self::path(out);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| crate::Error::io("cannot open journal", &path, e))?;
        Ok(Journal {
            path,
            file: Some(file),
        })
    }

    /// A journal that writes nothing: a run kept in memory cannot be resumed, so it needs
    /// none (and has no OUT to hold one).
    pub fn none() -> Journal {
        Journal {
            path: PathBuf::new(),
            file: None,
        }
    }

    /// Append one entry and fsync it, so a crash right after still has it.
    pub fn append(&mut self, e: &Entry) -> crate::Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let mut line = serde_json::to_vec(e)
            .map_err(|e| crate::Error::Other(format!("cannot serialize journal entry: {e}")))?;
        line.push(b'\n');
        file.write_all(&line)
            .and_then(|_| file.sync_data())
            .map_err(|e| crate::Error::io("cannot write journal", &self.path, e))
    }
}

/// Finished setup-rounds found in a journal, keyed by (setup, round). A torn last line (crash
/// mid-write) is ignored; steps of unfinished setup-rounds are dropped.
pub fn load_done(out: &Path) -> crate::Result<BTreeMap<(String, u32), RoundRecord>> {
    let path = Journal::path(out);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(crate::Error::io("cannot read journal", &path, e)),
    };
    let mut pending: BTreeMap<(String, u32), RoundRecord> = BTreeMap::new();
    let mut done = BTreeMap::new();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, line) in lines.iter().enumerate() {
        let entry = match serde_json::from_str::<Entry>(line) {
            Ok(e) => e,
            // Only the last line may be torn (a crash in the middle of writing it).
            Err(_) if i + 1 == lines.len() => continue,
            Err(e) => {
                return Err(crate::Error::invalid(
                    "--resume",
                    format!(
                        "{} line {}: not a journal entry ({e}); the journal is damaged",
                        path.display(),
                        i + 1
                    ),
                ));
            }
        };
        match entry {
            Entry::Step { record, .. } => {
                let record = *record;
                let key = (record.setup.clone(), record.round);
                pending
                    .entry(key)
                    .or_insert_with(|| RoundRecord {
                        setup: record.setup.clone(),
                        round: record.round,
                        ..Default::default()
                    })
                    .absorb(record);
            }
            Entry::RoundStart { setup, round } => {
                pending.remove(&(setup, round));
            }
            Entry::RoundDone { setup, round } => {
                let key = (setup.clone(), round);
                let rec = pending.remove(&key).unwrap_or(RoundRecord {
                    setup,
                    round,
                    ..Default::default()
                });
                done.insert(key, rec);
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::IOPS;

    fn step(setup: &str, round: u32, workload: &str, v: f64) -> Entry {
        Entry::Step {
            workload: workload.into(),
            record: Box::new(RoundRecord {
                setup: setup.into(),
                round,
                histograms: vec![HistogramRecord {
                    setup: setup.into(),
                    workload: workload.into(),
                    round,
                    direction: "read".into(),
                    count: 2,
                    sum_ns: u128::from(u64::MAX) + 5,
                    buckets: vec![[1000, 2]],
                    ..Default::default()
                }],
                samples: vec![Sample {
                    setup: setup.into(),
                    workload: workload.into(),
                    metric: IOPS.into(),
                    unit: "IOPS".into(),
                    round,
                    value: v,
                }],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn only_finished_setup_rounds_survive() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path()).unwrap();
        j.append(&step("ext4", 1, "randread", 1.0)).unwrap();
        j.append(&step("ext4", 1, "randwrite", 2.0)).unwrap();
        j.append(&Entry::RoundDone {
            setup: "ext4".into(),
            round: 1,
        })
        .unwrap();
        j.append(&step("xfs", 1, "randread", 3.0)).unwrap();
        // A second attempt of ext4 round 2: the first, unfinished one must not leak into it.
        j.append(&step("ext4", 2, "randread", 9.0)).unwrap();
        j.append(&Entry::RoundStart {
            setup: "ext4".into(),
            round: 2,
        })
        .unwrap();
        j.append(&step("ext4", 2, "randread", 4.0)).unwrap();
        j.append(&Entry::RoundDone {
            setup: "ext4".into(),
            round: 2,
        })
        .unwrap();
        drop(j);
        // A torn final line, as after a crash mid-write.
        let p = Journal::path(dir.path());
        let mut t = std::fs::read_to_string(&p).unwrap();
        t.push_str("{\"step\":{\"workl");
        std::fs::write(&p, t).unwrap();
        let done = load_done(dir.path()).unwrap();
        assert_eq!(done.len(), 2);
        let r = &done[&("ext4".to_string(), 1)];
        assert_eq!(r.samples.len(), 2);
        assert_eq!(r.samples[1].value, 2.0);
        assert_eq!(r.histograms[0].sum_ns, u128::from(u64::MAX) + 5);
        let r2 = &done[&("ext4".to_string(), 2)];
        assert_eq!(r2.samples.len(), 1);
        assert_eq!(r2.samples[0].value, 4.0);
    }
}
