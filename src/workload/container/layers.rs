//! The image: a layer set generated from a fixed seed, so every setup and round extracts the
//! same files, and its extraction into lower directories.
//!
//! Shape (what real images look like, roughly: a base OS layer holding most files, a runtime
//! layer, then thinner application layers): layer `i` gets a share of the files proportional
//! to `0.5^i + 0.05`; file sizes are log-normal around 2.5 KiB (most files a few KiB, a long
//! tail of MiB-sized libraries), scaled so their sum is the image size; about one file in ten
//! is executable; one file in a hundred of the layers below is deleted by a later layer (a
//! whiteout, as `apt-get purge` or `rm` in a Dockerfile leaves). Directories form one tree
//! shared by every layer (`usr/lib/...` appears in many), so overlay merges them.

use super::ContainerParams;
use crate::engine::rng::Xoshiro;
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The seed of every image: the layer set is a fixed input, like a corpus.
const IMAGE_SEED: u64 = 0x0c0a_7a1e_2026_0041;

/// The top directories every layer's tree grows from.
pub const TOPS: [&str; 7] = [
    "usr/lib",
    "usr/share",
    "usr/bin",
    "etc",
    "var/lib",
    "opt/app",
    "lib",
];

/// One regular file of a layer.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    /// Path relative to the layer's root.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Permission bits.
    pub mode: u32,
}

/// One layer: its directories (parents first), files, and whiteouts of lower files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layer {
    /// Directories, each after its parent.
    pub dirs: Vec<String>,
    /// Regular files.
    pub files: Vec<FileEntry>,
    /// Paths of lower layers' entries this layer deletes.
    pub whiteouts: Vec<String>,
    /// Directories whose lower contents this layer hides (an archive's opaque markers).
    pub opaque: Vec<String>,
    /// The layer's tar in the user's archive (`None`: generated).
    pub member: Option<String>,
}

/// The whole image, lowest layer first.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerSet {
    /// Layers, base first.
    pub layers: Vec<Layer>,
    /// The user's archive the layers come from (`None`: generated).
    pub archive: Option<std::path::PathBuf>,
}

/// A standard normal draw (Box–Muller), for the log-normal sizes.
fn normal(rng: &mut Xoshiro) -> f64 {
    let u1 = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl LayerSet {
    /// The image of `p`: the user's archive's, else the generated one.
    pub fn of(p: &ContainerParams) -> Result<LayerSet> {
        match &p.archive {
            Some(a) => super::archive::read(a),
            None => Ok(LayerSet::generate(p)),
        }
    }

    /// The image `p` describes (its layers, files and size; the step does not matter).
    pub fn generate(p: &ContainerParams) -> LayerSet {
        let mut rng = Xoshiro::new(IMAGE_SEED);
        // One directory tree for all layers: about 12 files a directory, at most 6 deep.
        let mut tree: Vec<String> = Vec::new();
        let mut depth: Vec<u32> = Vec::new();
        for t in TOPS {
            tree.push(t.to_string());
            depth.push(1);
        }
        let ndirs = (p.files / 12).max(TOPS.len() as u32) as usize;
        while tree.len() < ndirs {
            let parent = rng.below(tree.len() as u64) as usize;
            if depth[parent] >= 6 {
                continue;
            }
            tree.push(format!("{}/d{}", tree[parent], tree.len()));
            depth.push(depth[parent] + 1);
        }
        let weights: Vec<f64> = (0..p.layers)
            .map(|i| 0.5f64.powi(i as i32) + 0.05)
            .collect();
        let wsum: f64 = weights.iter().sum();
        // Raw log-normal sizes first, scaled to the image size after.
        let mut raw: Vec<f64> = (0..p.files)
            .map(|_| (2560f64.ln() + 1.9 * normal(&mut rng)).exp())
            .collect();
        let scale = p.image_size as f64 / raw.iter().sum::<f64>().max(1.0);
        raw.iter_mut().for_each(|s| *s *= scale);
        let mut layers = Vec::new();
        let mut next = 0usize;
        let mut below: Vec<String> = Vec::new();
        for (i, w) in weights.iter().enumerate() {
            let n = if i + 1 == weights.len() {
                p.files as usize - next
            } else {
                ((f64::from(p.files) * w / wsum) as usize).min(p.files as usize - next)
            };
            let mut layer = Layer::default();
            let mut dirs = BTreeSet::new();
            for k in 0..n {
                let dir = &tree[rng.below(tree.len() as u64) as usize];
                let mut a = dir.as_str();
                loop {
                    dirs.insert(a.to_string());
                    match a.rfind('/') {
                        Some(pos) => a = &a[..pos],
                        None => break,
                    }
                }
                let exec = rng.below(10) == 0;
                layer.files.push(FileEntry {
                    path: format!("{dir}/f{}", next + k),
                    size: (raw[next + k] as u64).min(64 << 20),
                    mode: if exec { 0o755 } else { 0o644 },
                });
            }
            next += n;
            // BTreeSet order puts a parent before its children ("a" < "a/b").
            layer.dirs = dirs.into_iter().collect();
            if !below.is_empty() {
                for _ in 0..below.len() / 100 {
                    let victim = rng.below(below.len() as u64) as usize;
                    layer.whiteouts.push(below.swap_remove(victim));
                }
            }
            below.extend(layer.files.iter().map(|f| f.path.clone()));
            layers.push(layer);
        }
        LayerSet {
            layers,
            archive: None,
        }
    }

    /// Regular files over all layers.
    pub fn files(&self) -> usize {
        self.layers.iter().map(|l| l.files.len()).sum()
    }

    /// Bytes of file data over all layers.
    pub fn bytes(&self) -> u64 {
        self.layers
            .iter()
            .flat_map(|l| &l.files)
            .map(|f| f.size)
            .sum()
    }

    /// What a container sees of each layer's entries (`pick`), top layer first: an entry
    /// counts unless a higher layer has the same path, or deleted it or one of its parents
    /// (a whiteout), or hid its directory (opaque).
    fn seen<'a, T>(
        &'a self,
        pick: impl Fn(&'a Layer) -> &'a [T],
        path: impl Fn(&T) -> &str,
    ) -> Vec<&'a T> {
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        let mut hidden: BTreeSet<&str> = BTreeSet::new();
        let mut out = Vec::new();
        for l in self.layers.iter().rev() {
            for x in pick(l) {
                let p = path(x);
                let mut a = p;
                let mut gone = hidden.contains(a);
                while !gone && let Some((parent, _)) = a.rsplit_once('/') {
                    gone = hidden.contains(parent);
                    a = parent;
                }
                if !gone && taken.insert(p) {
                    out.push(x);
                }
            }
            hidden.extend(l.whiteouts.iter().map(String::as_str));
            hidden.extend(l.opaque.iter().map(String::as_str));
        }
        out
    }

    /// The files a container sees.
    pub fn visible(&self) -> Vec<&FileEntry> {
        self.seen(|l| &l.files, |f| &f.path)
    }

    /// Every directory a container sees, sorted (parents first).
    pub fn dirs(&self) -> Vec<&str> {
        let mut d: Vec<&str> = self
            .seen(|l| &l.dirs, |d| d)
            .into_iter()
            .map(String::as_str)
            .collect();
        d.sort();
        d
    }
}

/// A whiteout as overlay2 stores it: a 0/0 character device at the deleted path.
pub fn whiteout(p: &Path) -> Result<()> {
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
    }
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o000),
        rustix::fs::makedev(0, 0),
    )
    .map_err(|e| Error::io("cannot create the whiteout", p, e.into()))
}

/// Random bytes the files are cut from (incompressible, like compressed libraries and media).
pub fn fill() -> Vec<u8> {
    let mut rng = Xoshiro::new(IMAGE_SEED ^ 0xf11);
    (0..(1 << 20) / 8)
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .collect()
}

/// Write `size` bytes of `fill` (starting at a file-specific offset) to a new file.
pub fn write_file(path: &Path, size: u64, mode: u32, fill: &[u8], salt: usize) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| Error::io("cannot create", path, e))?;
    let mut left = size as usize;
    let mut at = salt % fill.len();
    while left > 0 {
        let n = left.min(fill.len() - at);
        f.write_all(&fill[at..at + n])
            .map_err(|e| Error::io("cannot write", path, e))?;
        left -= n;
        at = 0;
    }
    Ok(())
}

/// Extract `layer` into the empty directory `root`: directories, files, then whiteouts as
/// overlay2 stores them (a 0/0 character device at the deleted path).
pub fn extract(layer: &Layer, root: &Path, fill: &[u8]) -> Result<()> {
    for d in &layer.dirs {
        let p = root.join(d);
        std::fs::create_dir_all(&p).map_err(|e| Error::io("cannot create", &p, e))?;
    }
    for (i, f) in layer.files.iter().enumerate() {
        write_file(&root.join(&f.path), f.size, f.mode, fill, i * 4096 + 17)?;
        if i % 1024 == 0 {
            crate::cancel::check()?;
        }
    }
    for w in &layer.whiteouts {
        whiteout(&root.join(w))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::container::Step;

    #[test]
    fn the_image_is_fixed_and_shaped_like_one() {
        let p = ContainerParams::new(Step::Pull);
        let a = LayerSet::generate(&p);
        assert_eq!(a, LayerSet::generate(&p), "deterministic");
        assert_eq!(a.layers.len(), 8);
        assert_eq!(a.files(), 30_000);
        let want = p.image_size as f64;
        assert!(
            (a.bytes() as f64 - want).abs() < want * 0.05,
            "{} of {want}",
            a.bytes()
        );
        // The base layer is the biggest; most files are small, a few are large.
        assert!(a.layers[0].files.len() > a.layers[7].files.len() * 4);
        let mut sizes: Vec<u64> = a
            .layers
            .iter()
            .flat_map(|l| &l.files)
            .map(|f| f.size)
            .collect();
        sizes.sort();
        assert!(
            sizes[sizes.len() / 2] < 16 << 10,
            "median {}",
            sizes[sizes.len() / 2]
        );
        assert!(*sizes.last().unwrap() > 1 << 20);
        // Later layers delete some of what lies below them.
        assert!(a.layers[1..].iter().any(|l| !l.whiteouts.is_empty()));
        assert!(a.visible().len() < a.files());
        for l in &a.layers {
            for f in &l.files {
                let parent = &f.path[..f.path.rfind('/').unwrap()];
                assert!(
                    l.dirs.iter().any(|d| d == parent),
                    "{} has no parent",
                    f.path
                );
            }
        }
    }
}
