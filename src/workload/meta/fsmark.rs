//! `fsmark`: fs_mark-style file creates (seeds 001 and 004: `fs_mark -s 4096 -t 4`).
//!
//! N threads each create files of `size` bytes in their own directory. The fsync policy mirrors
//! fs_mark's sync methods: `none` (-S 0), `file` = fsync before close (-S 1, fs_mark's default
//! and ours), `dir` = write everything first, then reopen and fsync each file and fsync the
//! directory (-S 4-like: the cost of making a whole directory durable at once). The clock runs
//! from the first create to the last thread's end; `ops_per_s` is files per second.

use super::smallfiles::{create_file, payload};
use super::{Metric, WorkloadOutput, open_dir, remove};
use crate::metrics::registry::{BYTES, ENTRIES, OPS_PER_S, SECONDS};
use crate::{Error, Result, cancel};
use rustix::fs::{Mode, OFlags};
use std::path::Path;
use std::time::Instant;

/// When fsmark's files are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncPolicy {
    /// Never (page cache speed; fs_mark -S 0).
    None,
    /// `fsync` every file before closing it (fs_mark's default, -S 1).
    #[default]
    File,
    /// After each thread's directory is complete: fsync every file, then the directory.
    Dir,
}

impl std::fmt::Display for FsyncPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FsyncPolicy::None => "none",
            FsyncPolicy::File => "per file",
            FsyncPolicy::Dir => "per directory",
        })
    }
}

impl std::str::FromStr for FsyncPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(FsyncPolicy::None),
            "file" | "per-file" => Ok(FsyncPolicy::File),
            "dir" | "per-dir" => Ok(FsyncPolicy::Dir),
            _ => Err(Error::invalid(
                "--fsync",
                format!("unknown policy '{s}'; use none, file or dir"),
            )),
        }
    }
}

/// What `fsmark` creates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FsmarkSpec {
    /// Writer threads, each in its own directory (default 4).
    pub threads: usize,
    /// Files each thread creates (default 10,000: 40,000 in all).
    pub files_per_thread: u64,
    /// Bytes per file (default 4096).
    pub size: u64,
    /// When files are made durable.
    pub fsync: FsyncPolicy,
}

impl Default for FsmarkSpec {
    fn default() -> Self {
        FsmarkSpec {
            threads: 4,
            files_per_thread: 10_000,
            size: 4096,
            fsync: FsyncPolicy::File,
        }
    }
}

fn worker(root: &Path, t: usize, spec: &FsmarkSpec, data: &[u8]) -> Result<u64> {
    let name = format!("t{t}");
    let dpath = root.join(&name);
    std::fs::create_dir(&dpath).map_err(|e| Error::io("fsmark: cannot create", &dpath, e))?;
    let dfd = open_dir(&dpath)?;
    let mut made = 0u64;
    for f in 0..spec.files_per_thread {
        if cancel::requested() {
            return Err(Error::Interrupted);
        }
        let fname = format!("f{f:08}");
        let fd = create_file(&dfd, &fname, data, &dpath)?;
        if spec.fsync == FsyncPolicy::File {
            rustix::fs::fsync(&fd)
                .map_err(|e| Error::io("fsmark: cannot fsync", dpath.join(&fname), e.into()))?;
        }
        made += 1;
    }
    if spec.fsync == FsyncPolicy::Dir {
        for f in 0..spec.files_per_thread {
            let fname = format!("f{f:08}");
            let fd = rustix::fs::openat(
                &dfd,
                fname.as_str(),
                OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| Error::io("fsmark: cannot reopen", dpath.join(&fname), e.into()))?;
            rustix::fs::fsync(&fd)
                .map_err(|e| Error::io("fsmark: cannot fsync", dpath.join(&fname), e.into()))?;
        }
        rustix::fs::fsync(&dfd).map_err(|e| Error::io("fsmark: cannot fsync", &dpath, e.into()))?;
    }
    Ok(made)
}

/// Run `fsmark` inside `dir` (an `fsmark` subdirectory is created and removed afterwards).
pub fn fsmark(dir: &Path, spec: &FsmarkSpec) -> Result<WorkloadOutput> {
    if spec.threads == 0 || spec.files_per_thread == 0 {
        return Err(Error::invalid(
            "--fsmark-threads",
            "fsmark needs at least one thread and one file per thread",
        ));
    }
    let root = dir.join("fsmark");
    std::fs::create_dir(&root).map_err(|e| Error::io("fsmark: cannot create", &root, e))?;
    let data = payload(spec.size as usize, 0xf5);
    let start = Instant::now();
    let made: Result<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..spec.threads)
            .map(|t| {
                let (root, data) = (&root, &data);
                s.spawn(move || worker(root, t, spec, data))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("fsmark thread panicked"))
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let cleanup = remove::remove_all(&root);
    let made: u64 = made?.iter().sum();
    cleanup?;
    let want = spec.files_per_thread * spec.threads as u64;
    if made != want {
        return Err(Error::workload(
            "fsmark",
            format!("created {made} files, asked for {want}"),
        ));
    }
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", secs),
            Metric::new(ENTRIES, "files", made as f64),
            // Data written, so device bytes can be read as write amplification.
            Metric::new(BYTES, "bytes", (made * spec.size) as f64),
            Metric::new(OPS_PER_S, "files/s", made as f64 / secs.max(1e-9)),
        ],
        notes: vec![format!(
            "fsmark: {} threads, {} files of {} bytes each, fsync {}",
            spec.threads, spec.files_per_thread, spec.size, spec.fsync
        )],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_creates_what_was_asked() {
        for fsync in [FsyncPolicy::None, FsyncPolicy::File, FsyncPolicy::Dir] {
            let d = tempfile::tempdir().unwrap();
            let spec = FsmarkSpec {
                threads: 3,
                files_per_thread: 40,
                size: 4096,
                fsync,
            };
            let out = fsmark(d.path(), &spec).unwrap();
            assert_eq!(out.metrics[1].value, 120.0);
            assert!(!d.path().join("fsmark").exists());
        }
        assert!("sometimes".parse::<FsyncPolicy>().is_err());
    }
}
