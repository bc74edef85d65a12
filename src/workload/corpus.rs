//! The small-file corpus: a deterministic synthetic tree, a packed real directory, or a tarball.
//!
//! The synthetic tree is modelled on `/usr/share` + `/usr/include` of a Debian-like system:
//! ~86% regular files, ~7% directories (8% of them empty), ~7% symlinks; most directories sit
//! 2–5 levels deep, a few hold hundreds of files; file sizes follow a split log-normal around a
//! 1.5 KB median (p10 ≈ 0.5 KB, p90 ≈ 12 KB, p99 ≈ 60 KB) with a handful of 1–4 MiB files.
//!
//! To keep memory small (a 105k-entry run must stay under 100 MiB RSS) the synthetic corpus is
//! held as one copy's tar headers plus a shared 8 MiB pool of text-like bytes that every file's
//! data is a slice of; [`CorpusReader`] streams a byte-exact tar archive out of that, so the
//! extraction path parses a real tar stream (tar crate) exactly as it would a file.

use crate::{Error, Result};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Entries of one synthetic copy at scale 1 (directories, files, symlinks).
const DIRS: f64 = 2_400.0;
const FILES: f64 = 30_300.0;
const LINKS: f64 = 2_300.0;
/// Longest relative path the generator makes (fits a plain tar header with a `copy-N/` prefix).
const MAX_PATH: usize = 88;
/// Largest synthetic file and the shared data pool every file is a slice of.
const MAX_FILE: u64 = 4 << 20;
const POOL: usize = 8 << 20;
/// Fixed mtime so the tar bytes depend on the seed only.
const MTIME: u64 = 1_700_000_000;

/// What a tar entry turns into on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Directory (`mkdirat`).
    Dir,
    /// Regular file (`openat` + `write`).
    File,
    /// Symbolic link (`symlinkat`).
    Symlink,
    /// Hard link to an earlier entry (`linkat`).
    Hardlink,
    /// Anything fsbench does not extract (devices, fifos, global pax headers).
    Skip,
}

/// Map a tar entry type to what extraction does with it.
pub(crate) fn classify(t: tar::EntryType) -> Kind {
    match t {
        tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File,
        tar::EntryType::Directory => Kind::Dir,
        tar::EntryType::Symlink => Kind::Symlink,
        tar::EntryType::Link => Kind::Hardlink,
        _ => Kind::Skip,
    }
}

/// One copy of the synthetic tree: tar headers plus data slices of a shared pool.
#[derive(Debug)]
pub(crate) struct SynthUnit {
    /// 512-byte headers, one per entry, in archive (depth-first) order.
    headers: Vec<u8>,
    /// (offset into pool, length) of each entry's data; length 0 for non-files.
    data: Vec<(u32, u32)>,
    pool: Vec<u8>,
}

/// Where the archive bytes come from.
#[derive(Debug)]
pub(crate) enum Source {
    /// One synthetic copy, extracted `copies` times.
    Synthetic(SynthUnit),
    /// One packed copy of a real directory, extracted `copies` times.
    Packed(Vec<u8>),
    /// A tarball read from disk as is, extracted once into the destination.
    File(PathBuf),
}

/// A corpus ready to extract (never read from the filesystem under test).
#[derive(Debug, Clone)]
pub struct Corpus {
    pub(crate) source: Arc<Source>,
    /// How many times the unit is extracted (1 for a tarball file).
    pub(crate) copies: u32,
    /// Entries and file bytes of one unit (for a file: of the whole tarball).
    pub(crate) unit_entries: u64,
    pub(crate) unit_bytes: u64,
    /// Things the user should know (skipped special files…).
    pub(crate) notes: Vec<String>,
}

impl Corpus {
    /// Build or load the corpus described by `spec`.
    ///
    /// `from_dir` wins over `file`, which wins over the synthetic generator. A missing
    /// `from_dir` or `file` is bad input (`--corpus-from` / `--corpus-file`, exit 2).
    pub fn build(spec: &CorpusSpec) -> Result<Corpus> {
        let copies = spec.copies.max(1);
        if let Some(dir) = &spec.from_dir {
            if !dir.is_dir() {
                return Err(Error::invalid(
                    "--corpus-from",
                    format!(
                        "{} is not a directory; give an existing directory to pack (e.g. /usr/share)",
                        dir.display()
                    ),
                ));
            }
            let (bytes, entries, fbytes, skipped) = pack_dir(dir)?;
            let mut notes = Vec::new();
            if skipped > 0 {
                notes.push(format!(
                    "--corpus-from: skipped {skipped} special files (devices, fifos, sockets)"
                ));
            }
            return Ok(Corpus {
                source: Arc::new(Source::Packed(bytes)),
                copies,
                unit_entries: entries,
                unit_bytes: fbytes,
                notes,
            });
        }
        if let Some(file) = &spec.file {
            if !file.is_file() {
                return Err(Error::invalid(
                    "--corpus-file",
                    format!(
                        "{} is not a tar file; write one with `fsbench corpus --out FILE.tar`",
                        file.display()
                    ),
                ));
            }
            let (entries, bytes) = scan_tar(file)?;
            return Ok(Corpus {
                source: Arc::new(Source::File(file.clone())),
                copies: 1,
                unit_entries: entries,
                unit_bytes: bytes,
                notes: Vec::new(),
            });
        }
        if !(spec.scale > 0.0 && spec.scale <= 100.0) {
            return Err(Error::invalid(
                "--corpus-scale",
                format!("{} is out of range; use a factor in (0, 100]", spec.scale),
            ));
        }
        let unit = generate(spec.seed, spec.scale);
        let (entries, bytes) = unit.totals();
        Ok(Corpus {
            source: Arc::new(Source::Synthetic(unit)),
            copies,
            unit_entries: entries,
            unit_bytes: bytes,
            notes: Vec::new(),
        })
    }

    /// Entries (files, directories, symlinks) one extraction creates, all copies included.
    ///
    /// Each copy lives in its own `copy-N` directory, which counts as an entry, so the default
    /// three synthetic copies make 3 × (35,000 + 1) entries.
    pub fn entries(&self) -> u64 {
        match *self.source {
            Source::File(_) => self.unit_entries,
            _ => u64::from(self.copies) * (self.unit_entries + 1),
        }
    }

    /// Total file bytes one extraction writes.
    pub fn bytes(&self) -> u64 {
        match *self.source {
            Source::File(_) => self.unit_bytes,
            _ => u64::from(self.copies) * self.unit_bytes,
        }
    }

    /// Notes about how the corpus was built (shown to the user, recorded by the runner).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Write the corpus as one tarball: `copy-0/ … copy-N/`, exactly the tree `untar` makes,
    /// so GNU tar and others can be fed the same files. Returns the bytes written.
    pub fn write_tar(&self, out: impl Write) -> Result<u64> {
        let mut counter = CountingWriter { inner: out, n: 0 };
        match &*self.source {
            Source::File(p) => {
                let mut f =
                    std::fs::File::open(p).map_err(|e| Error::io("cannot open", p.clone(), e))?;
                io::copy(&mut f, &mut counter)
                    .map_err(|e| Error::io("cannot copy", p.clone(), e))?;
            }
            _ => {
                let mut b = tar::Builder::new(&mut counter);
                for copy in 0..self.copies {
                    let top = format!("copy-{copy}");
                    let mut h = tar::Header::new_gnu();
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(0o755);
                    h.set_mtime(MTIME);
                    h.set_size(0);
                    b.append_data(&mut h, &top, io::empty()).map_err(werr)?;
                    let mut ar = tar::Archive::new(self.reader());
                    for e in ar.entries().map_err(werr)? {
                        let mut e = e.map_err(werr)?;
                        let path = format!("{top}/{}", String::from_utf8_lossy(&e.path_bytes()));
                        let mut h = e.header().clone();
                        match classify(h.entry_type()) {
                            Kind::Symlink | Kind::Hardlink => {
                                let target = e.link_name_bytes().unwrap_or_default().into_owned();
                                let target = String::from_utf8_lossy(&target).into_owned();
                                let target = if h.entry_type() == tar::EntryType::Link {
                                    format!("{top}/{target}")
                                } else {
                                    target
                                };
                                b.append_link(&mut h, &path, &target).map_err(werr)?;
                            }
                            _ => b.append_data(&mut h, &path, &mut e).map_err(werr)?,
                        }
                    }
                }
                b.finish().map_err(werr)?;
            }
        }
        Ok(counter.n)
    }

    /// A reader streaming one unit as a tar archive (not for [`Source::File`]).
    pub(crate) fn reader(&self) -> CorpusReader<'_> {
        match &*self.source {
            Source::Synthetic(u) => CorpusReader::Synth {
                unit: u,
                idx: 0,
                pos: 0,
            },
            Source::Packed(b) => CorpusReader::Bytes(io::Cursor::new(b.as_slice())),
            Source::File(_) => CorpusReader::Bytes(io::Cursor::new(&[][..])),
        }
    }
}

fn werr(e: io::Error) -> Error {
    Error::Other(format!("cannot write the corpus tarball: {e}"))
}

struct CountingWriter<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Streams a unit as tar bytes: header, data slice, zero padding, … then two zero blocks.
pub(crate) enum CorpusReader<'a> {
    /// Synthetic unit; `pos` is the offset inside entry `idx` (header + data + padding).
    Synth {
        unit: &'a SynthUnit,
        idx: usize,
        pos: usize,
    },
    /// Plain bytes (a packed directory).
    Bytes(io::Cursor<&'a [u8]>),
}

const ZEROS: [u8; 1024] = [0; 1024];

impl Read for CorpusReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            CorpusReader::Bytes(c) => c.read(buf),
            CorpusReader::Synth { unit, idx, pos } => {
                let n_entries = unit.data.len();
                if *idx >= n_entries {
                    // Trailer: two zero blocks.
                    let left = 1024usize.saturating_sub(*pos);
                    let n = left.min(buf.len());
                    buf[..n].copy_from_slice(&ZEROS[..n]);
                    *pos += n;
                    return Ok(n);
                }
                let (off, len) = unit.data[*idx];
                let (off, len) = (off as usize, len as usize);
                let padded = len.div_ceil(512) * 512;
                let src: &[u8] = if *pos < 512 {
                    &unit.headers[*idx * 512 + *pos..(*idx + 1) * 512]
                } else if *pos < 512 + len {
                    let d = *pos - 512;
                    &unit.pool[off + d..off + len]
                } else {
                    &ZEROS[..512 + padded - *pos]
                };
                let n = src.len().min(buf.len());
                buf[..n].copy_from_slice(&src[..n]);
                *pos += n;
                if *pos >= 512 + padded {
                    *idx += 1;
                    *pos = 0;
                }
                Ok(n)
            }
        }
    }
}

impl SynthUnit {
    /// (entries, file bytes) of this unit.
    fn totals(&self) -> (u64, u64) {
        let bytes = self.data.iter().map(|&(_, l)| u64::from(l)).sum();
        (self.data.len() as u64, bytes)
    }
}

/// Pack a real directory (one copy) into an in-memory tar; returns (tar, entries, bytes, skipped).
fn pack_dir(root: &Path) -> Result<(Vec<u8>, u64, u64, u64)> {
    let mut b = tar::Builder::new(Vec::new());
    b.follow_symlinks(false);
    let (mut entries, mut bytes, mut skipped) = (0u64, 0u64, 0u64);
    // Depth-first with each directory before its contents, children sorted for determinism.
    let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = root.join(&rel);
        let mut children: Vec<_> = std::fs::read_dir(&abs)
            .map_err(|e| Error::io("--corpus-from: cannot read", abs.clone(), e))?
            .collect::<io::Result<Vec<_>>>()
            .map_err(|e| Error::io("--corpus-from: cannot read", abs.clone(), e))?;
        children.sort_by_key(|d| d.file_name());
        let mut subdirs = Vec::new();
        for c in children {
            let ft = c
                .file_type()
                .map_err(|e| Error::io("--corpus-from: cannot stat", c.path(), e))?;
            let name = rel.join(c.file_name());
            if !(ft.is_dir() || ft.is_file() || ft.is_symlink()) {
                skipped += 1;
                continue;
            }
            b.append_path_with_name(c.path(), &name)
                .map_err(|e| Error::io("--corpus-from: cannot pack", c.path(), e))?;
            entries += 1;
            if ft.is_file() {
                bytes += c
                    .metadata()
                    .map_err(|e| Error::io("--corpus-from: cannot stat", c.path(), e))?
                    .len();
            }
            if ft.is_dir() {
                subdirs.push(name);
            }
        }
        // Reverse so the stack pops them in sorted order.
        stack.extend(subdirs.into_iter().rev());
    }
    let bytes_tar = b
        .into_inner()
        .map_err(|e| Error::io("--corpus-from: cannot pack", root, e))?;
    Ok((bytes_tar, entries, bytes, skipped))
}

/// Count what extracting a tarball creates: (entries, file bytes). Parent directories the
/// archive omits are created by extraction and counted here too.
fn scan_tar(path: &Path) -> Result<(u64, u64)> {
    let f =
        std::fs::File::open(path).map_err(|e| Error::io("--corpus-file: cannot open", path, e))?;
    let mut ar = tar::Archive::new(io::BufReader::with_capacity(1 << 20, f));
    let rerr = |e: io::Error| Error::io("--corpus-file: cannot read tar", path, e);
    let mut listed: HashSet<Vec<u8>> = HashSet::new();
    let mut implied: HashSet<Vec<u8>> = HashSet::new();
    let mut sizes: std::collections::HashMap<Vec<u8>, u64> = Default::default();
    let (mut entries, mut bytes) = (0u64, 0u64);
    for e in ar.entries().map_err(rerr)? {
        let e = e.map_err(rerr)?;
        let kind = classify(e.header().entry_type());
        if kind == Kind::Skip {
            continue;
        }
        let Some(p) = normalize(&e.path_bytes()) else {
            continue;
        };
        if p.is_empty() {
            continue;
        }
        let mut cut = p.len();
        while let Some(i) = p[..cut].iter().rposition(|&c| c == b'/') {
            implied.insert(p[..i].to_vec());
            cut = i;
        }
        match kind {
            Kind::Dir => {
                if listed.insert(p) {
                    entries += 1;
                }
            }
            Kind::File => {
                let sz = e.size();
                bytes += sz;
                sizes.insert(p, sz);
                entries += 1;
            }
            Kind::Hardlink => {
                let target = e
                    .link_name_bytes()
                    .and_then(|t| normalize(&t))
                    .unwrap_or_default();
                bytes += sizes.get(&target).copied().unwrap_or(0);
                entries += 1;
            }
            Kind::Symlink => entries += 1,
            Kind::Skip => {}
        }
    }
    entries += implied.difference(&listed).count() as u64;
    Ok((entries, bytes))
}

/// Uniform float in [0, 1).
fn unit_f64(r: &mut Xoshiro256PlusPlus) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Standard normal (Box–Muller; one of the pair is enough here).
fn normal(r: &mut Xoshiro256PlusPlus) -> f64 {
    let u1 = unit_f64(r).max(1e-300);
    let u2 = unit_f64(r);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A file size: split log-normal around 1.5 KB, some empty files, rare 1–4 MiB files.
pub(crate) fn file_size(r: &mut Xoshiro256PlusPlus) -> u64 {
    let u = unit_f64(r);
    if u < 0.015 {
        return 0;
    }
    if u > 0.9998 {
        return (1 << 20) + (unit_f64(r) * (MAX_FILE - (1 << 20)) as f64) as u64;
    }
    let z = normal(r);
    let sigma = if z < 0.0 { 0.9 } else { 1.6 };
    ((1500.0 * (sigma * z).exp()) as u64).clamp(1, MAX_FILE)
}

const EXTS: &[&str] = &[
    ".h", ".h", ".h", ".html", ".gz", ".gz", ".png", ".svg", ".txt", ".py", ".mo", ".xml", ".json",
    ".conf", ".desktop", "", "", ".js", ".css", ".hpp", ".pm", ".rb", ".1.gz", ".mk",
];

/// A file or directory name: lower-case stem (median ~10 chars), sometimes digits, `-`, `_`.
fn name(r: &mut Xoshiro256PlusPlus, file: bool) -> String {
    let len = ((10.0 * (0.5 * normal(r)).exp()) as usize).clamp(2, 40);
    let mut s = String::with_capacity(len + 6);
    for i in 0..len {
        let x = r.next_u64();
        let c = match x % 40 {
            0 if i > 0 => '-',
            1 if i > 0 => '_',
            2..=4 => (b'0' + (x >> 8) as u8 % 10) as char,
            _ => (b'a' + (x >> 8) as u8 % 26) as char,
        };
        s.push(c);
    }
    if file {
        s.push_str(EXTS[(r.next_u64() % EXTS.len() as u64) as usize]);
    }
    s
}

struct GenDir {
    path: String,
    depth: u32,
    subdirs: Vec<u32>,
    files: Vec<(String, u64)>,
    links: Vec<(String, String)>,
    names: HashSet<String>,
}

/// Pick a unique name in `d` that keeps the path within [`MAX_PATH`].
fn unique_name(r: &mut Xoshiro256PlusPlus, d: &mut GenDir, file: bool) -> String {
    let room = MAX_PATH.saturating_sub(d.path.len() + 1).max(4);
    let mut n = name(r, file);
    if n.len() > room {
        n.truncate(room);
    }
    let mut k = 0u32;
    while d.names.contains(&n) {
        k += 1;
        let suffix = format!("-{k}");
        let mut base = n.clone();
        base.truncate(room.saturating_sub(suffix.len()).max(1));
        n = base + &suffix;
    }
    d.names.insert(n.clone());
    n
}

/// Generate one copy of the synthetic tree.
pub(crate) fn generate(seed: u64, scale: f64) -> SynthUnit {
    let mut r = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed_f5be_7c00_0000);
    let n_dirs = ((DIRS * scale).round() as usize).max(3);
    let n_files = ((FILES * scale).round() as usize).max(1);
    let n_links = ((LINKS * scale).round() as usize).max(1);
    // Named steps drawing from the one generator in the same order as ever (the corpus of a
    // seed never changes): the tree, its files and links, the text pool; then the archive
    // headers from a generator of their own.
    let mut dirs = grow_dirs(&mut r, n_dirs);
    fill_dirs(&mut r, &mut dirs, n_files, n_links);
    let pool = text_pool(&mut r);
    let (headers, data) = tar_entries(seed, &dirs);
    SynthUnit {
        headers,
        data,
        pool,
    }
}

/// The directory tree: `dirs[0]` the copy root, `share/` and `include/` under it, then
/// directories until there are `n_dirs` besides the root, deeper ones ever less likely.
fn grow_dirs(r: &mut Xoshiro256PlusPlus, n_dirs: usize) -> Vec<GenDir> {
    let mk = |path: String, depth: u32| GenDir {
        path,
        depth,
        subdirs: Vec::new(),
        files: Vec::new(),
        links: Vec::new(),
        names: HashSet::new(),
    };
    // dirs[0] is the copy root (not an entry); share/ and include/ sit under it like /usr.
    let mut dirs = vec![mk(String::new(), 0)];
    for top in ["share", "include"] {
        dirs[0].names.insert(top.to_string());
        let id = dirs.len() as u32;
        dirs[0].subdirs.push(id);
        dirs.push(mk(top.to_string(), 1));
    }
    // How likely a randomly picked directory at each depth takes another subdirectory.
    const ACCEPT: [f64; 9] = [0.0, 1.0, 0.5, 0.35, 0.25, 0.12, 0.06, 0.03, 0.0];
    while dirs.len() < n_dirs + 1 {
        let parent = if unit_f64(r) < 0.25 {
            // share/ gets most top-level packages, include/ the rest.
            if unit_f64(r) < 0.85 { 1 } else { 2 }
        } else {
            let p = (r.next_u64() % dirs.len() as u64) as usize;
            let d = dirs[p].depth as usize;
            if d == 0 || unit_f64(r) >= ACCEPT[d.min(8)] || dirs[p].path.len() > 60 {
                continue;
            }
            p
        };
        let n = unique_name(r, &mut dirs[parent], false);
        let path = format!("{}/{}", dirs[parent].path, n);
        let depth = dirs[parent].depth + 1;
        let id = dirs.len() as u32;
        dirs[parent].subdirs.push(id);
        dirs.push(mk(path, depth));
    }
    dirs
}

/// Files (heavy-tailed sizes, heavy-tailed counts per directory) and symlinks spread over
/// `dirs`.
fn fill_dirs(r: &mut Xoshiro256PlusPlus, dirs: &mut [GenDir], n_files: usize, n_links: usize) {
    // Heavy-tailed share of files per directory; ~8% of leaf directories stay empty.
    let mut cum = Vec::with_capacity(dirs.len());
    let mut total = 0.0;
    for (i, d) in dirs.iter().enumerate() {
        let leaf = d.subdirs.is_empty();
        let w = if i == 0 || (leaf && unit_f64(r) < 0.12) {
            0.0
        } else {
            unit_f64(r).max(1e-3).powf(-1.2).min(300.0)
        };
        total += w;
        cum.push(total);
    }
    let pick = |r: &mut Xoshiro256PlusPlus| {
        let x = unit_f64(r) * total;
        cum.partition_point(|&c| c <= x).min(cum.len() - 1)
    };
    for _ in 0..n_files {
        let d = pick(r);
        let n = unique_name(r, &mut dirs[d], true);
        let size = file_size(r);
        dirs[d].files.push((n, size));
    }
    for _ in 0..n_links {
        let d = pick(r);
        // Point at a sibling when there is one (like alternatives and .so links), else dangle.
        let target = match dirs[d].files.len() {
            0 => format!("../{}", name(r, true)),
            n => dirs[d].files[(r.next_u64() % n as u64) as usize].0.clone(),
        };
        let n = unique_name(r, &mut dirs[d], true);
        dirs[d].links.push((n, target));
    }
}

/// The pool the files' contents are cut from.
fn text_pool(r: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    // Text-like pool: words from a seeded vocabulary (compresses ~2-3x, like docs and headers).
    let vocab: Vec<String> = (0..4096).map(|_| name(r, false)).collect();
    let mut pool = Vec::with_capacity(POOL + 64);
    while pool.len() < POOL {
        let w = &vocab[(r.next_u64() % vocab.len() as u64) as usize];
        pool.extend_from_slice(w.as_bytes());
        pool.push(if r.next_u64().is_multiple_of(12) {
            b'\n'
        } else {
            b' '
        });
    }
    pool.truncate(POOL);
    pool
}

/// The archive's headers and each entry's (offset, length) in the pool, depth-first, each
/// directory before its contents (what `tar -c` produces).
fn tar_entries(seed: u64, dirs: &[GenDir]) -> (Vec<u8>, Vec<(u32, u32)>) {
    let mut headers = Vec::new();
    let mut data = Vec::new();
    let mut push = |h: &mut tar::Header, path: &str, len: u64, r: &mut Xoshiro256PlusPlus| {
        h.set_path(path)
            .expect("synthetic paths are short and relative");
        h.set_mtime(MTIME);
        h.set_uid(0);
        h.set_gid(0);
        h.set_size(len);
        h.set_cksum();
        headers.extend_from_slice(h.as_bytes());
        let off = if len == 0 {
            0
        } else {
            r.next_u64() % (POOL as u64 - len + 1)
        };
        data.push((off as u32, len as u32));
    };
    // Depth-first, each directory before its contents (what `tar -c` produces).
    let mut stack: Vec<u32> = dirs[0].subdirs.iter().rev().copied().collect();
    let emit_contents = |d: &GenDir, push: &mut dyn FnMut(&mut tar::Header, &str, u64)| {
        for (n, size) in &d.files {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            push(&mut h, &format!("{}/{}", d.path, n), *size);
        }
        for (n, target) in &d.links {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_mode(0o777);
            h.set_link_name(target)
                .expect("synthetic link targets are short");
            push(&mut h, &format!("{}/{}", d.path, n), 0);
        }
    };
    let mut r2 = Xoshiro256PlusPlus::seed_from_u64(seed.rotate_left(17) ^ 0xda7a);
    let mut p = |h: &mut tar::Header, path: &str, len: u64| push(h, path, len, &mut r2);
    while let Some(i) = stack.pop() {
        let d = &dirs[i as usize];
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(0o755);
        p(&mut h, &format!("{}/", d.path), 0);
        emit_contents(d, &mut p);
        stack.extend(d.subdirs.iter().rev().copied());
    }
    (headers, data)
}

/// How to obtain the corpus. The default is the seed's shape: 3 synthetic copies, seed 1,
/// scale 1 (105,003 entries).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CorpusSpec {
    /// Copies of the synthetic tree (≈35,000 entries each; default 3 ≈ 105,000 entries).
    pub copies: u32,
    /// Generator seed (the corpus is deterministic for a seed).
    pub seed: u64,
    /// Pack this real directory instead of generating.
    pub from_dir: Option<PathBuf>,
    /// Use this tarball instead of generating.
    pub file: Option<PathBuf>,
    /// Scale factor for tests and quick runs (1.0 = full size of one copy).
    #[serde(default = "one")]
    pub scale: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for CorpusSpec {
    fn default() -> Self {
        CorpusSpec {
            copies: 3,
            seed: 1,
            from_dir: None,
            file: None,
            scale: 1.0,
        }
    }
}

/// Normalize an archive path: drop leading `/` and `./`, empty and `.` components and a
/// trailing `/`; `None` when it climbs out with `..`. The archive root itself is `Some("")`.
pub(crate) fn normalize(p: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(p.len());
    for comp in p.split(|&c| c == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => return None,
            c => {
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(c);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64, scale: f64) -> CorpusSpec {
        CorpusSpec {
            copies: 1,
            seed,
            scale,
            ..Default::default()
        }
    }

    fn tar_bytes(c: &Corpus) -> Vec<u8> {
        let mut v = Vec::new();
        io::copy(&mut c.reader(), &mut v).unwrap();
        v
    }

    #[test]
    fn same_seed_same_bytes_other_seed_differs() {
        let a = Corpus::build(&spec(7, 0.05)).unwrap();
        let b = Corpus::build(&spec(7, 0.05)).unwrap();
        let c = Corpus::build(&spec(8, 0.05)).unwrap();
        assert_eq!(tar_bytes(&a), tar_bytes(&b));
        assert_eq!((a.entries(), a.bytes()), (b.entries(), b.bytes()));
        assert_ne!(tar_bytes(&a), tar_bytes(&c));
    }

    #[test]
    fn full_copy_is_about_35k_entries_with_sane_sizes() {
        let c = Corpus::build(&spec(1, 1.0)).unwrap();
        let n = c.unit_entries;
        assert!((34_000..=36_000).contains(&n), "entries {n}");
        let mut ar = tar::Archive::new(c.reader());
        let (mut files, mut dirs, mut links, mut sizes) = (0, 0, 0, Vec::new());
        let mut maxlen = 0;
        for e in ar.entries().unwrap() {
            let e = e.unwrap();
            maxlen = maxlen.max(e.path_bytes().len());
            match classify(e.header().entry_type()) {
                Kind::File => {
                    files += 1;
                    sizes.push(e.size());
                }
                Kind::Dir => dirs += 1,
                Kind::Symlink => links += 1,
                _ => panic!("unexpected entry type"),
            }
        }
        assert_eq!(files + dirs + links, n);
        assert!(dirs > 2000 && links > 2000 && files > 29_000);
        sizes.sort_unstable();
        let q = |p: f64| sizes[(sizes.len() as f64 * p) as usize];
        assert!((1000..2200).contains(&q(0.5)), "median {}", q(0.5));
        assert!(q(0.9) > 5_000 && q(0.9) < 40_000, "p90 {}", q(0.9));
        assert!(*sizes.last().unwrap() > 1 << 20, "long tail reaches MiBs");
        assert!(*sizes.last().unwrap() <= MAX_FILE);
        let total: u64 = sizes.iter().sum();
        assert_eq!(total, c.unit_bytes);
        assert!(maxlen <= MAX_PATH + 1);
        // Three copies count their copy-N directories too.
        let three = Corpus::build(&CorpusSpec {
            copies: 3,
            ..spec(1, 1.0)
        })
        .unwrap();
        assert_eq!(three.entries(), 3 * (n + 1));
    }

    #[test]
    fn missing_from_dir_is_bad_input_naming_the_flag() {
        let err = Corpus::build(&CorpusSpec {
            from_dir: Some("/nonexistent/fsbench".into()),
            ..spec(1, 1.0)
        })
        .unwrap_err();
        assert_eq!(err.exit_code(), crate::error::EXIT_USAGE);
        assert!(err.to_string().starts_with("--corpus-from"), "{err}");
    }

    #[test]
    fn written_tarball_scans_to_the_same_counts() {
        let c = Corpus::build(&CorpusSpec {
            copies: 2,
            ..spec(3, 0.02)
        })
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.tar");
        c.write_tar(std::fs::File::create(&path).unwrap()).unwrap();
        let f = Corpus::build(&CorpusSpec {
            file: Some(path),
            ..spec(0, 1.0)
        })
        .unwrap();
        assert_eq!((f.entries(), f.bytes()), (c.entries(), c.bytes()));
    }
}
