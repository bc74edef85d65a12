//! The image the Podman cross-check loads when the user gave none: the generated layer set
//! ([`super::layers`]) as a `docker save` archive — each layer a tar whose deletions are
//! `.wh.NAME` entries, as registries ship them, so Podman's overlay driver turns them into
//! whiteouts itself — with a top layer holding this host's `true` and the shared libraries
//! `ldd` says it needs, so a container has a program to run.
//!
//! Built once per image shape into the cache beside the git one
//! (`<scratch>/fsbench-cache-<uid>/podman-<key>.tar`, outside the filesystem under test, so
//! reading it costs the same for every setup), in a directory of this process's own that is
//! renamed into place when complete.

use super::ContainerParams;
use super::layers::{self, Layer, LayerSet};
use crate::{Error, Result};
use sha2::Digest;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The program every container of the cross-check runs.
pub const ENTRY: &str = "/usr/bin/true";

/// Bumped when the archive's layout changes, so an old cached archive is not reused.
const LAYOUT_VERSION: u32 = 1;

/// The cached archive for `p`'s generated image, built when missing.
pub fn cached(scratch: &Path, p: &ContainerParams, timeout: Duration) -> Result<PathBuf> {
    let cache = crate::workload::usecase::git::cache_dir(scratch);
    let key = format!(
        "v{LAYOUT_VERSION}-{}l-{}f-{}b",
        p.layers, p.files, p.image_size
    );
    let done = cache.join(format!("podman-{key}.tar"));
    if done.is_file() {
        return Ok(done);
    }
    std::fs::create_dir_all(&cache).map_err(|e| Error::io("cannot create the cache", &cache, e))?;
    let partial = cache.join(format!(".partial-{}-podman-{key}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| Error::io("cannot create", &partial, e))?;
    let built = build(&partial, &LayerSet::generate(p), timeout);
    let result = built.and_then(|tar| {
        std::fs::rename(&tar, &done).map_err(|e| Error::io("cannot move into place", &done, e))
    });
    let _ = std::fs::remove_dir_all(&partial);
    result.map(|()| done)
}

/// A writer that hashes what passes through it (a layer's digest is its tar's SHA-256).
struct Hashing<W> {
    inner: W,
    hash: sha2::Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `len` bytes of the image's fill, starting at `at` and wrapping (what [`layers::write_file`]
/// writes).
struct FillReader<'a> {
    fill: &'a [u8],
    at: usize,
    left: u64,
}

impl Read for FillReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.left.min(buf.len() as u64) as usize).min(self.fill.len() - self.at);
        buf[..n].copy_from_slice(&self.fill[self.at..self.at + n]);
        self.at = (self.at + n) % self.fill.len();
        self.left -= n as u64;
        Ok(n)
    }
}

fn header(kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h
}

/// One layer tar written to `path`; returns its digest (`sha256:…`).
fn write_layer(
    path: &Path,
    add: impl FnOnce(&mut tar::Builder<Hashing<std::fs::File>>) -> std::io::Result<()>,
) -> Result<String> {
    let file = std::fs::File::create(path).map_err(|e| Error::io("cannot create", path, e))?;
    let mut b = tar::Builder::new(Hashing {
        inner: file,
        hash: sha2::Sha256::new(),
    });
    add(&mut b).map_err(|e| Error::io("cannot write the layer", path, e))?;
    let w = b
        .into_inner()
        .map_err(|e| Error::io("cannot finish the layer", path, e))?;
    w.inner
        .sync_all()
        .map_err(|e| Error::io("cannot write the layer", path, e))?;
    let hex: String = w
        .hash
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("sha256:{hex}"))
}

/// A generated layer as a registry ships it: directories, files, `.wh.` entries.
fn generated(b: &mut tar::Builder<Hashing<std::fs::File>>, layer: &Layer) -> std::io::Result<()> {
    let fill = layers::fill();
    for d in &layer.dirs {
        let mut h = header(tar::EntryType::Directory, 0, 0o755);
        b.append_data(&mut h, format!("{d}/"), std::io::empty())?;
    }
    for (i, f) in layer.files.iter().enumerate() {
        let mut h = header(tar::EntryType::Regular, f.size, f.mode);
        let data = FillReader {
            fill: &fill,
            at: (i * 4096 + 17) % fill.len(),
            left: f.size,
        };
        b.append_data(&mut h, &f.path, data)?;
    }
    for w in &layer.whiteouts {
        let (parent, name) = w.rsplit_once('/').unwrap_or(("", w));
        let marker = if parent.is_empty() {
            format!(".wh.{name}")
        } else {
            format!("{parent}/.wh.{name}")
        };
        let mut h = header(tar::EntryType::Regular, 0, 0o644);
        b.append_data(&mut h, marker, std::io::empty())?;
    }
    Ok(())
}

/// The files `ldd` lists for `program` (its interpreter and libraries), absolute paths.
fn libraries(ldd_output: &str) -> Vec<PathBuf> {
    ldd_output
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// The top layer: [`ENTRY`] and what it needs to start, copied from this host.
fn entry_layer(
    b: &mut tar::Builder<Hashing<std::fs::File>>,
    files: &[PathBuf],
) -> std::io::Result<()> {
    for f in files {
        let data = std::fs::read(f)?;
        let name = f.strip_prefix("/").unwrap_or(f.as_path());
        let mut h = header(tar::EntryType::Regular, data.len() as u64, 0o755);
        b.append_data(&mut h, name, &data[..])?;
    }
    Ok(())
}

/// The archive of `set` plus the entry layer in `dir`; returns its path.
fn build(dir: &Path, set: &LayerSet, timeout: Duration) -> Result<PathBuf> {
    let ldd = crate::host::command::run(&crate::host::command::argv(&["ldd", ENTRY]), timeout)?;
    let mut entry_files = vec![PathBuf::from(ENTRY)];
    entry_files.extend(libraries(&ldd.stdout));
    let mut members = Vec::new();
    let mut diff_ids = Vec::new();
    for (i, layer) in set.layers.iter().enumerate() {
        let path = dir.join(format!("{i}.tar"));
        diff_ids.push(write_layer(&path, |b| generated(b, layer))?);
        members.push(path);
        crate::cancel::check()?;
    }
    let path = dir.join("entry.tar");
    diff_ids.push(write_layer(&path, |b| entry_layer(b, &entry_files))?);
    members.push(path);
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let config = serde_json::json!({
        "architecture": arch,
        "os": "linux",
        "config": {
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Cmd": [ENTRY],
        },
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
    })
    .to_string();
    let names: Vec<String> = (0..members.len())
        .map(|i| format!("{i}/layer.tar"))
        .collect();
    let manifest = serde_json::json!([{
        "Config": "config.json",
        "RepoTags": ["localhost/fsbench-crosscheck:latest"],
        "Layers": names,
    }])
    .to_string();
    let out = dir.join("image.tar");
    let file = std::fs::File::create(&out).map_err(|e| Error::io("cannot create", &out, e))?;
    let mut b = tar::Builder::new(file);
    let err = |e: std::io::Error| Error::io("cannot write the image archive", &out, e);
    for (name, path) in names.iter().zip(&members) {
        b.append_path_with_name(path, name).map_err(err)?;
    }
    for (name, text) in [("config.json", &config), ("manifest.json", &manifest)] {
        let mut h = header(tar::EntryType::Regular, text.len() as u64, 0o644);
        b.append_data(&mut h, name, text.as_bytes()).map_err(err)?;
    }
    let file = b.into_inner().map_err(err)?;
    file.sync_all().map_err(err)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::container::Step;

    #[test]
    fn ldd_lines_give_the_interpreter_and_the_libraries() {
        let out = "\tlinux-vdso.so.1 (0x00007ffc)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n\t/lib64/ld-linux-x86-64.so.2 (0x7f)\n";
        assert_eq!(
            libraries(out),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
        assert!(libraries("\tstatically linked\n").is_empty());
    }

    #[test]
    fn the_archive_reads_back_as_the_generated_image_plus_its_entry_layer() {
        let d = tempfile::tempdir().unwrap();
        let p = ContainerParams {
            layers: 3,
            files: 300,
            image_size: 1 << 20,
            ..ContainerParams::new(Step::Podman)
        };
        let set = LayerSet::generate(&p);
        let tar = build(d.path(), &set, Duration::from_secs(30)).unwrap();
        let back = super::super::archive::read(&tar).unwrap();
        assert_eq!(
            back.layers.len(),
            4,
            "three generated layers and the entry layer"
        );
        assert_eq!(
            back.layers[..3]
                .iter()
                .map(|l| l.files.len())
                .sum::<usize>(),
            300
        );
        assert_eq!(back.layers[1].whiteouts, set.layers[1].whiteouts);
        assert!(
            back.layers[3]
                .files
                .iter()
                .any(|f| f.path == "usr/bin/true"),
            "{:?}",
            back.layers[3].files
        );
    }
}
