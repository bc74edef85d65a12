//! The members of an image archive by name, whether the archive is a tar (`docker save`,
//! `podman save`, `podman save --format oci-archive`) or a directory (an OCI image layout:
//! `podman save --format oci-dir`, `skopeo copy … oci:DIR`), so the formats above read one
//! way from both.
//!
//! A member that is a symlink or a hard link in the tar (Docker 25's `docker save` links each
//! legacy `<id>/layer.tar` to its blob) is followed inside the archive; a directory's member
//! that leads out of the directory is refused.

use crate::{Error, Result};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Where an archive keeps its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A tar file.
    Tar,
    /// A directory.
    Dir,
}

/// Magic numbers of compressed files: (magic, name, the command that undoes it).
const COMPRESSED: [(&[u8], &str, &str); 4] = [
    (&[0x1f, 0x8b], "gzip", "gunzip"),
    (&[0x28, 0xb5, 0x2f, 0xfd], "zstd", "zstd -d"),
    (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz", "unxz"),
    (b"BZh", "bzip2", "bunzip2"),
];

/// The compression `head` (a file's first bytes) shows, if any: its name and the command
/// that undoes it.
pub fn compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    COMPRESSED
        .iter()
        .find(|(m, ..)| head.starts_with(m))
        .map(|(_, n, c)| (*n, *c))
}

/// What `archive` is; `Err` says why it cannot be an image archive (missing, compressed, not
/// a file or directory).
pub fn holder(archive: &Path) -> std::result::Result<Holder, String> {
    let meta = std::fs::metadata(archive).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => format!("cannot read it: {e}"),
    })?;
    if meta.is_dir() {
        return Ok(Holder::Dir);
    }
    if !meta.is_file() {
        return Err("neither a file nor a directory".into());
    }
    let mut head = Vec::new();
    std::fs::File::open(archive)
        .and_then(|f| f.take(8).read_to_end(&mut head))
        .map_err(|e| format!("cannot read it: {e}"))?;
    match compression(&head) {
        Some((name, undo)) => Err(format!(
            "it is {name}-compressed; decompress it first ({undo}): fsbench reads plain tars"
        )),
        None => Ok(Holder::Tar),
    }
}

/// A relative path inside an archive without `./`, or `None` when it is empty or leaves the
/// archive (`..` above its root).
pub fn clean(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Links followed from one member before giving up (a loop).
const MAX_LINKS: usize = 8;

/// Call `f` with the reader of the member `name`; `Ok(None)` when there is no such member.
pub fn open<T>(
    archive: &Path,
    holder: Holder,
    name: &str,
    f: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<Option<T>> {
    let Some(want) = clean(Path::new(name)) else {
        return Ok(None);
    };
    match holder {
        Holder::Dir => open_in_dir(archive, &want, f),
        Holder::Tar => open_in_tar(archive, want, f),
    }
}

fn open_in_dir<T>(
    archive: &Path,
    want: &Path,
    f: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<Option<T>> {
    let path = archive.join(want);
    if !path.exists() {
        return Ok(None);
    }
    let base = archive
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", archive, e))?;
    let real = path
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", &path, e))?;
    if !real.starts_with(&base) {
        return Err(Error::refused(
            path,
            format!(
                "the archive's member leads outside its directory (to {})",
                real.display()
            ),
        ));
    }
    let mut file = std::fs::File::open(&real).map_err(|e| Error::io("cannot open", &real, e))?;
    f(&mut file).map(Some)
}

fn open_in_tar<T>(
    archive: &Path,
    mut want: PathBuf,
    f: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<Option<T>> {
    let read_err = |e: std::io::Error| Error::io("cannot read the archive", archive, e);
    for _ in 0..MAX_LINKS {
        let file =
            std::fs::File::open(archive).map_err(|e| Error::io("cannot open", archive, e))?;
        let mut outer = tar::Archive::new(file);
        // Seeking past each member's data: finding a layer costs its headers, not its bytes.
        let entries = outer.entries_with_seek().map_err(read_err)?;
        let mut next = None;
        for e in entries {
            let mut e = e.map_err(read_err)?;
            let path = e.path().map_err(read_err)?.into_owned();
            if clean(&path).as_deref() != Some(want.as_path()) {
                continue;
            }
            let kind = e.header().entry_type();
            if kind.is_symlink() || kind.is_hard_link() {
                let link = e
                    .link_name()
                    .map_err(read_err)?
                    .ok_or_else(|| Error::Other(format!("{}: empty link", want.display())))?;
                // A symlink is relative to its own directory, a hard link to the archive's root.
                let from = if kind.is_symlink() {
                    want.parent().unwrap_or(Path::new("")).join(link)
                } else {
                    link.into_owned()
                };
                next = Some(clean(&from).ok_or_else(|| {
                    Error::refused(
                        archive.to_path_buf(),
                        format!("member {} links outside the archive", want.display()),
                    )
                })?);
                break;
            }
            return f(&mut e).map(Some);
        }
        match next {
            Some(n) => want = n,
            None => return Ok(None),
        }
    }
    Err(Error::refused(
        archive.to_path_buf(),
        format!("member {} is a loop of links", want.display()),
    ))
}

/// The member `name` parsed as JSON; `Ok(None)` when there is none, `Err(text)` with the
/// parser's words when it does not parse as `T`.
pub fn json<T: serde::de::DeserializeOwned>(
    archive: &Path,
    holder: Holder,
    name: &str,
) -> Result<Option<std::result::Result<T, String>>> {
    open(archive, holder, name, |r| {
        let mut s = String::new();
        // A manifest is small: a member of a megabyte is not one.
        r.take(4 << 20)
            .read_to_string(&mut s)
            .map_err(|e| Error::io(format!("cannot read {name} in"), archive, e))?;
        Ok(serde_json::from_str(&s).map_err(|e| format!("{name}: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_files_are_named_and_paths_stay_inside() {
        assert_eq!(compression(&[0x1f, 0x8b, 8, 0]), Some(("gzip", "gunzip")));
        assert_eq!(compression(b"manifest"), None);
        assert_eq!(
            clean(Path::new("./a/../b/c")),
            Some(PathBuf::from("b/c")),
            "`..` inside the archive is fine"
        );
        assert_eq!(clean(Path::new("../etc/passwd")), None);
        assert_eq!(clean(Path::new("./")), None);
    }

    #[test]
    fn a_tar_symlink_member_is_followed_to_its_blob() {
        let d = tempfile::tempdir().unwrap();
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(5);
        h.set_mode(0o644);
        b.append_data(&mut h, "blobs/sha256/ab", &b"hello"[..])
            .unwrap();
        let mut l = tar::Header::new_gnu();
        l.set_entry_type(tar::EntryType::Symlink);
        l.set_size(0);
        b.append_link(&mut l, "id1/layer.tar", "../blobs/sha256/ab")
            .unwrap();
        let path = d.path().join("a.tar");
        std::fs::write(&path, b.into_inner().unwrap()).unwrap();
        let read = |name: &str| {
            open(&path, Holder::Tar, name, |r| {
                let mut s = String::new();
                r.read_to_string(&mut s).unwrap();
                Ok(s)
            })
            .unwrap()
        };
        assert_eq!(read("id1/layer.tar").as_deref(), Some("hello"));
        assert_eq!(read("./blobs/sha256/ab").as_deref(), Some("hello"));
        assert_eq!(read("nope"), None);
        assert_eq!(holder(&path), Ok(Holder::Tar));
        assert_eq!(holder(d.path()), Ok(Holder::Dir));
        assert!(holder(&d.path().join("x")).unwrap_err().contains("no such"));
    }
}
