//! An OCI image layout's layers (the `oci-layout` + `index.json` + `blobs/<alg>/<hex>` format
//! `podman save --format oci-dir|oci-archive` and `skopeo copy … oci:DIR` write): the index's
//! image for this machine's platform (through a nested index, as multi-platform layouts
//! have), its manifest, and its layer blobs, base first.
//!
//! Only uncompressed layers are extracted: a gzip or zstd layer would put decompression (CPU,
//! the same on every filesystem) inside the pull's time; the refusal says how to get plain
//! ones.

use super::members::{self, Holder};
use crate::Result;
use std::path::Path;

/// A content descriptor (what `index.json` and manifests list).
#[derive(serde::Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    platform: Option<Platform>,
}

#[derive(serde::Deserialize)]
struct Platform {
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    os: String,
}

/// An index (`manifests`) or an image manifest (`layers`): the blob a descriptor names is
/// one or the other.
#[derive(serde::Deserialize)]
struct Blob {
    #[serde(default)]
    manifests: Option<Vec<Descriptor>>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

/// How deep indexes may nest before the layout is called broken.
const MAX_NESTING: usize = 4;

/// This machine's platform in OCI's words.
fn this_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// The image of an index for this platform: the one naming linux and this architecture,
/// else the only (or first) one.
fn pick(manifests: &[Descriptor]) -> Option<&Descriptor> {
    manifests
        .iter()
        .find(|d| {
            d.platform
                .as_ref()
                .is_some_and(|p| p.os == "linux" && p.architecture == this_architecture())
        })
        .or_else(|| manifests.first())
}

/// The member path of a blob: `sha256:ab…` is `blobs/sha256/ab…`. `Err`: not a digest.
pub fn blob_path(digest: &str) -> std::result::Result<String, String> {
    let (alg, hex) = digest
        .split_once(':')
        .ok_or_else(|| format!("digest {digest:?} has no algorithm"))?;
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
    if !word(alg) || !word(hex) {
        return Err(format!("digest {digest:?} is not ALGORITHM:HEX"));
    }
    Ok(format!("blobs/{alg}/{hex}"))
}

/// Whether a layer's media type says it is compressed (`…tar+gzip`, `…tar+zstd`,
/// Docker's `…diff.tar.gzip`).
fn compressed(media_type: &str) -> bool {
    media_type.contains("gzip") || media_type.contains("zstd")
}

/// The layer members (base first) of the OCI layout in `archive`, whose `index.json` is
/// `index`. `Err(text)` says what is wrong and what to do.
pub fn layers(
    archive: &Path,
    holder: Holder,
    index: &str,
) -> Result<std::result::Result<Vec<String>, String>> {
    let mut blob: Blob = match serde_json::from_str(index) {
        Ok(b) => b,
        Err(e) => return Ok(Err(format!("index.json: {e}"))),
    };
    for _ in 0..MAX_NESTING {
        let Some(list) = &blob.manifests else {
            return Ok(layer_members(&blob.layers));
        };
        let Some(d) = pick(list) else {
            return Ok(Err("index.json lists no image".into()));
        };
        let path = match blob_path(&d.digest) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        blob = match members::json::<Blob>(archive, holder, &path)? {
            None => return Ok(Err(format!("the index names {path}, which is missing"))),
            Some(Err(e)) => return Ok(Err(e)),
            Some(Ok(b)) => b,
        };
    }
    Ok(Err(format!("indexes nested over {MAX_NESTING} deep")))
}

fn layer_members(layers: &[Descriptor]) -> std::result::Result<Vec<String>, String> {
    layers
        .iter()
        .map(|l| {
            if compressed(&l.media_type) {
                return Err(format!(
                    "layer {} is compressed ({}); give plain layers: `podman save \
                     --uncompressed --format oci-dir` writes them (Podman 4 compresses \
                     without it), `skopeo copy --dest-decompress` decompresses a copy",
                    l.digest, l.media_type
                ));
            }
            blob_path(&l.digest)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_become_blob_paths_and_nothing_else() {
        assert_eq!(blob_path("sha256:ab12").unwrap(), "blobs/sha256/ab12");
        for bad in ["ab12", "sha256:../../etc", "sha256:", ":ab"] {
            assert!(blob_path(bad).is_err(), "{bad}");
        }
        let l = |t: &str| Descriptor {
            media_type: t.into(),
            digest: "sha256:aa".into(),
            platform: None,
        };
        assert!(layer_members(&[l("application/vnd.oci.image.layer.v1.tar")]).is_ok());
        let e = layer_members(&[l("application/vnd.oci.image.layer.v1.tar+gzip")]).unwrap_err();
        assert!(e.contains("--dest-decompress"), "{e}");
    }
}
