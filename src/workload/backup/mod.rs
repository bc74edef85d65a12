//! `backup`: snapshots and backups on the filesystem under test (docs/backups.md).
//!
//! 1. A tree of `files` files (`bytes` in all) written in 128 KiB records, each its own extent
//!    (O_DIRECT, or a buffered write and fdatasync per record where O_DIRECT is refused), so a
//!    rewrite replaces whole extents (and whole ZFS records at the default recordsize) the way
//!    a database's or VM image's block rewrites do; Btrfs's partial-extent "bookend" space is
//!    then not what is measured.
//! 2. A snapshot (Btrfs subvolume, ZFS dataset, XFS reflink copy of every file), timed; the
//!    space the filesystem accounts to it right after, and after rewriting 1 %, 10 % and 50 %
//!    of the records in place (each set contains the one before, spread over the whole tree).
//! 3. Where the filesystem has a send stream: a full send of the snapshot, received on a
//!    SECOND image this workload creates (a loop image through the target and ledger, the
//!    setup's own driver), then an incremental send of a second snapshot against the first:
//!    its bytes against the bytes the rewrites changed.
//! 4. A reflink copy (FICLONE) of a file and dedupe (FIDEDUPERANGE) of an identical, separately
//!    written file: time and space saved (statvfs). This part runs first, before any snapshot
//!    was deleted, so no space freed in the background counts as saved.
//! 5. `fstrim` and a full `btrfs balance` of the filesystem, still holding the data.
//!
//! What a filesystem lacks is a note ("not available: <why>"), never a zero. The filesystem
//! commands are `fs::snapshot_ops`'; this module only writes data and keeps the figures.

pub mod kind;

use super::{Metric, WorkloadOutput};
use crate::fs::snapshot_ops::{self, Backup, Copies, Snap, Source};
use crate::fs::{Filesystem, SetupSpec};
use crate::host::sys::aligned::AlignedBuf;
use crate::metrics::registry::*;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Record size of writes and rewrites: ZFS's default recordsize, a whole extent elsewhere.
pub const RECORD: u64 = 128 << 10;
/// The rewrite steps, percent of the records (cumulative: each set holds the one before).
pub const REWRITES: [u64; 3] = [1, 10, 50];
/// Default data size (the profile's).
pub const DEFAULT_BYTES: u64 = 256 << 20;

/// The plan's parameters of a `backup` workload (`WorkloadSpec::kind_params`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BackupParams {
    /// Bytes of data in the snapshotted tree (the duplicate file for reflink and dedupe is a
    /// quarter of it).
    pub bytes: u64,
    /// Files the tree holds.
    pub files: u32,
}

impl Default for BackupParams {
    fn default() -> Self {
        BackupParams {
            bytes: DEFAULT_BYTES,
            files: 8,
        }
    }
}

impl BackupParams {
    /// Check the sizes: at least one record per file and 100 records in all (so 1 % is one).
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.files == 0 {
            return Err("files must be at least 1".into());
        }
        if self.bytes < 100 * RECORD || self.bytes / u64::from(self.files) < RECORD {
            return Err(format!(
                "size {} is too small: at least 100 records of 128 KiB (12.5 MiB) and one per file",
                self.bytes
            ));
        }
        Ok(())
    }
}

/// Where the workload runs.
pub struct Where<'a> {
    /// The setup's driver.
    pub fs: &'a dyn Filesystem,
    /// The setup (the second image gets the same one).
    pub setup: &'a SetupSpec,
    /// fsbench's directory on the filesystem under test.
    pub dir: &'a Path,
    /// The filesystem's mountpoint.
    pub root: &'a Path,
    /// Where the second image and the send stream go (not the filesystem under test).
    pub scratch: &'a Path,
    /// Pattern seed.
    pub seed: u64,
    /// Timeout of each tool.
    pub timeout: Duration,
}

/// Run the whole workload.
pub fn run(w: &Where<'_>, p: &BackupParams) -> Result<WorkloadOutput> {
    p.validate().map_err(|e| Error::workload("backup", e))?;
    let b = w.fs.caps().backup;
    let mut out = WorkloadOutput::default();
    let dup = w.dir.join("backup-dup");
    let result = (|| {
        // Copies first: a deleted snapshot's space comes back in the background (Btrfs's
        // cleaner), which would count as space dedupe saved. Their files go before the
        // snapshot, which on ZFS is of the whole dataset (its full stream would carry them).
        copies(w, p, &dup, &mut out)?;
        std::fs::remove_dir_all(&dup).map_err(|e| Error::io("cannot remove", &dup, e))?;
        settle_statvfs(w.dir);
        snapshots(w, p, &b, &mut out)?;
        maintenance(w, &b, &mut out)
    })();
    let _ = std::fs::remove_dir_all(&dup);
    result?;
    Ok(out)
}

fn met(out: &mut WorkloadOutput, id: crate::metrics::MetricId, unit: &str, v: f64) {
    out.metrics.push(Metric::new(id, unit, v));
}

fn mib_s(bytes: u64, s: f64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64 / s.max(1e-9)
}

/// Part 1–3: the snapshot, its space as the data diverges, send/receive.
fn snapshots(w: &Where<'_>, p: &BackupParams, b: &Backup, out: &mut WorkloadOutput) -> Result<()> {
    if let Copies::None(why) = b.copies {
        out.notes.push(format!("snapshots not available: {why}"));
        // Nothing to send either: said, so the verdict can name both.
        if let snapshot_ops::Stream::None(why) = b.stream {
            out.notes.push(format!("send/receive not available: {why}"));
        }
        return Ok(());
    }
    if let Copies::Reflink = b.copies {
        out.notes.push(
            "snapshot stand-in: a reflink copy of every file (no snapshots of its own)".into(),
        );
    }
    let src = Source::create(b, &w.dir.join("backup-src"), w.root, w.timeout)?;
    let mut snaps: Vec<Snap> = Vec::new();
    let mut dest: Option<Dest> = None;
    let result = snapshot_steps(w, p, b, &src, &mut snaps, &mut dest, out);
    // Release in reverse: the received copies with their image, the snapshots, the tree.
    let released = dest.take().map(Dest::release).unwrap_or(Ok(()));
    let mut deleted = Ok(());
    for s in snaps.into_iter().rev() {
        deleted = deleted.and(src.delete(s));
    }
    let removed = src.remove();
    result?;
    released?;
    deleted?;
    removed
}

fn snapshot_steps(
    w: &Where<'_>,
    p: &BackupParams,
    b: &Backup,
    src: &Source,
    snaps: &mut Vec<Snap>,
    dest: &mut Option<Dest>,
    out: &mut WorkloadOutput,
) -> Result<()> {
    let per_file = p.bytes / u64::from(p.files) / RECORD * RECORD;
    let data = per_file * u64::from(p.files);
    let mut tree = Tree::write(&src.dir, p.files, per_file, w.seed)?;
    src.settle()?;
    let (s1, secs) = src.snapshot("s1")?;
    met(out, SNAPSHOT_SECONDS, "s", secs);
    src.settle()?;
    let space = src.space(&s1)?;
    met(out, SNAPSHOT_SPACE_BYTES, "bytes", space as f64);
    met(
        out,
        SNAPSHOT_SPACE_SHARE,
        "ratio",
        space as f64 / data as f64,
    );
    snaps.push(s1);
    out.notes.push(format!(
        "snapshot of {} files, {} MiB in 128 KiB records{}",
        p.files,
        data >> 20,
        if tree.direct {
            ""
        } else {
            " (O_DIRECT refused: buffered, fdatasync per record)"
        }
    ));

    // The full send, while nothing has diverged.
    if let snapshot_ops::Stream::None(why) = b.stream {
        out.notes.push(format!("send/receive not available: {why}"));
    } else {
        *dest = Some(Dest::acquire(w, data)?);
        let d = dest.as_ref().expect("just set");
        let sent = src.send(b, &snaps[0], None, &d.stream.path, &d.dir)?;
        met(out, SEND_FULL_BYTES, "bytes", sent.bytes as f64);
        met(
            out,
            SEND_FULL_MIB_S,
            "MiB/s",
            mib_s(sent.bytes, sent.send_s + sent.recv_s),
        );
    }

    let ids = [
        SNAPSHOT_SPACE_1PCT_BYTES,
        SNAPSHOT_SPACE_10PCT_BYTES,
        SNAPSHOT_SPACE_50PCT_BYTES,
    ];
    let mut spaces = Vec::new();
    for (pct, id) in REWRITES.into_iter().zip(ids) {
        let rewritten = tree.rewrite(pct)?;
        src.settle()?;
        let space = src.space(&snaps[0])?;
        met(out, id, "bytes", space as f64);
        spaces.push(format!(
            "{pct} %: {} KiB rewritten, snapshot {} KiB",
            rewritten >> 10,
            space >> 10
        ));
    }
    out.notes.push(format!(
        "snapshot space as the data diverges: {}",
        spaces.join("; ")
    ));

    if let Some(d) = dest.as_ref() {
        let (s2, _) = src.snapshot("s2")?;
        snaps.push(s2);
        let changed = tree.changed_bytes();
        let sent = src.send(b, &snaps[1], Some(&snaps[0]), &d.stream.path, &d.dir)?;
        met(out, CHANGED_BYTES, "bytes", changed as f64);
        met(out, SEND_INCR_BYTES, "bytes", sent.bytes as f64);
        met(
            out,
            SEND_INCR_RATIO,
            "ratio",
            sent.bytes as f64 / changed.max(1) as f64,
        );
        met(
            out,
            SEND_INCR_MIB_S,
            "MiB/s",
            mib_s(sent.bytes, sent.send_s + sent.recv_s),
        );
        out.notes.push(format!(
            "incremental send: {} KiB sent for {} KiB changed, received on a second image",
            sent.bytes >> 10,
            changed >> 10
        ));
    }
    Ok(())
}

/// The snapshotted tree: its files and which records were rewritten.
struct Tree {
    files: Vec<(PathBuf, File)>,
    records_per_file: u64,
    seed: u64,
    direct: bool,
    /// The highest rewrite percent done (each set holds the smaller ones).
    rewritten_pct: u64,
    buf: AlignedBuf,
}

impl Tree {
    fn write(dir: &Path, files: u32, per_file: u64, seed: u64) -> Result<Tree> {
        let mut direct = true;
        let mut v = Vec::new();
        for i in 0..files {
            let path = dir.join(format!("f{i:03}"));
            let open = |flags: i32| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(flags)
                    .open(&path)
            };
            let f = match direct.then(|| open(libc::O_DIRECT)) {
                Some(Ok(f)) => f,
                _ => {
                    direct = false;
                    open(0).map_err(|e| Error::io("cannot create", &path, e))?
                }
            };
            v.push((path, f));
        }
        let mut t = Tree {
            files: v,
            records_per_file: per_file / RECORD,
            seed,
            direct,
            rewritten_pct: 0,
            buf: AlignedBuf::new(RECORD as usize),
        };
        for g in 0..t.records() {
            t.put(g, 0)?;
        }
        Ok(t)
    }

    fn records(&self) -> u64 {
        self.records_per_file * self.files.len() as u64
    }

    /// Write record `g` (global index) with generation `gen`'s pattern.
    fn put(&mut self, g: u64, generation: u64) -> Result<()> {
        let (fi, r) = (
            (g / self.records_per_file) as usize,
            g % self.records_per_file,
        );
        crate::workload::probe::sys::fill_pattern(
            &mut self.buf,
            self.seed ^ g.wrapping_mul(0x9E37_79B9) ^ (generation << 48),
        );
        let (path, f) = &self.files[fi];
        let res = f.write_all_at(&self.buf, r * RECORD);
        match res {
            Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                // The filesystem took the O_DIRECT open but refuses the writes: buffered.
                self.reopen_buffered()?;
                return self.put(g, generation);
            }
            Err(e) => return Err(Error::io("cannot write", path, e)),
            Ok(()) => {}
        }
        if !self.direct {
            f.sync_data()
                .map_err(|e| Error::io("cannot fdatasync", path, e))?;
        }
        Ok(())
    }

    fn reopen_buffered(&mut self) -> Result<()> {
        self.direct = false;
        for (path, f) in &mut self.files {
            *f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&*path)
                .map_err(|e| Error::io("cannot open", &*path, e))?;
        }
        Ok(())
    }

    /// Rewrite `pct` % of the records in place (see [`in_rewrite`]; the ones a smaller step
    /// rewrote again); bytes rewritten.
    fn rewrite(&mut self, pct: u64) -> Result<u64> {
        let n = self.records();
        let mut bytes = 0;
        for g in (0..n).filter(|g| in_rewrite(*g, n, pct)) {
            self.put(g, pct)?;
            bytes += RECORD;
        }
        for (path, f) in &self.files {
            f.sync_all()
                .map_err(|e| Error::io("cannot fsync", path, e))?;
        }
        self.rewritten_pct = self.rewritten_pct.max(pct);
        Ok(bytes)
    }

    /// Bytes that differ from the first snapshot: every record a rewrite touched.
    fn changed_bytes(&self) -> u64 {
        let n = self.records();
        (0..n)
            .filter(|g| in_rewrite(*g, n, self.rewritten_pct))
            .count() as u64
            * RECORD
    }
}

/// Whether record `g` of `n` is among the `pct` % rewritten: the first `pct` % (rounded, at
/// least one) of a fixed scrambled order (`g × P mod n`, `P` a prime coprime with `n`), so
/// each set is spread over every file and holds the smaller sets.
pub fn in_rewrite(g: u64, n: u64, pct: u64) -> bool {
    if pct == 0 || n == 0 {
        return false;
    }
    let take = ((n * pct + 50) / 100).max(1);
    let p = [7919u64, 7927, 7933, 7937]
        .into_iter()
        .find(|p| !n.is_multiple_of(*p))
        .expect("n has at most three of these prime factors");
    (g * p) % n < take
}

/// The second filesystem the send streams are received on: an image of its own on a loop
/// device (the target and its ledger entries), made by the setup's driver, mounted under
/// fsbench's mount root; and the stream file in the scratch directory (a ledger entry too).
struct Dest {
    mounted: Option<Box<dyn crate::fs::Mounted>>,
    target: Option<Box<dyn crate::scratch::Target>>,
    dir: PathBuf,
    stream: StreamFile,
}

impl Dest {
    fn acquire(w: &Where<'_>, data: u64) -> Result<Dest> {
        let stream = StreamFile::create(w.scratch)?;
        let size = (data * 3)
            .max(w.fs.min_device_size())
            .max(w.fs.caps().probe_image);
        let target = crate::scratch::acquire(
            &crate::scratch::TargetKind::Image {
                scratch_dir: w.scratch.to_path_buf(),
                size,
                keep: false,
            },
            true,
        )?;
        let dev = target
            .block_device()
            .ok_or_else(|| Error::workload("backup", "the second image has no block device"))?
            .to_path_buf();
        // The driver creates the mountpoint (a ledger entry) and its guard removes it.
        let mp = crate::fs::unique_mountpoint("backup-recv");
        let (_, mounted) = w.fs.create_and_mount(&dev, w.setup, &mp, w.timeout)?;
        let dir = mounted.path().to_path_buf();
        Ok(Dest {
            mounted: Some(mounted),
            target: Some(target),
            dir,
            stream,
        })
    }

    fn release(mut self) -> Result<()> {
        let r = self.mounted.take().map(|m| m.release()).unwrap_or(Ok(()));
        drop(self.target.take());
        r
    }
}

/// The send stream's file, recorded in the ledger (as a file fsbench created, by inode) so a
/// killed run's is removed by the next; removed on drop.
struct StreamFile {
    path: PathBuf,
    _held: crate::host::ledger::Held,
}

impl StreamFile {
    fn create(scratch: &Path) -> Result<StreamFile> {
        use crate::host::ledger::{Item, hold};
        use std::os::unix::fs::MetadataExt;
        let path = scratch.join(format!("fsbench-backup-stream-{}.bin", std::process::id()));
        let held = hold(Item::Image {
            path: path.clone(),
            id: None,
        })?;
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| Error::io("cannot create the send stream file", &path, e))?;
        let m = f
            .metadata()
            .map_err(|e| Error::io("cannot stat", &path, e))?;
        held.set(Item::Image {
            path: path.clone(),
            id: Some((m.dev(), m.ino())),
        })?;
        Ok(StreamFile { path, _held: held })
    }
}

impl Drop for StreamFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Part 4: a reflink copy and dedupe of a duplicate file.
fn copies(w: &Where<'_>, p: &BackupParams, dir: &Path, out: &mut WorkloadOutput) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let bytes = (p.bytes / 4).max(8 << 20);
    let a = dir.join("a");
    crate::workload::probe::reflink::write_pattern_file(&a, bytes, w.seed ^ 0xD0D0)?;
    let src = File::open(&a).map_err(|e| Error::io("cannot open", &a, e))?;

    // Reflink copy.
    let b = dir.join("b");
    let dst = File::create(&b).map_err(|e| Error::io("cannot create", &b, e))?;
    crate::host::cache::sync_all();
    let before = snapshot_ops::used_bytes(dir)?;
    let start = Instant::now();
    match crate::workload::probe::sys::ficlone(&src, &dst, &b)? {
        crate::workload::probe::sys::CloneOutcome::Cloned => {
            let secs = start.elapsed().as_secs_f64();
            dst.sync_all()
                .map_err(|e| Error::io("cannot fsync", &b, e))?;
            settle_statvfs(dir);
            let grew = snapshot_ops::used_bytes(dir)?.saturating_sub(before);
            met(out, REFLINK_SECONDS, "s", secs);
            met(
                out,
                REFLINK_SAVED_BYTES,
                "bytes",
                bytes.saturating_sub(grew) as f64,
            );
        }
        crate::workload::probe::sys::CloneOutcome::Unsupported(code) => out.notes.push(format!(
            "reflink copy not available: FICLONE refused ({})",
            std::io::Error::from_raw_os_error(code)
        )),
    }
    drop(dst);
    let _ = std::fs::remove_file(&b);

    // Dedupe of an identical file written separately.
    let c = dir.join("c");
    crate::workload::probe::reflink::write_pattern_file(&c, bytes, w.seed ^ 0xD0D0)?;
    let dup = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&c)
        .map_err(|e| Error::io("cannot open", &c, e))?;
    settle_statvfs(dir);
    let before = snapshot_ops::used_bytes(dir)?;
    let start = Instant::now();
    match dedupe_file(&src, &dup, bytes) {
        Ok(done) => {
            let secs = start.elapsed().as_secs_f64();
            settle_statvfs(dir);
            let freed = before.saturating_sub(snapshot_ops::used_bytes(dir)?);
            met(out, DEDUPE_SECONDS, "s", secs);
            met(out, DEDUPE_SAVED_BYTES, "bytes", freed as f64);
            out.notes.push(format!(
                "dedupe: {} MiB of {} MiB identical data shared, {} MiB freed (statvfs)",
                done >> 20,
                bytes >> 20,
                freed >> 20
            ));
        }
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOTTY | libc::ENOSYS | libc::EXDEV)
            ) =>
        {
            out.notes
                .push(format!("dedupe not available: FIDEDUPERANGE refused ({e})"));
        }
        Err(e) => return Err(Error::io("FIDEDUPERANGE into", &c, e)),
    }
    Ok(())
}

/// Dedupe all of `dup` against `src` (calls of at most 16 MiB, Btrfs's limit per call).
fn dedupe_file(src: &File, dup: &File, bytes: u64) -> std::io::Result<u64> {
    use std::os::fd::AsFd;
    let mut off = 0;
    let mut done = 0;
    while off < bytes {
        let len = (bytes - off).min(16 << 20);
        match crate::host::sys::fideduperange(src.as_fd(), off, len, dup.as_fd(), off)? {
            crate::host::sys::Deduped::Same(n) => {
                done += n;
                off += n.max(1).min(len);
            }
            crate::host::sys::Deduped::Differs => off += len,
        }
    }
    Ok(done)
}

/// Sync so statvfs counts what was just written or freed (Btrfs frees a shared extent's
/// space at the transaction commit).
fn settle_statvfs(dir: &Path) {
    crate::host::cache::sync_all();
    if let Ok(f) = File::open(dir) {
        let _ = rustix::fs::syncfs(&f);
    }
}

/// Part 5: trim and balance on the filesystem while it holds data.
fn maintenance(w: &Where<'_>, b: &Backup, out: &mut WorkloadOutput) -> Result<()> {
    for (m, id, what) in [
        (b.trim, FSTRIM_SECONDS, "fstrim"),
        (b.balance, BALANCE_SECONDS, "balance"),
    ] {
        match snapshot_ops::maintain(m, w.root, w.timeout)? {
            Ok(s) => met(out, id, "s", s),
            Err(why) => out.notes.push(format!("{what} not available: {why}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_need_a_hundred_records() {
        assert!(BackupParams::default().validate().is_ok());
        let small = BackupParams {
            bytes: 8 << 20,
            files: 1,
        };
        assert!(small.validate().unwrap_err().contains("too small"));
        let many = BackupParams {
            bytes: 16 << 20,
            files: 1000,
        };
        assert!(many.validate().is_err());
    }

    #[test]
    fn rewrite_sets_are_exact_nested_and_spread() {
        for n in [100u64, 128, 2048, 7919 * 2] {
            let set = |pct| -> Vec<u64> { (0..n).filter(|g| in_rewrite(*g, n, pct)).collect() };
            let (s1, s10, s50) = (set(1), set(10), set(50));
            assert_eq!(s1.len() as u64, ((n + 50) / 100).max(1));
            assert_eq!(s10.len() as u64, (n * 10 + 50) / 100);
            assert_eq!(s50.len() as u64, (n * 50 + 50) / 100);
            assert!(s1.iter().all(|g| s10.contains(g)) && s10.iter().all(|g| s50.contains(g)));
            // Half the records: some in each quarter of the tree.
            for q in 0..4 {
                assert!(
                    s50.iter().any(|g| g * 4 / n == q),
                    "n={n}: quarter {q} untouched"
                );
            }
        }
    }
}
