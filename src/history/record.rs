//! The hook every measuring command calls after its results files are written: record the run
//! in the history store. A store that cannot be opened or written costs the run nothing but a
//! warning: the results files are already on disk and the exit code stays what it was.

use super::location::Location;
use super::runs::{History, Recorded};
use crate::results::Results;
use std::path::{Path, PathBuf};

/// How a command records its run, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `--store URL`.
    pub store: Option<String>,
    /// `--store-password-file FILE`.
    pub password_file: Option<PathBuf>,
    /// `--no-history`.
    pub disabled: bool,
}

impl Settings {
    /// Where to record, checked before the run starts (bad input: exit 2, nothing created);
    /// `None` when recording is off.
    pub fn resolve(&self) -> crate::Result<Option<Location>> {
        if self.disabled {
            return Ok(None);
        }
        Location::resolve(self.store.as_deref(), self.password_file.as_deref())
    }
}

/// Record `results` (written to `dir` by the command `source`) in `loc`; a partial run is left
/// for the resumed run to record. Never fails: a store error is a warning.
pub fn after_run(loc: Option<&Location>, results: &Results, dir: &Path, source: &str) {
    let Some(loc) = loc else { return };
    if results.partial {
        return;
    }
    let mut copy = results.clone();
    super::identity::enrich(&mut copy);
    let dir_text = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string();
    let outcome = History::open(loc, true).and_then(|mut h| h.record(&copy, source, &dir_text));
    match outcome {
        Ok(Recorded::New(id)) | Ok(Recorded::Already(id)) => eprintln!(
            "fsbench: history: run {id} in {} (fsbench history show {id}; fsbench compare \
             --against last)",
            loc.shown()
        ),
        Err(e) => eprintln!(
            "fsbench: warning: the run was not recorded in the history store {} ({e}); its \
             results are in {} (load them later with `fsbench history import {}`)",
            loc.shown(),
            dir.display(),
            dir.display()
        ),
    }
}

/// A one-setup, one-round results model for the commands that measure an existing path
/// (`fsbench io`, `fsbench meta`): the setup is the filesystem holding `path` (or `raw` for a
/// block device), each workload its own id with its parameters. The target is recorded as
/// what `path` is: a `device`, a `file` (`fsbench io`'s own file, as `scratch::file` records
/// it through the runner) or a `dir`.
pub fn one_setup(
    command: &str,
    started_at: &str,
    path: &Path,
    workloads: Vec<crate::results::WorkloadInfo>,
    samples: impl IntoIterator<Item = (String, crate::metrics::MetricId, String, f64)>,
) -> Results {
    use crate::results::{Sample, SetupInfo, TargetInfo};
    let mut r = Results::new();
    r.started_at = started_at.to_string();
    r.finished_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    r.host = crate::host::provenance::host_info();
    r.host.extra.insert("plan".into(), command.to_string());
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let meta = std::fs::metadata(&canon).ok();
    let is_block = meta.as_ref().is_some_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_block_device()
    });
    let kind = match &meta {
        _ if is_block => "device",
        Some(m) if m.is_file() => "file",
        _ => "dir",
    };
    let mut target = TargetInfo {
        kind: kind.into(),
        path: canon.display().to_string(),
        ..Default::default()
    };
    let mut setup = SetupInfo {
        name: "raw".into(),
        fs: "raw".into(),
        ..Default::default()
    };
    if is_block {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata(&canon) {
            let dev = crate::host::sysfs::DevNum::from_dev(m.rdev());
            target.extra.insert("device_number".into(), dev.to_string());
            if let Some(f) = crate::host::sysfs::queue_facts(dev) {
                target.model = f.model;
            }
        }
    } else {
        if let Ok(sv) = rustix::fs::statvfs(&canon) {
            target.size_bytes = sv.f_blocks * sv.f_frsize;
        }
        if let Some(m) = crate::host::mountinfo::read()
            .ok()
            .and_then(|m| crate::host::mountinfo::containing(&m, &canon))
        {
            target.extra.insert("fs_type".into(), m.fs_type.clone());
            target.extra.insert("mount_source".into(), m.source.clone());
            setup.name = m.fs_type.clone();
            setup.fs = m.fs_type.clone();
            setup.mount_opts = m.all_options();
        }
    }
    r.target = target;
    r.samples = samples
        .into_iter()
        .map(|(workload, metric, unit, value)| Sample {
            setup: setup.name.clone(),
            workload,
            metric: metric.into(),
            unit,
            round: 1,
            value,
        })
        .filter(|s| s.value.is_finite())
        .collect();
    r.setups.push(setup);
    r.workloads = workloads;
    crate::stats::summarize(&mut r);
    r
}

#[cfg(test)]
mod tests {
    /// `fsbench io` on the user's own file is recorded, listed and shown as a file, not a
    /// directory; its device key stays the one older records (which called it a dir) have.
    #[test]
    fn an_io_run_on_a_file_is_labelled_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("data");
        std::fs::write(&f, b"x").unwrap();
        let on_file = super::one_setup("io", "2026-12-06T00:00:00Z", &f, vec![], []);
        let on_dir = super::one_setup("meta", "2026-12-06T00:00:00Z", d.path(), vec![], []);
        assert_eq!(on_file.target.kind, "file");
        assert_eq!(on_dir.target.kind, "dir");
        let (file, dir) = (
            crate::history::identity::device(&on_file),
            crate::history::identity::device(&on_dir),
        );
        assert_eq!(file.kind, "file");
        assert!(file.label.starts_with("file "), "{}", file.label);
        assert!(dir.label.starts_with("dir "), "{}", dir.label);
        assert_eq!(file.key, dir.key, "one filesystem, one key");
    }
}
