//! `smallfiles`: create many small files, sync, drop caches, read them all back (seed 003).
//!
//! Metrics: `create_seconds` / `create_files_per_s` (open + write + close of every file, no
//! sync, like the seed's shell loop), `sync_seconds` (the `syncfs` after creating),
//! `read_seconds` / `read_files_per_s` (cold: each directory listed with `getdents64`, each file
//! opened and read to EOF), `entries` (files) and `bytes`. The files are removed afterwards
//! (not timed) so later workloads start from the same free space.

use super::walk::{list, open_subdir};
use super::{Metric, WorkloadOutput, drop_caches_or_note, open_dir, remove, syncfs};
use crate::metrics::registry::{
    BYTES, CREATE_FILES_PER_S, CREATE_SECONDS, ENTRIES, READ_FILES_PER_S, READ_SECONDS,
    SYNC_SECONDS,
};
use crate::{Error, Result, cancel};
use rustix::fs::{Mode, OFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Instant;

/// What `smallfiles` creates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SmallFilesSpec {
    /// Files in total (default 50,000).
    pub files: u64,
    /// Directories they are spread over (default 100).
    pub dirs: u64,
    /// Bytes per file (default 4096).
    pub size: u64,
}

impl Default for SmallFilesSpec {
    fn default() -> Self {
        SmallFilesSpec {
            files: 50_000,
            dirs: 100,
            size: 4096,
        }
    }
}

/// Deterministic, incompressible-looking file content (compression must not flatter a fs).
pub(crate) fn payload(size: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..size)
        .map(|_| {
            // xorshift64*: cheap and good enough to defeat compression.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

pub(crate) fn create_file(dir: &OwnedFd, name: &str, data: &[u8], path: &Path) -> Result<OwnedFd> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| Error::io("cannot create", path.join(name), e.into()))?;
    let mut buf = data;
    while !buf.is_empty() {
        let n = rustix::io::write(&fd, buf)
            .map_err(|e| Error::io("cannot write", path.join(name), e.into()))?;
        buf = &buf[n..];
    }
    Ok(fd)
}

/// Run `smallfiles` inside `dir` (a `smallfiles` subdirectory is created and removed).
pub fn smallfiles(dir: &Path, spec: &SmallFilesSpec) -> Result<WorkloadOutput> {
    if spec.files == 0 || spec.dirs == 0 || spec.dirs > spec.files {
        return Err(Error::invalid(
            "--smallfiles",
            format!(
                "{} files in {} directories is not a valid layout; use at least one file per directory",
                spec.files, spec.dirs
            ),
        ));
    }
    let root = dir.join("smallfiles");
    std::fs::create_dir(&root).map_err(|e| Error::io("smallfiles: cannot create", &root, e))?;
    let result = run(&root, spec);
    let cleanup = remove::remove_all(&root);
    let out = result?;
    cleanup?;
    Ok(out)
}

fn run(root: &Path, spec: &SmallFilesSpec) -> Result<WorkloadOutput> {
    let data = payload(spec.size as usize, 0x5a11);
    let root_fd = open_dir(root)?;
    let mut out = WorkloadOutput::default();

    let start = Instant::now();
    for d in 0..spec.dirs {
        let name = format!("d{d}");
        let dpath = root.join(&name);
        rustix::fs::mkdirat(&root_fd, name.as_str(), Mode::from_raw_mode(0o755))
            .map_err(|e| Error::io("smallfiles: cannot create directory", &dpath, e.into()))?;
        let dfd = rustix::fs::openat(
            &root_fd,
            name.as_str(),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::io("smallfiles: cannot open", &dpath, e.into()))?;
        // Spread the remainder over the first directories.
        let n = spec.files / spec.dirs + u64::from(d < spec.files % spec.dirs);
        for f in 0..n {
            if cancel::requested() {
                return Err(Error::Interrupted);
            }
            drop(create_file(&dfd, &format!("f{f}"), &data, &dpath)?);
        }
    }
    let create = start.elapsed().as_secs_f64();
    let t = Instant::now();
    syncfs(&root_fd, root)?;
    let sync = t.elapsed().as_secs_f64();

    drop_caches_or_note("smallfiles", &mut out.notes);
    let mut buf = vec![0u8; (spec.size as usize).max(4096) + 4096];
    let (mut files, mut bytes) = (0u64, 0u64);
    let start = Instant::now();
    let top = open_dir(root)?;
    let dirs = list(top.as_fd(), root)?;
    for (name, _, _) in &dirs {
        let dpath = root.join(name.to_string_lossy().as_ref());
        let dfd = open_subdir(top.as_fd(), name, &dpath)?;
        for (fname, _, _) in list(dfd.as_fd(), &dpath)? {
            if cancel::requested() {
                return Err(Error::Interrupted);
            }
            let fpath = || dpath.join(fname.to_string_lossy().as_ref());
            let fd = rustix::fs::openat(
                dfd.as_fd(),
                fname.as_c_str(),
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| Error::io("smallfiles: cannot open", fpath(), e.into()))?;
            let mut got = 0u64;
            loop {
                let n = rustix::io::read(&fd, &mut buf)
                    .map_err(|e| Error::io("smallfiles: cannot read", fpath(), e.into()))?;
                if n == 0 {
                    break;
                }
                got += n as u64;
            }
            if got != spec.size {
                return Err(Error::workload(
                    "smallfiles",
                    format!("{} has {got} bytes, wrote {}", fpath().display(), spec.size),
                ));
            }
            files += 1;
            bytes += got;
        }
    }
    let read = start.elapsed().as_secs_f64();
    if files != spec.files {
        return Err(Error::workload(
            "smallfiles",
            format!("read back {files} files, created {}", spec.files),
        ));
    }
    let n = files as f64;
    out.metrics = vec![
        Metric::new(CREATE_SECONDS, "s", create),
        Metric::new(CREATE_FILES_PER_S, "files/s", n / create.max(1e-9)),
        Metric::new(SYNC_SECONDS, "s", sync),
        Metric::new(READ_SECONDS, "s", read),
        Metric::new(READ_FILES_PER_S, "files/s", n / read.max(1e-9)),
        Metric::new(ENTRIES, "files", n),
        Metric::new(BYTES, "bytes", bytes as f64),
    ];
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricId;
    use crate::metrics::registry::{BYTES, ENTRIES};

    #[test]
    fn creates_reads_verifies_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let spec = SmallFilesSpec {
            files: 250,
            dirs: 7,
            size: 4096,
        };
        let out = smallfiles(d.path(), &spec).unwrap();
        let get = |m: MetricId| out.metrics.iter().find(|x| x.metric == m).unwrap().value;
        assert_eq!(get(ENTRIES), 250.0);
        assert_eq!(get(BYTES), 250.0 * 4096.0);
        assert!(!d.path().join("smallfiles").exists());
    }

    #[test]
    fn payload_is_deterministic_and_varied() {
        let a = payload(4096, 1);
        assert_eq!(a, payload(4096, 1));
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(distinct.len() > 200);
    }
}
