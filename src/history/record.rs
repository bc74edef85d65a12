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
