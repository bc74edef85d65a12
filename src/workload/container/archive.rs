//! A user's own image as the layer set: a `docker save` / `podman save` archive
//! (docker-archive format: `manifest.json` naming each layer's tar, base first) or an OCI
//! image layout ([`super::oci`]: `podman save --format oci-dir|oci-archive`), as a tar or a
//! directory ([`super::members`]); plan-file key `image_archive`, flag `--image-archive`.
//!
//! Layers are extracted as overlay2 stores them: AUFS-style whiteouts in the layer tar
//! (`.wh.NAME`) become 0/0 character devices, an opaque marker (`.wh..wh..opq`) the
//! directory's `trusted.overlay.opaque=y` xattr. Compressed archives and layers are refused
//! with what to do: decompression is CPU time the same on every filesystem.

use super::ContainerParams;
use super::layers::{FileEntry, Layer, LayerSet};
use super::members::{self, Holder};
use crate::workload::registry::Kind;
use crate::workload::spec::WorkloadSpec;
use crate::{Error, Result};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// `manifest.json`'s one image: its layers' member names, base first.
#[derive(serde::Deserialize)]
struct Manifest {
    #[serde(rename = "Layers")]
    layers: Vec<String>,
}

/// What the refusals tell a user to give.
const GIVE: &str = "give a `docker save` or `podman save` archive, or an OCI image layout \
                    (`podman save --uncompressed --format oci-dir`)";

fn bad(archive: &Path, what: impl std::fmt::Display) -> Error {
    Error::invalid(
        "image_archive",
        format!("{}: {what}; {GIVE}", archive.display()),
    )
}

/// Call `f` with the reader of the archive's member `name` (an error when it is missing).
fn with_member<T>(
    archive: &Path,
    name: &str,
    f: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<T> {
    let holder = members::holder(archive).map_err(|e| bad(archive, e))?;
    members::open(archive, holder, name, f)?
        .ok_or_else(|| bad(archive, format!("no member {name}")))
}

/// The layer members of the image in `archive`, base first: `manifest.json`'s (a
/// docker-archive; Docker 25 writes one beside its OCI index), else the OCI index's.
fn layer_members(archive: &Path, holder: Holder) -> Result<Vec<String>> {
    if let Some(m) = members::json::<Vec<Manifest>>(archive, holder, "manifest.json")? {
        let m = m.map_err(|e| {
            bad(
                archive,
                format!(
                    "{e} (not a docker-archive manifest; `podman save --format docker-dir` \
                     is not read)"
                ),
            )
        })?;
        let image = m
            .into_iter()
            .next()
            .ok_or_else(|| bad(archive, "manifest.json names no image"))?;
        return Ok(image.layers);
    }
    let index = members::open(archive, holder, "index.json", |r| {
        let mut s = String::new();
        r.take(4 << 20)
            .read_to_string(&mut s)
            .map_err(|e| Error::io("cannot read index.json in", archive, e))?;
        Ok(s)
    })?;
    match index {
        Some(text) => super::oci::layers(archive, holder, &text)?.map_err(|e| bad(archive, e)),
        None => Err(bad(
            archive,
            "neither manifest.json (`docker save`) nor index.json (an OCI image layout) in it",
        )),
    }
}

/// A path inside a tar without `./` and with no `..` (None: unsafe or empty).
fn clean(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// What one entry of a layer tar is, for the lists and for extraction.
enum Item {
    Whiteout(PathBuf),
    Opaque(PathBuf),
    Dir(PathBuf),
    File(PathBuf, u64, u32),
    Other,
}

fn item<R: Read>(e: &tar::Entry<'_, R>) -> std::io::Result<Option<(Item, PathBuf)>> {
    let Some(path) = clean(&e.path()?) else {
        return Ok(None);
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let it = if name == ".wh..wh..opq" {
        Item::Opaque(parent)
    } else if let Some(gone) = name.strip_prefix(".wh.") {
        Item::Whiteout(parent.join(gone))
    } else {
        let h = e.header();
        match h.entry_type() {
            tar::EntryType::Directory => Item::Dir(path.clone()),
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                Item::File(path.clone(), h.size()?, h.mode()? & 0o7777)
            }
            _ => Item::Other,
        }
    };
    Ok(Some((it, path)))
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The layer set an archive holds: each layer's directories, regular files and whiteouts.
/// Every refusal (missing, compressed, not an image) is exit 2 and names the archive.
pub fn read(archive: &Path) -> Result<LayerSet> {
    let holder = members::holder(archive).map_err(|e| bad(archive, e))?;
    let names = layer_members(archive, holder)?;
    if names.is_empty() || names.len() > 32 {
        return Err(bad(
            archive,
            format!("{} layers (1 to 32 fit one overlay mount)", names.len()),
        ));
    }
    let mut layers = Vec::new();
    for name in &names {
        let layer = with_member(archive, name, |r| {
            // A gzip or zstd blob starts with its magic, a tar with a file name.
            let mut head = Vec::new();
            r.take(8)
                .read_to_end(&mut head)
                .map_err(|e| Error::io("cannot read", archive, e))?;
            if let Some((how, undo)) = members::compression(&head) {
                return Err(bad(
                    archive,
                    format!("layer {name} is {how}-compressed (decompress it: {undo})"),
                ));
            }
            let mut t = tar::Archive::new(std::io::Cursor::new(head).chain(r));
            let mut l = Layer {
                member: Some(name.clone()),
                ..Layer::default()
            };
            let entries = t
                .entries()
                .map_err(|e| Error::io("cannot read a layer of", archive, e))?;
            for e in entries {
                let e = e.map_err(|e| Error::io("cannot read a layer of", archive, e))?;
                match item(&e).map_err(|e| Error::io("cannot read a layer of", archive, e))? {
                    Some((Item::Dir(p), _)) => l.dirs.push(text(&p)),
                    Some((Item::File(p, size, mode), _)) => l.files.push(FileEntry {
                        path: text(&p),
                        size,
                        mode,
                    }),
                    Some((Item::Whiteout(p), _)) => l.whiteouts.push(text(&p)),
                    Some((Item::Opaque(p), _)) => l.opaque.push(text(&p)),
                    _ => {}
                }
            }
            l.dirs.sort();
            Ok(l)
        })?;
        layers.push(layer);
    }
    Ok(LayerSet {
        layers,
        archive: Some(archive.to_path_buf()),
    })
}

/// Refuse a path whose existing part leads out of `root` (a layer's symlink `etc -> /etc`
/// followed by a whiteout `etc/.wh.passwd` must not touch the host's /etc).
fn inside(root: &Path, path: &Path) -> Result<()> {
    let base = root
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", root, e))?;
    let mut p = path;
    while !p.exists() {
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    let real = p
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", p, e))?;
    if real.starts_with(&base) {
        Ok(())
    } else {
        Err(Error::refused(
            path.to_path_buf(),
            format!(
                "the image's layer leads it outside the layer directory (through a symlink to {})",
                real.display()
            ),
        ))
    }
}

/// Extract the archive's layer `member` into the empty directory `root`, whiteouts and opaque
/// markers as overlay2 stores them.
pub fn extract(archive: &Path, member: &str, root: &Path) -> Result<()> {
    with_member(archive, member, |r| {
        let mut t = tar::Archive::new(r);
        let entries = t
            .entries()
            .map_err(|e| Error::io("cannot read a layer of", archive, e))?;
        for (n, e) in entries.enumerate() {
            let mut e = e.map_err(|e| Error::io("cannot read a layer of", archive, e))?;
            let Some((it, path)) = item(&e).map_err(|e| Error::io("cannot read", archive, e))?
            else {
                continue;
            };
            match it {
                Item::Whiteout(p) => {
                    let at = root.join(p);
                    inside(root, at.parent().unwrap_or(root))?;
                    super::layers::whiteout(&at)?
                }
                Item::Opaque(p) => {
                    let dir = root.join(p);
                    inside(root, &dir)?;
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| Error::io("cannot create", &dir, e))?;
                    rustix::fs::setxattr(
                        &dir,
                        "trusted.overlay.opaque",
                        b"y",
                        rustix::fs::XattrFlags::empty(),
                    )
                    .map_err(|e| Error::io("cannot mark opaque", &dir, e.into()))?;
                }
                _ => {
                    if let Some(parent) = root.join(&path).parent() {
                        inside(root, parent)?;
                        std::fs::create_dir_all(parent)
                            .map_err(|e| Error::io("cannot create", parent, e))?;
                    }
                    e.set_preserve_permissions(true);
                    e.unpack_in(root)
                        .map_err(|err| Error::io("cannot extract into", root.join(&path), err))?;
                }
            }
            if n % 1024 == 0 {
                crate::cancel::check()?;
            }
        }
        Ok(())
    })
}

/// Make the archive at `path` the image of `p`: read through (every refusal now, before
/// anything is created), its absolute path recorded (a resumed run finds it), and its real
/// shape (layers, files, bytes) in `p`'s sizes, which the ETA and `fsbench plan` read.
pub fn adopt(p: &mut ContainerParams, path: &Path) -> Result<()> {
    let path = std::path::absolute(path).map_err(|e| Error::io("cannot resolve", path, e))?;
    let set = read(&path)?;
    p.layers = set.layers.len() as u32;
    p.files = u32::try_from(set.files()).unwrap_or(u32::MAX);
    p.image_size = set.bytes();
    p.archive = Some(path);
    Ok(())
}

/// `--image-archive PATH`: the archive is the image of every container workload of the plan.
/// Refused (exit 2, nothing created) when it cannot be read as an image, or when the plan
/// has no container workload to use it (the flag without `--plan`/`--profile` chooses the
/// containers profile, `commands::prepare::prepare`).
pub fn apply_flag(workloads: &mut [WorkloadSpec], path: &Path) -> Result<()> {
    let as_flag = |e: Error| match e {
        Error::InvalidInput { message, .. } => Error::invalid(FLAG, message),
        other => Error::invalid(FLAG, other.to_string()),
    };
    let mut image = ContainerParams::new(super::Step::Pull);
    adopt(&mut image, path).map_err(as_flag)?;
    let mut used = 0;
    for w in workloads.iter_mut().filter(|w| w.kind == Kind::Container) {
        let p = ContainerParams {
            archive: image.archive.clone(),
            layers: image.layers,
            files: image.files,
            image_size: image.image_size,
            ..super::kind::params(w)
        };
        *w = w.clone().with_params(&p);
        used += 1;
    }
    if used == 0 {
        return Err(Error::invalid(
            FLAG,
            format!(
                "{}: the plan has no container workload to use it; add --profile containers \
                 (or --only container-pull,container-start), or leave out --plan and --profile",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// How Podman names the archive as an image source: `oci:DIR` for an OCI layout directory,
/// `docker-archive:FILE` for a tar with `manifest.json`, `oci-archive:FILE` for an OCI
/// layout's tar.
pub fn podman_reference(archive: &Path) -> Result<String> {
    let holder = members::holder(archive).map_err(|e| bad(archive, e))?;
    let transport = match holder {
        Holder::Dir => "oci",
        Holder::Tar if members::open(archive, holder, "manifest.json", |_| Ok(()))?.is_some() => {
            "docker-archive"
        }
        Holder::Tar => "oci-archive",
    };
    Ok(format!("{transport}:{}", archive.display()))
}

/// The flag's name in refusals.
pub const FLAG: &str = "--image-archive";

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar of `(path, Some(data) | None for a directory)`.
    fn tar_of(entries: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, data) in entries {
            let mut h = tar::Header::new_gnu();
            match data {
                Some(d) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_size(d.len() as u64);
                    h.set_mode(0o644);
                    b.append_data(&mut h, path, *d).unwrap();
                }
                None => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_size(0);
                    h.set_mode(0o755);
                    b.append_data(&mut h, path, &[][..]).unwrap();
                }
            }
        }
        b.into_inner().unwrap()
    }

    /// A two-layer docker-archive: the top layer deletes `usr/lib/y` and hides `etc`'s lower
    /// contents.
    pub fn two_layers(dir: &Path) -> PathBuf {
        let l0 = tar_of(&[
            ("etc/", None),
            ("etc/a", Some(b"0123456789")),
            ("usr/", None),
            ("usr/lib/", None),
            ("usr/lib/x", Some(&[7u8; 2000])),
            ("usr/lib/y", Some(b"y")),
        ]);
        let l1 = tar_of(&[
            ("etc/", None),
            ("etc/.wh..wh..opq", Some(b"")),
            ("etc/b", Some(b"bb")),
            ("usr/lib/.wh.y", Some(b"")),
        ]);
        let manifest =
            br#"[{"Config":"c.json","RepoTags":["t:1"],"Layers":["l0/layer.tar","l1/layer.tar"]}]"#;
        let outer = tar_of(&[
            ("manifest.json", Some(&manifest[..])),
            ("l0/layer.tar", Some(&l0)),
            ("l1/layer.tar", Some(&l1)),
        ]);
        let path = dir.join("image.tar");
        std::fs::write(&path, outer).unwrap();
        path
    }

    #[test]
    fn a_docker_archive_reads_as_its_layers_with_whiteouts_and_opaque_dirs() {
        let d = tempfile::tempdir().unwrap();
        let set = read(&two_layers(d.path())).unwrap();
        assert_eq!(set.layers.len(), 2);
        assert_eq!(
            set.files(),
            4,
            "etc/a, usr/lib/x, usr/lib/y, etc/b (markers are not files)"
        );
        let mut seen: Vec<&str> = set.visible().iter().map(|f| f.path.as_str()).collect();
        seen.sort();
        assert_eq!(seen, ["etc/b", "usr/lib/x"]);
        assert_eq!(set.layers[1].whiteouts, ["usr/lib/y"]);
        assert_eq!(set.layers[1].opaque, ["etc"]);
        let e = read(&d.path().join("nope.tar")).unwrap_err().to_string();
        assert!(e.contains("nope.tar"), "{e}");
        std::fs::write(
            d.path().join("x.tar"),
            tar_of(&[("manifest.json", Some(b"{}"))]),
        )
        .unwrap();
        let e = read(&d.path().join("x.tar")).unwrap_err().to_string();
        assert!(e.contains("docker save"), "{e}");
    }

    #[test]
    fn a_symlink_out_of_the_layer_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (root, outside) = (d.path().join("layer"), d.path().join("host-etc"));
        std::fs::create_dir_all(root.join("usr")).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("etc")).unwrap();
        assert!(inside(&root, &root.join("usr/lib/new")).is_ok());
        let e = inside(&root, &root.join("etc/sub"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the layer"), "{e}");
    }
}
