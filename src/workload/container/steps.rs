//! The five steps of a container's life on the filesystem under test, each timed to its last
//! `syncfs` (what the filesystem defers is inside the time).
//!
//! Layout under fsbench's data directory, as overlay2's under `/var/lib/docker/overlay2`:
//! `containers/l/<i>` the layers' lower directories (0 the base), `containers/c/<name>/{diff,
//! work,merged}` each container, `containers/image` the marker of a complete extraction.

use super::layers::{self, LayerSet};
use super::overlay::{Dirs, Overlay};
use super::{ContainerParams, Step};
use crate::engine::rng::Xoshiro;
use crate::metrics::registry::{
    BYTES, CONTAINER_FILES_PER_S, CONTAINER_INODES_USED, CONTAINER_MIB_S, CONTAINERS_PER_S,
    ENTRIES, IMAGE_REMOVE_SECONDS, SECONDS, WHITEOUT_SECONDS,
};
use crate::workload::{Metric, WorkloadOutput};
use crate::{Error, Result};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const MIB: f64 = (1u64 << 20) as f64;

/// The image store of one data directory.
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store under fsbench's data directory `dir`.
    pub fn under(dir: &Path) -> Store {
        Store {
            root: dir.join("containers"),
        }
    }

    fn layer(&self, i: usize) -> PathBuf {
        self.root.join("l").join(i.to_string())
    }

    fn lowers_top_first(&self, n: usize) -> Vec<PathBuf> {
        (0..n).rev().map(|i| self.layer(i)).collect()
    }

    fn containers(&self) -> PathBuf {
        self.root.join("c")
    }

    fn marker(&self) -> PathBuf {
        self.root.join("image")
    }

    /// What the marker records: the image's shape (the step does not change it).
    fn signature(p: &ContainerParams) -> String {
        match &p.archive {
            Some(a) => format!("archive {}\n", a.display()),
            None => format!(
                "{} layers, {} files, {} bytes\n",
                p.layers, p.files, p.image_size
            ),
        }
    }

    /// Whether the image `p` describes is extracted here.
    pub fn has_image(&self, p: &ContainerParams) -> bool {
        std::fs::read_to_string(self.marker()).is_ok_and(|s| s == Self::signature(p))
    }

    /// Remove the whole store (untimed).
    pub fn remove(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("cannot remove the image store", &self.root, e))
            }
            _ => Ok(()),
        }
    }

    /// Extract the image, then sync; returns what it wrote (files, bytes).
    fn extract(&self, set: &LayerSet) -> Result<(usize, u64)> {
        let fill = layers::fill();
        for (i, l) in set.layers.iter().enumerate() {
            let dir = self.layer(i);
            std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
            match (&set.archive, &l.member) {
                (Some(a), Some(m)) => super::archive::extract(a, m, &dir)?,
                _ => layers::extract(l, &dir, &fill)?,
            }
        }
        std::fs::create_dir_all(self.containers())
            .map_err(|e| Error::io("cannot create", self.containers(), e))?;
        syncfs(&self.root)?;
        Ok((set.files(), set.bytes()))
    }

    /// Untimed preparation: the image `p` describes, extracted (pull: an empty store).
    pub fn prepare(&self, p: &ContainerParams) -> Result<()> {
        if p.step == Step::Pull {
            return self.remove();
        }
        if self.has_image(p) {
            return Ok(());
        }
        self.remove()?;
        self.extract(&LayerSet::of(p)?)?;
        write_marker(&self.marker(), p)
    }
}

fn write_marker(path: &Path, p: &ContainerParams) -> Result<()> {
    std::fs::write(path, Store::signature(p)).map_err(|e| Error::io("cannot write", path, e))
}

/// `syncfs(2)` on the filesystem holding `path`.
pub fn syncfs(path: &Path) -> Result<()> {
    let f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    rustix::fs::syncfs(&f).map_err(|e| Error::io("syncfs failed on", path, e.into()))
}

/// Inodes in use on the filesystem holding `path` (statvfs), `None` where it reports no
/// inode count (Btrfs allocates inodes dynamically and reports 0 total).
pub fn inodes_in_use(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    (s.f_files > 0).then(|| s.f_files.saturating_sub(s.f_ffree))
}

fn secs_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64().max(1e-9)
}

/// Run step `p.step` with the store under `dir`.
pub fn run(dir: &Path, p: &ContainerParams) -> Result<WorkloadOutput> {
    let store = Store::under(dir);
    let mut out = match p.step {
        Step::Pull => pull(&store, p)?,
        Step::Start => start(&store, p)?,
        Step::Copyup => copyup(&store, p)?,
        Step::Churn => churn(&store, p)?,
        Step::Delete => delete(&store, p)?,
        // It needs the cache and the tool timeout: the kind runs it (`podman::run`).
        Step::Podman => {
            return Err(Error::Other(
                "container-podman runs through workload::container::podman".into(),
            ));
        }
    };
    if out
        .metrics
        .iter()
        .all(|m| m.metric != CONTAINER_INODES_USED)
        && matches!(p.step, Step::Pull | Step::Churn)
    {
        out.notes.push(
            "inodes in use not reported: this filesystem's statvfs gives no inode count \
             (inodes are allocated as needed)"
                .into(),
        );
    }
    Ok(out)
}

fn pull(store: &Store, p: &ContainerParams) -> Result<WorkloadOutput> {
    let set = LayerSet::of(p)?;
    let t0 = Instant::now();
    let (files, bytes) = store.extract(&set)?;
    let s = secs_since(t0);
    write_marker(&store.marker(), p)?;
    let mut metrics = vec![
        Metric::new(SECONDS, "s", s),
        Metric::new(CONTAINER_FILES_PER_S, "files/s", files as f64 / s),
        Metric::new(CONTAINER_MIB_S, "MiB/s", bytes as f64 / MIB / s),
        Metric::new(ENTRIES, "entries", files as f64),
        Metric::new(BYTES, "bytes", bytes as f64),
    ];
    if let Some(n) = inodes_in_use(&store.root) {
        metrics.push(Metric::new(CONTAINER_INODES_USED, "inodes", n as f64));
    }
    Ok(WorkloadOutput {
        metrics,
        ..Default::default()
    })
}

/// Read a whole file, returning its size.
fn read_all(path: &Path, buf: &mut [u8]) -> Result<u64> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    let mut n = 0u64;
    loop {
        match f.read(buf) {
            Ok(0) => return Ok(n),
            Ok(k) => n += k as u64,
            Err(e) => return Err(Error::io("cannot read", path, e)),
        }
    }
}

/// The entry set of container `c`: `n` of the image's visible files, fixed per container.
fn entry_set<'a>(visible: &[&'a layers::FileEntry], c: u64, n: u32) -> Vec<&'a str> {
    let mut rng = Xoshiro::new(0xe4_7e57 ^ c);
    (0..n.min(visible.len() as u32))
        .map(|_| {
            visible[rng.below(visible.len() as u64) as usize]
                .path
                .as_str()
        })
        .collect()
}

fn start(store: &Store, p: &ContainerParams) -> Result<WorkloadOutput> {
    let set = LayerSet::of(p)?;
    let visible = set.visible();
    let lowers = store.lowers_top_first(set.layers.len());
    let mut buf = vec![0u8; 1 << 20];
    let mut running = Vec::new();
    let (mut files, mut bytes) = (0usize, 0u64);
    let t0 = Instant::now();
    for c in 0..p.containers {
        let dirs = Dirs::of(&store.containers(), &format!("start-{c}"));
        dirs.create()?;
        let o = Overlay::mount(&lowers, &dirs)?;
        for f in entry_set(&visible, u64::from(c), p.entry_files) {
            bytes += read_all(&o.root().join(f), &mut buf)?;
            files += 1;
        }
        running.push((o, dirs));
        crate::cancel::check()?;
    }
    let s = secs_since(t0);
    for (o, dirs) in running {
        o.unmount()?;
        remove_tree(dirs.home())?;
    }
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", s),
            Metric::new(CONTAINER_FILES_PER_S, "files/s", files as f64 / s),
            Metric::new(CONTAINER_MIB_S, "MiB/s", bytes as f64 / MIB / s),
            Metric::new(ENTRIES, "entries", files as f64),
        ],
        ..Default::default()
    })
}

fn remove_tree(p: &Path) -> Result<()> {
    std::fs::remove_dir_all(p).map_err(|e| Error::io("cannot remove", p, e))
}

/// Copy a directory tree (files, modes, subdirectories), as `mv` does across devices.
fn copy_tree(from: &Path, to: &Path) -> Result<u64> {
    std::fs::create_dir(to).map_err(|e| Error::io("cannot create", to, e))?;
    let meta = std::fs::metadata(from).map_err(|e| Error::io("cannot stat", from, e))?;
    std::fs::set_permissions(to, meta.permissions())
        .map_err(|e| Error::io("cannot chmod", to, e))?;
    let mut bytes = 0;
    for e in std::fs::read_dir(from).map_err(|e| Error::io("cannot list", from, e))? {
        let e = e.map_err(|e| Error::io("cannot list", from, e))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ft = e
            .file_type()
            .map_err(|e| Error::io("cannot stat", &src, e))?;
        if ft.is_dir() {
            bytes += copy_tree(&src, &dst)?;
        } else {
            bytes += std::fs::copy(&src, &dst).map_err(|e| Error::io("cannot copy", &src, e))?;
        }
    }
    Ok(bytes)
}

/// What copy-up touches: the largest files, small files, files appended to, directories
/// chmod'ed and leaf directories renamed.
struct CopyupPlan<'a> {
    write: Vec<&'a layers::FileEntry>,
    append: Vec<&'a layers::FileEntry>,
    chmod: Vec<&'a str>,
    rename: Vec<&'a str>,
}

fn copyup_plan<'a>(set: &'a LayerSet, visible: &[&'a layers::FileEntry]) -> CopyupPlan<'a> {
    let mut rng = Xoshiro::new(0xc0b1);
    let mut by_size = visible.to_vec();
    by_size.sort_by_key(|f| std::cmp::Reverse(f.size));
    let mut write: Vec<_> = by_size.iter().take(4).copied().collect();
    let small: Vec<_> = visible.iter().filter(|f| f.size < 64 << 10).collect();
    for _ in 0..(visible.len() / 150).max(1) {
        if !small.is_empty() {
            write.push(small[rng.below(small.len() as u64) as usize]);
        }
    }
    let append = (0..(visible.len() / 300).max(1))
        .map(|_| visible[rng.below(visible.len() as u64) as usize])
        .collect();
    let dirs = set.dirs();
    let chmod = (0..(dirs.len() / 20).max(1).min(dirs.len()))
        .map(|_| dirs[rng.below(dirs.len() as u64) as usize])
        .collect();
    let leaves: Vec<&str> = dirs
        .iter()
        .copied()
        .filter(|d| d.matches('/').count() >= 2)
        .filter(|d| {
            !dirs
                .iter()
                .any(|o| o.len() > d.len() && o.starts_with(&format!("{d}/")))
        })
        .collect();
    let mut rename = Vec::new();
    for _ in 0..4.min(leaves.len()) {
        let d = leaves[rng.below(leaves.len() as u64) as usize];
        if !rename.contains(&d) {
            rename.push(d);
        }
    }
    CopyupPlan {
        write,
        append,
        chmod,
        rename,
    }
}

fn copyup(store: &Store, p: &ContainerParams) -> Result<WorkloadOutput> {
    let set = LayerSet::of(p)?;
    let visible = set.visible();
    let plan = copyup_plan(&set, &visible);
    let dirs = Dirs::of(&store.containers(), "copyup");
    dirs.create()?;
    let o = Overlay::mount(&store.lowers_top_first(set.layers.len()), &dirs)?;
    let root = o.root().to_path_buf();
    let block = [0x5au8; 4096];
    let (mut files, mut bytes) = (0usize, 0u64);
    let mut copied_by_mv = false;
    let t0 = Instant::now();
    for f in &plan.write {
        let path = root.join(&f.path);
        // Opening a lower file for writing copies the whole file up.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open for writing", &path, e))?;
        file.write_all_at(&block[..f.size.min(4096) as usize], 0)
            .map_err(|e| Error::io("cannot write", &path, e))?;
        files += 1;
        bytes += f.size;
    }
    for f in &plan.append {
        let path = root.join(&f.path);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open for appending", &path, e))?;
        file.write_all(&block)
            .map_err(|e| Error::io("cannot append to", &path, e))?;
        files += 1;
        bytes += f.size + 4096;
    }
    for d in &plan.chmod {
        let path = root.join(d);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750))
            .map_err(|e| Error::io("cannot chmod", &path, e))?;
    }
    crate::cancel::check()?;
    for d in &plan.rename {
        let (from, to) = (root.join(d), root.join(format!("{d}.moved")));
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            // overlayfs without redirect_dir (Docker's default) refuses to rename a merged
            // directory; `mv` then copies and deletes, and so does this.
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                bytes += copy_tree(&from, &to)?;
                remove_tree(&from)?;
                copied_by_mv = true;
            }
            Err(e) => return Err(Error::io("cannot rename", &from, e)),
        }
    }
    syncfs(&root)?;
    let s = secs_since(t0);
    o.unmount()?;
    remove_tree(dirs.home())?;
    let mut out = WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", s),
            Metric::new(CONTAINER_FILES_PER_S, "files/s", files as f64 / s),
            Metric::new(CONTAINER_MIB_S, "MiB/s", bytes as f64 / MIB / s),
            Metric::new(BYTES, "bytes", bytes as f64),
        ],
        ..Default::default()
    };
    if copied_by_mv {
        out.notes.push(
            "directory renames were copies (EXDEV: overlayfs without redirect_dir, Docker's \
             default)"
                .into(),
        );
    }
    Ok(out)
}

/// One churn cycle: a container created, started (its configuration written, a few files of
/// its own, its entry set read), stopped and removed.
fn cycle(
    store: &Store,
    lowers: &[PathBuf],
    name: &str,
    entry: &[&str],
    peak: &AtomicU64,
) -> Result<()> {
    let dirs = Dirs::of(&store.containers(), name);
    dirs.create()?;
    let o = Overlay::mount(lowers, &dirs)?;
    let root = o.root();
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).map_err(|e| Error::io("cannot create", &etc, e))?;
    for f in ["etc/hostname", "etc/hosts", "etc/resolv.conf"] {
        let path = root.join(f);
        std::fs::write(&path, name).map_err(|e| Error::io("cannot write", &path, e))?;
    }
    let run = root.join("run/app");
    std::fs::create_dir_all(&run).map_err(|e| Error::io("cannot create", &run, e))?;
    for i in 0..32 {
        let path = run.join(format!("s{i}"));
        std::fs::write(&path, [b'x'; 1024]).map_err(|e| Error::io("cannot write", &path, e))?;
    }
    let mut buf = vec![0u8; 64 << 10];
    for f in entry {
        read_all(&root.join(f), &mut buf)?;
    }
    if let Some(n) = inodes_in_use(&dirs.upper) {
        peak.fetch_max(n, Ordering::Relaxed);
    }
    o.unmount()?;
    remove_tree(dirs.home())
}

fn churn(store: &Store, p: &ContainerParams) -> Result<WorkloadOutput> {
    let set = LayerSet::of(p)?;
    let visible = set.visible();
    let lowers = store.lowers_top_first(set.layers.len());
    let entry = entry_set(&visible, 0, 16);
    let peak = AtomicU64::new(0);
    let t0 = Instant::now();
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..p.threads)
            .map(|t| {
                let (lowers, entry, peak) = (&lowers, &entry, &peak);
                s.spawn(move || {
                    for i in 0..p.containers {
                        crate::cancel::check()?;
                        cycle(store, lowers, &format!("churn-{t}-{i}"), entry, peak)?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(Error::Other("a churn worker panicked".into())))
            })
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>>>()?;
    syncfs(&store.root)?;
    let s = secs_since(t0);
    let n = f64::from(p.threads * p.containers);
    let mut metrics = vec![
        Metric::new(SECONDS, "s", s),
        Metric::new(CONTAINERS_PER_S, "containers/s", n / s),
    ];
    let peak = peak.into_inner();
    if peak > 0 {
        metrics.push(Metric::new(CONTAINER_INODES_USED, "inodes", peak as f64));
    }
    Ok(WorkloadOutput {
        metrics,
        ..Default::default()
    })
}

/// The directories delete removes inside a container: a third of the second-level trees
/// (`usr/share/...`-sized), so most of what they hold is lower files that need whiteouts.
fn doomed(set: &LayerSet) -> Vec<String> {
    let pick = |depth_ok: &dyn Fn(&str) -> bool| -> Vec<String> {
        let mut rng = Xoshiro::new(0xde1e7e);
        set.dirs()
            .into_iter()
            .filter(|d| depth_ok(d))
            .filter(|_| rng.below(3) == 0)
            .map(str::to_string)
            .collect()
    };
    // The generated image's trees grow from its top directories; a user's image from `/`.
    let below_tops = pick(&|d: &str| {
        d.rsplit_once('/')
            .is_some_and(|(parent, _)| layers::TOPS.contains(&parent))
    });
    if !below_tops.is_empty() {
        return below_tops;
    }
    pick(&|d: &str| d.matches('/').count() == 1)
}

fn delete(store: &Store, p: &ContainerParams) -> Result<WorkloadOutput> {
    let set = LayerSet::of(p)?;
    let lowers = store.lowers_top_first(set.layers.len());
    // Stopped containers with a little of their own each, and one still running.
    for c in 1..p.containers {
        let name = format!("del-{c}");
        let dirs = Dirs::of(&store.containers(), &name);
        dirs.create()?;
        let o = Overlay::mount(&lowers, &dirs)?;
        for i in 0..16 {
            let path = o.root().join(format!("etc/{name}-{i}"));
            std::fs::write(&path, b"state").map_err(|e| Error::io("cannot write", &path, e))?;
        }
        o.unmount()?;
    }
    let dirs = Dirs::of(&store.containers(), "del-0");
    dirs.create()?;
    let o = Overlay::mount(&lowers, &dirs)?;
    let doomed = doomed(&set);
    let removed = set
        .visible()
        .iter()
        .filter(|f| doomed.iter().any(|d| f.path.starts_with(&format!("{d}/"))))
        .count();
    let t0 = Instant::now();
    for d in &doomed {
        let path = o.root().join(d);
        // An earlier doomed directory may hold this one.
        if path.exists() {
            remove_tree(&path)?;
        }
    }
    syncfs(o.root())?;
    let whiteout_s = secs_since(t0);
    let t1 = Instant::now();
    o.unmount()?;
    remove_tree(&store.containers())?;
    for i in (0..set.layers.len()).rev() {
        remove_tree(&store.layer(i))?;
    }
    std::fs::remove_file(store.marker())
        .map_err(|e| Error::io("cannot remove", store.marker(), e))?;
    syncfs(&store.root)?;
    let image_s = secs_since(t1);
    store.remove()?;
    Ok(WorkloadOutput {
        metrics: vec![
            Metric::new(SECONDS, "s", whiteout_s + image_s),
            Metric::new(WHITEOUT_SECONDS, "s", whiteout_s),
            Metric::new(IMAGE_REMOVE_SECONDS, "s", image_s),
            Metric::new(
                CONTAINER_FILES_PER_S,
                "files/s",
                removed as f64 / whiteout_s,
            ),
            Metric::new(ENTRIES, "entries", removed as f64),
        ],
        ..Default::default()
    })
}
