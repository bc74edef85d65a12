//! Aging a filesystem: a year of use in minutes (`fs::setup::age` is the setup's request).
//!
//! [`run`] writes `AMOUNT × capacity` bytes with one of the profiles ([`profiles`]) into a
//! directory of its own, seeded (the same seed ages the same way), working around the
//! target fullness; what it leaves stays for the workloads, which then run on an aged,
//! fuller filesystem. [`measure`] is how old a filesystem looks: extents per file, Conway's
//! layout score, free-space fragmentation through a probe file, fullness. While it ages,
//! a sample of the live files is mapped about once a second ([`Tick`]): the series over
//! the aging time, and the early stop on a layout score (`layout=`). [`restore`] keeps an
//! aged filesystem's image and writes it back (`replicate=restore`).

pub mod measure;
pub mod profiles;
pub mod restore;
mod room;

use crate::engine::rng::Xoshiro;
use crate::fs::setup::age::{AgeProfile, AgeSpec};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where aging keeps its files under the filesystem's root.
pub const AGED_DIR: &str = "fsbench-aged";
/// Written between two `syncfs`, so allocation happens as the use goes, not all at the end.
const SYNC_EVERY: u64 = 32 << 20;
/// The write unit and the pattern buffer's size.
const CHUNK: usize = 1 << 20;
/// How often the progress callback is called, and at most how often the live files are
/// sampled (once a second: the runner keeps per-second series from it).
const TICK: Duration = Duration::from_secs(1);

/// Live files mapped per sample: enough for a stable score, cheap enough for once a
/// second (FIEMAP on files just synced).
const SAMPLE_FILES: usize = 64;

/// What an aging run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aged {
    /// Bytes written (data; the filesystem's own metadata writes are not counted).
    pub written: u64,
    /// Wall time.
    pub seconds: f64,
    /// Create, append, overwrite, delete, punch and checkout operations done.
    pub ops: u64,
    /// Whether the sampled layout score reached `layout=` before the amount was written.
    pub stopped_on_layout: bool,
    /// Bytes of aged files deleted at the end so that the room asked for could be written
    /// (copy-on-write filesystems: statvfs's free space is not all writable).
    pub freed_for_room: u64,
}

/// How fragmented a sample of the live files is ([`SAMPLE_FILES`] at most).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampled {
    /// Conway's layout score over the sample (`None`: no file of two blocks or more).
    pub layout_score: Option<f64>,
    /// Mean extents per file of the sample (`None`: no mapped file).
    pub extents_per_file: Option<f64>,
}

/// Where aging stands, for the progress line and the series over the aging time.
#[derive(Debug, Clone, Copy)]
pub struct Tick {
    /// Bytes written so far.
    pub written: u64,
    /// Bytes aging will write.
    pub target: u64,
    /// Since aging began.
    pub elapsed: Duration,
    /// Used blocks over all blocks, percent (statvfs at this tick).
    pub fullness_pct: f64,
    /// The latest sample of the live files.
    pub sampled: Sampled,
}

impl Tick {
    /// Percent done.
    pub fn percent(&self) -> f64 {
        100.0 * self.written as f64 / self.target.max(1) as f64
    }
    /// Seconds left at the rate so far (`None` before anything was written).
    pub fn eta_seconds(&self) -> Option<f64> {
        (self.written > 0).then(|| {
            self.elapsed.as_secs_f64() * (self.target.saturating_sub(self.written)) as f64
                / self.written as f64
        })
    }
}

/// Age the filesystem mounted at `root` as `spec` asks, seeded by `seed`, calling `tick`
/// about twice a second, and leave `reserve` bytes writable for the workloads (checked by
/// writing them: [`Ager::keep_room`]). Interruptible ([`crate::cancel`]).
pub fn run(
    root: &Path,
    spec: &AgeSpec,
    seed: u64,
    reserve: u64,
    tick: &mut dyn FnMut(&Tick),
) -> Result<Aged> {
    let dir = root.join(AGED_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    let st = rustix::fs::statvfs(root)
        .map_err(|e| Error::io("statvfs", root, std::io::Error::from(e)))?;
    let capacity = st.f_blocks.saturating_mul(st.f_frsize);
    let used = (st.f_blocks - st.f_bfree).saturating_mul(st.f_frsize);
    let live_target = ((spec.fullness / 100.0 * capacity as f64) as u64).saturating_sub(used);
    let mut a = Ager {
        root: root.to_path_buf(),
        dir,
        rng: Xoshiro::new(seed),
        // Its own generator: sampling leaves the aging's random choices as they were.
        sampler: Xoshiro::new(seed ^ 0x5a3b_1e00),
        stop_layout: spec.stop_layout,
        stopped_on_layout: false,
        sampled: Sampled::default(),
        pattern: pattern(seed),
        target: (spec.amount * capacity as f64) as u64,
        live_target,
        written: 0,
        live: 0,
        files: Vec::new(),
        next_id: 0,
        since_sync: 0,
        ops: 0,
        start: Instant::now(),
        last_tick: Instant::now(),
        tick,
    };
    match spec.profile {
        AgeProfile::Churn => profiles::churn(&mut a)?,
        AgeProfile::Overwrite => profiles::overwrite(&mut a)?,
        AgeProfile::Punch => profiles::punch(&mut a)?,
        AgeProfile::Git => profiles::git(&mut a)?,
    }
    a.sync()?;
    let freed_for_room = a.keep_room(reserve)?;
    // Which stop fired is decided by now: the last sample only closes the series.
    let stopped_on_layout = a.stopped_on_layout;
    a.sample()?;
    let t = a.now();
    (a.tick)(&t);
    Ok(Aged {
        written: a.written,
        seconds: a.start.elapsed().as_secs_f64(),
        ops: a.ops,
        stopped_on_layout,
        freed_for_room,
    })
}

/// 1 MiB of seeded bytes: data that neither compresses nor dedups to nothing.
fn pattern(seed: u64) -> Vec<u8> {
    let mut r = Xoshiro::new(seed ^ 0x5eed_a9e0);
    let mut v = Vec::with_capacity(CHUNK);
    while v.len() < CHUNK {
        v.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    v
}

/// One live file of the aging set.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
}

/// The state the profiles share: the live files, the counters, the seeded generator.
pub struct Ager<'t> {
    root: PathBuf,
    dir: PathBuf,
    pub(crate) rng: Xoshiro,
    sampler: Xoshiro,
    /// `layout=`: stop once a sample scores this or less.
    stop_layout: Option<f64>,
    stopped_on_layout: bool,
    sampled: Sampled,
    pattern: Vec<u8>,
    /// Bytes to write in all.
    pub(crate) target: u64,
    /// Bytes of live files to work around (the target fullness less what was there).
    pub(crate) live_target: u64,
    pub(crate) written: u64,
    pub(crate) live: u64,
    pub(crate) files: Vec<Live>,
    next_id: u64,
    since_sync: u64,
    pub(crate) ops: u64,
    start: Instant,
    last_tick: Instant,
    tick: &'t mut dyn FnMut(&Tick),
}

impl Ager<'_> {
    /// Whether the amount is written, or the layout score fell to `layout=`.
    pub(crate) fn done(&self) -> bool {
        self.written >= self.target || self.stopped_on_layout
    }

    fn now(&self) -> Tick {
        let fullness_pct = rustix::fs::statvfs(&self.root).map_or(0.0, |st| {
            100.0 * (st.f_blocks - st.f_bfree) as f64 / st.f_blocks.max(1) as f64
        });
        Tick {
            written: self.written,
            target: self.target,
            elapsed: self.start.elapsed(),
            fullness_pct,
            sampled: self.sampled,
        }
    }

    /// Map a sample of the live files (FIEMAP syncs each first, so their blocks are
    /// placed) and, with `layout=`, stop when its score reached it.
    fn sample(&mut self) -> Result<()> {
        let n = self.files.len();
        let picks: Vec<usize> = if n <= SAMPLE_FILES {
            (0..n).collect()
        } else {
            (0..SAMPLE_FILES)
                .map(|_| self.sampler.below(n as u64) as usize)
                .collect()
        };
        let (mut cont, mut pairs, mut extents, mut mapped) = (0u64, 0u64, 0u64, 0u64);
        for i in picks {
            let path = &self.files[i].path;
            let Ok(f) = File::open(path) else { continue };
            let ext = match crate::host::sys::fiemap::fiemap(&f, path) {
                Ok(Some(ext)) => ext,
                // No FIEMAP on this filesystem: nothing to sample, no early stop.
                Ok(None) => return Ok(()),
                // A sample is a sample: a file that cannot be mapped is left out.
                Err(_) => continue,
            };
            if ext.is_empty() {
                continue;
            }
            mapped += 1;
            extents += measure::merged(&ext).len() as u64;
            let (c, p) = measure::layout_pairs(&ext);
            cont += c;
            pairs += p;
        }
        self.sampled = Sampled {
            layout_score: (pairs > 0).then(|| cont as f64 / pairs as f64),
            extents_per_file: (mapped > 0).then(|| extents as f64 / mapped as f64),
        };
        if let (Some(stop), Some(score)) = (self.stop_layout, self.sampled.layout_score) {
            self.stopped_on_layout |= score <= stop;
        }
        Ok(())
    }

    /// After each operation: cancellation, periodic sync, and once a tick a sample of the
    /// live files (the early stop's check) and the progress callback.
    pub(crate) fn step(&mut self) -> Result<()> {
        crate::cancel::check()?;
        self.ops += 1;
        if self.since_sync >= SYNC_EVERY {
            self.sync()?;
        }
        if self.last_tick.elapsed() >= TICK {
            self.last_tick = Instant::now();
            self.sample()?;
            let t = self.now();
            (self.tick)(&t);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.since_sync = 0;
        let d = File::open(&self.dir).map_err(|e| Error::io("cannot open", &self.dir, e))?;
        rustix::fs::syncfs(&d).map_err(|e| Error::io("syncfs", &self.dir, std::io::Error::from(e)))
    }

    /// Uniform in `[lo, hi]`.
    pub(crate) fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.rng.below(hi.saturating_sub(lo) + 1)
    }

    /// Log-uniform in `[lo, hi]`, rounded to 512 bytes: many small, few large (file sizes).
    pub(crate) fn log_size(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1) as f64).ln(), (hi.max(lo + 1) as f64).ln());
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (((l + u * (h - l)).exp() as u64) / 512 * 512).max(512)
    }

    /// A random directory of depth 0..=`depth` with `fanout` names per level.
    pub(crate) fn random_dir(&mut self, depth: u64, fanout: u64) -> Result<PathBuf> {
        let mut d = self.dir.clone();
        for _ in 0..self.between(0, depth) {
            d.push(format!("d{}", self.rng.below(fanout)));
        }
        std::fs::create_dir_all(&d).map_err(|e| Error::io("cannot create", &d, e))?;
        Ok(d)
    }

    /// A new file's name in `dir`.
    pub(crate) fn new_path(&mut self, dir: &Path) -> PathBuf {
        self.next_id += 1;
        dir.join(format!("f{:08}", self.next_id))
    }

    /// Write `len` bytes of the pattern at `offset` of `f`.
    pub(crate) fn write_at(&mut self, f: &File, path: &Path, offset: u64, len: u64) -> Result<()> {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(CHUNK as u64) as usize;
            let from = ((offset + done) % CHUNK as u64) as usize;
            let from = from.min(CHUNK - n);
            f.write_all_at(&self.pattern[from..from + n], offset + done)
                .map_err(|e| Error::io("aging: cannot write", path, e))?;
            done += n as u64;
        }
        self.written += len;
        self.since_sync += len;
        Ok(())
    }

    /// Create a file of `size` bytes in `dir` and add it to the live set.
    pub(crate) fn create(&mut self, dir: &Path, size: u64) -> Result<()> {
        let path = self.new_path(dir);
        let f = File::create(&path).map_err(|e| Error::io("aging: cannot create", &path, e))?;
        self.write_at(&f, &path, 0, size)?;
        self.live += size;
        self.files.push(Live { path, size });
        Ok(())
    }

    /// Open live file `i` for writing.
    pub(crate) fn open(&self, i: usize) -> Result<File> {
        let p = &self.files[i].path;
        OpenOptions::new()
            .write(true)
            .open(p)
            .map_err(|e| Error::io("aging: cannot open", p, e))
    }

    /// Delete live file `i`.
    pub(crate) fn delete(&mut self, i: usize) -> Result<()> {
        let l = self.files.swap_remove(i);
        std::fs::remove_file(&l.path).map_err(|e| Error::io("aging: cannot delete", &l.path, e))?;
        self.live = self.live.saturating_sub(l.size);
        Ok(())
    }

    /// A random live file's index (`None` when there are none).
    pub(crate) fn pick(&mut self) -> Option<usize> {
        (!self.files.is_empty()).then(|| self.rng.below(self.files.len() as u64) as usize)
    }

    /// On ENOSPC: delete random files until a tenth of the live data is gone, and lower the
    /// live target to what fit (the filesystem's own overhead was more than guessed).
    pub(crate) fn make_room(&mut self) -> Result<()> {
        self.live_target = self.live_target.min(self.live) * 9 / 10;
        let goal = self.live * 9 / 10;
        while self.live > goal
            && let Some(i) = self.pick()
        {
            self.delete(i)?;
        }
        self.sync()
    }
}

/// Whether `e` is the filesystem running out of space (aging then makes room and goes on).
pub(crate) fn is_enospc(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC))
}
